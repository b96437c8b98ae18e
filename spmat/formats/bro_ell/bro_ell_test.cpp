// spmat/formats/bro_ell/bro_ell_test.cpp — BRO-ELL hand-checked layout, and the CPU battery of
// the whole BRO family (bro-ell, bro-ell-bar, bro-coo, bro-hyb, bro-hyb-bar, bro-csr) against the
// fp64 reference: 4 type pairs, alpha/beta, NaN-poisoned y, exact round trips.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "spmat/core/reference.hpp"
#include "spmat/formats/bro_ell/bro_ell.hpp"
#include "spmat/formats/bro_ell/bro_ell_batched.hpp"
#include "spmat/formats/bro_ell/bro_test_support.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/kernel_check.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

using bro_testing::Csr64;
using bro_testing::paper_example;

TEST(BroEll, StoresThePapersExampleAsInFigure1) {
  const auto a = paper_example();
  const auto e = BroEll<double, std::int32_t>::encode(a, 2, 4, {}, -1);
  EXPECT_EQ(e.width_off, (std::vector<std::int64_t>{0, 5, 8}));
  EXPECT_EQ(e.widths, (std::vector<std::uint8_t>{1, 2, 1, 1, 1, 3, 1, 2}));
  EXPECT_EQ(e.sym64, (std::vector<std::uint64_t>{0b1100, 0b1011, 0b0000, 0b1100, 0b0101, 0b1001,
                                                 0b1000, 0b0000}));
  EXPECT_EQ(e.values, (std::vector<double>{3, 2, 2, 6, 0, 5, 0, 4, 0, 1, 1, 8, 9, 3, 7, 0}));
  EXPECT_EQ(e.max_row, 5);
  const auto s = e.index_savings();
  EXPECT_EQ(s.original, 80u);  // 4×5 4-byte ELLPACK indices, as the paper counts
  EXPECT_EQ(s.compressed, 64u);  // 8 four-bit symbols (32 payload bits), held in 64-bit words on the host
  EXPECT_EQ(e.to_csr(), a);
}

TEST(BroEll, DecodesThe32BitCodeOfTheExampleInTheKernel) {
  const auto a = paper_example();
  const auto e = BroEll<double, std::int32_t>::encode(a, 2, 32, {}, -1);
  EXPECT_EQ(e.sym32, (std::vector<std::uint32_t>{0xc0000000u, 0xbc000000u, 0x58000000u, 0x90000000u}));
  EXPECT_EQ(e.storage_bytes(), 3 * 8 + 3 * 8 + 8 + 4 * 4 + 16 * 8u);
  bro_testing::expect_paper_example_product(e);
  std::vector<double> yt(5, 1.0);
  const std::vector<double> xt{1, 1, 1, 1};
  spmv_t(e, xt.data(), yt.data(), 2.0, 1.0);  // 2·(column sums) + 1
  EXPECT_EQ(yt, (std::vector<double>{11, 15, 33, 25, 23}));
}

TEST(BroEll, CodesTheFirstColumnRelativeToTheSlicesSmallestFirstColumn) {
  // first = slice: slice 1 (rows 2, 3; first columns 1 and 3) gets base 1, so row 2's deltas are
  // {1,1,2} and row 3's {3,1}: widths {2,1,2} (5 bits, the paper's coding needs 6); slice 0's
  // base is 0 and its code is the paper's.
  const auto a = paper_example();
  const auto e = BroEll<double, std::int32_t>::encode(a, 2, 32, {}, -1, true);
  EXPECT_EQ(e.col_base, (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(e.widths, (std::vector<std::uint8_t>{1, 2, 1, 1, 1, 2, 1, 2}));
  //                    01|1|10 = 01110…           11|1|00 = 11100…
  EXPECT_EQ(e.sym32, (std::vector<std::uint32_t>{0xc0000000u, 0xbc000000u, 0x70000000u, 0xe0000000u}));
  EXPECT_EQ(e.storage_bytes(), 3 * 8 + 3 * 8 + 8 + 4 * 4 + 16 * 8u + 2 * 4u);
  EXPECT_EQ(e.to_csr(), a);
  bro_testing::expect_paper_example_product(e);
}

TEST(BroEll, SliceRelativeFirstColumnsFitAFivePointStencilRowInOneWord) {
  // gen:lap2d-like rows (columns i−n, i−1, i, i+1, i+n with n = 2000) in slices of 32 at rows
  // 102400..102495: the first delta is at most 32 (6 bits), the others 1999, 1, 1, 1999
  // (11+1+1+11): 30 bits, one symbol; the paper's first delta (column + 1 ≈ 10^5, 17 bits) needs
  // two.
  const std::int64_t n = 2000, r0 = 102400, stencil_rows = 3 * 32;
  Csr<double, std::int32_t> a;
  a.rows = a.cols = static_cast<std::int32_t>(r0 + stencil_rows + n);
  a.row_ptr.assign(1, 0);
  for (std::int64_t p = 0; p < a.rows; ++p) {
    if (p >= r0 && p < r0 + stencil_rows)
      for (std::int64_t c : {p - n, p - 1, p, p + 1, p + n}) {
        a.col_idx.push_back(static_cast<std::int32_t>(c));
        a.values.push_back(1.0);
      }
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
  }
  const auto slice = BroEll<double, std::int32_t>::encode(a, 32, 32, {}, -1, true);
  const auto paper = BroEll<double, std::int32_t>::encode(a, 32, 32, {}, -1, false);
  for (std::int64_t s = r0 / 32; s < (r0 + stencil_rows) / 32; ++s) {
    EXPECT_EQ(slice.col_base[s], s * 32 - n);
    EXPECT_EQ(slice.widths[slice.width_off[s]], 6);
    EXPECT_EQ((slice.sym_off[s + 1] - slice.sym_off[s]) / 32, 1);
    EXPECT_EQ((paper.sym_off[s + 1] - paper.sym_off[s]) / 32, 2);
  }
  EXPECT_EQ(slice.to_csr(), a);
}

// Runs the batched decode of the CUDA kernel (bro_ell_batched.hpp) on the host, with the
// kernel's reader priming, and returns y = A·x in the original row order.
template <int U, class V, class I>
std::vector<V> batched_host_spmv(const BroEll<V, I>& e, const std::vector<V>& x) {
  std::vector<V> y(static_cast<std::size_t>(e.rows), std::numeric_limits<V>::quiet_NaN());
  for (std::int64_t s = 0; s < e.slices(); ++s)
    for (std::int64_t t = 0; t < e.h; ++t) {
      const std::int64_t wo = e.width_off[s], len = e.width_off[s + 1] - wo;
      const std::int64_t nsym = e.sym_off[s + 1] - e.sym_off[s];
      bro::HostWidths wd{e.widths.data() + wo, len};
      V sum;
      if (e.sym_len == 32) {
        bro::Reader32 rd(e.sym32.data() + e.sym_off[s] + t, e.h);
        if (nsym > 0) rd.prime();
        sum = bro::batched_row<U, I>(rd, wd, len, e.values.data() + wo * e.h + t, e.h, x.data(), e.start_col(s));
      } else {
        bro::Reader64 rd(e.sym64.data() + e.sym_off[s] + t, e.h);
        if (nsym > 0) rd.prime();
        sum = bro::batched_row<U, I>(rd, wd, len, e.values.data() + wo * e.h + t, e.h, x.data(), e.start_col(s));
      }
      const std::int64_t p = s * e.h + t;
      if (p < e.rows) y[e.original_row(p)] = sum;
    }
  return y;
}

TEST(BroEll, BatchedKernelDecodeMatchesTheClassicLoopBitForBit) {
  // Rows up to 75 entries (3 width chunks of 32), empty rows, BAR-permuted rows; small-integer
  // values so both orders of summation are exact and the results must be identical.
  const Csr64 a64 = testing::random_csr_of_lengths(700, 3001, [](std::int64_t r) {
    return r % 7 == 0 ? 0 : (r % 50 == 3 ? 75 : r % 11);
  }, 17);
  const auto a = convert<double, std::int32_t>(a64);
  const auto x = testing::random_vector<double>(a.cols, 4, true);
  for (int h : {32, 64, 256})
    for (int sym_len : {32, 64})
      for (bool first : {false, true})
        for (bool bar : {false, true}) {
          SCOPED_TRACE("h=" + std::to_string(h) + " sym_len=" + std::to_string(sym_len) +
                       " first_slice=" + std::to_string(first) + " bar=" + std::to_string(bar));
          std::vector<std::int64_t> order;
          if (bar)
            for (std::int64_t p = 0; p < a.rows; ++p) order.push_back((p * 389) % a.rows);
          const auto e = BroEll<double, std::int32_t>::encode(a, h, sym_len, order, -1, first);
          std::vector<double> want(static_cast<std::size_t>(a.rows));
          spmv(e, x.data(), want.data(), 1.0, 0.0);
          EXPECT_EQ((batched_host_spmv<8>(e, x)), want);
          EXPECT_EQ((batched_host_spmv<4>(e, x)), want);
          EXPECT_EQ((batched_host_spmv<1>(e, x)), want);
        }
}

// Host emulation of the fit kernel (bro_ell_cuda.cu, bro_ell_spmv_fit_kernel): one 64-bit word
// per row from bro::fit_word, bro::fit_row with host widths; y in the original row order.
template <class V, class I>
std::vector<V> fit_host_spmv(const BroEll<V, I>& e, const std::vector<V>& x, int words = 1) {
  std::vector<V> y(static_cast<std::size_t>(e.rows), std::numeric_limits<V>::quiet_NaN());
  for (std::int64_t s = 0; s < e.slices(); ++s)
    for (std::int64_t t = 0; t < e.h; ++t) {
      const std::int64_t wo = e.width_off[s], len = e.width_off[s + 1] - wo;
      const std::int64_t nsym = e.sym_off[s + 1] - e.sym_off[s];
      const bro::HostWidths wd{e.widths.data() + wo, len};
      const V* v = e.values.data() + wo * e.h + t;
      const I start = static_cast<I>(e.start_col(s));
      V sum;
      if (words == 1) {
        const std::uint64_t buf = e.sym_len == 32
            ? bro::fit_word(e.sym32.data() + e.sym_off[s] + t, e.h, nsym)
            : bro::fit_word(e.sym64.data() + e.sym_off[s] + t, e.h, nsym);
        sum = bro::fit_row<4, I>(buf, wd, static_cast<int>(len), v, e.h, x.data(), start);
      } else {
        const bro::FitBits128 bits = e.sym_len == 32
            ? bro::fit_bits128(e.sym32.data() + e.sym_off[s] + t, e.h, nsym)
            : bro::fit_bits128(e.sym64.data() + e.sym_off[s] + t, e.h, nsym);
        sum = bro::fit_row_bits<4, I>(bits, wd, static_cast<int>(len), v, e.h, x.data(), start);
      }
      const std::int64_t p = s * e.h + t;
      if (p < e.rows) y[e.original_row(p)] = sum;
    }
  return y;
}

TEST(BroEll, FitKernelDecodeMatchesTheClassicLoopBitForBit) {
  // Every matrix the fit kernel accepts: stencils (1 and 2 symbols per row), short random rows
  // (up to 64 bits: 3 fields of ≤ 21 bits), empty rows, BAR-permuted rows, both codings.
  const Csr64 mats[] = {bro_testing::lap2d(61, 67), bro_testing::lap2d(5, 300),
                        testing::random_csr_of_lengths(1500, 1 << 20, [](std::int64_t r) {
                          return r % 9 == 0 ? 0 : 1 + r % 3;
                        }, 23)};
  int fitted = 0;
  for (const auto& a64 : mats) {
    const auto a = convert<double, std::int32_t>(a64);
    const auto a64i = convert<float, std::int64_t>(a64);
    const auto x = testing::random_vector<double>(a.cols, 4, true);
    const auto xf = testing::random_vector<float>(a.cols, 4, true);
    for (int h : {32, 64, 256})
      for (int sym_len : {32, 64})
        for (bool first : {false, true})
          for (bool bar : {false, true}) {
            SCOPED_TRACE("rows=" + std::to_string(a.rows) + " h=" + std::to_string(h) +
                         " sym_len=" + std::to_string(sym_len) + " first_slice=" +
                         std::to_string(first) + " bar=" + std::to_string(bar));
            std::vector<std::int64_t> order;
            if (bar)
              for (std::int64_t p = 0; p < a.rows; ++p) order.push_back((p * 389) % a.rows);
            const auto e = BroEll<double, std::int32_t>::encode(a, h, sym_len, order, -1, first);
            const auto ef = BroEll<float, std::int64_t>::encode(a64i, h, sym_len, order, -1, first);
            if (!bro_ell_fit_eligible(e)) continue;
            ++fitted;
            std::vector<double> want(static_cast<std::size_t>(a.rows));
            spmv(e, x.data(), want.data(), 1.0, 0.0);
            EXPECT_EQ(fit_host_spmv(e, x), want);
            ASSERT_TRUE(bro_ell_fit_eligible(ef));
            std::vector<float> wantf(static_cast<std::size_t>(a.rows));
            spmv(ef, xf.data(), wantf.data(), 1.0f, 0.0f);
            EXPECT_EQ(fit_host_spmv(ef, xf), wantf);
          }
  }
  EXPECT_GE(fitted, 24);  // the stencils fit in every configuration but first=abs with h=256
}

TEST(BroEll, FitEligibilityFollowsTheSixtyFourBitRule) {
  using E = BroEll<double, std::int64_t>;
  const auto o = FormatOptions().set("h", "32");
  // lap2d with the slice-relative first column: 30 bits per interior row, some slices 2 words.
  const auto lap = E::build(bro_testing::lap2d(61, 67), o);
  EXPECT_TRUE(bro_ell_fit_eligible(lap));
  bool two_words = false;
  for (std::int64_t s = 0; s < lap.slices(); ++s)
    two_words |= lap.sym_off[s + 1] - lap.sym_off[s] == 2 * lap.h;
  EXPECT_TRUE(two_words);
  EXPECT_TRUE(bro_ell_fit_eligible(E::build(bro_testing::lap2d(61, 67), FormatOptions().set("sym_len", "64"))));
  // 12 random columns of 777: ~10 bits each, > 64 bits per row.
  EXPECT_FALSE(bro_ell_fit_eligible(E::build(bro_testing::scenarios()[0].a, o)));
  // 70 positions per slice (> 32 widths: more than one shuffle chunk).
  EXPECT_FALSE(bro_ell_fit_eligible(E::build(bro_testing::scenarios()[3].a, o)));
  // Options: fit (default), batched, classic.
  EXPECT_EQ(lap.kernel, 2);
  EXPECT_EQ(E::build(bro_testing::lap2d(3, 3), FormatOptions().set("kernel", "batched")).kernel, 1);
  EXPECT_EQ(E::build(bro_testing::lap2d(3, 3), FormatOptions().set("kernel", "classic")).kernel, 0);
}

TEST(BroEll, FitKernel128DecodeMatchesTheClassicLoopBitForBit) {
  // The 128-bit fit decode (bro::fit_bits128 + fit_row_bits) on every matrix with fit_words 1 or
  // 2: 7-point stencils whose boundary slices need 3 symbols, wide random rows of up to 5 fields
  // of ~20 bits (4 symbols), a 5-point stencil (1 word: the 128-bit path must decode it too).
  const Csr64 mats[] = {bro_testing::lap3d(3, 20, 150), bro_testing::lap3d(3, 64, 150),
                        testing::random_csr_of_lengths(1999, 1 << 18, [](std::int64_t r) {
                          return r % 13 == 0 ? 0 : 1 + r % 5;
                        }, 12),
                        bro_testing::lap2d(61, 67)};
  int two_words = 0;
  for (const auto& a64 : mats) {
    const auto a = convert<double, std::int32_t>(a64);
    const auto a64i = convert<float, std::int64_t>(a64);
    const auto x = testing::random_vector<double>(a.cols, 4, true);
    const auto xf = testing::random_vector<float>(a.cols, 4, true);
    for (int h : {32, 64})
      for (int sym_len : {32, 64})
        for (bool bar : {false, true}) {
          SCOPED_TRACE("rows=" + std::to_string(a.rows) + " h=" + std::to_string(h) +
                       " sym_len=" + std::to_string(sym_len) + " bar=" + std::to_string(bar));
          std::vector<std::int64_t> order;
          if (bar)
            for (std::int64_t p = 0; p < a.rows; ++p) order.push_back((p * 389) % a.rows);
          const auto e = BroEll<double, std::int32_t>::encode(a, h, sym_len, order, -1, true);
          const auto ef = BroEll<float, std::int64_t>::encode(a64i, h, sym_len, order, -1, true);
          const int w = bro_ell_fit_words(e);
          if (w == 0) continue;
          two_words += w == 2;
          std::vector<double> want(static_cast<std::size_t>(a.rows));
          spmv(e, x.data(), want.data(), 1.0, 0.0);
          EXPECT_EQ(fit_host_spmv(e, x, 2), want);
          ASSERT_EQ(bro_ell_fit_words(ef), w);
          std::vector<float> wantf(static_cast<std::size_t>(a.rows));
          spmv(ef, xf.data(), wantf.data(), 1.0f, 0.0f);
          EXPECT_EQ(fit_host_spmv(ef, xf, 2), wantf);
        }
  }
  EXPECT_GE(two_words, 8);
}

TEST(BroEll, FitWordsFollowTheSixtyFourAndOneTwentyEightBitRules) {
  using E = BroEll<double, std::int64_t>;
  const auto lap3 = E::build(bro_testing::lap3d(3, 20, 150), {});
  EXPECT_EQ(bro_ell_fit_words(lap3), 2);
  EXPECT_FALSE(bro_ell_fit_eligible(lap3));
  std::int64_t max_sym = 0;
  for (std::int64_t s = 0; s < lap3.slices(); ++s)
    max_sym = std::max(max_sym, lap3.sym_off[s + 1] - lap3.sym_off[s]);
  EXPECT_EQ(max_sym, 3 * lap3.h);  // boundary slices: 3 symbols of 32 bits
  EXPECT_EQ(bro_ell_fit_words(E::build(bro_testing::lap3d(3, 20, 150), FormatOptions().set("sym_len", "64"))), 2);
  EXPECT_EQ(bro_ell_fit_words(E::build(bro_testing::lap2d(61, 67), {})), 1);
  // The GPU battery's 128-bit scenarios take W = 2 with the defaults and with sym_len 64.
  for (const auto& sc : bro_testing::scenarios())
    if (sc.name.rfind("lap3d_7pt", 0) == 0 || sc.name.rfind("wide_short_rows", 0) == 0) {
      SCOPED_TRACE(sc.name);
      EXPECT_EQ(bro_ell_fit_words(E::build(sc.a, {})), 2);
      EXPECT_EQ(bro_ell_fit_words(E::build(sc.a, FormatOptions().set("sym_len", "64"))), 2);
    }
  EXPECT_EQ(bro_ell_fit_words(E::build(bro_testing::scenarios()[3].a, {})), 0);  // 70 positions
  EXPECT_EQ(lap3.fit_max_words, 2);
  EXPECT_EQ(E::build(bro_testing::lap2d(3, 3), FormatOptions().set("fit_bits", "64")).fit_max_words, 1);
  EXPECT_THROW((void)E::build(bro_testing::lap2d(3, 3), FormatOptions().set("fit_bits", "96")), ParseError);
}

TEST(BroEll, PrimedReadersDecodeAsUnprimedOnes) {
  std::vector<std::uint32_t> w32{0xdeadbeefu, 0x12345678u, 0xcafef00du};
  std::vector<std::uint64_t> w64{0xdeadbeef12345678ull, 0xcafef00d0badc0deull};
  const int widths[] = {1, 7, 32, 3, 0, 17, 5, 9, 2, 12};
  bro::Reader32 a(w32.data(), 1), b(w32.data(), 1);
  bro::Reader64 c(w64.data(), 1), d(w64.data(), 1);
  b.prime();
  d.prime();
  for (int bits : widths) {
    EXPECT_EQ(a.next(bits), b.next(bits)) << bits;
    EXPECT_EQ(c.next(bits), d.next(bits)) << bits;
  }
}

TEST(BroEll, KeepsColumnZeroApartFromThePaddingMarker) {
  Csr<float, std::int64_t> a;  // rows hitting column 0 only, and an explicit zero
  a.rows = 3;
  a.cols = 2;
  a.row_ptr = {0, 1, 1, 3};
  a.col_idx = {0, 0, 1};
  a.values = {5, 0, 7};
  const auto e = BroEll<float, std::int64_t>::build(a, FormatOptions().set("h", "32"));
  EXPECT_EQ(e.to_csr(), a);
  EXPECT_EQ(e.nnz, 3);
}

TEST(BroEll, RefusesADenseRowNamingTheSkewAndThePadding) {
  const Csr64 a = testing::random_csr_of_lengths(301, 100003, [](std::int64_t r) { return r == 7 ? 100000 : r % 3; }, 2);
  try {
    (void)Matrix<double>::build(a, "bro-ell", Backend::cpu);
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("bro-ell: the longest row (100000 entries) is 300.1 times"),
              std::string::npos)
        << e.what();
  }
  // Without the skew limit the padding of the row's slice (32 x 100000 slots) still refuses it.
  try {
    (void)Matrix<double>::build(a, "bro-ell", Backend::cpu, FormatOptions().set("max_skew", "inf"));
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("bro-ell: padding ratio"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("raise max_fill"), std::string::npos) << e.what();
  }
  // BRO-HYB takes it: the long row goes to the BRO-COO part.
  const auto m = Matrix<double>::build(a, "bro-hyb", Backend::cpu);
  EXPECT_EQ(m.to_csr(), a);
}

TEST(BroEll, RejectsBadOptions) {
  const auto a = paper_example();
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-ell", Backend::cpu, FormatOptions().set("h", "48")), ParseError);
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-ell", Backend::cpu, FormatOptions().set("sym_len", "16")), ParseError);
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-coo", Backend::cpu, FormatOptions().set("interval", "40")), ParseError);
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-ell-bar", Backend::cpu, FormatOptions().set("bar_algo", "x")), ParseError);
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-ell", Backend::cpu, FormatOptions().set("first", "row")), ParseError);
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-ell", Backend::cpu, FormatOptions().set("kernel", "x")), ParseError);
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-hyb", Backend::cpu, FormatOptions().set("unroll", "3")), ParseError);
}

TEST(BroFamilyCpu, MatchesTheReferenceOnEveryScenarioAndTypePair) {
  for (const auto& var : bro_testing::variants())
    for (const auto& sc : bro_testing::scenarios())
      testing::for_each_type_pair([&]<class V, class I>() {
        bro_testing::check_variant<V, I>(var, sc, Backend::cpu);
      });
}

TEST(BroFamilyCpu, IsDeterministicRunToRun) {
  const auto& sc = bro_testing::scenarios()[2];
  for (const auto& var : bro_testing::variants()) {
    const auto m = Matrix<double>::build(sc.a, var.format, Backend::cpu,
                                               testing::without_row_limits(var.format, var.options));
    const auto x = testing::random_vector<double>(sc.a.rows, 3);
    std::vector<double> y1(sc.a.cols), y2(sc.a.cols);
    m.spmv_t(x, y1);
    m.spmv_t(x, y2);
    EXPECT_EQ(y1, y2) << var.format;
  }
}

}  // namespace
}  // namespace spmat
