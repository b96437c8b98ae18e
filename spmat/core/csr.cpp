// spmat/core/csr.cpp — validation and conversions of the canonical host types.
// SPDX-License-Identifier: MIT
#include "spmat/core/csr.hpp"

#include <omp.h>

#include <algorithm>
#include <numeric>

namespace spmat {

namespace {
[[noreturn]] void invalid(std::string_view what, const std::string& msg) {
  throw InvalidMatrixError(std::string(what) + ": " + msg);
}

// Where each index 0..n-1 starts (n + 1 entries) once the entries are grouped by `idx`: the
// buckets of a counting sort, and the row_ptr / col_ptr of the grouped arrays.
template <class Index>
std::vector<Index> group_offsets(const std::vector<Index>& idx, Index n) {
  std::vector<Index> ptr(static_cast<std::size_t>(n) + 1, 0);
  for (const Index i : idx) ++ptr[static_cast<std::size_t>(i) + 1];
  std::partial_sum(ptr.begin(), ptr.end(), ptr.begin());
  return ptr;
}
}  // namespace

template <class Value, class Index>
void Csr<Value, Index>::validate(std::string_view what) const {
  const Index rows = this->rows, cols = this->cols;
  if (rows < 0 || cols < 0)
    invalid(what, "negative dimensions " + std::to_string(rows) + "x" + std::to_string(cols));
  if (row_ptr.size() != static_cast<std::size_t>(rows) + 1)
    invalid(what, "row_ptr has " + std::to_string(row_ptr.size()) + " entries, expected rows+1 = " +
                      std::to_string(static_cast<std::int64_t>(rows) + 1));
  if (values.size() != col_idx.size())
    invalid(what, "values has " + std::to_string(values.size()) + " entries but col_idx has " +
                      std::to_string(col_idx.size()));
  if (row_ptr[0] != 0) invalid(what, "row_ptr[0] = " + std::to_string(row_ptr[0]) + ", expected 0");
  if (static_cast<std::size_t>(row_ptr[rows]) != col_idx.size())
    invalid(what, "row_ptr[rows] = " + std::to_string(row_ptr[rows]) + " but nnz = " +
                      std::to_string(col_idx.size()));
  // Check row_ptr completely before walking any row, so a row_ptr that rises past nnz and then
  // falls back cannot send the column walk out of bounds.
  for (Index r = 0; r < rows; ++r) {
    if (row_ptr[r + 1] < row_ptr[r])
      invalid(what, "row_ptr decreases at row " + std::to_string(r));
    if (static_cast<std::size_t>(row_ptr[r + 1]) > col_idx.size())
      invalid(what, "row_ptr[" + std::to_string(r + 1) + "] = " + std::to_string(row_ptr[r + 1]) +
                        " exceeds nnz = " + std::to_string(col_idx.size()));
  }
  // The column walk runs in parallel; only when some row is bad does the serial walk below
  // run, to name the first violation (the message does not depend on the thread count).
  bool all_good = true;
#pragma omp parallel for schedule(dynamic, 4096) reduction(&& : all_good)
  for (Index r = 0; r < rows; ++r)
    for (Index k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
      const Index c = col_idx[k];
      if (c < 0 || c >= cols || (k > row_ptr[r] && col_idx[k - 1] >= c)) all_good = false;
    }
  if (all_good) return;
  for (Index r = 0; r < rows; ++r) {
    for (Index k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
      const Index c = col_idx[k];
      if (c < 0 || c >= cols)
        invalid(what, "column index " + std::to_string(c) + " in row " + std::to_string(r) +
                          " is out of range [0, " + std::to_string(cols) + ")");
      if (k > row_ptr[r] && col_idx[k - 1] >= c)
        invalid(what, "columns of row " + std::to_string(r) +
                          " are not strictly increasing (" + std::to_string(col_idx[k - 1]) +
                          " then " + std::to_string(c) + "): unsorted or duplicate");
    }
  }
}

template <class Value, class Index>
void Coo<Value, Index>::validate(std::string_view what) const {
  const Index rows = this->rows, cols = this->cols;
  if (rows < 0 || cols < 0)
    invalid(what, "negative dimensions " + std::to_string(rows) + "x" + std::to_string(cols));
  if (row_idx.size() != col_idx.size() || values.size() != col_idx.size())
    invalid(what, "array lengths differ: row_idx " + std::to_string(row_idx.size()) +
                      ", col_idx " + std::to_string(col_idx.size()) + ", values " +
                      std::to_string(values.size()));
  for (std::size_t k = 0; k < col_idx.size(); ++k) {
    if (row_idx[k] < 0 || row_idx[k] >= rows)
      invalid(what, "row index " + std::to_string(row_idx[k]) + " of entry " + std::to_string(k) +
                        " is out of range [0, " + std::to_string(rows) + ")");
    if (col_idx[k] < 0 || col_idx[k] >= cols)
      invalid(what, "column index " + std::to_string(col_idx[k]) + " of entry " +
                        std::to_string(k) + " is out of range [0, " + std::to_string(cols) + ")");
  }
}

template <class Value, class Index>
Csr<Value, Index> to_csr(const Coo<Value, Index>& a) {
  a.validate();
  const std::size_t n = a.col_idx.size();
  // Counting sort by row (stable), then sort columns within each row (stable, so duplicates
  // are summed in input order — deterministic).
  const std::vector<Index> count = group_offsets(a.row_idx, a.rows);
  std::vector<std::size_t> order(n);
  {
    std::vector<Index> next(count.begin(), count.end() - 1);
    for (std::size_t k = 0; k < n; ++k) order[next[a.row_idx[k]]++] = k;
  }
  Csr<Value, Index> c{a.rows, a.cols, std::vector<Index>(static_cast<std::size_t>(a.rows) + 1, 0)};
  c.col_idx.reserve(n);
  c.values.reserve(n);
  for (Index r = 0; r < a.rows; ++r) {
    auto first = order.begin() + count[r], last = order.begin() + count[r + 1];
    auto by_col = [&](std::size_t x, std::size_t y) { return a.col_idx[x] < a.col_idx[y]; };
    if (last - first <= 32) {
      // Short rows (the common case): insertion sort, stable and allocation-free.
      for (auto it = first + (first != last); it < last; ++it)
        for (auto j = it; j != first && by_col(*j, *(j - 1)); --j) std::iter_swap(j, j - 1);
    } else if (!std::is_sorted(first, last, by_col)) {
      std::stable_sort(first, last, by_col);
    }
    const std::size_t row_start = c.col_idx.size();
    for (auto it = first; it != last; ++it) {
      const Index col = a.col_idx[*it];
      if (c.col_idx.size() > row_start && c.col_idx.back() == col)
        c.values.back() += a.values[*it];  // duplicate: summed (explicit zeros stay stored)
      else {
        c.col_idx.push_back(col);
        c.values.push_back(a.values[*it]);
      }
    }
    c.row_ptr[r + 1] = static_cast<Index>(c.col_idx.size());
  }
  return c;
}

template <class Value, class Index>
Coo<Value, Index> to_coo(const Csr<Value, Index>& a) {
  Coo<Value, Index> c{a.rows, a.cols, std::vector<Index>(a.col_idx.size()), a.col_idx, a.values};
#pragma omp parallel for schedule(dynamic, 4096)
  for (Index r = 0; r < a.rows; ++r)
    std::fill(c.row_idx.begin() + a.row_ptr[r], c.row_idx.begin() + a.row_ptr[r + 1], r);
  return c;
}

namespace detail {
template <class Value, class Index>
Csr<Value, Index> sorted_coo_to_csr(const Coo<Value, Index>& a) {
  return {a.rows, a.cols, group_offsets(a.row_idx, a.rows), a.col_idx, a.values};
}
}  // namespace detail

template <class Value, class Index>
Csc<Value, Index> to_csc(const Csr<Value, Index>& a) {
  const std::size_t n = a.col_idx.size();
  const std::size_t cols = static_cast<std::size_t>(a.cols);
  // A parallel counting sort: thread t takes a contiguous range of rows (balanced by nonzeros),
  // counts its columns, and scatters its entries behind those of threads < t in each column,
  // so every column's rows come out in order, as the serial sort gives them. The per-thread
  // counts cost threads × cols indices, kept at most about nnz.
  const int threads = static_cast<int>(std::clamp<std::size_t>(
      std::min<std::size_t>(static_cast<std::size_t>(omp_get_max_threads()),
                            n / std::max<std::size_t>(cols, 1)),
      1, 64));
  std::vector<Index> first_row(static_cast<std::size_t>(threads) + 1, a.rows);
  for (int t = 0; t < threads; ++t)  // the first row whose start reaches t/threads of nnz
    first_row[t] = static_cast<Index>(
        std::lower_bound(a.row_ptr.begin(), a.row_ptr.end() - 1,
                         static_cast<Index>(n * static_cast<std::size_t>(t) / threads)) -
        a.row_ptr.begin());
  std::vector<Index> next(static_cast<std::size_t>(threads) * (cols + 1), 0);
  Csc<Value, Index> c{a.rows, a.cols, std::vector<Index>(cols + 1, 0), std::vector<Index>(n),
                      std::vector<Value>(n)};
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    Index* mine = next.data() + static_cast<std::size_t>(t) * (cols + 1);
    for (Index k = a.row_ptr[first_row[t]]; k < a.row_ptr[first_row[t + 1]]; ++k)
      ++mine[a.col_idx[k]];
#pragma omp barrier
#pragma omp single
    {  // column starts, and each thread's start within each column
      Index at = 0;
      for (std::size_t j = 0; j < cols; ++j) {
        c.col_ptr[j] = at;
        for (int u = 0; u < threads; ++u) {
          Index& slot = next[static_cast<std::size_t>(u) * (cols + 1) + j];
          const Index count = slot;
          slot = at;
          at += count;
        }
      }
      c.col_ptr[cols] = at;
    }
    for (Index r = first_row[t]; r < first_row[t + 1]; ++r)
      for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
        const Index dst = mine[a.col_idx[k]]++;
        c.row_idx[dst] = r;
        c.values[dst] = a.values[k];
      }
  }
  return c;
}

template <class Value, class Index>
Csr<Value, Index> to_csr(const Csc<Value, Index>& a) {
  // A CSC of A has the arrays of the CSR of Aᵀ: transposing that CSR gives the CSR of A.
  return transpose(Csr<Value, Index>{a.cols, a.rows, a.col_ptr, a.row_idx, a.values});
}

template <class Value, class Index>
Csr<Value, Index> transpose(const Csr<Value, Index>& a) {
  Csc<Value, Index> c = to_csc(a);
  return {a.cols, a.rows, std::move(c.col_ptr), std::move(c.row_idx), std::move(c.values)};
}

template <class Value, class Index>
void canonicalize(Csr<Value, Index>& a) {
  if (a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1 ||
      a.col_idx.size() != a.values.size())
    invalid("matrix", "inconsistent CSR array lengths");
  a = to_csr(to_coo(a));
}

#define SPMAT_INSTANTIATE(V, I)                                  \
  template struct Csr<V, I>;                                     \
  template struct Coo<V, I>;                                     \
  template Csr<V, I> to_csr(const Coo<V, I>&);                   \
  template Coo<V, I> to_coo(const Csr<V, I>&);                   \
  template Csr<V, I> detail::sorted_coo_to_csr(const Coo<V, I>&);\
  template Csc<V, I> to_csc(const Csr<V, I>&);                   \
  template Csr<V, I> to_csr(const Csc<V, I>&);                   \
  template Csr<V, I> transpose(const Csr<V, I>&);                \
  template void canonicalize(Csr<V, I>&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
