// spmat/formats/bccoo/bccoo_cpu.cpp — OpenMP kernels of bccoo and bccoo-gpu (host decode of each
// chunk, the shared nonzero-balanced driver of spmat/formats/bcoo/chunk_driver.hpp).
// SPDX-License-Identifier: MIT
#include "spmat/core/transposed_kernels.hpp"
#include "spmat/formats/bccoo/bccoo.hpp"
#include "spmat/formats/bcoo/chunk_driver.hpp"

namespace spmat {

// Contract (all four): spmv: x has cols entries, y rows entries (spmv_t swaps them); caller
// allocates. Canonical input: no duplicates; explicit zeros are stored and multiplied (0·Inf =
// NaN propagates); empty rows give alpha*0 + beta*y, and beta == 0 never reads y. Chunks of b
// nonzeros under a static schedule, decoded with memcpy loads (unaligned-safe). Deterministic
// and, for spmv, independent of the thread count (no atomics: chunk_driver.hpp). Work 2·nnz
// flops plus the decode; bytes: storage_bytes + x + y (+ 2 partials per chunk).
namespace {
// Bccoo and BccooGpu store the same chunk headers (row, last_row) and decode a chunk with
// visit(): one driver call per direction serves both.
template <bool Transposed, class Storage, class Value>
void chunked_product(const Storage& s, const Value* x, Value* y, Value alpha, Value beta) {
  if constexpr (Transposed)
    chunked::spmv_t<Value>(s.cols, s.chunks(), x, y, alpha, beta,
                           [&](std::int64_t h, auto&& f) { s.visit(h, f); });
  else
    chunked::spmv<Value>(
        s.rows, s.chunks(), [&](std::int64_t h) -> std::int64_t { return s.row[h]; }, s.last_row,
        x, y, alpha, beta, [&](std::int64_t h, auto&& f) { s.visit(h, f); });
}
}  // namespace

SPMAT_DEFINE_KERNELS_BY_DIRECTION(Bccoo, chunked_product)
SPMAT_DEFINE_KERNELS_BY_DIRECTION(BccooGpu, chunked_product)

#define SPMAT_INSTANTIATE(V, I)                                      \
  template void spmv(const Bccoo<V, I>&, const V*, V*, V, V);        \
  template void spmv_t(const Bccoo<V, I>&, const V*, V*, V, V);      \
  template void spmv(const BccooGpu<V, I>&, const V*, V*, V, V);     \
  template void spmv_t(const BccooGpu<V, I>&, const V*, V*, V, V);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
