// spmat/formats/bro_common/bro_common_test.cpp — BRO bit packing: the paper's Fig. 1 example
// bit for bit, hand-made words, and random round trips through every reader.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "spmat/core/error.hpp"
#include "spmat/formats/bro_common/bro_common.hpp"

namespace spmat::bro {
namespace {

TEST(BroGamma, CountsTheBitsOfAnUnsignedInteger) {
  EXPECT_EQ(gamma(0), 0);
  EXPECT_EQ(gamma(1), 1);
  EXPECT_EQ(gamma(2), 2);
  EXPECT_EQ(gamma(4), 3);  // the paper's example: 4 -> 3 bits
  EXPECT_EQ(gamma(0xffffffffull), 32);
}

TEST(BroBitPacker, PacksMsbFirstAndPadsTheLastSymbol) {
  BitPacker pk(32);
  pk.put(0b101, 3);
  pk.put(0xffffffffull, 32);
  pk.put(1, 1);
  const auto w = pk.finish();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], 0xbfffffffull);  // 101 then 29 ones
  EXPECT_EQ(w[1], 0xf0000000ull);  // 3 ones, the final 1, 28 pad zeros
}

// Paper Fig. 1 / spec §3.2: the 4×5 example, h = 2, sym_len = 4 — 32 bits in all.
TEST(BroEncodeSlices, ReproducesThePapersFigure1BitForBit) {
  const std::vector<std::int64_t> ptr{0, 2, 7, 10, 12};
  const std::vector<std::uint32_t> deltas{1, 2, 1, 1, 1, 1, 1, 2, 1, 2, 4, 1};
  const SliceCode c = encode_slices(ptr, deltas, 2, 4);
  EXPECT_EQ(c.width_off, (std::vector<std::int64_t>{0, 5, 8}));
  EXPECT_EQ(c.widths, (std::vector<std::uint8_t>{1, 2, 1, 1, 1, 3, 1, 2}));
  EXPECT_EQ(c.sym_off, (std::vector<std::int64_t>{0, 4, 8}));
  EXPECT_EQ(c.symbols, (std::vector<std::uint64_t>{0b1100, 0b1011, 0b0000, 0b1100,    //
                                                   0b0101, 0b1001, 0b1000, 0b0000}));
  EXPECT_EQ(c.symbols.size() * 4, 32u);  // "the final size of the compressed stream is 32 bits"
  EXPECT_EQ(decode_slice_row(c, 0, 0), (std::vector<std::uint32_t>{1, 2, 0, 0, 0}));
  EXPECT_EQ(decode_slice_row(c, 0, 1), (std::vector<std::uint32_t>{1, 1, 1, 1, 1}));
  EXPECT_EQ(decode_slice_row(c, 1, 0), (std::vector<std::uint32_t>{2, 1, 2}));
  EXPECT_EQ(decode_slice_row(c, 1, 1), (std::vector<std::uint32_t>{4, 1, 0}));
}

TEST(BroEncodeSlices, Figure1With32BitSymbolsGivesOneWordPerRow) {
  const std::vector<std::int64_t> ptr{0, 2, 7, 10, 12};
  const std::vector<std::uint32_t> deltas{1, 2, 1, 1, 1, 1, 1, 2, 1, 2, 4, 1};
  const SliceCode c = encode_slices(ptr, deltas, 2, 32);
  EXPECT_EQ(c.symbols, (std::vector<std::uint64_t>{0xc0000000u, 0xbc000000u, 0x58000000u, 0x90000000u}));
  EXPECT_EQ(c.sym_off, (std::vector<std::int64_t>{0, 2, 4}));
}

TEST(BroEncodeSlices, RejectsAZeroDelta) {
  EXPECT_THROW((void)encode_slices({0, 2}, {1, 0}, 32, 32), InvalidMatrixError);
}

// Random fields of random widths 0..32, multiplexed over `stride` lanes: every reader returns
// exactly what was packed, and never reads a symbol beyond the stream (the buffer is sized
// exactly; ASan would flag a read past it).
TEST(BroReaders, RoundTripRandomFieldsBitExact) {
  std::mt19937_64 rng(7);
  for (int sym_len : {32, 64}) {
    for (int trial = 0; trial < 50; ++trial) {
      const int n = static_cast<int>(rng() % 200);
      std::vector<int> w(n);
      std::vector<std::uint64_t> v(n);
      for (int i = 0; i < n; ++i) {
        w[i] = static_cast<int>(rng() % 33);
        v[i] = w[i] == 0 ? 0 : (rng() >> (64 - w[i]));
      }
      BitPacker pk(sym_len);
      for (int i = 0; i < n; ++i) pk.put(v[i], w[i]);
      const auto sym = pk.finish();
      std::vector<std::uint32_t> s32;
      std::vector<std::uint64_t> s64;
      store_symbols(sym, sym_len, s32, s64);
      HostReader hr(sym.data(), 1, sym_len);
      if (sym_len == 32) {
        std::vector<std::uint32_t> exact(s32);  // exact-size copy
        Reader32 rd(exact.data(), 1);
        for (int i = 0; i < n; ++i) {
          ASSERT_EQ(rd.next(w[i]), v[i]) << "field " << i;
          ASSERT_EQ(hr.next(w[i]), v[i]);
        }
      } else {
        std::vector<std::uint64_t> exact(s64);
        Reader64 rd(exact.data(), 1);
        for (int i = 0; i < n; ++i) {
          ASSERT_EQ(rd.next(w[i]), v[i]) << "field " << i;
          ASSERT_EQ(hr.next(w[i]), v[i]);
        }
      }
    }
  }
}

TEST(BroIndexSavings, ComputesEtaWithAndWithoutMetadata) {
  IndexSavings s{.original = 80, .original_nnz = 48, .compressed = 4, .metadata = 20};
  EXPECT_DOUBLE_EQ(s.eta(false), 0.95);  // Fig. 1: 32 bits vs 80 bytes
  EXPECT_DOUBLE_EQ(s.eta(true), 0.7);
  EXPECT_DOUBLE_EQ(s.eta_nnz(false), 1.0 - 4.0 / 48.0);
}

}  // namespace
}  // namespace spmat::bro
