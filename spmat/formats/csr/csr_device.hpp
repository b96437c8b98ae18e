// spmat/formats/csr/csr_device.hpp — the CUDA storage of CSR: the three arrays (owned, or
// adopted from a device CSR without a copy) plus the kernel plan.
// SPDX-License-Identifier: MIT
//
// Built two ways with the same result: CsrDevice::upload (csr_cuda.cu) from the host storage,
// and CsrDevice::adopt (csr_device_build.cu) from a validated DeviceCsr. upload plans the
// kernels with set_plan from the host arrays, adopt on the device from the device arrays: the
// plan (csr_plan.hpp) reads the row lengths and, where a choice depends on it, a sample of the
// columns (csr_plan::ColumnLocality), the same integers either way, so both ways choose the
// same kernels, bins and tiles.
//
// Narrow columns (option narrow_cols, csr_narrow_columns below): with 64-bit indices and
// cols <= INT32_MAX the column indices are stored as 32-bit (col_idx32; col_idx stays empty),
// row_ptr stays 64-bit. An SpMV then reads 4 bytes less per nonzero; the kernels take the column
// type as a template parameter (with_col_idx picks the pointer) and sum in the same order, so
// the products are bitwise those of the wide storage. upload converts the columns on the way
// in, through one bounded host staging buffer; adopt narrows them on the device, which copies
// the columns (row_ptr and values are still adopted as they are; the DeviceCsr's own col_idx is
// then not read and not counted, and lives as long as its owner); narrow_cols=off adopts all
// three arrays. download widens the columns back to Index.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/formats/csr/csr.hpp"
#include "spmat/formats/csr/csr_plan.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

/// The uploaded or adopted CSR plus the per-kernel precomputation (all built in setup).
template <class Value, class Index>
struct CsrDevice {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  CsrKernel kernel = CsrKernel::automatic;  ///< as planned (automatic may have become scalar)
  bool merge_spmv = false;  ///< automatic: spmv by the merge-path tiles (RowPlan::merge_spmv)
  int tpr = 2;  ///< lanes per row (adaptive spmv, and every spmv_t but merge's)
  bool batched = false;  ///< the sub-warp spmv batches its strided steps (RowPlan::batched)
  // The options it was built with, for download().
  CsrKernel built_kernel = CsrKernel::automatic;
  int built_tpr = 0;
  CsrBins built_bins = CsrBins::automatic;
  CsrNarrowCols built_narrow_cols = CsrNarrowCols::automatic;
  cuda::DeviceArray<Index> row_ptr, col_idx;  ///< col_idx: the columns unless narrow
  cuda::DeviceArray<Value> values;
  bool narrow = false;                        ///< the columns are col_idx32 (Index is 64-bit)
  cuda::DeviceBuffer<std::int32_t> col_idx32;  ///< nnz when narrow, else empty

  // Rows longer than short_max are skipped by the sub-warp kernels (csr_plan::RowPlan): the
  // medium list (binned auto kernel only) and the long-row chunks own them.
  std::int64_t short_max = csr_plan::kNoLongRows;
  bool t_whole_rows = false;  // spmv_t: the sub-warp kernel takes every row (RowPlan::t_whole_rows)
  std::int64_t n_medium = 0;
  cuda::DeviceBuffer<std::int64_t> medium_rows;     // n_medium: row ids, a warp each

  // Long rows: rows split in chunks (csr_plan::RowPlan::chunk nonzeros each).
  std::int64_t n_long = 0, n_chunks = 0;
  cuda::DeviceBuffer<std::int64_t> long_rows;       // n_long: row ids
  cuda::DeviceBuffer<std::int64_t> long_chunk_ptr;  // n_long+1: chunks of long row l
  cuda::DeviceBuffer<std::int64_t> chunk_row;       // n_chunks: row of each chunk
  cuda::DeviceBuffer<std::int64_t> chunk_begin;     // n_chunks: first nonzero of each chunk
  cuda::DeviceBuffer<std::int64_t> chunk_long;      // n_chunks: long-row index of each chunk
  mutable cuda::DeviceBuffer<Value> chunk_partial;  // n_chunks: per-chunk sums (workspace)
  mutable cuda::DeviceBuffer<unsigned> long_done;   // n_long: chunks finished (zero between products)

  // Merge path (kernel == merge, or merge_spmv): tiles of kMergeBlock·merge_ipt items, one
  // block each.
  int merge_ipt = csr_plan::kMergeIpt;  // MergePlan::ipt
  std::int64_t n_tiles = 0;
  cuda::DeviceBuffer<std::int64_t> tile_row;     // n_tiles+1: start row of each tile
  // Owner completion (MergePlan::owner): n_tiles ownership words, and no carries; else empty.
  cuda::DeviceBuffer<std::int32_t> tile_own;
  mutable cuda::DeviceBuffer<Value> tile_carry;  // n_tiles: partial of the tile's last row
  mutable cuda::DeviceBuffer<Value> tile_head;   // n_tiles: partial of the first row, if finished
  bool merge_skewed = false;  // MergePlan::skewed: the tile kernel variant
  std::int64_t n_long_fix = 0;
  cuda::DeviceBuffer<std::int64_t> fix_tile, fix_first;  // n_long_fix: wide fix-ups

  /// From the host storage (csr_cuda.cu).
  static CsrDevice upload(const CsrStorage<Value, Index>& s) { return upload(s.a, s); }
  /// From the CSR `a`, with the kernel options of `options` (csr_cuda.cu).
  static CsrDevice upload(const Csr<Value, Index>& a, const CsrStorage<Value, Index>& options);
  /// Adopts the arrays of `a` (validated) without copying them; `options` is a storage built
  /// from an empty CSR, carrying the kernel options only (csr_device_build.cu).
  static CsrDevice adopt(const DeviceCsr<Value, Index>& a, const CsrStorage<Value, Index>& options);
  /// Plans the kernels for the options of `s` from host copies of row_ptr and col_idx
  /// (csr_cuda.cu).
  void set_plan(const Index* host_row_ptr, const Index* host_col_idx, const CsrStorage<Value, Index>& s);
  /// The row part of set_plan from a plan already made (csr_plan::plan_rows or
  /// plan_rows_without_lists): kernel, lanes, bins and long-row chunks.
  void apply_row_plan(const csr_plan::RowPlan& p, const CsrStorage<Value, Index>& s);
  /// The merge-path tiles from host copies of row_ptr and col_idx (set_plan does this for
  /// kernel=merge and merge_spmv).
  void set_merge_tiles(const Index* host_row_ptr, const Index* host_col_idx);

  // The CSR arrays held (spmat/cuda/array_list.hpp; one of the two column arrays is empty):
  // what a product reads, so storage_bytes and the traffic model count the column width
  // stored. The plan arrays, built on the device from the plan, have no host counterpart. Not a
  // ListedArrays struct: stored_arrays (csr_device_build.cu) lists the columns held as
  // "col_idx" and puts the plan scalars between the two lists.
  static auto arrays(auto& d) {
    return std::tuple{cuda::Field{"row_ptr", d.row_ptr}, cuda::Field{"col_idx", d.col_idx},
                      cuda::Field{"col_idx32", d.col_idx32}, cuda::Field{"values", d.values}};
  }
  static auto plan_arrays(auto& d) {
    return std::tuple{cuda::Field{"medium_rows", d.medium_rows},
                      cuda::Field{"long_rows", d.long_rows},
                      cuda::Field{"long_chunk_ptr", d.long_chunk_ptr},
                      cuda::Field{"chunk_row", d.chunk_row},
                      cuda::Field{"chunk_begin", d.chunk_begin},
                      cuda::Field{"chunk_long", d.chunk_long},
                      cuda::Field{"tile_row", d.tile_row},
                      cuda::Field{"tile_own", d.tile_own},
                      cuda::Field{"fix_tile", d.fix_tile},
                      cuda::Field{"fix_first", d.fix_first}};
  }

  Shape shape() const { return {rows, cols, nnz}; }
  /// Every device byte held: the CSR arrays (adopted ones included: the matrix holds them as
  /// long as it lives; the columns at the width stored), the plan arrays and the work buffers
  /// (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return cuda::storage_bytes(arrays(*this)) + cuda::storage_bytes(plan_arrays(*this)) +
           chunk_partial.bytes() + long_done.bytes() + tile_carry.bytes() + tile_head.bytes();
  }
  /// The host storage these arrays and options make (downloads).
  CsrStorage<Value, Index> download() const;
};

/// Whether the CUDA storage of a `cols`-column matrix keeps 32-bit columns under `mode` (the
/// option narrow_cols): only for a 64-bit Index, and then when cols <= INT32_MAX unless mode is
/// off. mode on with cols > INT32_MAX throws ParseError naming cols, before anything is
/// allocated.
template <class Index>
bool csr_narrow_columns(std::int64_t cols, CsrNarrowCols mode) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  if constexpr (sizeof(Index) <= sizeof(std::int32_t)) {
    return false;  // the columns are 32-bit already
  } else {
    if (mode == CsrNarrowCols::off) return false;
    if (cols <= kMax) return true;
    if (mode == CsrNarrowCols::on)
      options_detail::bad_value("csr", "narrow_cols", "on",
                                "needs cols <= INT32_MAX = " + std::to_string(kMax) +
                                    " for 32-bit column indices, but the matrix has cols = " +
                                    std::to_string(cols) + " (use narrow_cols=auto or off)");
    return false;
  }
}

/// fn(cols) with the device pointer of the columns `d` holds: const std::int32_t* when narrow,
/// else const Index*. With a 32-bit Index only the Index path is instantiated.
template <class Value, class Index, class Fn>
decltype(auto) with_col_idx(const CsrDevice<Value, Index>& d, Fn&& fn) {
  if constexpr (sizeof(Index) > sizeof(std::int32_t)) {
    if (d.narrow) return fn(d.col_idx32.data());
  }
  return fn(d.col_idx.data());
}

// Value updates and test access (csr_device_build.cu).
template <class Value, class Index>
void update_values(CsrDevice<Value, Index>& d, const Value* values, Memory where);
template <class Value, class Index>
void upload_values(CsrDevice<Value, Index>& d, const CsrStorage<Value, Index>& s);
template <class Value, class Index>
std::vector<StoredArray> stored_arrays(const CsrDevice<Value, Index>& d);

/// The device-only matrix over `d` (csr_cuda.cu, where the kernels are).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(CsrDevice<Value, Index>&& d);

}  // namespace spmat
