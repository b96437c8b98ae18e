// tests/support/test_support.cpp — seeds, GPU availability and the conformance scenarios.
// SPDX-License-Identifier: MIT
#include "tests/support/test_support.hpp"

#include <algorithm>
#include <chrono>

#include "spmat/registry.hpp"

namespace spmat::testing {

std::uint64_t fresh_seed() {
  static std::mt19937_64 rng(static_cast<std::uint64_t>(
      std::chrono::high_resolution_clock::now().time_since_epoch().count()));
  return rng();
}

bool gpu_available(std::string* why) {
  if (!cuda_compiled()) {
    if (why) *why = "spmat was built without CUDA";
    return false;
  }
  if (!cuda_available()) {
    if (why) *why = "no usable CUDA GPU (cudaGetDeviceCount failed or found none)";
    return false;
  }
  return true;
}

std::vector<std::string> cuda_formats_with(Op op) {
  std::vector<std::string> v;
  for (const auto& e : registry())
    if (e.caps.cuda.supports(op)) v.push_back(e.name);
  return v;
}

std::string test_name(std::string format_name) {
  for (char& c : format_name)
    if (c == '-') c = '_';
  return format_name;
}

FormatOptions without_row_limits(const std::string& format, FormatOptions o) {
  for (const auto& p : find_format(format).params)
    if ((p.name == "max_fill" || p.name == "max_skew") && !o.has(p.name)) o.set(p.name, "inf");
  return o;
}

namespace {

using C = Coo<double, std::int64_t>;

C empty(std::int64_t rows, std::int64_t cols) {
  C a;
  a.rows = rows;
  a.cols = cols;
  return a;
}

void push(C& a, std::int64_t r, std::int64_t c, double v) {
  a.row_idx.push_back(r);
  a.col_idx.push_back(c);
  a.values.push_back(v);
}

// Random pattern with `per_row` expected entries per row (Bernoulli per row length, uniform
// columns; colliding columns are duplicates and get summed by to_csr). Real values in [-1, 1].
C random_matrix(std::int64_t rows, std::int64_t cols, double per_row, std::uint64_t seed) {
  C a = empty(rows, cols);
  std::mt19937_64 rng(seed);
  std::poisson_distribution<int> len(per_row);
  std::uniform_int_distribution<std::int64_t> col(0, std::max<std::int64_t>(cols - 1, 0));
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  for (std::int64_t r = 0; r < rows && cols > 0; ++r) {
    const int n = len(rng);
    for (int i = 0; i < n; ++i) push(a, r, col(rng), val(rng));
  }
  return a;
}

// Each entry present with probability p (no duplicates), real values.
C bernoulli_matrix(std::int64_t rows, std::int64_t cols, double p, std::uint64_t seed) {
  C a = empty(rows, cols);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution keep(p);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      if (keep(rng)) push(a, r, c, val(rng));
  return a;
}

// Row lengths from a Pareto tail (exponent 1.1: mean ≈ 10, max ≈ cols/2 over a few thousand
// rows), plus one row of cols/2 entries so the imbalance is always there; many rows are empty.
C power_law(std::uint64_t seed) {
  const std::int64_t rows = 3000, cols = 2500;
  C a = empty(rows, cols);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(1e-9, 1.0);
  std::uniform_int_distribution<std::int64_t> col(0, cols - 1);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t n = static_cast<std::int64_t>(std::pow(u(rng), -1.0 / 1.1)) - 1;
    if (r == 17) n = cols / 2;
    n = std::min(n, cols);
    for (std::int64_t i = 0; i < n; ++i) push(a, r, col(rng), val(rng));
  }
  return a;
}

// One fully dense row of 100,000 entries among 69 short or empty rows. Integer values ±1..7.
C dense_row(std::uint64_t) {
  const std::int64_t rows = 70, cols = 100000;
  C a = empty(rows, cols);
  for (std::int64_t r = 0; r < rows; ++r) {
    if (r == 33) {
      for (std::int64_t c = 0; c < cols; ++c) push(a, r, c, ((c % 7) + 1) * ((c & 1) ? 1.0 : -1.0));
    } else if (r % 7 == 0) {
      push(a, r, r, 2);
      push(a, r, r * 1000 + 1, -3);
      push(a, r, cols - 1 - r, 5);
    }
  }
  return a;
}

// Rows ≡ 0 mod 3 and columns ≡ 0 mod 5 empty (so are the first and last row and column).
C empty_rows_and_cols(std::uint64_t) {
  const std::int64_t rows = 300, cols = 200;
  C a = empty(rows, cols);
  for (std::int64_t r = 1; r < rows - 1; ++r)
    for (std::int64_t c = 1; c < cols - 1; ++c)
      if (r % 3 != 0 && c % 5 != 0 && (r * 7 + c * 13) % 11 == 0)
        push(a, r, c, static_cast<double>((r + c) % 7 + 1) * ((r & 1) ? 1 : -1));
  return a;
}

// Many duplicates (1-3 copies of each position) and pairs (v, -v) that cancel to explicit
// zeros; integer values; shuffled order.
C duplicates(std::uint64_t seed) {
  const std::int64_t rows = 500, cols = 400;
  C a = empty(rows, cols);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> row(0, rows - 1), col(0, cols - 1);
  std::uniform_int_distribution<int> copies(1, 3), val(-4, 4);
  for (int i = 0; i < 3000; ++i) {
    const std::int64_t r = row(rng), c = col(rng);
    for (int k = copies(rng); k > 0; --k) push(a, r, c, val(rng));
  }
  for (int i = 0; i < 200; ++i) {
    const std::int64_t r = row(rng), c = col(rng);
    const double v = val(rng);
    push(a, r, c, v);
    push(a, r, c, -v);
  }
  std::vector<std::size_t> order(a.values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  C s = empty(rows, cols);
  for (std::size_t i : order) push(s, a.row_idx[i], a.col_idx[i], a.values[i]);
  return s;
}

// About 30% stored zeros, row 5 made only of stored zeros, column 7 stored zero in every row.
C explicit_zeros(std::uint64_t seed) {
  const std::int64_t rows = 400, cols = 300;
  C a = empty(rows, cols);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution keep(0.02), zero(0.3);
  std::uniform_int_distribution<int> val(1, 4);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      if (c == 7) {
        push(a, r, c, 0.0);
      } else if (r == 5) {
        if (c % 6 == 0) push(a, r, c, 0.0);
      } else if (keep(rng)) {
        push(a, r, c, zero(rng) ? 0.0 : val(rng) * ((rng() & 1) ? 1.0 : -1.0));
      }
    }
  return a;
}

// A random real matrix with NaN, +Inf and -Inf planted in a few rows (and so a few columns):
// row 30 holds +Inf and -Inf (its product is NaN), row 40 NaN and +Inf.
C nan_inf(std::uint64_t seed) {
  C a = random_matrix(100, 80, 5, seed);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  push(a, 3, 5, nan);
  push(a, 10, 6, inf);
  push(a, 20, 7, -inf);
  push(a, 30, 8, inf);
  push(a, 30, 9, -inf);
  push(a, 40, 10, nan);
  push(a, 40, 11, inf);
  return a;
}

std::vector<Scenario> make_scenarios() {
  std::vector<Scenario> v;
  auto add = [&](std::string name, std::string description, bool random, bool integer,
                 std::function<C(std::uint64_t)> make) {
    v.push_back({std::move(name), std::move(description), random, integer, std::move(make)});
  };
  add("empty_0x0", "0x0 matrix", false, true, [](std::uint64_t) { return empty(0, 0); });
  add("one_by_one", "1x1 matrix with one entry", false, true, [](std::uint64_t) {
    C a = empty(1, 1);
    push(a, 0, 0, 3);
    return a;
  });
  add("no_rows_0x7", "0x7 matrix", false, true, [](std::uint64_t) { return empty(0, 7); });
  add("no_cols_7x0", "7x0 matrix", false, true, [](std::uint64_t) { return empty(7, 0); });
  add("all_zero_37x53", "37x53 matrix with nnz = 0", false, true,
      [](std::uint64_t) { return empty(37, 53); });
  add("empty_rows_and_cols", "300x200, every third row and fifth column empty", false, true,
      empty_rows_and_cols);
  add("dense_row_100000", "70x100000 with one dense row of 100,000 entries", false, true,
      dense_row);
  add("power_law_rows", "3000x2500, Pareto row lengths (heavily imbalanced)", true, false,
      power_law);
  add("tall_1000x7", "1000x7, 40% dense", true, false,
      [](std::uint64_t s) { return bernoulli_matrix(1000, 7, 0.4, s); });
  add("wide_7x1000", "7x1000, 40% dense", true, false,
      [](std::uint64_t s) { return bernoulli_matrix(7, 1000, 0.4, s); });
  add("duplicates", "500x400 COO with duplicates summed, some cancelling to stored zeros", true,
      true, duplicates);
  add("explicit_zeros", "400x300 with stored zeros (a zero row, a zero column)", true, true,
      explicit_zeros);
  add("nan_inf", "100x80 with NaN, +Inf, -Inf in a few rows", true, false, nan_inf);
  add("ragged_33x65", "33x65 random", true, false,
      [](std::uint64_t s) { return random_matrix(33, 65, 7, s); });
  add("ragged_1023x1025", "1023x1025 random, ~6 per row", true, false,
      [](std::uint64_t s) { return random_matrix(1023, 1025, 6, s); });
  add("ragged_4097x4099", "4097x4099 random, ~6 per row", true, false,
      [](std::uint64_t s) { return random_matrix(4097, 4099, 6, s); });
  add("random_2000x3000", "2000x3000 random, ~12 per row", true, false,
      [](std::uint64_t s) { return random_matrix(2000, 3000, 12, s); });
  return v;
}

}  // namespace

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all = make_scenarios();
  return all;
}

}  // namespace spmat::testing
