// spmat/formats/bccoo/bccoo.hpp — BCCOO: balanced and compressed COO (spec bccoo.md §2, §4): the
// CPU byte stream `bccoo` and the per-chunk uniform GPU layout `bccoo-gpu`.
// SPDX-License-Identifier: MIT
//
// Both cut the row-major entries into chunks of b = 1024 nonzeros (option `chunk`) and share one
// 256-entry value table (LUT): the 256 most frequent value bit patterns, ordered by count
// (descending), ties to the smaller pattern; unused slots hold +0.
//
// bccoo (CPU). data = tuples, multi-byte fields little-endian and unaligned:
//   key byte t: bit 7 = 1 → value is a 1-byte LUT index, 0 → raw Value (4 or 8 B).
//   t & 0x7F == 0x7F  end of row (canonical 0xFF, no payload): r += 1
//              0x7E   absolute column, uint32            (1+4+{1,V} B)
//              0x7D   column += uint16 delta             (1+2+{1,V} B)
//              0..0x7C column += (t & 0x7F)              (1+{1,V} B)
//   The column state c is 0 at each chunk start and carries across rows. A row's marker follows
//   its last entry (inside that entry's chunk); interior empty rows get one marker each, right
//   after the previous row's; leading and trailing empty rows get none.
//   Example (4×4 [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]], b = 4, fp64, all values in the LUT;
//   LUT = {1,2,3,4,5,6,0,...}):
//     chunk 0 (row 0): 80 00 | 82 01 | FF | FF | FE 00 00 00 00 02 | 81 03   (row 2 continues;
//                      (2,0) has Δ = −2 < 0, so its column is absolute)
//     chunk 1 (row 2): 83 04 | FF | 80 05 | FF
//     row = {0, 2}, offset = {0, 14, 20}.
//   Storage: 256·V + nb·I + (nb+1)·8 + data bytes.
//
// bccoo-gpu. Chunk h at data + offset[h] (offset a multiple of 8) is three sub-arrays, each
// padded to 8 B: rowoff[len] (w_r B each, row − row[h]), coloff[len] (w_c B each,
// col − column[h], column[h] = smallest column of the chunk), val[len] (1-B LUT index when
// every value of the chunk is in the LUT, else raw Value). w_r, w_c ∈ {1,2,4,8}, the smallest
// that fits. format[h] = LUT (bit 0) | log2 w_c (bits 1–2) | log2 w_r (bits 3–4).
//   Storage: 256·V + nb·(2I + 1) + (nb+1)·8 + data bytes.
// Traffic (spmv) of both: storage + x + y. Registry: bccoo (CPU), bccoo-gpu (CPU and CUDA).
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "spmat/core/bytes.hpp"
#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/typed_options.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

#if defined(__CUDACC__)
#define SPMAT_BCCOO_HD __host__ __device__ __forceinline__
#else
#define SPMAT_BCCOO_HD inline
#endif

namespace spmat {

static_assert(std::endian::native == std::endian::little,
              "bccoo's byte streams are little-endian and read with memcpy on the host");

namespace bccoo {
inline constexpr std::uint8_t kLutFlag = 0x80;   ///< key bit 7: value is a LUT index
inline constexpr std::uint8_t kMarker = 0xFF;    ///< canonical end-of-row key
inline constexpr std::uint8_t kAbsolute = 0x7E;  ///< uint32 absolute column follows
inline constexpr std::uint8_t kDelta16 = 0x7D;   ///< uint16 column delta follows
inline constexpr std::uint8_t kMaxInline = 0x7C; ///< largest delta stored in the key itself
inline constexpr int kLutSize = 256;

/// Unsigned integer type with the bit pattern of Value.
template <class Value>
using Bits = std::conditional_t<sizeof(Value) == 8, std::uint64_t, std::uint32_t>;

/// The shared value table: `lut` (256 values, see above) and a sorted (pattern, index) list.
template <class Value>
struct Lut {
  std::vector<Value> lut;
  std::vector<std::pair<Bits<Value>, std::uint8_t>> sorted;  ///< by pattern, for lookups
  /// LUT index of v, or -1 when v's bit pattern is not in the table.
  int find(Value v) const {
    const Bits<Value> b = std::bit_cast<Bits<Value>>(v);
    auto it = std::lower_bound(sorted.begin(), sorted.end(), std::pair(b, std::uint8_t(0)));
    return it != sorted.end() && it->first == b ? it->second : -1;
  }
};
/// Top-256 values by count (bitwise equality; ties to the smaller pattern). O(nnz log nnz).
template <class Value>
Lut<Value> build_lut(const std::vector<Value>& values);

using bytes::load;
using bytes::store;

/// Sub-array placement of one bccoo-gpu chunk of `len` entries with format byte `fmt`.
struct GpuChunk {
  int wr, wc, wv;       ///< bytes per row offset, column offset, value
  bool lut;
  std::int64_t row_at, col_at, val_at, bytes;  ///< byte positions from the chunk start; total
};
SPMAT_BCCOO_HD std::int64_t pad8(std::int64_t n) { return (n + 7) & ~std::int64_t(7); }
SPMAT_BCCOO_HD GpuChunk gpu_chunk(std::uint8_t fmt, std::int64_t len, int value_bytes) {
  GpuChunk g;
  g.lut = (fmt & 1) != 0;
  g.wc = 1 << ((fmt >> 1) & 3);
  g.wr = 1 << ((fmt >> 3) & 3);
  g.wv = g.lut ? 1 : value_bytes;
  g.row_at = 0;
  g.col_at = pad8(g.wr * len);
  g.val_at = g.col_at + pad8(g.wc * len);
  g.bytes = g.val_at + pad8(g.wv * len);
  return g;
}
/// Smallest width in {1,2,4,8} bytes holding v >= 0, as log2.
SPMAT_BCCOO_HD int width_log2(std::uint64_t v) {
  if (v <= 0xFF) return 0;
  if (v <= 0xFFFF) return 1;
  if (v <= 0xFFFFFFFFull) return 2;
  return 3;
}
/// Format byte of a bccoo-gpu chunk whose values are all in the table (all_lut), whose columns
/// span col_span (largest − smallest) and whose rows span row_span (last − first): the host and
/// the device builder both decide with it.
SPMAT_BCCOO_HD std::uint8_t chunk_format(bool all_lut, std::uint64_t col_span,
                                         std::uint64_t row_span) {
  return static_cast<std::uint8_t>((all_lut ? 1 : 0) | width_log2(col_span) << 1 |
                                   width_log2(row_span) << 3);
}
/// Little-endian unsigned of w ∈ {1,2,4,8} bytes at p (host: memcpy).
inline std::uint64_t load_uint(const std::uint8_t* p, int w) {
  switch (w) {
    case 1: return *p;
    case 2: return load<std::uint16_t>(p);
    case 4: return load<std::uint32_t>(p);
    default: return load<std::uint64_t>(p);
  }
}
}  // namespace bccoo

namespace bccoo {
/// Entries per thread of the stream kernel (8: every per-thread slice of a 1/2/4/8-byte
/// sub-array is a whole number of aligned 8-byte words).
inline constexpr int kStreamPerThread = 8;
/// Largest chunk the stream kernel takes: one block of at most 512 threads × 8 entries.
inline constexpr std::int64_t kStreamMaxChunk = 512 * kStreamPerThread;
/// The SpMV kernel that option kernel=auto (the default) picks from the per-chunk formats
/// (LUT | log2 w_c << 1 | log2 w_r << 3): `block` when more than half of the chunks are raw
/// (no value table) with column offsets of 4 or 8 bytes (a chunk's columns span >= 65,536: the
/// x gathers are scattered and their latency bounds the kernel — H100, fp64 ms:
/// random_k:2000000:16 block 0.345 ms vs stream 0.384, rmat:21:16 0.337 vs 0.384), else `stream`
/// (local columns or table-compressed chunks: bandwidth-bound — lap2d 0.110 vs 0.116, lap3d
/// 0.125 vs 0.138, banded 0.110 vs 0.117, G3_circuit 0.055 vs 0.059: G3 has 52% wide chunks,
/// but all use the table). No chunks: stream.
/// Example: formats {0x04, 0x04, 0x02} (two raw chunks with w_c = 4) → block; {0x05, 0x05, 0x04}
/// (two of them use the table) → stream.
/// The rule from the count of such chunks (the device builder counts them on the GPU).
inline BccooGpuKernel auto_kernel(std::uint64_t wide_raw_chunks, std::uint64_t chunks) {
  return 2 * wide_raw_chunks > chunks ? BccooGpuKernel::block : BccooGpuKernel::stream;
}
/// A raw chunk (no value table) with column offsets of 4 or 8 bytes: what auto_kernel counts.
SPMAT_BCCOO_HD bool wide_raw(std::uint8_t f) { return (f & 1) == 0 && ((f >> 1) & 3) >= 2; }
inline BccooGpuKernel auto_kernel(const std::vector<std::uint8_t>& format) {
  std::uint64_t n = 0;
  for (std::uint8_t f : format) n += wide_raw(f) ? 1 : 0;
  return auto_kernel(n, format.size());
}
}  // namespace bccoo

/// The CPU format `bccoo` (byte-level encoding of spec §2).
template <class Value, class Index>
struct Bccoo : MatrixDims<Value, Index> {
  std::int64_t nnz = 0;
  std::int64_t chunk = 1024;             ///< b
  std::int64_t last_row = -1;            ///< row of the last entry (-1 when nnz == 0)
  std::vector<Value> lut;                ///< 256 entries
  std::vector<Index> row;                ///< nb: row of each chunk's first entry
  std::vector<std::int64_t> offset{0};   ///< nb+1: byte position of each chunk in data
  std::vector<std::uint8_t> data;        ///< the tuple stream

  /// Options: chunk = b >= 1 (default 1024). Throws UnsupportedError when a column index does
  /// not fit the 4-byte absolute field (cols > 2^32 − 1, int64 builds only).
  static Bccoo build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const {
    return lut.size() * sizeof(Value) + row.size() * sizeof(Index) +
           offset.size() * sizeof(std::int64_t) + data.size();
  }
  Shape shape() const { return {this->rows, this->cols, nnz}; }
  std::int64_t chunks() const { return static_cast<std::int64_t>(row.size()); }

  /// Decodes chunk h, calling f(row, col, value) per entry (markers advance the row).
  template <class F>
  void visit(std::int64_t h, F&& f) const {
    const std::uint8_t* d = data.data();
    std::int64_t k = offset[h];
    const std::int64_t end = offset[h + 1];
    std::int64_t r = row[h], c = 0;
    while (k < end) {
      const std::uint8_t t = d[k++];
      const std::uint8_t low = t & 0x7F;
      if (low == 0x7F) {
        ++r;
        continue;
      }
      if (low == bccoo::kAbsolute) {
        c = bccoo::load<std::uint32_t>(d + k);
        k += 4;
      } else if (low == bccoo::kDelta16) {
        c += bccoo::load<std::uint16_t>(d + k);
        k += 2;
      } else {
        c += low;
      }
      Value v;
      if (t & bccoo::kLutFlag) {
        v = lut[d[k++]];
      } else {
        v = bccoo::load<Value>(d + k);
        k += sizeof(Value);
      }
      f(r, c, v);
    }
  }
};

/// The GPU format `bccoo-gpu` (per-chunk uniform encoding; spec §4 [D]).
template <class Value, class Index>
struct BccooGpu : MatrixDims<Value, Index> {
  std::int64_t nnz = 0;
  std::int64_t chunk = 1024;
  std::int64_t last_row = -1;
  std::vector<Value> lut;                ///< 256 entries
  std::vector<Index> row;                ///< nb: row of each chunk's first entry
  std::vector<Index> column;             ///< nb: smallest column of each chunk
  std::vector<std::uint8_t> format;      ///< nb: LUT | log2 w_c << 1 | log2 w_r << 3
  std::vector<std::int64_t> offset{0};   ///< nb+1, multiples of 8
  std::vector<std::uint8_t> data;
  /// Table entries that hold real values (min(256, #distinct values)); the CUDA kernel copies
  /// only these to shared memory. Not part of the footprint (derived, one int).
  std::int32_t lut_used = 0;
  /// CUDA SpMV kernel: stream (default; persistent blocks with prefetch, thread-sequential decode
  /// of 8 entries, deterministic, bccoo_cuda.cu), block (same decode, one block per chunk) or
  /// atomic (warp segmented sum + atomicAdd).
  /// chunk > bccoo::kStreamMaxChunk always uses atomic.
  BccooGpuKernel kernel = BccooGpuKernel::stream;
  /// Blocks of the persistent stream kernel: 0 (default) = one wave of resident blocks (at most
  /// one per chunk); n > 0 caps the grid at n (tests force many chunks per block with it).
  std::int64_t blocks = 0;
  /// L2 prefetch distance of the stream kernel, in chunks of the same block: 0 none, 1 (default)
  /// the block's next chunk, 2 the one after it.
  std::int64_t prefetch = 1;

  /// Options: chunk = b >= 1 (default 1024); kernel = auto | stream | block | atomic (default
  /// auto: bccoo::auto_kernel picks stream or block from the chunk formats);
  /// blocks >= 0 (default 0, see above); prefetch = 0 | 1 | 2 (default 1).
  static BccooGpu build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const {
    return lut.size() * sizeof(Value) + (row.size() + column.size()) * sizeof(Index) +
           format.size() + offset.size() * sizeof(std::int64_t) + data.size();
  }
  Shape shape() const { return {this->rows, this->cols, nnz}; }
  std::int64_t chunks() const { return static_cast<std::int64_t>(row.size()); }
  std::int64_t chunk_len(std::int64_t h) const { return std::min(chunk, nnz - h * chunk); }

  template <class F>
  void visit(std::int64_t h, F&& f) const {
    const std::int64_t len = chunk_len(h);
    const bccoo::GpuChunk g = bccoo::gpu_chunk(format[h], len, sizeof(Value));
    const std::uint8_t* base = data.data() + offset[h];
    const std::int64_t r0 = row[h], c0 = column[h];
    for (std::int64_t e = 0; e < len; ++e) {
      const std::int64_t r = r0 + static_cast<std::int64_t>(bccoo::load_uint(base + g.row_at + e * g.wr, g.wr));
      const std::int64_t c = c0 + static_cast<std::int64_t>(bccoo::load_uint(base + g.col_at + e * g.wc, g.wc));
      const Value v = g.lut ? lut[base[g.val_at + e]] : bccoo::load<Value>(base + g.val_at + e * g.wv);
      f(r, c, v);
    }
  }
};

template <class Value, class Index>
std::size_t traffic_bytes(const Bccoo<Value, Index>& s, Op op, std::int64_t k) {
  return default_traffic(s.storage_bytes(), op, s.shape(), k, sizeof(Value));
}

// CPU kernels (bccoo_cpu.cpp), deterministic (chunk_driver.hpp): spmv over chunks with a
// static schedule, first/last-row partials combined in chunk order; spmv_t by scatter_reduce.
SPMAT_DECLARE_CPU_KERNELS(Bccoo);
SPMAT_FORMAT_FUNCTIONS(BccooGpu);

/// The same device storage as BccooGpu::build followed by the upload, built on the GPU from a
/// validated device CSR (bccoo_device_build.cu). No update_values: a chunk's value encoding
/// (table index or raw) and the table itself depend on the values, so new values are a new
/// layout (rebuild).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(std::type_identity<BccooGpu<Value, Index>>,
                                                          const DeviceCsr<Value, Index>& a,
                                                          const FormatOptions& o);

}  // namespace spmat
