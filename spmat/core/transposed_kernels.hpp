// spmat/core/transposed_kernels.hpp — spmv and spmv_t of a storage whose two products are one
// function template over the direction. Internal (not installed).
// SPDX-License-Identifier: MIT
#pragma once

/// Defines spmv (y = alpha·A·x + beta·y) and spmv_t (with Aᵀ) of Fmt<Value, Index> — the
/// signatures SPMAT_DECLARE_CPU_KERNELS (spmat/formats/format_common.hpp) declares, for a host or
/// a device storage — as impl<false> and impl<true>, where `impl` is a function template
/// template <bool Transposed, ...> impl(const Fmt<Value, Index>&, const Value* x, Value* y,
/// Value alpha, Value beta). Expand it in namespace spmat of the file that defines `impl`, then
/// instantiate spmv and spmv_t there as usual. A macro, as format_common.hpp says, because a
/// function template over Fmt<Value, Index> cannot be written for a family of class templates.
#define SPMAT_DEFINE_KERNELS_BY_DIRECTION(Fmt, impl)                                             \
  template <class Value, class Index>                                                           \
  void spmv(const Fmt<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {     \
    impl<false>(s, x, y, alpha, beta);                                                          \
  }                                                                                             \
  template <class Value, class Index>                                                           \
  void spmv_t(const Fmt<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {   \
    impl<true>(s, x, y, alpha, beta);                                                           \
  }
