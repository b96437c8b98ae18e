// spmat/formats/tiled/tiled_test.cpp — tiled format: exact layout, reordering, segmentation,
// round trip, CPU spmm vs the fp64 reference, GPU spmm (skipped without a GPU).
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <span>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/tiled/tiled.hpp"
#include "spmat/gen/generators.hpp"
#include "spmat/model/intensity.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/device_ops.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

constexpr std::uint16_t P = 0xFFFF;

template <class Value, class Index>
Csr<Value, Index> random_csr(std::int64_t m, std::int64_t n, double density, std::uint64_t seed,
                             std::int64_t dense_row = -1) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Coo<Value, Index> c;
  c.rows = static_cast<Index>(m);
  c.cols = static_cast<Index>(n);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      if (u(g) < density || i == dense_row) {
        c.row_idx.push_back(static_cast<Index>(i));
        c.col_idx.push_back(static_cast<Index>(j));
        c.values.push_back(static_cast<Value>(static_cast<int>(u(g) * 9) - 4));  // small integers, zeros kept
      }
  return to_csr(c);
}

TEST(Tiled, FourByFourExampleIsStoredAsTheHeaderSays) {
  const auto a = testing::example<double, std::int32_t>();
  // r = 1, smem = 16 bytes → 2 fp64 slots per stage.
  const auto s = TiledStorage<double, std::int32_t>::build(
      a, FormatOptions::parse("kernel=sell,variant=baseline,reorder=off,r=1,panel_rows=32,smem=16"));
  EXPECT_EQ(s.stage_cap, 2);
  EXPECT_EQ(s.panel_stage_ptr, (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(s.stage_map_ptr, (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(s.map, (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(s.slab_ptr, (std::vector<std::int64_t>{0, 64, 96}));
  auto lanes = [&](std::int64_t off) {
    return std::vector<std::uint16_t>(s.ell_idx.begin() + off, s.ell_idx.begin() + off + 4);
  };
  auto vals = [&](std::int64_t off) {
    return std::vector<double>(s.ell_val.begin() + off, s.ell_val.begin() + off + 4);
  };
  EXPECT_EQ(lanes(0), (std::vector<std::uint16_t>{0, P, 0, P}));
  EXPECT_EQ(lanes(32), (std::vector<std::uint16_t>{P, P, 1, P}));
  EXPECT_EQ(lanes(64), (std::vector<std::uint16_t>{0, P, 1, 1}));
  EXPECT_EQ(vals(0), (std::vector<double>{1, 0, 3, 0}));
  EXPECT_EQ(vals(32), (std::vector<double>{0, 0, 4, 0}));
  EXPECT_EQ(vals(64), (std::vector<double>{2, 0, 5, 6}));
  for (std::int64_t q = 4; q < 32; ++q) EXPECT_EQ(s.ell_idx[q], P);  // lanes without a row
  EXPECT_TRUE(s.out_row.empty());
  EXPECT_EQ(s.to_csr(), a);
  EXPECT_EQ(s.storage_bytes(), (2 + 3 + 3) * 8u + 4 * 4u + 96 * 2u + 96 * 8u);
}

TEST(Tiled, RowKernelLayoutIsWorkRowRangesOfTheCsrArrays) {
  const auto a = testing::example<double, std::int32_t>();
  const auto s = TiledStorage<double, std::int32_t>::build(a, FormatOptions::parse("kernel=rows,variant=baseline,reorder=off"));
  EXPECT_FALSE(s.sell);
  EXPECT_EQ(s.wr_begin, (std::vector<std::int32_t>{0, 2, 2, 5}));
  EXPECT_EQ(s.wr_end, (std::vector<std::int32_t>{2, 2, 5, 6}));
  EXPECT_EQ(s.col_idx, a.col_idx);
  EXPECT_EQ(s.panels(), 0);
  EXPECT_TRUE(s.ell_idx.empty());
  EXPECT_EQ(s.to_csr(), a);
  EXPECT_EQ(s.storage_bytes(), (4 + 4 + 6) * 4u + 6 * 8u);
  // Segmented (segsize 2): row 2 → [2,4) [4,5); out_row maps the 5 work rows back.
  const auto g = TiledStorage<double, std::int32_t>::build(a, FormatOptions::parse("variant=segmented,segsize=2,reorder=off"));
  EXPECT_EQ(g.wr_begin, (std::vector<std::int32_t>{0, 2, 2, 4, 5}));
  EXPECT_EQ(g.wr_end, (std::vector<std::int32_t>{2, 2, 4, 5, 6}));
  EXPECT_EQ(g.out_row, (std::vector<std::int32_t>{0, 1, 2, 2, 3}));
  EXPECT_EQ(g.to_csr(), a);
}

TEST(Tiled, ReorderingSortsRowsOnTheirBitPatternAndCComesOutInOriginalOrder) {
  // rows: {2}, {0,3}, {0,1}, {}, {0,1} → bit-pattern order (col 0 = MSB, descending):
  // {0,1} (row 2), {0,1} (row 4, stable), {0,3} (row 1), {2} (row 0), {} (row 3).
  Csr<double, std::int32_t> a;
  a.rows = 5;
  a.cols = 4;
  a.row_ptr = {0, 1, 3, 5, 5, 7};
  a.col_idx = {2, 0, 3, 0, 1, 0, 1};
  a.values = {1, 2, 3, 4, 5, 6, 7};
  const auto s = TiledStorage<double, std::int32_t>::build(
      a, FormatOptions::parse("variant=baseline,reorder=on,panel_rows=32"));
  EXPECT_EQ(s.out_row, (std::vector<std::int32_t>{2, 4, 1, 0, 3}));
  EXPECT_EQ(s.seg_ptr, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(s.seg_list, (std::vector<std::int32_t>{3, 2, 0, 4, 1}));
  EXPECT_EQ(s.to_csr(), a);
  const std::vector<double> b{1, 10, 100, 1000};  // k = 1
  std::vector<double> c(5, NAN);
  spmm(s, b.data(), c.data(), 1, DenseLayout::row_major, 1.0, 0.0);
  EXPECT_EQ(c, (std::vector<double>{100, 2 + 3000, 4 + 50, 0, 6 + 70}));
}

TEST(Tiled, SegmentationSplitsLongRowsAndSumsTheSegmentsInColumnOrder) {
  // row 0 has 5 entries → segsize 2 gives segments [0,2) [2,4) [4,5); rows 1, 2 stay whole.
  Csr<double, std::int64_t> a;
  a.rows = 3;
  a.cols = 6;
  a.row_ptr = {0, 5, 6, 6};
  a.col_idx = {0, 1, 2, 4, 5, 3};
  a.values = {1, 2, 3, 4, 5, 6};
  const auto s = TiledStorage<double, std::int64_t>::build(
      a, FormatOptions::parse("variant=segmented,segsize=2,reorder=off,panel_rows=32"));
  EXPECT_EQ(s.work_rows(), 5);
  EXPECT_TRUE(s.segmented());
  EXPECT_EQ(s.out_row, (std::vector<std::int64_t>{0, 0, 0, 1, 2}));
  EXPECT_EQ(s.seg_ptr, (std::vector<std::int64_t>{0, 3, 4, 5}));
  EXPECT_EQ(s.to_csr(), a);
  const std::vector<double> b{1, 2, 3, 4, 5, 6};
  std::vector<double> c(3, NAN);
  spmm(s, b.data(), c.data(), 1, DenseLayout::row_major, 2.0, 0.0);
  EXPECT_EQ(c, (std::vector<double>{2 * (1 + 4 + 9 + 20 + 30), 2 * 24, 0}));
}

TEST(Tiled, PaddingNeverMultipliesInfinityInB) {
  const auto a = testing::example<double, std::int32_t>();
  const auto s = TiledStorage<double, std::int32_t>::build(a, FormatOptions::parse("variant=baseline,reorder=off"));
  const std::vector<double> b{INFINITY, 1, 1, 1};  // col 0 is slot 0, which padding points near
  std::vector<double> c(4, NAN);
  spmm(s, b.data(), c.data(), 1, DenseLayout::row_major, 1.0, 0.0);
  EXPECT_EQ(c[1], 0.0);
  EXPECT_EQ(c[3], 6.0);
  EXPECT_TRUE(std::isinf(c[0]));
}

TEST(Tiled, BadOptionsAreRefusedNamingTheOption) {
  const auto a = testing::example<double, std::int32_t>();
  using S = TiledStorage<double, std::int32_t>;
  for (const char* bad : {"r=3", "panel_rows=48", "variant=fast", "kernel=warp", "kt=24", "kt=512",
                          "device=v100", "batch=6", "cstore=cached", "kernel=panel,panel_rows=6",
                          "kernel=panel,panel_rows=64", "panel_reuse=0"})
    EXPECT_THROW(S::build(a, FormatOptions::parse(bad)), ParseError) << bad;
  EXPECT_EQ(S::build(a, FormatOptions::parse("batch=4,cstore=stream")).batch, 4);
  EXPECT_EQ(S::build(a, FormatOptions::parse("batch=4,cstore=stream")).cstore, 2);
}

// Every kernel × variant: kernel=rows (default) plain, reordered, balanced (segmented), both,
// fixed K-tiles (kt=1: one lane per row; kt=16: 4 packs per row in fp32; kt=256: two packs
// per lane), the model's choice; kernel=sell as before (the fallback).
const char* kConfigs[] = {
    "kernel=rows,variant=baseline,reorder=off",
    "kernel=rows,variant=baseline,reorder=on",
    "kernel=rows,variant=segmented,segsize=3,reorder=off",
    "kernel=rows,variant=segmented,segsize=2,reorder=on",
    "kernel=rows,variant=baseline,reorder=off,kt=1",
    "kernel=rows,variant=baseline,reorder=off,kt=16",
    "kernel=rows,variant=segmented,segsize=5,reorder=off,kt=256",
    "variant=auto,reorder=auto,k=8",
    "kernel=rows,variant=baseline,reorder=off,batch=4",
    "kernel=rows,variant=baseline,reorder=off,batch=8,kt=16",
    "kernel=rows,variant=segmented,segsize=5,reorder=off,kt=128",
    "kernel=sell,variant=baseline,reorder=off",
    "kernel=sell,variant=baseline,reorder=off,r=4,panel_rows=64,smem=512",  // many stages
    "kernel=sell,variant=segmented,segsize=3,reorder=on,panel_rows=32,smem=256",
    "kernel=sell,variant=auto,reorder=auto,k=8",
    "kernel=panel,variant=baseline,reorder=off",
    "kernel=panel,panel_rows=4,variant=segmented,segsize=3,reorder=on",
    "kernel=panel,panel_rows=32,variant=baseline,reorder=on",
    "variant=baseline,reorder=off,panel_reuse=0.5,panel_per_sm=0,cv_max=1000",  // auto running the panel kernel
    "variant=baseline,reorder=off,panel_reuse=0.5",  // auto, arrays built, too few panels: rows
};
const std::int64_t kKs[] = {1, 3, 16, 33, 128, 256};

/// C = A·B into NaN-poisoned C, and C = 0.5·A·B − 2·C0 (C0 small integers, seed 9 + k), each
/// against the fp64 reference. `product(c0, alpha, beta)` returns alpha·A·B + beta·C for C = *c0
/// (c0 == nullptr: C poisoned), by whichever kernel the caller tests.
template <class Value, class Index, class Product>
void expect_spmm_matches_reference(const Csr<Value, Index>& a, const std::vector<Value>& b,
                                   std::int64_t k, DenseLayout layout, Product&& product) {
  const auto c = product(nullptr, Value(1), Value(0));
  const auto want = reference::spmm<Value, Index, Value, Value>(a, b, k, layout);
  EXPECT_LE(reference::relative_norm2_error<Value>(c, want), testing::tolerance<Value>());
  const auto c0 = testing::random_vector<Value>(a.rows * k, 9 + k, true);
  const auto c2 = product(&c0, Value(0.5), Value(-2));
  const auto want2 = reference::spmm<Value, Index, Value, Value>(a, b, k, layout, 0.5, -2.0, c0);
  EXPECT_LE(reference::relative_norm2_error<Value>(c2, want2), testing::tolerance<Value>());
}

/// The same two products through Matrix::spmm (on the matrix's backend).
template <class Value, class Index>
void expect_matrix_spmm_matches_reference(const Matrix<Value>& m, const Csr<Value, Index>& a,
                                          const std::vector<Value>& b, std::int64_t k,
                                          DenseLayout layout) {
  expect_spmm_matches_reference(a, b, k, layout, [&](const std::vector<Value>* c0, Value al, Value be) {
    return testing::apply_spmm(m, b, k, layout, c0, al, be);
  });
}

/// Every configuration of `configs`, built on the GPU, against the reference for every K of
/// `ks` in both layouts.
template <class Value, class Index, class Configs>
void check_gpu_configs(const Csr<Value, Index>& a, const Configs& configs,
                       std::span<const std::int64_t> ks) {
  for (const char* cfg : configs) {
    SCOPED_TRACE(cfg);
    const auto m = Matrix<Value>::build(a, "tiled", Backend::cuda, FormatOptions::parse(cfg));
    for (std::int64_t k : ks)
      for (DenseLayout layout : {DenseLayout::row_major, DenseLayout::col_major}) {
        SCOPED_TRACE("k = " + std::to_string(k) + ", " + std::string(to_string(layout)));
        const auto b = testing::random_vector<Value>(a.cols * k, 7 + k, true);
        expect_matrix_spmm_matches_reference(m, a, b, k, layout);
      }
  }
}

template <class Value, class Index>
void check_cpu_spmm() {
  const auto a = random_csr<Value, Index>(150, 97, 0.06, 42, /*dense_row=*/7);
  for (const char* cfg : kConfigs) {
    SCOPED_TRACE(cfg);
    const auto s = TiledStorage<Value, Index>::build(a, FormatOptions::parse(cfg));
    ASSERT_EQ(s.to_csr(), a);
    for (std::int64_t k : kKs)
      for (DenseLayout layout : {DenseLayout::row_major, DenseLayout::col_major}) {
        SCOPED_TRACE("k = " + std::to_string(k) + ", " + std::string(to_string(layout)));
        const auto b = testing::random_vector<Value>(a.cols * k, 7 + k, true);
        expect_spmm_matches_reference(a, b, k, layout, [&](const std::vector<Value>* c0, Value al, Value be) {
          auto c = c0 ? *c0 : testing::poisoned<Value>(a.rows * k);
          spmm(s, b.data(), c.data(), k, layout, al, be);
          return c;
        });
      }
    const auto x = testing::random_vector<Value>(a.rows, 3, true);
    std::vector<Value> y = testing::poisoned<Value>(a.cols);
    spmv_t(s, x.data(), y.data(), Value(1), Value(0));
    const auto want_t = reference::spmv_t<Value, Index, Value, Value>(a, x);
    EXPECT_LE(reference::relative_norm2_error<Value>(y, want_t), testing::tolerance<Value>());
  }
}

TEST(Tiled, CpuSpmmMatchesTheReferenceForAllTypePairs) {
  testing::for_each_type_pair([]<class V, class I>() { check_cpu_spmm<V, I>(); });
}

template <class Value, class Index>
void check_gpu_spmm() {
  check_gpu_configs(random_csr<Value, Index>(700, 300, 0.03, 5, /*dense_row=*/11), kConfigs, kKs);
}

/// Rows of 0..200 nonzeros (several > 32, so the 8-batch loop and its tail both run), empty
/// rows, and a row of 40·μ: exercises the row kernel's group loop with G = 1..32. row_ptr is
/// assigned from scratch (Csr starts with {0}; pushing onto it would add a second leading 0).
template <class Value, class Index>
Csr<Value, Index> ragged_csr() {
  Csr<Value, Index> a;
  a.rows = 333;
  a.cols = 257;
  a.row_ptr.assign(1, 0);
  a.col_idx.clear();
  a.values.clear();
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const std::int64_t len = i == 5 ? 200 : (i % 7 == 3 ? 0 : (i * 37) % 41);
    for (std::int64_t j = 0; j < len; ++j) {
      a.col_idx.push_back(static_cast<Index>((i * 13 + j * 5) % a.cols));
      a.values.push_back(static_cast<Value>(static_cast<int>((i + j) % 9) - 4));
    }
    std::sort(a.col_idx.end() - len, a.col_idx.end());
    a.col_idx.erase(std::unique(a.col_idx.end() - len, a.col_idx.end()), a.col_idx.end());
    a.values.resize(a.col_idx.size());
    a.row_ptr.push_back(static_cast<Index>(a.col_idx.size()));
  }
  return a;
}

// Row-kernel configurations of the ragged test: plain, segmented (short segments, so most rows
// are split and reduced by the long-row reduction; one row of 200 = 29 segments, summed by a
// warp), segmented with the long-row path only for row 5 (segsize 64), segments of 1 (row 5's
// 200 slots, past a warp's kWarpReduceMaxSlots: the whole block sums them), reordered +
// segmented, fixed K-tile, the model.
const char* kRaggedConfigs[] = {
    "kernel=rows,variant=baseline,reorder=off",   "kernel=rows,variant=segmented,segsize=7,reorder=on",
    "kernel=rows,variant=segmented,segsize=7,reorder=off", "kernel=rows,variant=segmented,segsize=64,reorder=off",
    "kernel=rows,variant=segmented,segsize=1,reorder=off,kt=16", "kernel=rows,kt=32", "kernel=rows",
    // Both batch loops (4 + dependent tail / predicated 8) with both C stores, every K-tile.
    "kernel=rows,variant=baseline,reorder=off,batch=4,cstore=plain",
    "kernel=rows,variant=segmented,segsize=7,reorder=on,batch=4,cstore=stream",
    "kernel=rows,variant=baseline,reorder=on,batch=8,cstore=plain",
    "kernel=rows,variant=segmented,segsize=64,reorder=off,batch=8,cstore=stream",
    "kernel=rows,variant=segmented,segsize=7,reorder=on,kt=128,cstore=stream",
    "kernel=rows,variant=baseline,reorder=off,kt=128,cstore=plain",
    // 8 and 16 lanes a row with either batch (the fp32 builds compiled for more blocks an SM).
    "kernel=rows,variant=baseline,reorder=off,kt=64,batch=4",
    "kernel=rows,variant=segmented,segsize=7,reorder=on,kt=64,batch=8",
    "kernel=rows,variant=segmented,segsize=64,reorder=off,kt=32,batch=4",
    // Panel kernel: plain, split rows through the long-row reduction, reordered.
    "kernel=panel,panel_rows=8,variant=baseline,reorder=off",
    "kernel=panel,panel_rows=16,variant=segmented,segsize=7,reorder=on",
    "kernel=panel,panel_rows=4,variant=segmented,segsize=64,reorder=off"};

TEST(Tiled, RaggedTestMatrixIsValidAndCpuMatchesTheReference) {
  const auto a = ragged_csr<double, std::int32_t>();
  ASSERT_EQ(a.row_ptr.size(), static_cast<std::size_t>(a.rows) + 1);
  EXPECT_NO_THROW(Matrix<double>::build(a, "csr", Backend::cpu));
  for (const char* cfg : kRaggedConfigs) {
    SCOPED_TRACE(cfg);
    const auto s = TiledStorage<double, std::int32_t>::build(a, FormatOptions::parse(cfg));
    ASSERT_EQ(s.to_csr(), a);
    for (std::int64_t k : {5, 32}) {
      const auto b = testing::random_vector<double>(a.cols * k, 3 + k, true);
      std::vector<double> c = testing::poisoned<double>(a.rows * k);
      spmm(s, b.data(), c.data(), k, DenseLayout::row_major, 1.0, 0.0);
      const auto want = reference::spmm<double, std::int32_t, double, double>(a, b, k, DenseLayout::row_major);
      EXPECT_LE(reference::relative_norm2_error<double>(c, want), testing::tolerance<double>());
    }
  }
}


TEST(Tiled, PanelKernelArraysAreStoredAsTheHeaderSays) {
  const auto a = testing::example<double, std::int32_t>();
  const auto s = TiledStorage<double, std::int32_t>::build(
      a, FormatOptions::parse("kernel=panel,panel_rows=4,variant=baseline,reorder=off"));
  EXPECT_EQ(s.panel_r, 4);
  EXPECT_TRUE(s.panel_forced);
  EXPECT_EQ(s.panel_count(), 1);
  EXPECT_EQ(s.pn_col_ptr, (std::vector<std::int32_t>{0, 4}));
  EXPECT_EQ(s.pn_col, (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(s.pn_mask, (std::vector<std::uint32_t>{0b0101, 0b0100, 0b0001, 0b1100}));
  EXPECT_EQ(s.pn_val_ptr, (std::vector<std::int32_t>{0, 6}));
  EXPECT_EQ(s.pn_val, (std::vector<double>{1, 3, 4, 2, 5, 6}));
  EXPECT_DOUBLE_EQ(s.panel_reuse, 1.5);
  EXPECT_EQ(s.to_csr(), a);
  // The row kernel's arrays + the panel arrays.
  EXPECT_EQ(s.storage_bytes(), ((4 + 4 + 6) * 4u + 6 * 8u + (2 + 2 + 4) * 4u + 4 * 4u + 6 * 8u));
  // Other kernels do not carry them; auto builds them only from panel_reuse on (1.5 < 2 here).
  for (const char* cfg : {"kernel=rows", "kernel=sell", "variant=baseline,reorder=off,panel_reuse=2"}) {
    const auto o = TiledStorage<double, std::int32_t>::build(a, FormatOptions::parse(cfg));
    EXPECT_EQ(o.panel_r, 0) << cfg;
    EXPECT_TRUE(o.pn_col.empty() && o.pn_val.empty() && o.pn_col_ptr.empty()) << cfg;
  }
  using S = TiledStorage<double, std::int32_t>;
  EXPECT_EQ(S::build(a, FormatOptions::parse("panel_reuse=1.5")).panel_r, 4);  // auto: R = 4
}

TEST(Tiled, PanelKernelArraysOfTwoPanelsWithAPartialOneAndEmptyRows) {
  // 6×5, R = 4: panel 0 = rows 0..3, panel 1 = rows 4, 5 (partial).
  // row 0: (1,a=1) (3,2); row 1: empty; row 2: (1,3) (4,4); row 3: (0,5) (1,6) (3,7)
  // row 4: (2,8); row 5: (2,9) (4,10)
  Csr<double, std::int64_t> a;
  a.rows = 6;
  a.cols = 5;
  a.row_ptr = {0, 2, 2, 4, 7, 8, 10};
  a.col_idx = {1, 3, 1, 4, 0, 1, 3, 2, 2, 4};
  a.values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const auto s = TiledStorage<double, std::int64_t>::build(
      a, FormatOptions::parse("kernel=panel,panel_rows=4,variant=baseline,reorder=off"));
  EXPECT_EQ(s.pn_col_ptr, (std::vector<std::int64_t>{0, 4, 6}));
  EXPECT_EQ(s.pn_col, (std::vector<std::int64_t>{0, 1, 3, 4, 2, 4}));
  EXPECT_EQ(s.pn_mask, (std::vector<std::uint32_t>{0b1000, 0b1101, 0b1001, 0b0100, 0b11, 0b10}));
  EXPECT_EQ(s.pn_val_ptr, (std::vector<std::int64_t>{0, 7, 10}));
  EXPECT_EQ(s.pn_val, (std::vector<double>{5, 1, 3, 6, 2, 7, 4, 8, 9, 10}));
  EXPECT_DOUBLE_EQ(s.panel_reuse, 10.0 / 6.0);
}

/// Host emulation of the GPU panel kernel: walks pn_* exactly as tiled_panel_kernel does (one
/// B slice per distinct column, applied to the rows of its mask), then sums work rows into their
/// output rows (out_row) and applies alpha/beta. Row-major B and C.
template <class Value, class Index>
std::vector<Value> emulate_panel(const TiledStorage<Value, Index>& s, const std::vector<Value>& b,
                                 std::int64_t k, const std::vector<Value>& c0, Value alpha, Value beta) {
  const std::int64_t R = s.panel_r, nw = s.work_rows();
  std::vector<Value> wsum(static_cast<std::size_t>(nw * k), Value(0));
  for (std::int64_t p = 0; p < s.panel_count(); ++p) {
    std::int64_t q = s.pn_val_ptr[p];
    for (std::int64_t d = s.pn_col_ptr[p]; d < s.pn_col_ptr[p + 1]; ++d) {
      const Value* brow = b.data() + static_cast<std::int64_t>(s.pn_col[d]) * k;
      for (std::int64_t r = 0; r < R; ++r) {
        if (!((s.pn_mask[d] >> r) & 1u)) continue;
        EXPECT_LT(p * R + r, nw);
        const Value v = s.pn_val[q++];
        for (std::int64_t j = 0; j < k; ++j) wsum[(p * R + r) * k + j] += v * brow[j];
      }
    }
    EXPECT_EQ(q, static_cast<std::int64_t>(s.pn_val_ptr[p + 1]));
  }
  std::vector<Value> c = c0;
  std::vector<Value> rsum(static_cast<std::size_t>(s.rows * k), Value(0));
  for (std::int64_t w = 0; w < nw; ++w) {
    const std::int64_t row = s.out_row.empty() ? w : static_cast<std::int64_t>(s.out_row[w]);
    for (std::int64_t j = 0; j < k; ++j) rsum[row * k + j] += wsum[w * k + j];
  }
  for (std::int64_t i = 0; i < s.rows * k; ++i) c[i] = beta == Value(0) ? alpha * rsum[i] : alpha * rsum[i] + beta * c[i];
  return c;
}

/// n×n banded (half-width h: columns i-h .. i+h) with small integer values: high B-row reuse.
template <class Value, class Index>
Csr<Value, Index> banded_csr(std::int64_t n, std::int64_t h) {
  Csr<Value, Index> a;
  a.rows = a.cols = static_cast<Index>(n);
  a.row_ptr.assign(1, 0);
  a.col_idx.clear();
  a.values.clear();
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = std::max<std::int64_t>(0, i - h); j <= std::min(n - 1, i + h); ++j) {
      a.col_idx.push_back(static_cast<Index>(j));
      a.values.push_back(static_cast<Value>(static_cast<int>((i + 2 * j) % 7) - 3));
    }
    a.row_ptr.push_back(static_cast<Index>(a.col_idx.size()));
  }
  return a;
}

const char* kPanelConfigs[] = {
    "kernel=panel,panel_rows=4,variant=baseline,reorder=off",
    "kernel=panel,panel_rows=8,variant=baseline,reorder=off",
    "kernel=panel,panel_rows=16,variant=baseline,reorder=on",
    "kernel=panel,panel_rows=32,variant=segmented,segsize=5,reorder=off",
    "kernel=panel,panel_rows=8,variant=segmented,segsize=3,reorder=on",
    "variant=baseline,reorder=off,panel_reuse=0.5,cv_max=1000",  // auto, arrays always: panel for K·sizeof >= 256 B
};

TEST(Tiled, PanelArraysReproduceTheReferenceInAHostEmulation) {
  const auto rnd = random_csr<double, std::int32_t>(150, 97, 0.06, 42, /*dense_row=*/7);
  const auto band = banded_csr<double, std::int32_t>(203, 3);
  const auto rag = ragged_csr<double, std::int32_t>();
  for (const auto* a : {&rnd, &band, &rag})
    for (const char* cfg : kPanelConfigs) {
      SCOPED_TRACE(cfg);
      const auto s = TiledStorage<double, std::int32_t>::build(*a, FormatOptions::parse(cfg));
      ASSERT_GT(s.panel_r, 0);
      ASSERT_EQ(s.to_csr(), *a);
      ASSERT_EQ(s.pn_val.size(), static_cast<std::size_t>(a->nnz()));
      for (std::int64_t p = 0; p < s.panel_count(); ++p)  // distinct, ascending, nonempty masks
        for (std::int64_t d = s.pn_col_ptr[p]; d < s.pn_col_ptr[p + 1]; ++d) {
          EXPECT_NE(s.pn_mask[d], 0u);
          if (d > s.pn_col_ptr[p]) EXPECT_LT(s.pn_col[d - 1], s.pn_col[d]);
        }
      for (std::int64_t k : {1, 3, 16}) {
        const auto b = testing::random_vector<double>(a->cols * k, 7 + k, true);
        expect_spmm_matches_reference(*a, b, k, DenseLayout::row_major,
                                      [&](const std::vector<double>* c0, double al, double be) {
                                        return emulate_panel(s, b, k, c0 ? *c0 : testing::poisoned<double>(a->rows * k), al, be);
                                      });
      }
    }
}

TEST(Tiled, AutoBuildsThePanelArraysOnlyWhereBRowsAreReused) {
  const auto band = banded_csr<float, std::int32_t>(1000, 4);  // R = 4: reuse ~ 9·4 / (4 + 8) = 3
  const auto s = TiledStorage<float, std::int32_t>::build(band, FormatOptions::parse("variant=baseline,reorder=off"));
  EXPECT_EQ(s.panel_r, 4);
  EXPECT_FALSE(s.panel_forced);
  EXPECT_GE(s.panel_reuse, 2.0);
  const auto rnd = random_csr<float, std::int32_t>(500, 5000, 0.002, 3);  // scattered: reuse ~ 1
  const auto r = TiledStorage<float, std::int32_t>::build(rnd, FormatOptions::parse("variant=baseline,reorder=off"));
  EXPECT_EQ(r.panel_r, 0);
  EXPECT_TRUE(r.pn_val.empty());
  EXPECT_LT(r.storage_bytes(), s.storage_bytes());
}

TEST(Tiled, AutoRunsThePanelKernelOnlyWithEnoughPanelsPerSm) {
  // A B row slice of >= 256 bytes and >= panel_per_sm panels per SM (0: no minimum).
  EXPECT_TRUE(model::auto_runs_panel(128, 4, 60 * 132, 60, 132));
  EXPECT_FALSE(model::auto_runs_panel(128, 4, 60 * 132 - 1, 60, 132));
  EXPECT_FALSE(model::auto_runs_panel(32, 4, 1 << 20, 60, 132));  // 128-byte slices
  EXPECT_FALSE(model::auto_runs_panel(64, 4, 120 * 132 - 1, 60, 132));  // 256-byte slices: twice the panels
  EXPECT_TRUE(model::auto_runs_panel(64, 4, 120 * 132, 60, 132));
  EXPECT_TRUE(model::auto_runs_panel(128, 8, 60 * 132, 60, 132));  // fp64 K = 128: 512-byte group slices
  EXPECT_TRUE(model::auto_runs_panel(32, 8, 1, 0, 132));
  // The option reaches the storage, and `spmat model` names the kernel the format runs: a band
  // of 1,000 rows has 250 panels (the row kernel), one of 80,000 rows 20,000 (the panel kernel
  // at K = 64: >= 120 · 132; at K = 128 its short balanced rows take the row kernel's strided
  // schedule instead).
  const auto small = banded_csr<float, std::int32_t>(1000, 4);
  using S = TiledStorage<float, std::int32_t>;
  EXPECT_EQ(S::build(small, FormatOptions::parse("panel_per_sm=0")).panel_per_sm, 0);
  EXPECT_EQ(S::build(small, {}).panel_per_sm, 60);
  const auto dev = model::device_by_name("h100");
  EXPECT_EQ(model::decide_rows(small, 128, dev).kernel, "rows");
  const auto big = banded_csr<float, std::int32_t>(80000, 4);
  EXPECT_EQ(model::decide_rows(big, 64, dev).kernel, "panel");
  const auto d = model::decide_rows(big, 128, dev);
  EXPECT_EQ(d.kernel, "rows");
  EXPECT_TRUE(d.stride);
}

TEST(Tiled, AutoKeepsTheRowKernelForUnbalancedRows) {
  // The band of 80,000 rows above with 100 rows of 2,000 nonzeros: σ/μ of the row lengths ≈ 6 >
  // cv_max = 1, so kernel=auto builds no panel arrays and the model names the row kernel; with
  // cv_max raised above it, the panels come back.
  auto a = banded_csr<float, std::int32_t>(80000, 4);
  Csr<float, std::int32_t> skewed;
  skewed.rows = skewed.cols = a.rows;
  skewed.row_ptr.assign(1, 0);
  for (std::int32_t i = 0; i < a.rows; ++i) {
    if (i % 800 == 0) {
      for (std::int32_t j = 0; j < 2000; ++j) skewed.col_idx.push_back(j * 40), skewed.values.push_back(1.0f);
    } else {
      for (std::int32_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q)
        skewed.col_idx.push_back(a.col_idx[q]), skewed.values.push_back(a.values[q]);
    }
    skewed.row_ptr.push_back(static_cast<std::int32_t>(skewed.col_idx.size()));
  }
  EXPECT_GT(model::row_length_cv(skewed), 5.0);
  EXPECT_NEAR(model::row_length_cv(a), 0.0, 0.01);
  using S = TiledStorage<float, std::int32_t>;
  EXPECT_EQ(S::build(skewed, {}).panel_r, 0);
  EXPECT_EQ(S::build(skewed, FormatOptions::parse("cv_max=10")).panel_r, 4);
  const auto dev = model::device_by_name("h100");
  EXPECT_EQ(model::decide_rows(skewed, 128, dev).kernel, "rows");
}

TEST(Tiled, AutoLayoutIsTheModelsRowsDecision) {
  // The builder and `spmat model` (model::decide_rows) decide the layout with one rule
  // (model::choose_rows_variant): the same segment size on skewed, banded and random rows.
  const std::vector<std::pair<std::string, Csr<double, std::int64_t>>> cases{
      {"powerlaw", gen::generate<double, std::int64_t>("gen:powerlaw:20000:16")},
      {"rmat", gen::generate<double, std::int64_t>("gen:rmat:12:8")},
      {"banded", banded_csr<double, std::int64_t>(3000, 6)},
      {"random", random_csr<double, std::int64_t>(2000, 4000, 0.004, 11)}};
  for (const auto& [name, a] : cases) {
    SCOPED_TRACE(name);
    const auto s = TiledStorage<double, std::int64_t>::build(a, FormatOptions::parse("reorder=off"));
    TiledOptions opt;
    const auto d = model::decide_rows(a, opt.k, model::device_by_name(opt.device));
    EXPECT_EQ(s.segsize, d.variants[static_cast<std::size_t>(d.chosen)].segsize);
    EXPECT_FALSE(s.plan_reason.empty());
  }
}

template <class Value, class Index>
void check_gpu_ragged() {
  static const std::int64_t ks[] = {4, 8, 16, 32, 64, 128, 48, 5};
  check_gpu_configs(ragged_csr<Value, Index>(), kRaggedConfigs, ks);
}

TEST(Tiled, CudaRowKernelHandlesRaggedRowsAndEveryKTile) {
  SPMAT_SKIP_WITHOUT_GPU();
  testing::for_each_type_pair([]<class V, class I>() { check_gpu_ragged<V, I>(); });
}


/// The panel kernel on the GPU: every R, K ∈ {1, 3, 16, 33, 64, 128, 130} (scalar tails, two
/// panels per warp at K = 64 fp32, several tiles past 128), banded + random with a dense row +
/// ragged (empty rows, rows not a multiple of R), alpha/beta, beta = 0 on NaN-poisoned C.
template <class Value, class Index>
void check_gpu_panel() {
  const auto band = banded_csr<Value, Index>(1001, 4);
  const auto rnd = random_csr<Value, Index>(700, 300, 0.03, 5, /*dense_row=*/11);
  const auto rag = ragged_csr<Value, Index>();
  for (const auto* a : {&band, &rnd, &rag})
    for (const char* cfg : kPanelConfigs) {
      SCOPED_TRACE(std::string(cfg) + ", rows " + std::to_string(a->rows));
      const auto m = Matrix<Value>::build(*a, "tiled", Backend::cuda, FormatOptions::parse(cfg));
      for (std::int64_t k : {1, 3, 16, 33, 64, 128, 130}) {
        SCOPED_TRACE("k = " + std::to_string(k));
        const auto b = testing::random_vector<Value>(a->cols * k, 7 + k, true);
        expect_matrix_spmm_matches_reference(m, *a, b, k, DenseLayout::row_major);
      }
      // Column-major falls back to the row kernel.
      const auto b = testing::random_vector<Value>(a->cols * 64, 5, true);
      const auto c = testing::apply_spmm(m, b, 64, DenseLayout::col_major);
      const auto want = reference::spmm<Value, Index, Value, Value>(*a, b, 64, DenseLayout::col_major);
      EXPECT_LE(reference::relative_norm2_error<Value>(c, want), testing::tolerance<Value>());
    }
}

TEST(Tiled, CudaPanelKernelMatchesTheReference) {
  SPMAT_SKIP_WITHOUT_GPU();
  testing::for_each_type_pair([]<class V, class I>() { check_gpu_panel<V, I>(); });
}

TEST(Tiled, CudaAutoKeepsTheRowKernelWithFewPanels) {
  SPMAT_SKIP_WITHOUT_GPU();
  // A band of 1,000 rows has panel reuse (its arrays are planned) but 250 panels: a product at
  // K = 128 runs the row kernel and leaves the panel arrays unbuilt, unless panel_per_sm=0.
  const auto band = banded_csr<float, std::int32_t>(1000, 4);
  const auto b = testing::random_vector<float>(band.cols * 128, 3, true);
  const auto want = reference::spmm<float, std::int32_t, float, float>(band, b, 128, DenseLayout::row_major);
  for (const std::string cfg : {"variant=baseline,reorder=off", "variant=baseline,reorder=off,panel_per_sm=0"}) {
    SCOPED_TRACE(cfg);
    const auto m = Matrix<float>::build(band, "tiled", Backend::cuda, FormatOptions::parse(cfg));
    const std::size_t before = m.storage_bytes();
    m.prepare(Op::spmm, 128, DenseLayout::row_major);
    if (cfg.find("panel_per_sm") == std::string::npos)
      EXPECT_EQ(m.storage_bytes(), before);
    else
      EXPECT_GT(m.storage_bytes(), before);
    const auto c = testing::apply_spmm(m, b, 128, DenseLayout::row_major);
    EXPECT_LE(reference::relative_norm2_error<float>(c, want), testing::tolerance<float>());
  }
}

/// 40,000 rows of 0-12 nonzeros and a few of 200 (fp32): more work rows than the resident grid
/// has warps, so that the strided schedule's warps walk several rows each.
Csr<float, std::int32_t> short_rows_csr() {
  std::mt19937_64 g(11);
  Coo<float, std::int32_t> c;
  c.rows = 40000;
  c.cols = 5000;
  for (std::int32_t i = 0; i < c.rows; ++i) {
    const int len = i % 5000 == 17 ? 200 : static_cast<int>((static_cast<std::uint64_t>(i) * 7919u) % 13u);
    std::vector<std::int32_t> cols;
    while (static_cast<int>(cols.size()) < len) {
      const auto j = static_cast<std::int32_t>(g() % static_cast<std::uint64_t>(c.cols));
      if (std::find(cols.begin(), cols.end(), j) == cols.end()) cols.push_back(j);
    }
    for (std::int32_t j : cols) {
      c.row_idx.push_back(i);
      c.col_idx.push_back(j);
      c.values.push_back(static_cast<float>(static_cast<int>(g() % 9) - 4));
    }
  }
  return to_csr(c);
}

TEST(Tiled, CudaStridedScheduleMatchesTheReferenceAndTheGridScheduleBitForBit) {
  SPMAT_SKIP_WITHOUT_GPU();
  // Whole rows, segments of split rows (the partial slots and their reduction) through the
  // reordered (mapped) store, both batches; K = 128 (the strided kernel) and 130 (the scalar
  // path, which keeps the grid schedule).
  const auto a = short_rows_csr();
  for (const std::string layout : {"variant=baseline,reorder=off", "variant=segmented,segsize=64,reorder=on",
                                   "variant=baseline,reorder=off,batch=8", "variant=segmented,segsize=5,reorder=off"}) {
    SCOPED_TRACE(layout);
    const auto stride = Matrix<float>::build(a, "tiled", Backend::cuda,
                                             FormatOptions::parse("kernel=rows,kt=128,schedule=stride," + layout));
    const auto grid = Matrix<float>::build(a, "tiled", Backend::cuda,
                                           FormatOptions::parse("kernel=rows,kt=128,schedule=grid," + layout));
    for (std::int64_t k : {128, 130}) {
      SCOPED_TRACE("k = " + std::to_string(k));
      const auto b = testing::random_vector<float>(a.cols * k, 3 + k, true);
      expect_matrix_spmm_matches_reference(stride, a, b, k, DenseLayout::row_major);
      const auto cs = testing::apply_spmm(stride, b, k, DenseLayout::row_major);
      const auto cg = testing::apply_spmm(grid, b, k, DenseLayout::row_major);
      ASSERT_EQ(cs.size(), cg.size());
      EXPECT_EQ(std::memcmp(cs.data(), cg.data(), cs.size() * sizeof(float)), 0);
    }
  }
}

TEST(Tiled, CudaSpmmMatchesTheReferenceForAllTypePairs) {
  SPMAT_SKIP_WITHOUT_GPU();
  testing::for_each_type_pair([]<class V, class I>() { check_gpu_spmm<V, I>(); });
}

}  // namespace
}  // namespace spmat
