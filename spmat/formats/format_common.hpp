// spmat/formats/format_common.hpp — what most format templates share: the declarations of the
// free functions (the head of the storage struct is MatrixDims, spmat/core/csr.hpp).
// SPDX-License-Identifier: MIT
//
// A format Fmt<Value, Index> is reached through free functions found by argument-dependent
// lookup (format_adapter.hpp lists them). Most formats declare the same signatures, so the
// macros below write them once: macros, because a function template over Fmt<Value, Index>
// cannot be declared for a whole family of class templates any other way. They declare what
// the format's own files define and instantiate; only the default traffic_bytes is defined here.
#pragma once
#include <memory>
#include <type_traits>

#include "spmat/core/csr.hpp"
#include "spmat/core/device_csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat::detail {
/// COO already in canonical order (row-major, columns ascending, no duplicates: what to_coo
/// gives) -> CSR in O(nnz + rows): only row_ptr is rebuilt, nothing is sorted or checked. For
/// the storages that keep such a COO (coo, bcoo); users convert with to_csr, which checks.
template <class Value, class Index>
Csr<Value, Index> sorted_coo_to_csr(const Coo<Value, Index>& a);
}  // namespace spmat::detail

namespace spmat {
/// An empty Coo of shape rows×cols with room for `nnz` entries: what a format's decoder appends
/// its entries to before the final to_csr (which sorts, so decoders may emit in any order).
template <class Value, class Index>
Coo<Value, Index> reserved_coo(std::int64_t rows, std::int64_t cols, std::int64_t nnz) {
  Coo<Value, Index> c;
  c.rows = static_cast<Index>(rows);
  c.cols = static_cast<Index>(cols);
  c.row_idx.reserve(static_cast<std::size_t>(nnz));
  c.col_idx.reserve(static_cast<std::size_t>(nnz));
  c.values.reserve(static_cast<std::size_t>(nnz));
  return c;
}
}  // namespace spmat

/// The CPU kernels spmv (y = alpha·A·x + beta·y) and spmv_t (with Aᵀ) of Fmt.
#define SPMAT_DECLARE_CPU_KERNELS(Fmt)                                                            \
  template <class Value, class Index>                                                             \
  void spmv(const Fmt<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta);       \
  template <class Value, class Index>                                                             \
  void spmv_t(const Fmt<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta)

/// Explicit instantiation of the two kernels of SPMAT_DECLARE_CPU_KERNELS for every type pair
/// (at the end of the format's _cpu.cpp).
#define SPMAT_INSTANTIATE_CPU_KERNELS(Fmt)                                                        \
  SPMAT_INSTANTIATE_CPU_KERNELS_FOR(Fmt, float, std::int32_t)                                     \
  SPMAT_INSTANTIATE_CPU_KERNELS_FOR(Fmt, float, std::int64_t)                                     \
  SPMAT_INSTANTIATE_CPU_KERNELS_FOR(Fmt, double, std::int32_t)                                    \
  SPMAT_INSTANTIATE_CPU_KERNELS_FOR(Fmt, double, std::int64_t)
#define SPMAT_INSTANTIATE_CPU_KERNELS_FOR(Fmt, V, I)                                              \
  template void spmv(const Fmt<V, I>&, const V*, V*, V, V);                                       \
  template void spmv_t(const Fmt<V, I>&, const V*, V*, V, V);

/// The CUDA backend made from host storage of Fmt (defined in the format's _cuda.cu).
#define SPMAT_DECLARE_CUDA_IMPL(Fmt)                                                              \
  template <class Value, class Index>                                                             \
  std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(Fmt<Value, Index>&& host)

/// What a format with CPU kernels and a CUDA backend provides when its products read its
/// storage once: traffic_bytes (defined here: default_traffic of storage_bytes), spmv, spmv_t
/// and make_cuda_impl.
#define SPMAT_FORMAT_FUNCTIONS(Fmt)                                                               \
  template <class Value, class Index>                                                             \
  std::size_t traffic_bytes(const Fmt<Value, Index>& s, Op op, std::int64_t k) {                  \
    return default_traffic(s.storage_bytes(), op, s.shape(), k, sizeof(Value));                   \
  }                                                                                               \
  SPMAT_DECLARE_CPU_KERNELS(Fmt);                                                                 \
  SPMAT_DECLARE_CUDA_IMPL(Fmt)

/// update_values (new values in CSR order, into the stored places) and build_cuda_from_device
/// (the same storage built on the GPU from a validated device CSR) of Fmt.
#define SPMAT_DECLARE_VALUE_UPDATE_AND_DEVICE_BUILD(Fmt)                                          \
  template <class Value, class Index>                                                             \
  void update_values(Fmt<Value, Index>& s, const Value* values);                                  \
  template <class Value, class Index>                                                             \
  std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(                                      \
      std::type_identity<Fmt<Value, Index>>, const DeviceCsr<Value, Index>& a,                    \
      const FormatOptions& o)
