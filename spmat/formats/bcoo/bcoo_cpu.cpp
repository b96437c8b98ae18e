// spmat/formats/bcoo/bcoo_cpu.cpp — OpenMP kernels of BCOO: chunked spmv and spmv_t.
// SPDX-License-Identifier: MIT
#include "spmat/formats/bcoo/bcoo.hpp"
#include "spmat/formats/bcoo/chunk_driver.hpp"

namespace spmat {

// Contract: x has cols entries, y rows entries (spmv_t swaps them); caller allocates. Canonical
// COO: no duplicates; explicit zeros multiplied like any entry (0·Inf = NaN propagates); empty
// rows give alpha*0 + beta*y and beta == 0 never reads y. Chunks of b nonzeros under a static
// schedule (balanced by nonzeros); deterministic (see chunk_driver.hpp). Work 2·nnz flops;
// bytes: nnz·(2I+V) + x + y (+ 2 partials per chunk).
template <class Value, class Index>
void spmv(const Bcoo<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const auto& a = s.a;
  const std::int64_t nb = s.chunks();
  const std::int64_t last = nb > 0 ? static_cast<std::int64_t>(a.row_idx.back()) : -1;
  chunked::spmv<Value>(a.rows, nb, [&](std::int64_t h) -> std::int64_t { return a.row_idx[h * s.chunk]; }, last, x, y, alpha, beta,
                              [&](std::int64_t h, auto&& f) { s.visit(h, f); });
}

template <class Value, class Index>
void spmv_t(const Bcoo<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  chunked::spmv_t<Value>(s.a.cols, s.chunks(), x, y, alpha, beta,
                         [&](std::int64_t h, auto&& f) { s.visit(h, f); });
}

SPMAT_INSTANTIATE_CPU_KERNELS(Bcoo)

}  // namespace spmat
