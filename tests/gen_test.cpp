// tests/gen_test.cpp — the matrix generators: exact small structures, determinism, statistics,
// the GCSB ideal matrix, and the error messages of malformed or oversized specs.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "spmat/gen/generators.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

using gen::generate;
using D32 = Csr<double, std::int32_t>;

D32 gen32(std::string_view spec) { return generate<double, std::int32_t>(spec); }

/// The message of the exception `f` throws (fails the test when it throws nothing or another type).
template <class E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception thrown";
  return {};
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

TEST(Gen, Lap2dOnA3x3GridIsTheFivePointStencil) {
  const D32 a = gen32("gen:lap2d:3");
  EXPECT_EQ(a.rows, 9);
  EXPECT_EQ(a.cols, 9);
  EXPECT_EQ(a.row_ptr, (std::vector<std::int32_t>{0, 3, 7, 10, 14, 19, 23, 26, 30, 33}));
  EXPECT_EQ(a.col_idx, (std::vector<std::int32_t>{0, 1, 3,             //
                                                  0, 1, 2, 4,          //
                                                  1, 2, 5,             //
                                                  0, 3, 4, 6,          //
                                                  1, 3, 4, 5, 7,       //
                                                  2, 4, 5, 8,          //
                                                  3, 6, 7,             //
                                                  4, 6, 7, 8,          //
                                                  5, 7, 8}));
  EXPECT_EQ(a.values, (std::vector<double>{4, -1, -1,          //
                                           -1, 4, -1, -1,      //
                                           -1, 4, -1,          //
                                           -1, 4, -1, -1,      //
                                           -1, -1, 4, -1, -1,  //
                                           -1, -1, 4, -1,      //
                                           -1, 4, -1,          //
                                           -1, -1, 4, -1,      //
                                           -1, -1, 4}));
  EXPECT_EQ(gen32("lap2d:3"), a) << "the gen: prefix is optional";
}

TEST(Gen, Lap3dOnA2x2x2GridLinksEachPointToItsThreeNeighbours) {
  const D32 a = gen32("gen:lap3d:2");
  EXPECT_EQ(a.row_ptr, (std::vector<std::int32_t>{0, 4, 8, 12, 16, 20, 24, 28, 32}));
  EXPECT_EQ(a.col_idx, (std::vector<std::int32_t>{0, 1, 2, 4, 0, 1, 3, 5, 0, 2, 3, 6, 1, 2, 3, 7,
                                                  0, 4, 5, 6, 1, 4, 5, 7, 2, 4, 6, 7, 3, 5, 6, 7}));
  for (std::int32_t r = 0; r < 8; ++r)
    for (std::int32_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      EXPECT_EQ(a.values[k], a.col_idx[k] == r ? 6.0 : -1.0);
  const D32 b = gen32("gen:lap3d27:2");
  EXPECT_EQ(b.col_idx.size(), 64u) << "on a 2^3 grid the 27-point stencil couples every pair";
  for (std::int32_t r = 0; r < 8; ++r)
    for (std::int32_t k = b.row_ptr[r]; k < b.row_ptr[r + 1]; ++k)
      EXPECT_EQ(b.values[k], b.col_idx[k] == r ? 26.0 : -1.0);
}

TEST(Gen, StencilNnzFollowsTheClosedForms) {
  for (std::int64_t n : {0, 1, 2, 5, 7}) {
    const std::string s = std::to_string(n);
    EXPECT_EQ(gen32("gen:lap2d:" + s).col_idx.size(), static_cast<std::size_t>(n ? 5 * n * n - 4 * n : 0));
    EXPECT_EQ(gen32("gen:lap3d:" + s).col_idx.size(),
              static_cast<std::size_t>(n ? 7 * n * n * n - 6 * n * n : 0));
    EXPECT_EQ(gen32("gen:lap3d27:" + s).col_idx.size(),
              static_cast<std::size_t>(n ? (3 * n - 2) * (3 * n - 2) * (3 * n - 2) : 0));
  }
  // Row sums: interior rows of a Laplacian sum to zero.
  const D32 a = gen32("gen:lap3d27:5");
  const std::int32_t centre = (2 * 5 + 2) * 5 + 2;
  double sum = 0;
  for (std::int32_t k = a.row_ptr[centre]; k < a.row_ptr[centre + 1]; ++k) sum += a.values[k];
  EXPECT_EQ(sum, 0.0);
}

TEST(Gen, BandedIsTheBandWithValuesFromTheSeed) {
  const D32 a = gen32("gen:banded:5:1:values=ones");
  EXPECT_EQ(a.row_ptr, (std::vector<std::int32_t>{0, 2, 5, 8, 11, 13}));
  EXPECT_EQ(a.col_idx, (std::vector<std::int32_t>{0, 1, 0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4}));
  EXPECT_EQ(a.values, std::vector<double>(13, 1.0));
  const D32 b = gen32("gen:banded:5:1");
  EXPECT_EQ(b.col_idx, a.col_idx);
  for (double v : b.values) {
    EXPECT_GT(v, -1.0);
    EXPECT_LT(v, 1.0);
    EXPECT_NE(v, 0.0);
  }
  EXPECT_EQ(gen32("gen:banded:6:100").col_idx.size(), 36u) << "a band wider than n is dense";
  EXPECT_EQ(gen32("gen:banded:6:0").col_idx.size(), 6u);
}

const char* const kSpecs[] = {
    "gen:random_p:300:0.02",  "gen:random_p:200x300:0.3", "gen:random_k:300:7",
    "gen:random_k:50x40:30",  "gen:ideal:200",            "gen:ideal:100:block=16",
    "gen:lap2d:17",           "gen:lap3d:6",              "gen:lap3d27:5",
    "gen:rmat:9:8",           "gen:banded:300:4",         "gen:powerlaw:500:6",
    "gen:powerlaw:300:3:alpha=3:values=int"};

template <class T>
struct GenTyped : ::testing::Test {};
TYPED_TEST_SUITE(GenTyped, spmat::testing::Pairs);

TYPED_TEST(GenTyped, EveryGeneratorGivesCanonicalCsrEqualToTheFp64Int32One) {
  using Value = typename TypeParam::Value;
  using Index = typename TypeParam::Index;
  for (const char* spec : kSpecs) {
    SCOPED_TRACE(spec);
    const auto a = generate<Value, Index>(spec);
    EXPECT_NO_THROW(a.validate(spec));
    // Same matrix whatever the types: uniform values are exact in float by construction.
    EXPECT_EQ(a, (convert<Value, Index>(gen32(spec))));
  }
}

// Big enough that every generator takes its parallel path (small ones stay on one thread).
const char* const kParallelSpecs[] = {
    "gen:random_p:5000:0.002", "gen:random_p:4096x1000:0.2", "gen:random_k:8000:5",
    "gen:powerlaw:8000:4",     "gen:ideal:1024",        "gen:rmat:14:8",
    "gen:banded:5000:2",       "gen:lap2d:80"};

TEST(Gen, SameSpecSameArraysAnyThreadCountAndTheSeedChangesThem) {
  const int saved = omp_get_max_threads();
  for (const char* spec : kParallelSpecs) {
    SCOPED_TRACE(spec);
    omp_set_num_threads(1);
    const D32 one = gen32(spec);
    omp_set_num_threads(3);
    const D32 three = gen32(spec);
    omp_set_num_threads(saved);
    EXPECT_EQ(one, three);
    EXPECT_EQ(gen32(spec), one);
    const std::string s(spec);
    if (contains(s, "lap")) continue;  // no randomness
    EXPECT_EQ(gen32(s + ":seed=0"), one) << "the default seed is 0";
    EXPECT_NE(gen32(s + ":seed=12345"), one);
  }
}

TEST(Gen, RandomPNnzAndRowLengthsAreBinomial) {
  struct Case {
    const char* spec;
    std::int64_t m, n;
    double p;
  };
  for (const Case& c : {Case{"gen:random_p:2000:0.01", 2000, 2000, 0.01},
                        Case{"gen:random_p:600x800:0.3", 600, 800, 0.3},
                        Case{"gen:random_p:3000:0.0005", 3000, 3000, 0.0005}}) {
    SCOPED_TRACE(c.spec);
    const D32 a = gen32(c.spec);
    EXPECT_EQ(a.rows, c.m);
    EXPECT_EQ(a.cols, c.n);
    const double mean = c.p * c.m * c.n, sd = std::sqrt(mean * (1 - c.p));
    EXPECT_NEAR(static_cast<double>(a.col_idx.size()), mean, 5 * sd);
    // Row lengths ~ Binomial(n, p): variance n p (1-p) (5 % relative sd of the estimate here).
    double s1 = 0, s2 = 0;
    for (auto l : row_lengths(a)) s1 += l, s2 += static_cast<double>(l) * l;
    const double var = s2 / c.m - (s1 / c.m) * (s1 / c.m);
    EXPECT_NEAR(var / (c.n * c.p * (1 - c.p)), 1.0, 0.2);
    // Columns are uniform: mean column index (n-1)/2, sd of the mean n/sqrt(12 nnz).
    double sc = 0;
    for (auto j : a.col_idx) sc += j;
    EXPECT_NEAR(sc / a.col_idx.size(), (c.n - 1) / 2.0, 5 * c.n / std::sqrt(12.0 * a.col_idx.size()));
  }
  EXPECT_EQ(gen32("gen:random_p:50:0").col_idx.size(), 0u);
  EXPECT_EQ(gen32("gen:random_p:50x7:1").col_idx.size(), 350u);
  EXPECT_EQ(gen32("gen:random_p:0:0.5").rows, 0);
}

TEST(Gen, RandomKHasExactlyKUniformColumnsPerRow) {
  for (const char* spec : {"gen:random_k:20000x1000:8", "gen:random_k:4000x100:60"}) {
    SCOPED_TRACE(spec);
    const D32 a = gen32(spec);
    const std::int32_t k = a.row_ptr[1];
    for (auto l : row_lengths(a)) ASSERT_EQ(l, k);
    // Column counts: chi-square with cols-1 degrees of freedom (sampling without replacement
    // inside a row only lowers the variance), checked at about 6 standard deviations.
    std::vector<double> count(static_cast<std::size_t>(a.cols), 0);
    for (auto j : a.col_idx) ++count[j];
    const double e = static_cast<double>(a.col_idx.size()) / a.cols;
    double chi2 = 0;
    for (double c : count) chi2 += (c - e) * (c - e) / e;
    const double dof = a.cols - 1;
    EXPECT_LT(chi2, dof + 6 * std::sqrt(2 * dof));
    EXPECT_GT(chi2, (1 - static_cast<double>(k) / a.cols) * dof - 6 * std::sqrt(2 * dof));
  }
  EXPECT_EQ(gen32("gen:random_k:9:9").col_idx.size(), 81u);
}

TEST(Gen, PowerlawRowLengthsHaveTheMeanAndAHeavyTail) {
  {
    // alpha = 3: finite variance, so the mean is tight (sd of nnz ~ 0.3 % here).
    const D32 a = gen32("gen:powerlaw:50000:8:alpha=3");
    EXPECT_NEAR(static_cast<double>(a.col_idx.size()) / a.rows, 8.0, 0.25);
  }
  {
    // alpha = 2: the length variance grows like n, so only a loose mean (sd ~ 3 %), but the
    // tail is heavy: a few rows hundreds of times the mean, and most rows short.
    const D32 a = gen32("gen:powerlaw:50000:8");
    const auto len = row_lengths(a);
    EXPECT_NEAR(static_cast<double>(a.col_idx.size()) / a.rows, 8.0, 1.6);
    EXPECT_GT(*std::max_element(len.begin(), len.end()), 800);
    auto sorted = len;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    EXPECT_LE(sorted[sorted.size() / 2], 3);
  }
  EXPECT_EQ(gen32("gen:powerlaw:40:40").col_idx.size(), 1600u) << "mean = n is the dense matrix";
  EXPECT_EQ(gen32("gen:powerlaw:40:0").col_idx.size(), 0u);
}

/// Counts per (block row, block column) of `a` with block size b.
std::vector<std::vector<std::int64_t>> block_counts(const D32& a, std::int64_t b) {
  const std::int64_t nb = (a.rows + b - 1) / b;
  std::vector<std::vector<std::int64_t>> c(nb, std::vector<std::int64_t>(nb, 0));
  for (std::int32_t r = 0; r < a.rows; ++r)
    for (std::int32_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) ++c[r / b][a.col_idx[k] / b];
  return c;
}

TEST(Gen, IdealMatrixHasEqualCountsInEveryBlockOfABlockRow) {
  // 256 = 8 block rows of 32: S = round(0.050756·256²/8) = 416 per block column, nnz = 8·416.
  const D32 a = gen32("gen:ideal:256");
  EXPECT_EQ(a.rows, 256);
  EXPECT_EQ(a.col_idx.size(), 8u * 416u);
  std::map<std::int64_t, int> distinct;
  for (const auto& row : block_counts(a, 32)) {
    for (auto c : row) EXPECT_EQ(c, row[0]);
    ++distinct[row[0]];
  }
  EXPECT_GT(distinct.size(), 3u) << "counts vary from block row to block row";
  for (const auto& row : block_counts(a, 64))
    for (auto c : row) EXPECT_EQ(c, row[0]) << "equal 32-blocks make equal 64-blocks";
  // A ragged size: the last block column is 4 wide, and it still gets the row's count.
  const D32 b = gen32("gen:ideal:100:block=32:density=0.02");
  for (const auto& row : block_counts(b, 32))
    for (auto c : row) EXPECT_EQ(c, row[0]);
  EXPECT_EQ(b.col_idx.size(), 200u);
  // spread=0: every block row the same (up to the ±1 rounding fix).
  for (const auto& row : block_counts(gen32("gen:ideal:512:spread=0"), 32))
    EXPECT_NEAR(static_cast<double>(row[0]), 0.050756 * 32 * 32, 1.0);
}

TEST(Gen, IdealMatrixDefaultIsTheThesisSizeWithTheNearestAttainableCount) {
  const auto a = generate<float, std::int32_t>("gen:ideal");
  EXPECT_EQ(a.rows, 8192);
  EXPECT_EQ(a.cols, 8192);
  // The thesis's 3,406,208 = 256·13305.5 cannot be split evenly into 32-blocks; 256·13306.
  EXPECT_EQ(a.col_idx.size(), 3406336u);
}

TEST(Gen, RmatHasItsEdgeCountAndSkew) {
  const D32 a = gen32("gen:rmat:10:8:values=ones");
  EXPECT_EQ(a.rows, 1024);
  EXPECT_LE(a.col_idx.size(), 8192u);
  EXPECT_GE(a.col_idx.size(), 4096u) << "repeats are common in R-MAT but not dominant at this size";
  double total = 0;
  for (double v : a.values) total += v;
  EXPECT_EQ(total, 8192.0) << "with values=ones each value is the edge multiplicity";
  // Skew: row 0 (all "a" quadrants) is much longer than the mean of 8.
  EXPECT_GT(a.row_ptr[1], 40);
  const auto last = row_lengths(a).back();
  EXPECT_LT(last, 8);
  EXPECT_EQ(gen32("gen:rmat:0:5").col_idx.size(), 1u) << "1×1: every edge is (0, 0)";
}

TEST(Gen, MalformedSpecsNameTheSpecTheItemAndWhatWasExpected) {
  auto parse_error = [](const char* spec) { return error_of<ParseError>([&] { gen32(spec); }); };
  std::string e = parse_error("gen:nope");
  EXPECT_TRUE(contains(e, "gen:nope: unknown generator 'nope'")) << e;
  for (const char* name : {"random_p", "random_k", "ideal", "lap2d", "lap3d", "lap3d27", "rmat",
                           "banded", "powerlaw"})
    EXPECT_TRUE(contains(e, name)) << e;
  e = parse_error("gen:lap2d:abc");
  EXPECT_TRUE(contains(e, "gen:lap2d:abc: argument <n> = 'abc' is not a non-negative integer")) << e;
  EXPECT_TRUE(contains(e, "expected gen:lap2d:<n> (e.g. gen:lap2d:100)")) << e;
  e = parse_error("gen:random_p:100:2.0");
  EXPECT_TRUE(contains(e, "argument <p> = 2.0 is out of range [0, 1]")) << e;
  e = parse_error("gen:random_p:100");
  EXPECT_TRUE(contains(e, "gen:random_p:100: missing argument <p>")) << e;
  e = parse_error("gen:lap2d");
  EXPECT_TRUE(contains(e, "missing argument <n>")) << e;
  e = parse_error("gen:lap2d:10:20");
  EXPECT_TRUE(contains(e, "too many arguments (2 given, at most 1)")) << e;
  e = parse_error("gen:lap2d:10:seed=1");
  EXPECT_TRUE(contains(e, "unknown key 'seed' (lap2d accepts no keys)")) << e;
  e = parse_error("gen:random_k:10:3:sede=1");
  EXPECT_TRUE(contains(e, "unknown key 'sede' (accepted: seed, values)")) << e;
  e = parse_error("gen:random_k:10:11");
  EXPECT_TRUE(contains(e, "argument <k> = 11 is out of range [0, 10]")) << e;
  e = parse_error("gen:random_p:10:seed=1:0.5");
  EXPECT_TRUE(contains(e, "positional argument '0.5' after key=value")) << e;
  e = parse_error("gen:random_p:10:0.5:seed=1:seed=2");
  EXPECT_TRUE(contains(e, "key 'seed' given twice")) << e;
  e = parse_error("gen:random_p:10:0.5:seed=-1");
  EXPECT_TRUE(contains(e, "seed = '-1' is not an unsigned 64-bit integer")) << e;
  e = parse_error("gen:random_k:10:3:values=foo");
  EXPECT_TRUE(contains(e, "values = 'foo' is not one of uniform, ones, int")) << e;
  e = parse_error("gen:powerlaw:100:4:alpha=1");
  EXPECT_TRUE(contains(e, "alpha")) << e;
  e = parse_error("gen:lap2d:3x4");
  EXPECT_TRUE(contains(e, "'3x4' is not a non-negative integer")) << e;
  e = parse_error("gen:random_p:3y4:0.1");
  EXPECT_TRUE(contains(e, "'3y4' is not <n> or <m>x<n>")) << e;
  e = parse_error("gen:rmat:4:4:a=0.6:b=0.3:c=0.3");
  EXPECT_TRUE(contains(e, "a + b + c must be at most 1")) << e;
  for (const char* bad : {"gen:", "gen:lap2d::", "gen:lap2d:3:", "gen::3", "gen:random_p:-5:0.1"})
    EXPECT_FALSE(parse_error(bad).empty()) << bad;
}

TEST(Gen, SizesBeyondTheIndexTypeAreRefusedBeforeAllocating) {
  auto overflow = [](std::function<void()> f) { return error_of<IndexOverflowError>(f); };
  // Real int32 limit, huge request: refused at once (no 80 GB allocation).
  std::string e = overflow([] { gen32("gen:lap2d:100000"); });
  EXPECT_TRUE(contains(e, "gen:lap2d:100000: rows = 10000000000 does not fit the int32 index type"))
      << e;
  e = overflow([] { generate<double, std::int64_t>("gen:lap3d:3000000"); });
  EXPECT_TRUE(contains(e, "overflows 64-bit")) << e;
  e = overflow([] { gen32("gen:random_p:1000000:0.5"); });
  EXPECT_TRUE(contains(e, "nonzeros expected")) << e;

  // The overflow paths on tiny inputs.
  ScopedInt32Limit limit(1000);
  e = overflow([] { gen32("gen:lap2d:40"); });  // 1600 rows
  EXPECT_TRUE(contains(e, "rows = 1600 does not fit the int32 index type (limit 1000)")) << e;
  e = overflow([] { gen32("gen:lap2d:30"); });  // 900 rows, 4380 nnz
  EXPECT_TRUE(contains(e, "gen:lap2d:30: nnz = 4380")) << e;
  for (const char* spec : {"gen:random_k:500:3", "gen:random_p:200:0.05", "gen:banded:400:2",
                           "gen:powerlaw:800:4", "gen:ideal:512", "gen:rmat:9:4",
                           "gen:lap3d27:8"}) {
    e = overflow([&] { gen32(spec); });
    EXPECT_TRUE(contains(e, spec) && contains(e, "int32")) << spec << ": " << e;
    EXPECT_NO_THROW((generate<float, std::int64_t>(spec))) << spec;
  }
}

TEST(Gen, RequestsBeyondTheHostMemoryAreRefusedBeforeTheRowsAreDrawn) {
  // Each fits int64 indices but not any host: refused at once, naming what it needs (drawing
  // 10^13 cells of random_p, or 10^13 row lengths of powerlaw, would take hours first).
  for (const char* spec : {"gen:random_p:10x4000000000000:0.5", "gen:powerlaw:10000000000000:16",
                           "gen:random_k:10000000000000:2"}) {
    const std::string e = error_of<OutOfMemoryError>([&] { generate<double, std::int64_t>(spec); });
    EXPECT_TRUE(contains(e, spec) && contains(e, "GiB of host memory")) << spec << ": " << e;
  }
}

TEST(Gen, DescribeListsEveryGeneratorAndTheDocsPageRepeatsIt) {
  const std::string text = gen::describe();
  for (const char* name : {"gen:random_p:", "gen:random_k:", "gen:ideal", "gen:lap2d:",
                           "gen:lap3d:", "gen:lap3d27:", "gen:rmat:", "gen:banded:",
                           "gen:powerlaw:"})
    EXPECT_TRUE(contains(text, name)) << name;
  // From the test data dir (an absolute path; __FILE__ may be relative under ccache's basedir).
  std::ifstream f(std::string(SPMAT_TEST_DATA_DIR) + "/../../docs/generators.md");
  ASSERT_TRUE(f) << "docs/generators.md not found";
  std::stringstream doc;
  doc << f.rdbuf();
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    EXPECT_TRUE(contains(doc.str(), line)) << "docs/generators.md lacks the describe() line:\n"
                                           << line;
  // Every example in describe() actually works.
  std::istringstream again(text);
  for (std::string line; std::getline(again, line);) {
    const auto at = line.find("e.g. ");
    if (at != std::string::npos)
      EXPECT_NO_THROW((generate<float, std::int32_t>(line.substr(at + 5)))) << line;
  }
}

}  // namespace
}  // namespace spmat
