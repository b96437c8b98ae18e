// spmat/formats/bccoo/bccoo_device.hpp — the CUDA storage of bccoo-gpu, made by upload (from the
// host storage) or on the GPU from a device CSR (bccoo_device_build.cu): the same arrays, and the
// same kernel plan, which `finish` derives from them on both paths (bccoo_cuda.cu).
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/formats/bccoo/bccoo.hpp"

namespace spmat {

/// Per-chunk descriptor of the stream and block kernels, derived from offset/row/column/format
/// (32 B per chunk, two 16-byte loads): without them, about 100 of the ~650 warp instructions
/// per chunk went to 64-bit header and sub-array layout arithmetic (ncu, gen:lap2d:2000).
/// Device-only; the format's arrays are unchanged.
struct alignas(16) BccooChunkDesc {
  std::int64_t begin;                   ///< byte position of the chunk in data
  std::uint32_t r0, c0;                 ///< first row, smallest column (fits_local32)
  std::uint32_t col_at, val_at, bytes;  ///< sub-array positions from begin; chunk bytes
  std::uint16_t len;                    ///< entries (<= kStreamMaxChunk)
  std::uint8_t wr, wc_lut;              ///< row-offset bytes; column-offset bytes | 0x80 (LUT)
};
static_assert(sizeof(BccooChunkDesc) == 32, "two 16-byte loads");

template <class Value, class Index>
struct BccooGpuDevice
    : cuda::ListedStorage<BccooGpuDevice<Value, Index>, BccooGpu<Value, Index>> {
  using Listed = cuda::ListedStorage<BccooGpuDevice, BccooGpu<Value, Index>>;
  static constexpr const char* format = "bccoo-gpu";  ///< names its arrays in allocation errors
  std::int64_t rows = 0, cols = 0, nnz = 0, chunk = 1024, nb = 0;
  int lut_used = 0;
  /// SpMV kernel: stream (persistent), block (one block per chunk) or atomic; chunk >
  /// bccoo::kStreamMaxChunk (or more chunks than a grid holds, for block) uses atomic.
  BccooGpuKernel kernel = BccooGpuKernel::stream;
  std::int64_t blocks = 0;   ///< option `blocks` (caps stream_grid when > 0)
  unsigned stream_grid = 0;  ///< blocks of the persistent stream kernel (set by finish)
  int prefetch = 1;          ///< stream kernel: L2 prefetch distance in chunks per block (0–2)
  cuda::DeviceBuffer<Value> lut;
  cuda::DeviceBuffer<Index> row, column;
  cuda::DeviceBuffer<std::uint8_t> formats;
  cuda::DeviceBuffer<std::int64_t> offset;
  cuda::DeviceBuffer<std::uint8_t> data;
  cuda::DeviceBuffer<BccooChunkDesc> desc;  ///< stream and block kernels only
  // Scratch of the stream kernel, nb each: the chunk's first-row partial (when the chunk holds
  // more than one row), its last-row partial and its last row. Written by every spmv.
  mutable cuda::DeviceBuffer<Value> head, tail;
  mutable cuda::DeviceBuffer<std::int64_t> tail_row;

  /// Every device byte held, the stream kernel's scratch included (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return Listed::storage_bytes() + desc.bytes() + head.bytes() + tail.bytes() +
           tail_row.bytes();
  }

  // The stored arrays and the host vectors they mirror (spmat/cuda/array_list.hpp).
  static auto arrays(auto& d) {
    return std::tuple{cuda::Field{"value table", d.lut}, cuda::Field{"chunk rows", d.row},
                      cuda::Field{"chunk columns", d.column},
                      cuda::Field{"chunk formats", d.formats},
                      cuda::Field{"chunk offsets", d.offset}, cuda::Field{"chunk data", d.data}};
  }
  static auto host_arrays(auto& s) {
    return std::tie(s.lut, s.row, s.column, s.format, s.offset, s.data);
  }
  static constexpr const char* scalar_names =
      "rows, cols, nnz, chunk, chunks, table entries used, kernel, blocks, stream grid, prefetch";
  std::vector<std::int64_t> scalars() const {
    return {rows, cols, nnz, chunk, nb, lut_used, static_cast<std::int64_t>(kernel), blocks,
            static_cast<std::int64_t>(stream_grid), prefetch};
  }

  /// The listed arrays and scalars of `s`, then the kernel plan (finish).
  static BccooGpuDevice upload(const BccooGpu<Value, Index>& s) {
    BccooGpuDevice d = Listed::upload(s);
    d.finish();
    return d;
  }
  void upload_scalars(const BccooGpu<Value, Index>& s) {
    cuda::copy_shape(*this, s);
    chunk = s.chunk;
    nb = s.chunks();
    lut_used = s.lut_used;
    kernel = s.kernel;
    blocks = s.blocks;
    prefetch = static_cast<int>(s.prefetch);
  }
  void download_scalars(BccooGpu<Value, Index>& s) const {
    s.rows = static_cast<Index>(rows);
    s.cols = static_cast<Index>(cols);
    s.nnz = nnz;
    s.chunk = chunk;
    s.lut_used = lut_used;
    s.kernel = kernel;
    s.blocks = blocks;
    s.prefetch = prefetch;
  }
  /// The host storage (to_csr of a device-built matrix): arrays, scalars, and last_row, the row
  /// of the last entry, read from the last chunk.
  BccooGpu<Value, Index> download() const {
    BccooGpu<Value, Index> s = Listed::download();
    if (nnz > 0) {
      const std::int64_t h = nb - 1, len = s.chunk_len(h);
      const bccoo::GpuChunk g = bccoo::gpu_chunk(s.format[h], len, sizeof(Value));
      s.last_row = static_cast<std::int64_t>(s.row[h]) +
                   static_cast<std::int64_t>(bccoo::load_uint(
                       s.data.data() + s.offset[h] + g.row_at + (len - 1) * g.wr, g.wr));
    }
    return s;
  }

  /// The kernel plan from the scalars and the stored arrays (already on the device): the atomic
  /// kernel where the stream and block kernels cannot take the matrix, the persistent grid, the
  /// chunk descriptors (one thread per chunk) and the scratch. Complete on return.
  void finish();
};

/// The device-only matrix over a device-built storage (bccoo_cuda.cu, where the kernels are).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(BccooGpuDevice<Value, Index>&& d);

}  // namespace spmat
