// spmat/formats/csr/csr_cpu.cpp — OpenMP kernels of CSR: spmv, spmv_t, spmm, add.
// SPDX-License-Identifier: MIT
#include <algorithm>

#include "spmat/core/parallel.hpp"
#include "spmat/core/transposed_kernels.hpp"
#include "spmat/formats/csr/compressed_cpu.hpp"
#include "spmat/formats/csr/csr.hpp"

namespace spmat {

// Contract: x has cols entries, y rows entries (spmv_t swaps them); caller allocates. Stored
// duplicates cannot occur (canonical CSR); explicit zeros are multiplied like any entry; empty
// rows give alpha*0 + beta*y. spmv: rows split dynamically in chunks of up to 256, at least 8
// a thread (chunking keeps imbalanced rows from stalling one thread), a row of more than two
// kGatherSegment segments summed segment by segment in tasks; spmv_t: with at least 8
// columns a row each thread owns a range of y (compressed_scatter_by_ranges), else
// scatter_reduce over the rows. Work 2·nnz flops; bytes as traffic_bytes.
namespace {
template <bool Transposed, class Value, class Index>
void rows_product(const CsrStorage<Value, Index>& s, const Value* x, Value* y, Value alpha,
                  Value beta) {
  compressed_product<Transposed>(s.a.rows, s.a.cols, s.a.row_ptr, s.a.col_idx, s.a.values, x, y,
                                 alpha, beta);
}
}  // namespace

SPMAT_DEFINE_KERNELS_BY_DIRECTION(CsrStorage, rows_product)

template <class Value, class Index>
void spmm(const CsrStorage<Value, Index>& s, const Value* b, Value* c, std::int64_t k,
          DenseLayout layout, Value alpha, Value beta) {
  const auto& a = s.a;
  const std::int64_t m = a.rows, n = a.cols;
#pragma omp parallel
  {
    std::vector<Value> acc(static_cast<std::size_t>(k));
#pragma omp for schedule(dynamic, 64)
    for (Index r = 0; r < a.rows; ++r) {
      std::fill(acc.begin(), acc.end(), Value(0));
      for (Index p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
        const Value v = a.values[p];
        const std::int64_t col = a.col_idx[p];
        if (layout == DenseLayout::row_major)
          for (std::int64_t j = 0; j < k; ++j) acc[j] += v * b[col * k + j];
        else
          for (std::int64_t j = 0; j < k; ++j) acc[j] += v * b[j * n + col];
      }
      for (std::int64_t j = 0; j < k; ++j) {
        Value& out = layout == DenseLayout::row_major ? c[r * k + j] : c[j * m + r];
        axpby_store(out, alpha, acc[j], beta);
      }
    }
  }
}

template <class Value, class Index>
Csr<Value, Index> csr_add(const Csr<Value, Index>& a, const Csr<Value, Index>& b, Value alpha,
                          Value beta) {
  Csr<Value, Index> c;
  c.rows = a.rows;
  c.cols = a.cols;
  c.row_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
  // Pass 1: row lengths of the union pattern; pass 2: merge.
#pragma omp parallel for schedule(dynamic, 256)
  for (Index r = 0; r < a.rows; ++r) {
    Index i = a.row_ptr[r], j = b.row_ptr[r], n = 0;
    while (i < a.row_ptr[r + 1] || j < b.row_ptr[r + 1]) {
      if (j == b.row_ptr[r + 1] || (i < a.row_ptr[r + 1] && a.col_idx[i] < b.col_idx[j])) ++i;
      else if (i == a.row_ptr[r + 1] || b.col_idx[j] < a.col_idx[i]) ++j;
      else ++i, ++j;
      ++n;
    }
    c.row_ptr[r + 1] = n;
  }
  for (Index r = 0; r < a.rows; ++r) c.row_ptr[r + 1] += c.row_ptr[r];
  c.col_idx.resize(static_cast<std::size_t>(c.row_ptr[a.rows]));
  c.values.resize(c.col_idx.size());
#pragma omp parallel for schedule(dynamic, 256)
  for (Index r = 0; r < a.rows; ++r) {
    Index i = a.row_ptr[r], j = b.row_ptr[r], o = c.row_ptr[r];
    while (i < a.row_ptr[r + 1] || j < b.row_ptr[r + 1]) {
      if (j == b.row_ptr[r + 1] || (i < a.row_ptr[r + 1] && a.col_idx[i] < b.col_idx[j])) {
        c.col_idx[o] = a.col_idx[i];
        c.values[o] = alpha * a.values[i++];
      } else if (i == a.row_ptr[r + 1] || b.col_idx[j] < a.col_idx[i]) {
        c.col_idx[o] = b.col_idx[j];
        c.values[o] = beta * b.values[j++];
      } else {
        c.col_idx[o] = a.col_idx[i];
        c.values[o] = alpha * a.values[i++] + beta * b.values[j++];
      }
      ++o;
    }
  }
  return c;
}

template <class Value, class Index>
CsrStorage<Value, Index> add(const CsrStorage<Value, Index>& a, const CsrStorage<Value, Index>& b,
                             Value alpha, Value beta) {
  return {csr_add(a.a, b.a, alpha, beta), a.kernel};
}

SPMAT_INSTANTIATE_CPU_KERNELS(CsrStorage)
#define SPMAT_INSTANTIATE(V, I)                                                                \
  template void spmm(const CsrStorage<V, I>&, const V*, V*, std::int64_t, DenseLayout, V, V);  \
  template Csr<V, I> csr_add(const Csr<V, I>&, const Csr<V, I>&, V, V);                        \
  template CsrStorage<V, I> add(const CsrStorage<V, I>&, const CsrStorage<V, I>&, V, V);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
