// spmat/core/reference.hpp — the serial fp64 oracle for every operation, and error measures.
// SPDX-License-Identifier: MIT
//
// Every kernel in spmat is checked against these: inputs are widened to double, sums are
// accumulated in double in storage order, and the result is returned as double.
#pragma once
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "spmat/core/csr.hpp"

namespace spmat::reference {

/// y = alpha*A*x + beta*y0, in double. y0 may be empty when beta == 0.
/// (beta == 0 ignores y0 entirely, as BLAS does: NaN in y0 does not propagate.)
template <class Value, class Index, class X, class Y>
std::vector<double> spmv(const Csr<Value, Index>& a, std::span<const X> x, double alpha = 1,
                         double beta = 0, std::span<const Y> y0 = {}) {
  std::vector<double> y(static_cast<std::size_t>(a.rows));
  for (Index r = 0; r < a.rows; ++r) {
    double s = 0;
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      s += static_cast<double>(a.values[k]) * static_cast<double>(x[a.col_idx[k]]);
    y[r] = alpha * s + (beta != 0 ? beta * static_cast<double>(y0[r]) : 0.0);
  }
  return y;
}

/// y = alpha*Aᵀ*x + beta*y0, in double.
template <class Value, class Index, class X, class Y>
std::vector<double> spmv_t(const Csr<Value, Index>& a, std::span<const X> x, double alpha = 1,
                           double beta = 0, std::span<const Y> y0 = {}) {
  std::vector<double> s(static_cast<std::size_t>(a.cols), 0.0);
  for (Index r = 0; r < a.rows; ++r)
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      s[a.col_idx[k]] += static_cast<double>(a.values[k]) * static_cast<double>(x[r]);
  for (Index c = 0; c < a.cols; ++c)
    s[c] = alpha * s[c] + (beta != 0 ? beta * static_cast<double>(y0[c]) : 0.0);
  return s;
}

/// C = alpha*A*B + beta*C0 with B (cols×k) and C (rows×k) dense in `layout`.
template <class Value, class Index, class B, class C>
std::vector<double> spmm(const Csr<Value, Index>& a, std::span<const B> b, std::int64_t k,
                         DenseLayout layout, double alpha = 1, double beta = 0,
                         std::span<const C> c0 = {}) {
  const std::int64_t m = a.rows, n = a.cols;
  auto bi = [&](std::int64_t i, std::int64_t j) {
    return layout == DenseLayout::row_major ? i * k + j : j * n + i;
  };
  auto ci = [&](std::int64_t i, std::int64_t j) {
    return layout == DenseLayout::row_major ? i * k + j : j * m + i;
  };
  std::vector<double> c(static_cast<std::size_t>(m * k));
  std::vector<double> acc(static_cast<std::size_t>(k));
  for (std::int64_t r = 0; r < m; ++r) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (Index p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
      for (std::int64_t j = 0; j < k; ++j)
        acc[j] += static_cast<double>(a.values[p]) * static_cast<double>(b[bi(a.col_idx[p], j)]);
    for (std::int64_t j = 0; j < k; ++j)
      c[ci(r, j)] = alpha * acc[j] + (beta != 0 ? beta * static_cast<double>(c0[ci(r, j)]) : 0.0);
  }
  return c;
}

/// ‖got − want‖₂ / ‖want‖₂ (absolute ‖got‖₂ when want is all zero). NaN/Inf handling:
/// positions where want is non-finite must hold the same class of value in got (NaN↔NaN,
/// +Inf↔+Inf); they are excluded from the norm. A NaN in got where want is finite gives +Inf.
template <class T>
double relative_norm2_error(std::span<const T> got, std::span<const double> want) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]), w = want[i];
    if (!std::isfinite(w)) {
      const bool same = std::isnan(w) ? std::isnan(g) : (g == w);
      if (!same) return INFINITY;
      continue;
    }
    if (!std::isfinite(g)) return INFINITY;
    num += (g - w) * (g - w);
    den += w * w;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace spmat::reference
