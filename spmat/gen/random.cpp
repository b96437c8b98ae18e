// spmat/gen/random.cpp — the uniform random generators: random_p, random_k and powerlaw.
// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "spmat/gen/build.hpp"

namespace spmat::gen::detail {

namespace {

// Streams of a row: structure and values apart, so counting a row never draws its values.
constexpr std::uint64_t kStructure = 0, kValues = 1, kLength = 2;

template <class Value>
void fill_values(std::uint64_t seed, std::uint64_t salt, std::int64_t row, ValueKind kind,
                 std::int64_t len, Value* vals) {
  Rng rng = Rng::stream(seed, salt, static_cast<std::uint64_t>(row), kValues);
  for (std::int64_t k = 0; k < len; ++k) vals[k] = static_cast<Value>(draw_value(rng, kind));
}

std::string approx(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

// Contract (random_p): m×n, each entry present independently with probability p, values from
// the row's value stream. A row is drawn by geometric skipping (gap = floor(log u / log(1-p)):
// O(nnz) work, one log per entry) when p < kDenseP, else by one Bernoulli draw per cell against
// an integer threshold (O(n) per row, no log). Each row is drawn twice (count, then fill) from
// the same stream. The skips use std::log, so bit-identity across machines assumes the same
// libm log (glibc's is); everything else is integer arithmetic.
template <class Value, class Index>
Csr<Value, Index> gen_random_p(const Args& a) {
  const Dims d = a.dims(0, "<n>|<m>x<n>", true, kMaxDim);
  const double p = a.real(1, "<p>", 0.0, 1.0);
  const std::uint64_t seed = a.seed(), salt = name_salt("random_p");
  const ValueKind kind = a.values();
  check_index_range<Index>(d.rows, d.cols, 0, a.text());
  // Refuse early when the expected nnz is far (8 standard deviations) beyond the index range,
  // so an impossible request does not first spend minutes counting.
  const double mean = p * static_cast<double>(d.rows) * static_cast<double>(d.cols);
  if (mean - 8.0 * std::sqrt(mean) > static_cast<double>(index_max<Index>()))
    throw IndexOverflowError(a.text() + ": about " + approx(mean) +
                             " nonzeros expected, which does not fit the " +
                             std::string(index_name<Index>()) + " index type (limit " +
                             std::to_string(index_max<Index>()) + "); use int64 indices");
  check_host_memory<Value, Index>(a.text(), d.rows, std::max(0.0, mean - 8.0 * std::sqrt(mean)));
  // Above this density one draw per cell beats a log per entry. Measured single-threaded on
  // the 2-core dev VM (8192², CPU time): log path p=0.09 0.25 s; per-cell p=0.1 0.36 s,
  // p=0.5 0.90 s, i.e. ~41 ns per entry against ~0.3 s fixed: break-even near p = 0.15.
  constexpr double kDenseP = 0.15;
  const std::int64_t n = d.cols;
  const bool dense = p >= kDenseP;
  const double log_q = std::log1p(-p);
  // 2^64·p as an integer threshold (p < 1 here; p == 1 is handled as "every cell").
  const std::uint64_t threshold =
      p >= 1.0 ? ~std::uint64_t(0) : static_cast<std::uint64_t>(std::ldexp(p, 64));
  auto visit = [&](std::int64_t i, auto&& emit) {
    if (p <= 0.0 || n == 0) return;
    Rng rng = Rng::stream(seed, salt, static_cast<std::uint64_t>(i), kStructure);
    if (p >= 1.0) {
      for (std::int64_t j = 0; j < n; ++j) emit(j);
    } else if (dense) {
      for (std::int64_t j = 0; j < n; ++j)
        if (rng.next() < threshold) emit(j);
    } else {
      std::int64_t j = -1;
      for (;;) {
        const double gap = std::floor(std::log(rng.uniform_open0()) / log_q);
        if (gap >= static_cast<double>(n - 1 - j)) break;
        j += static_cast<std::int64_t>(gap) + 1;
        emit(j);
      }
    }
  };
  return build_rows<Value, Index>(
      a.text(), d.rows, d.cols,
      [&](std::int64_t i, std::vector<std::uint64_t>&) {
        std::int64_t len = 0;
        visit(i, [&](std::int64_t) { ++len; });
        return len;
      },
      [&](std::int64_t i, std::int64_t len, Index* cols, Value* vals, std::vector<std::uint64_t>&) {
        visit(i, [&](std::int64_t j) { *cols++ = static_cast<Index>(j); });
        fill_values(seed, salt, i, kind, len, vals);
      });
}

// Contract (random_k): m×n, every row holds exactly k distinct columns, each k-subset equally
// likely (sample_distinct), sorted. nnz = m·k. O(nnz log k) work.
template <class Value, class Index>
Csr<Value, Index> gen_random_k(const Args& a) {
  const Dims d = a.dims(0, "<n>|<m>x<n>", true, kMaxDim);
  const std::int64_t k = a.integer(1, "<k>", 0, d.cols);
  const std::uint64_t seed = a.seed(), salt = name_salt("random_k");
  const ValueKind kind = a.values();
  check_sizes<Index>(a.text(), d.rows, d.cols, static_cast<__int128>(d.rows) * k);
  return build_rows<Value, Index>(
      a.text(), d.rows, d.cols, [&](std::int64_t, std::vector<std::uint64_t>&) { return k; },
      [&](std::int64_t i, std::int64_t len, Index* cols, Value* vals,
          std::vector<std::uint64_t>& scratch) {
        Rng rng = Rng::stream(seed, salt, static_cast<std::uint64_t>(i), kStructure);
        sample_distinct(rng, len, d.cols, cols, scratch);
        fill_values(seed, salt, i, kind, len, vals);
      });
}

namespace {

// E[min(n, floor(X))] for X Pareto with scale xm and shape s (P(X > x) = (xm/x)^s, x >= xm):
// Σ_{j=1..n} P(X >= j) = Σ_j min(1, (xm/j)^s). The first terms are summed, the tail by
// Euler–Maclaurin (error below 1e-9 relative for the 1000-term head).
double expected_length(double xm, double s, std::int64_t n) {
  const auto ones = std::min<std::int64_t>(n, static_cast<std::int64_t>(std::floor(xm)));
  double sum = static_cast<double>(ones);
  std::int64_t j = ones + 1;
  const std::int64_t head_end = std::min<std::int64_t>(n, j + 1000);
  for (; j <= head_end; ++j) sum += std::pow(xm / static_cast<double>(j), s);
  if (j > n) return sum;
  // Σ_{j=A}^{B} j^-s ≈ ∫_A^B + (f(A)+f(B))/2 - (f'(A)-f'(B))/12, f' = -s j^-(s+1).
  const double A = static_cast<double>(j), B = static_cast<double>(n);
  const double integral =
      std::abs(s - 1.0) < 1e-12 ? std::log(B / A) : (std::pow(A, 1 - s) - std::pow(B, 1 - s)) / (s - 1);
  const double fa = std::pow(A, -s), fb = std::pow(B, -s);
  const double tail = integral + 0.5 * (fa + fb) + s * (std::pow(A, -s - 1) - std::pow(B, -s - 1)) / 12;
  return sum + std::pow(xm, s) * tail;
}

}  // namespace

// Contract (powerlaw): n×n; row i's length is min(n, floor(X)) with X Pareto(xm, alpha-1), i.e.
// P(len >= j) ∝ j^-(alpha-1) (a density ∝ len^-alpha), xm solved (bisection on the exact
// expectation) so that the mean row length is mean_k; rows are independent, so nnz ≈ n·mean_k
// within a few standard deviations. Columns: len distinct uniform columns (sample_distinct).
// Uses std::pow/std::log for the lengths (same-libm caveat as random_p). O(nnz log) work.
template <class Value, class Index>
Csr<Value, Index> gen_powerlaw(const Args& a) {
  const std::int64_t n = a.integer(0, "<n>", 0, kMaxDim);
  const double mean_k = a.real(1, "<mean_k>", 0.0, static_cast<double>(n));
  const double alpha = a.key_real("alpha", 2.0, 1.0, 100.0);
  if (alpha <= 1.0) a.fail("key alpha = 1 is out of range (alpha > 1)");
  const std::uint64_t seed = a.seed(), salt = name_salt("powerlaw");
  const ValueKind kind = a.values();
  check_index_range<Index>(n, n, 0, a.text());
  // The row lengths are independent heavy-tailed draws: half the mean is a safe lower bound
  // for large n, and enough to refuse an impossible request before drawing n lengths.
  check_host_memory<Value, Index>(a.text(), n, 0.5 * static_cast<double>(n) * mean_k);
  const double s = alpha - 1.0;
  double lo = 0.0, hi = static_cast<double>(n);
  for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    (expected_length(mid, s, n) < mean_k ? lo : hi) = mid;
  }
  const double xm = 0.5 * (lo + hi);
  auto length = [&](std::int64_t i) -> std::int64_t {
    if (mean_k >= static_cast<double>(n)) return n;
    Rng rng = Rng::stream(seed, salt, static_cast<std::uint64_t>(i), kLength);
    const double x = xm * std::pow(rng.uniform_open0(), -1.0 / s);
    return x >= static_cast<double>(n) ? n : static_cast<std::int64_t>(x);
  };
  return build_rows<Value, Index>(
      a.text(), n, n, [&](std::int64_t i, std::vector<std::uint64_t>&) { return length(i); },
      [&](std::int64_t i, std::int64_t len, Index* cols, Value* vals,
          std::vector<std::uint64_t>& scratch) {
        Rng rng = Rng::stream(seed, salt, static_cast<std::uint64_t>(i), kStructure);
        sample_distinct(rng, len, n, cols, scratch);
        fill_values(seed, salt, i, kind, len, vals);
      });
}

#define SPMAT_INSTANTIATE(V, I)                            \
  template Csr<V, I> gen_random_p<V, I>(const Args&);      \
  template Csr<V, I> gen_random_k<V, I>(const Args&);      \
  template Csr<V, I> gen_powerlaw<V, I>(const Args&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::gen::detail
