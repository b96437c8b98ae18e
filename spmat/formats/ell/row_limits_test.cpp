// spmat/formats/ell/row_limits_test.cpp — the padding and row-skew limits of the formats that
// pad rows or walk a row on one thread: accepted on even rows, refused on long rows with a
// message that says what to do.
// SPDX-License-Identifier: MIT
#include "spmat/formats/ell/row_limits.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/gen/generators.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

using Csr64 = Csr<double, std::int64_t>;

/// Every format with a row limit, as registered.
const std::vector<std::string>& limited_formats() {
  static const std::vector<std::string> v{"ell",     "ellr",        "sell",    "hyb",
                                          "bro-ell", "bro-ell-bar", "bro-csr", "bro-hyb"};
  return v;
}

/// `rows` rows of `len` entries each (columns r, r+1, ... wrapping), then rows listed in
/// `long_rows` get `long_len` entries (columns 0..long_len-1).
Csr64 rows_with(std::int64_t rows, std::int64_t cols, std::int64_t len,
                const std::vector<std::int64_t>& long_rows, std::int64_t long_len) {
  Coo<double, std::int64_t> c;
  c.rows = rows;
  c.cols = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    bool is_long = false;
    for (std::int64_t l : long_rows) is_long = is_long || l == r;
    const std::int64_t n = is_long ? long_len : len;
    for (std::int64_t j = 0; j < n; ++j) {
      c.row_idx.push_back(r);
      c.col_idx.push_back(is_long ? j : (r + j) % cols);
      c.values.push_back(static_cast<double>(j % 5 + 1));
    }
  }
  return to_csr(c);
}

/// 4096 rows of 4 entries and row 100 of 4000: mean 4.98, longest 803 times it.
Csr64 one_dense_row() { return rows_with(4096, 4096, 4, {100}, 4000); }

/// 4096 rows of 2 entries and every 32nd row of 200: each 32-row slice padded to 200 (sliced
/// padding ratio 21.8) while the long rows are only 24 times the mean.
Csr64 long_row_per_slice() {
  std::vector<std::int64_t> long_rows;
  for (std::int64_t r = 0; r < 4096; r += 32) long_rows.push_back(r);
  return rows_with(4096, 4096, 2, long_rows, 200);
}

TEST(RowLimits, PaddingRatioCountsRowsWithTheNonzeros) {
  EXPECT_DOUBLE_EQ(padding_ratio(4, 4, 4), 0.5);  // a 4x4 diagonal in ELL
  EXPECT_DOUBLE_EQ(padding_ratio(2002000, 3000, 2000), 400.4);
  EXPECT_EQ(padding_ratio(0, 0, 0), 0.0);
  EXPECT_FALSE(exceeds_padding(8 * 10, 6, 4, 8));
  EXPECT_TRUE(exceeds_padding(8 * 10 + 1, 6, 4, 8));
  EXPECT_FALSE(exceeds_padding(1e30, 6, 4, INFINITY));
}

TEST(RowLimits, SkewIsRelativeToTheMeanButShortWalksAlwaysPass) {
  // The examples of exceeds_row_skew: mean 5 (500 nonzeros over 100 rows).
  EXPECT_FALSE(exceeds_row_skew(64, 500, 100, 1, 8));
  EXPECT_TRUE(exceeds_row_skew(65, 500, 100, 1, 8));
  EXPECT_FALSE(exceeds_row_skew(256, 500, 100, 4, 8));
  EXPECT_TRUE(exceeds_row_skew(257, 500, 100, 4, 8));
  EXPECT_FALSE(exceeds_row_skew(70, 1000, 100, 1, 8));
  EXPECT_FALSE(exceeds_row_skew(100000, 500, 100, 1, INFINITY));
  EXPECT_FALSE(exceeds_row_skew(100, 0, 0, 1, 8));  // no rows, no entries: nothing to walk
}

TEST(RowLimits, OptionsAreNumbersOrInf) {
  EXPECT_EQ(row_limit_option("ell", FormatOptions(), "max_fill", 8), 8);
  EXPECT_EQ(row_limit_option("ell", FormatOptions().set("max_fill", "2.5"), "max_fill", 8), 2.5);
  EXPECT_TRUE(std::isinf(row_limit_option("ell", FormatOptions().set("max_fill", "inf"), "max_fill", 8)));
  EXPECT_THROW(row_limit_option("ell", FormatOptions().set("max_fill", "-1"), "max_fill", 8), ParseError);
  EXPECT_THROW(row_limit_option("ell", FormatOptions().set("max_fill", "nan"), "max_fill", 8), ParseError);
  EXPECT_THROW(row_limit_option("ell", FormatOptions().set("max_fill", "lots"), "max_fill", 8), ParseError);
}

// Stencils, bands and random matrices with even rows: what these formats are for. Each builds
// at the default limits.
TEST(RowLimits, EvenRowsBuildAtTheDefaults) {
  for (const char* spec : {"gen:lap2d:60", "gen:lap3d:15", "gen:lap3d27:10", "gen:banded:3000:5",
                           "gen:random_k:3000:12", "gen:random_p:1500:0.01"}) {
    const auto a = gen::generate<double, std::int32_t>(spec);
    for (const auto& f : limited_formats())
      EXPECT_NO_THROW((void)Matrix<double>::build(a, f, Backend::cpu)) << f << " on " << spec;
  }
}

struct Refusal {
  std::string format;
  FormatOptions options;
  bool dense_row;      ///< one_dense_row(), else long_row_per_slice()
  std::string option;  ///< the limit the message names (and that lifts it)
  std::string start;   ///< how the message starts: the format and what was measured
};

// Each limited format refuses a skewed matrix by the limit that bites first, naming the format,
// the measured ratio, the limit, the option and csr as the way out; the option at inf lifts it.
TEST(RowLimits, LongRowsAreRefusedNamingRatioLimitOptionAndAlternative) {
  const std::vector<Refusal> cases{
      {"ell", {}, true, "max_fill", "ell: padding ratio 669.4 exceeds max_fill=8"},
      {"ellr", {}, true, "max_fill", "ellr: padding ratio 669.4 exceeds max_fill=8"},
      {"sell", {}, true, "max_skew",
       "sell: the longest row (4000 entries) is 803.9 times the mean row (4.98), over max_skew=8"},
      {"bro-ell", {}, true, "max_skew", "bro-ell: the longest row (4000 entries) is 803.9 times"},
      {"bro-ell-bar", {}, true, "max_skew", "bro-ell-bar: the longest row (4000 entries)"},
      {"bro-csr", {}, true, "max_skew", "bro-csr: the longest row (4000 entries) is 803.9 times"},
      {"hyb", FormatOptions().set("K", "4000"), true, "max_fill",
       "hyb (forced K): padding ratio 669.4 exceeds max_fill=8"},
      // Slices padded to a long row in each of them: the sliced formats' padding limit.
      {"sell", FormatOptions().set("sigma", "1").set("max_skew", "inf"), false, "max_fill",
       "sell: padding ratio 21.8 exceeds max_fill=8"},
      {"bro-ell", FormatOptions().set("max_skew", "inf"), false, "max_fill",
       "bro-ell: padding ratio 21.8 exceeds max_fill=8"},
      {"bro-hyb", FormatOptions().set("ell_width", "200"), false, "max_fill",
       "bro-hyb (forced ell_width): padding ratio 21.8 exceeds max_fill=8"},
  };
  const Csr64 dense = one_dense_row(), sliced = long_row_per_slice();
  for (const auto& c : cases) {
    const Csr64& a = c.dense_row ? dense : sliced;
    SCOPED_TRACE(c.format + " [" + c.options.to_string() + "]");
    try {
      (void)Matrix<double>::build(a, c.format, Backend::cpu, c.options);
      ADD_FAILURE() << "expected UnsupportedError";
    } catch (const UnsupportedError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(c.start, 0), 0u) << msg;
      EXPECT_NE(msg.find("csr for matrices with a few long rows"), std::string::npos) << msg;
      EXPECT_NE(msg.find("raise " + c.option + " (inf: no limit)"), std::string::npos) << msg;
    }
    FormatOptions lifted = c.options;
    lifted.set(c.option, "inf");
    EXPECT_NO_THROW((void)Matrix<double>::build(a, c.format, Backend::cpu, lifted));
  }
  // The automatic widths of hyb and bro-hyb keep the ELL part small: no limit applies.
  EXPECT_NO_THROW((void)Matrix<double>::build(dense, "hyb", Backend::cpu));
  EXPECT_NO_THROW((void)Matrix<double>::build(dense, "bro-hyb", Backend::cpu));
  EXPECT_NO_THROW((void)Matrix<double>::build(sliced, "bro-hyb", Backend::cpu));
}

// The conformance battery still runs every limited format on its regular scenarios at the
// default limits; only the two scenarios built around long rows are refused, by the formats
// that walk or pad rows.
TEST(RowLimits, ConformanceScenariosAreRefusedOnlyWhereRowsAreLong) {
  for (const auto& sc : testing::scenarios()) {
    const auto a = sc.canonical(12345);
    const bool long_rows = sc.name == "dense_row_100000" || sc.name == "power_law_rows";
    for (const auto& f : limited_formats()) {
      const bool split = f == "hyb" || f == "bro-hyb";  // long rows go to the COO part
      if (long_rows && !split)
        EXPECT_THROW((void)Matrix<double>::build(a, f, Backend::cpu), UnsupportedError)
            << f << " on " << sc.name;
      else
        EXPECT_NO_THROW((void)Matrix<double>::build(a, f, Backend::cpu)) << f << " on " << sc.name;
    }
  }
}

}  // namespace
}  // namespace spmat
