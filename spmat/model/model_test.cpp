// spmat/model/model_test.cpp — the tiled-SpMM intensity model against hand-computed values.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "spmat/core/error.hpp"
#include "spmat/model/intensity.hpp"
#include "tests/support/test_support.hpp"

namespace spmat::model {
namespace {

// The worked example, fp32: row lengths 2, 0, 3, 1.
Csr<float, std::int32_t> example4() { return testing::example<float, std::int32_t>(); }

TEST(Model, NaiveIntensityMatchesEquation2) {
  // fp32, int32, δ = 8: I = 2μ/(12μ+12): 1/12 at μ = 1, → 1/6 for large μ.
  EXPECT_DOUBLE_EQ(naive_intensity(1, 4, 4, 8), 2.0 / 24);
  EXPECT_NEAR(naive_intensity(1e9, 4, 4, 8), 1.0 / 6, 1e-8);
  EXPECT_EQ(naive_intensity(0, 4, 4, 8), 0);
}

TEST(Model, TiledIntensityMatchesTheSpecChecks) {
  TiledTerms t;
  t.z = 1.25, t.r = 16, t.rho = 4, t.mu = 20, t.gamma = 2, t.delta = 136;
  t.map_term = MapTerm::per_mu;
  // 0.46875 + 2.0 + 0.05 + 0.425 = 2.94375 bytes per FMA.
  EXPECT_NEAR(tiled_bytes_per_fma(t), 2.94375, 1e-12);
  EXPECT_NEAR(tiled_intensity(t), 2 / 2.94375, 1e-12);
  EXPECT_NEAR(roofline_gflops(tiled_intensity(t), 1555, 19500), 1056.5, 0.1);
  t.map_term = MapTerm::per_r;  // B_I/(ρR) = 4/64 instead of 4/80
  EXPECT_NEAR(tiled_bytes_per_fma(t), 2.94375 - 0.05 + 0.0625, 1e-12);
  // R = 16, Z = 1, ρ, μ → ∞: 2/(6/16) = 5.33 FLOP/B.
  TiledTerms lim;
  lim.z = 1, lim.r = 16, lim.rho = 1e12, lim.mu = 1e12;
  EXPECT_NEAR(tiled_intensity(lim), 16.0 / 3, 1e-6);
  // Eq. 6 adds B_I/(Rμ*) + B_T/μ: with μ* = 20, μ = 40: 4/320 + 4/40.
  t.mu_orig = 40;
  EXPECT_NEAR(segmented_intensity(t), 2 / (tiled_bytes_per_fma(t) + 4.0 / 320 + 4.0 / 40), 1e-12);
}

TEST(Model, PatternStatsOfTheFourByFourExample) {
  const auto a = example4();
  const auto work = segment_rows(a, 0);
  ASSERT_EQ(work.size(), 4u);
  const auto plan = plan_tiles(a, std::span<const WorkRow>(work), 32, 768);
  EXPECT_EQ(plan.map, (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(plan.slab_len, (std::vector<std::int64_t>{3}));  // longest row: 3
  const DeviceModel dev = DeviceModel::a100();
  const auto s = pattern_stats(a, std::span<const WorkRow>(work), plan, 16, DenseLayout::col_major, 16, 4, dev);
  EXPECT_DOUBLE_EQ(s.mu, 1.5);
  EXPECT_DOUBLE_EQ(s.sigma, std::sqrt(1.25));  // deviations .5, -1.5, 1.5, -.5
  EXPECT_DOUBLE_EQ(s.rho, 6.0 / 4);            // nnz / Σ D_p
  EXPECT_DOUBLE_EQ(s.z, 96.0 / 6);             // one 3×32 slab for 6 nonzeros
  EXPECT_DOUBLE_EQ(s.l, 1.0);                  // one panel: Σ D_p = N_touched
  // Column-major fp32: the 4 staged columns share one 64 B line: 64 / (4 B × 4) = 4.
  EXPECT_DOUBLE_EQ(s.c_miss, 4.0);
  EXPECT_DOUBLE_EQ(s.u, 1.0 / 108);            // 1 panel × 1 tile / 108 SMs
  // Row-major, K = 16 = R: each staged column reads one aligned 64 B line for 16 values: 1.
  const auto r = pattern_stats(a, std::span<const WorkRow>(work), plan, 16, DenseLayout::row_major, 16, 4, dev);
  EXPECT_DOUBLE_EQ(r.c_miss, 1.0);
  // Row-major, K = 8, fp32: each column reads 32 B inside one line: 64 / 32 = 2.
  const auto r8 = pattern_stats(a, std::span<const WorkRow>(work), plan, 8, DenseLayout::row_major, 16, 4, dev);
  EXPECT_DOUBLE_EQ(r8.c_miss, 2.0);
}

TEST(Model, SmallStagesAndPanelsChangeZRhoAndL) {
  const auto a = example4();
  const auto work = segment_rows(a, 0);
  // stage_cap 2: stages {0,1} (L = 2) and {2,3} (L = 1) → 96 slots.
  const auto plan = plan_tiles(a, std::span<const WorkRow>(work), 32, 2);
  EXPECT_EQ(plan.stage_map_ptr, (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(plan.slab_len, (std::vector<std::int64_t>{2, 1}));
}

TEST(Model, SegmentRowsCutsLongRowsAndKeepsEmptyOnes) {
  const auto a = example4();
  const auto w = segment_rows(a, 2);
  ASSERT_EQ(w.size(), 5u);  // row 2 (3 entries) → 2 segments
  EXPECT_EQ(w[2].row, 2);
  EXPECT_EQ(w[2].begin, 2);
  EXPECT_EQ(w[2].end, 4);
  EXPECT_EQ(w[3].begin, 4);
  EXPECT_EQ(w[1].begin, w[1].end);  // empty row kept
}

/// 64 rows alternating between two disjoint column sets: panels of 32 rows see both sets
/// (ρ = 32·10/20 = 16) until the rows are sorted (ρ = 32).
Csr<float, std::int32_t> interleaved() {
  Csr<float, std::int32_t> a;
  a.rows = 64;
  a.cols = 200;
  for (int i = 0; i < 64; ++i) {
    const int base = i % 2 == 0 ? 0 : 100;
    for (int j = 0; j < 10; ++j) {
      a.col_idx.push_back(base + j);
      a.values.push_back(1);
    }
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
  }
  return a;
}

TEST(Model, ReorderingIsChosenWhenItRaisesReuse) {
  const auto a = interleaved();
  const TileParams tile{16, 32, 48 * 1024};
  const auto dev = DeviceModel::h100();
  const auto plain = predict_variant(a, 32, DenseLayout::row_major, tile, dev, 0, false);
  const auto sorted = predict_variant(a, 32, DenseLayout::row_major, tile, dev, 0, true);
  EXPECT_DOUBLE_EQ(plain.stats.rho, 16.0);
  EXPECT_DOUBLE_EQ(sorted.stats.rho, 32.0);
  EXPECT_DOUBLE_EQ(sorted.stats.l, 1.0);
  EXPECT_GT(sorted.all_miss.intensity, plain.all_miss.intensity);
  // Bounds are ordered: all-miss <= predicted <= optimistic (no latency term here).
  EXPECT_LE(plain.all_miss.intensity, plain.optimistic.intensity);
  const auto rep = evaluate(a, 32, DenseLayout::row_major, tile, dev);
  ASSERT_EQ(rep.variants.size(), 4u);
  EXPECT_TRUE(rep.variants[rep.chosen].reordered) << rep.reason;
}

TEST(Model, DecisionFlowFollowsTheThresholds) {
  PatternStats s;
  s.nnz = 100, s.mu = 10, s.u = 0.5, s.cv = 0.1;
  EXPECT_EQ(lb_segsize(s, {}), 5);  // underutilized: ceil(U·μ)
  s.u = 2, s.cv = 1.5;
  EXPECT_EQ(lb_segsize(s, {}), 10);  // imbalanced: ceil(μ)
  s.cv = 0.5;
  EXPECT_EQ(lb_segsize(s, {}), 0);  // baseline
  EXPECT_EQ(lb_segsize(s, {0.65, 0.4}), 10);  // thresholds are parameters
}

TEST(Model, ReuseProfileCountsPanelDistancesByHand) {
  // Panels of one row: r0 {0,2}, r1 {}, r2 {0,1,3}, r3 {3}. Cold: 0,2 (p0), 1,3 (p2); col 0 is
  // re-touched 2 panels later (bucket [2,4)), col 3 one panel later (bucket [1,2)).
  const auto a = example4();
  const auto work = segment_rows(a, 0);
  const auto p = reuse_profile(a, std::span<const WorkRow>(work), 1);
  EXPECT_EQ(p.panels, 4);
  EXPECT_EQ(p.max_work_row, 3);
  EXPECT_DOUBLE_EQ(p.cold, 4);
  EXPECT_DOUBLE_EQ(p.n_touched, 4);
  EXPECT_DOUBLE_EQ(p.sum_d, 6);
  EXPECT_DOUBLE_EQ(p.hist[0], 1);
  EXPECT_DOUBLE_EQ(p.hist[1], 1);
  // One panel of 256 rows: every column once, all cold.
  const auto q = reuse_profile(a, std::span<const WorkRow>(work), 256);
  EXPECT_DOUBLE_EQ(q.sum_d, 4);
  EXPECT_DOUBLE_EQ(q.hist[0] + q.hist[1], 0);
}

TEST(Model, RowKernelTrafficByHand) {
  const auto a = example4();
  const auto work = segment_rows(a, 0);
  const auto p = reuse_profile(a, std::span<const WorkRow>(work), 1);
  DeviceModel dev = DeviceModel::h200();
  // K = 16 = kt, fp32/int32: A = 6·(4+4) + 4 work rows·2·4 = 80; C = 4·16·4 = 256.
  const auto all = rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::all_miss);
  EXPECT_EQ(all.tiles, 1);
  EXPECT_DOUBLE_EQ(all.a_bytes, 80);
  EXPECT_DOUBLE_EQ(all.b_bytes, 6 * 64);  // every (panel, column): a 64 B B-row piece
  EXPECT_DOUBLE_EQ(all.c_bytes, 256);
  const auto opt = rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::optimistic);
  EXPECT_DOUBLE_EQ(opt.b_bytes, 4 * 64);  // the 4 touched rows once
  EXPECT_DOUBLE_EQ(opt.seconds, 592 / (dev.bandwidth_gbs * 1e9));
  // Big L2: the re-touches hit, prediction = compulsory bytes; time = latency floor of the
  // 3-nonzero row (one batch, 0.8 µs) + one launch (4 µs).
  const auto pred = rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::predicted);
  EXPECT_DOUBLE_EQ(pred.b_bytes, opt.b_bytes);
  EXPECT_NEAR(pred.seconds, 4.8e-6, 1e-12);
  // All-miss takes every rate at the slow end of the spread (1.25): DRAM at eff / 1.25, the
  // walk's batch and the launch × 1.25 (1 µs + 5 µs).
  const RowsCalibration cal;
  EXPECT_DOUBLE_EQ(all.dram_seconds, all.total / (dev.bandwidth_gbs * 1e9 * cal.efficiency / cal.rate_spread));
  EXPECT_NEAR(all.latency_seconds, 1e-6, 1e-15);
  EXPECT_NEAR(all.seconds, 6e-6, 1e-12);
  // No L2: every re-touch misses, prediction = all-miss bytes.
  dev.l2_bytes = 0;
  EXPECT_DOUBLE_EQ(rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::predicted).b_bytes, all.b_bytes);
  // kt = 8: two tiles read A twice; each 32 B piece is one sector. Segmented (segsize 2): row 2
  // (3 nonzeros) is split into 2 work rows; only they go through partials: + 2·2·K·4.
  const auto sw = segment_rows(a, 2);
  const auto ps = reuse_profile(a, std::span<const WorkRow>(sw), 1);
  EXPECT_EQ(ps.split_rows, 1);
  EXPECT_EQ(ps.split_work_rows, 2);
  EXPECT_EQ(p.split_work_rows, 0);
  const auto half = rows_traffic(ps, 16, 8, 4, 4, true, dev, BMode::all_miss);
  EXPECT_EQ(half.tiles, 2);
  EXPECT_DOUBLE_EQ(half.a_bytes, 2 * (6 * 8 + 5 * 2 * 4));
  EXPECT_DOUBLE_EQ(half.b_bytes, 6 * 64);
  EXPECT_DOUBLE_EQ(half.c_bytes, 256 + 2 * 2 * 16 * 4);
  // Nothing split: segmented costs nothing extra.
  EXPECT_DOUBLE_EQ(rows_traffic(p, 16, 8, 4, 4, true, dev, BMode::all_miss).c_bytes, 256);
  // kt = 4 fp32 (16 B pieces) pays whole 32 B sectors: twice the useful bytes.
  EXPECT_DOUBLE_EQ(rows_traffic(p, 16, 4, 4, 4, false, dev, BMode::all_miss).b_bytes, 2 * 6 * 64);
}

TEST(Model, StridedScheduleForShortBalancedRowsAtAWarpARow) {
  // 132 SMs: at least 4 × 32 × 132 = 16,896 work rows; fp32 K-tiles of 128 columns only.
  auto profile = [](std::int64_t rows, double len, double sd) {
    ReuseProfile p;
    p.work_rows = rows;
    p.nnz = static_cast<std::int64_t>(static_cast<double>(rows) * len);
    p.sum_sq = static_cast<double>(rows) * (len * len + sd * sd);
    return p;
  };
  EXPECT_TRUE(rows_stride_runs(profile(16896, 6, 3), 128, 4, 132));
  EXPECT_TRUE(rows_stride_runs(profile(16896, 12, 8.3), 128, 4, 132));
  EXPECT_FALSE(rows_stride_runs(profile(16895, 6, 3), 128, 4, 132));     // under 4 rows a warp
  EXPECT_FALSE(rows_stride_runs(profile(100000, 13, 3), 128, 4, 132));   // longer rows
  EXPECT_FALSE(rows_stride_runs(profile(100000, 6, 4.5), 128, 4, 132));  // sigma/mu 0.75
  EXPECT_FALSE(rows_stride_runs(profile(100000, 6, 3), 64, 4, 132));     // half a warp a row
  EXPECT_FALSE(rows_stride_runs(profile(100000, 6, 3), 128, 8, 132));    // fp64
  EXPECT_FALSE(rows_stride_runs(ReuseProfile{}, 128, 4, 132));
}

TEST(Model, DecisionKeepsTheStridedRowKernelOverThePanelKernel) {
  // A band of 40,000 rows of 5 (a 2-D stencil's row lengths): panels of 4 share most columns,
  // so kernel=auto would run the panel kernel; at fp32 K = 128 the row kernel's strided
  // schedule applies (short balanced rows, a warp a row) and the decision keeps the row kernel;
  // fp64 has no strided walk and runs the panel kernel.
  auto band = []<class Value>(Value) {
    Csr<Value, std::int32_t> a;
    a.rows = a.cols = 40000;
    for (std::int32_t i = 0; i < a.rows; ++i) {
      for (std::int32_t j = std::max(0, i - 2); j <= std::min(a.cols - 1, i + 2); ++j) {
        a.col_idx.push_back(j);
        a.values.push_back(1);
      }
      a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
    }
    return a;
  };
  const auto d32 = decide_rows(band(0.0f), 128, DeviceModel::h200());
  ASSERT_EQ(d32.variants[d32.chosen].predicted.kt, 128);
  EXPECT_TRUE(d32.stride) << d32.reason;
  EXPECT_EQ(d32.kernel, "rows") << d32.reason;
  const auto d64 = decide_rows(band(0.0), 128, DeviceModel::h200());
  EXPECT_FALSE(d64.stride);
  EXPECT_EQ(d64.kernel, "panel") << d64.reason;
}

TEST(Model, RowKernelGatherCeilingsByHand) {
  // example4 (row lengths 2,0,3,1) in one block of 256 work rows: sum_d = 4 distinct columns.
  // kt = 16 fp32: 4 lanes per row, 8 rows per warp; the warp walks its longest row (3): 24 slots.
  const auto a = example4();
  const auto work = segment_rows(a, 0);
  const auto p = reuse_profile(a, std::span<const WorkRow>(work), 256);
  EXPECT_EQ(rows_group_lanes(16, 4), 4);
  EXPECT_EQ(rows_group_lanes(4, 4), 1);
  EXPECT_EQ(rows_group_lanes(512, 4), 32);
  EXPECT_EQ(rows_group_lanes(16, 8), 8);
  EXPECT_DOUBLE_EQ(p.warp_nnz[2], 8 * 3);
  EXPECT_DOUBLE_EQ(p.warp_nnz[0], 32 * 3);
  EXPECT_DOUBLE_EQ(p.warp_nnz[5], 2 + 0 + 3 + 1);  // one row per warp: no padding
  EXPECT_DOUBLE_EQ(p.sum_sq, 4 + 0 + 9 + 1);
  const DeviceModel dev = DeviceModel::h100();
  RowsCalibration cal;
  const auto t = rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::predicted, cal);
  EXPECT_DOUBLE_EQ(t.l1_bytes, 24 * 64);  // slots × 64 B pieces
  EXPECT_DOUBLE_EQ(t.l2_bytes, 4 * 64);   // panel-distinct pieces
  EXPECT_DOUBLE_EQ(rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::optimistic, cal).l1_bytes, 6 * 64);
  // kt = 4 (1 lane, 32 rows per warp: 96 slots; 16 B pieces pay a 32 B sector, K/kt = 4 tiles).
  const auto narrow = rows_traffic(p, 16, 4, 4, 4, false, dev, BMode::all_miss, cal);
  EXPECT_DOUBLE_EQ(narrow.l1_bytes, 96 * 128);
  EXPECT_DOUBLE_EQ(narrow.l2_bytes, 4 * 128);
  // 64 B granules: a 32 B piece (kt = 8: 2 lanes, 16 rows per warp, 48 slots) costs 64 B.
  RowsCalibration g64 = cal;
  g64.granule_bytes = 64;
  EXPECT_DOUBLE_EQ(rows_traffic(p, 16, 8, 4, 4, false, dev, BMode::all_miss, g64).l1_bytes, 48 * 128);
  EXPECT_DOUBLE_EQ(rows_traffic(p, 16, 8, 4, 4, false, dev, BMode::all_miss, g64).b_bytes, 4 * 128);
  // A slow L1 path makes the slot term the time: 1536 B at 1 kB/s = 1.536 s (+ one launch);
  // all-miss at 1 kB/s / 1.25 (+ the launch × 1.25), optimistic the 384 B of nonzeros at the
  // L1 peak (1.25 kB/s here).
  cal.l1_gbs = 1e-6;
  cal.l1_peak_gbs = 1.25e-6;
  const auto slow = rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::predicted, cal);
  EXPECT_DOUBLE_EQ(slow.l1_seconds, 1.536);
  EXPECT_NEAR(slow.seconds, 1.536 + 4e-6, 1e-12);
  EXPECT_NEAR(rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::all_miss, cal).seconds, 1.92 + 5e-6, 1e-12);
  EXPECT_NEAR(rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::optimistic, cal).seconds, 0.3072, 1e-12);
  // A slow L2 path: 256 B at 1 kB/s; the optimistic bound takes the L2 peak instead (2 kB/s here).
  cal = RowsCalibration{};
  cal.l2_gbs = 1e-6;
  cal.l2_peak_gbs = 2e-6;
  EXPECT_NEAR(rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::predicted, cal).seconds, 0.256 + 4e-6, 1e-12);
  EXPECT_NEAR(rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::optimistic, cal).seconds, 0.128, 1e-12);
}

TEST(Model, CapacityAwareHitShareOfFarRetouches) {
  // A hand-made profile: 10 columns touched (cold), 100 re-touches ~1024 panels apart.
  ReuseProfile p;
  p.panels = 1;
  p.panel_rows = 1;
  p.cold = p.n_touched = 10;
  p.sum_d = 110;
  p.hist[10] = 100;
  DeviceModel dev = DeviceModel::h100();
  // fp32, kt = K = 16: 64 B pieces; footprint 10 · 64 = 640 B. The window (l2 / 7104 B per
  // panel) is < 1 panel, so all 100 re-touches are "far".
  dev.l2_bytes = 1280;  // usable half = 640 B = footprint: every far re-touch hits
  EXPECT_DOUBLE_EQ(rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::predicted).b_bytes, 10 * 64);
  dev.l2_bytes = 640;  // usable 320 B = half the footprint: half of them miss
  EXPECT_DOUBLE_EQ(rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::predicted).b_bytes, 60 * 64);
  dev.l2_bytes = 0;  // no L2: all miss = all-miss bytes
  EXPECT_DOUBLE_EQ(rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::predicted).b_bytes, 110 * 64);
  EXPECT_DOUBLE_EQ(rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::all_miss).b_bytes, 110 * 64);
}

TEST(Model, PanelKernelCountsDistinctColumnsPerPanel) {
  // example4, R = 2: rows {0,1} touch {0,2}, rows {2,3} touch {0,1,3}: 5 distinct, max 3.
  const auto a = example4();
  const auto pc = panel_columns(a, 2);
  EXPECT_EQ(pc.panels, 2);
  EXPECT_DOUBLE_EQ(pc.sum_distinct, 5);
  EXPECT_EQ(pc.max_panel_distinct, 3);
  const auto one = panel_columns(a, 1);  // R = 1: every nonzero (columns of a row are distinct)
  EXPECT_DOUBLE_EQ(one.sum_distinct, 6);
  EXPECT_EQ(panel_columns(a, 8).panels, 1);
  EXPECT_DOUBLE_EQ(panel_columns(a, 8).sum_distinct, 4);
  // K = kt = 16 fp32: L2 bytes 5 · 64 = 320 (rows kernel: 384); DRAM bytes as the rows kernel.
  const auto work = segment_rows(a, 0);
  const auto p = reuse_profile(a, std::span<const WorkRow>(work), 1);
  const DeviceModel dev = DeviceModel::h100();
  const auto pt = panel_traffic(p, pc, 16, 16, 4, 4, dev, BMode::all_miss);
  const auto rt = rows_traffic(p, 16, 16, 4, 4, false, dev, BMode::all_miss);
  EXPECT_DOUBLE_EQ(pt.l1_bytes, 320);  // rows kernel: every nonzero slot, >= 6 · 64
  EXPECT_DOUBLE_EQ(pt.l2_bytes, 320);  // min(Σ distinct, rows kernel's panel-distinct 6)
  EXPECT_GE(rt.l1_bytes, 384);
  EXPECT_DOUBLE_EQ(pt.total, rt.total);
  EXPECT_DOUBLE_EQ(pt.b_bytes, rt.b_bytes);
}

TEST(Model, DecisionNamesThePanelKernelWhereKernelAutoRunsIt) {
  // 64 rows in groups of 8 sharing the same 10 columns: the panel kernel (R = 8) gathers each
  // column once per panel (8 panels · 10 = 80 pieces), the row-wise one per nonzero (640).
  Csr<float, std::int32_t> a;
  a.rows = 64;
  a.cols = 100;
  for (int i = 0; i < 64; ++i) {
    for (int j = 0; j < 10; ++j) {
      a.col_idx.push_back((i / 8) * 10 + j);
      a.values.push_back(1);
    }
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
  }
  RowsCalibration cal;
  cal.l1_gbs = cal.panel_l1_gbs = 1e-3;  // lane-slot gathers and the panel's loads dominate everything
  cal.panel_per_sm = 0;  // 8 panels: no minimum count (checked at the end)
  // K = 64 fp32: a B row slice is 256 B and the reuse 640 / 80 = 8 >= 1.2: kernel=auto's panel.
  const auto d = decide_rows(a, 64, DeviceModel::h100(), {}, cal, 256, 8);
  ASSERT_EQ(d.variants.size(), 4u);
  EXPECT_EQ(d.kernel, "panel") << d.reason;
  EXPECT_DOUBLE_EQ(d.panel.columns.sum_distinct, 80);
  EXPECT_DOUBLE_EQ(d.panel.predicted.l1_bytes, 80 * 256);
  EXPECT_DOUBLE_EQ(d.panel.predicted.l2_bytes, 80 * 256);  // one block: sum_d = 80 as well
  EXPECT_DOUBLE_EQ(d.panel.predicted.l1_seconds, 80 * 256 / (cal.panel_l1_gbs * 1e9));
  // The panel's loads have a rate of their own: at twice the rate, half the time.
  RowsCalibration fast_loads = cal;
  fast_loads.panel_l1_gbs = 2e-3;
  EXPECT_DOUBLE_EQ(decide_rows(a, 64, DeviceModel::h100(), {}, fast_loads, 256, 8).panel.predicted.l1_seconds,
                   d.panel.predicted.l1_seconds / 2);
  EXPECT_DOUBLE_EQ(d.variants[d.chosen].predicted.l1_bytes, 640 * 256);
  EXPECT_LT(d.panel.predicted.seconds, d.variants[d.chosen].predicted.seconds);
  EXPECT_LE(d.panel.optimistic.seconds, d.panel.predicted.seconds);
  EXPECT_LE(d.panel.predicted.seconds, d.panel.all_miss.seconds);
  // K = 16: a 64 B slice, below panel_slice_bytes: the row-wise kernel runs.
  EXPECT_EQ(decide_rows(a, 16, DeviceModel::h100(), {}, cal, 256, 8).kernel, "rows");
  // A reuse threshold above 8: the row-wise kernel runs.
  RowsCalibration strict = cal;
  strict.panel_reuse = 9;
  EXPECT_EQ(decide_rows(a, 64, DeviceModel::h100(), {}, strict, 256, 8).kernel, "rows");
  // With the default minimum of panels per SM, 8 panels on 132 SMs run the row-wise kernel.
  RowsCalibration few = cal;
  few.panel_per_sm = RowsCalibration{}.panel_per_sm;
  EXPECT_EQ(decide_rows(a, 64, DeviceModel::h100(), {}, few, 256, 8).kernel, "rows");
  // predict_rows reproduces the decision's in-order whole-row variant.
  const auto v = predict_rows(a, 64, DeviceModel::h100(), 0, false, 0, cal);
  EXPECT_DOUBLE_EQ(v.predicted.seconds, d.variants[0].predicted.seconds);
}

TEST(Model, KTileIsNarrowedOnlyWhenBDoesNotFitL2) {
  // 64 rows touching disjoint columns: no reuse at all, nothing to gain from narrow tiles.
  const auto a = interleaved();
  const auto work = segment_rows(a, 0);
  const auto p = reuse_profile(a, std::span<const WorkRow>(work), 32);
  const auto dev = DeviceModel::h200();
  EXPECT_EQ(choose_k_tile(p, 128, 4, 4, false, dev), 128);
  EXPECT_EQ(choose_k_tile(p, 100, 4, 4, false, dev), 128);  // pow2 >= k
  EXPECT_EQ(choose_k_tile(p, 512, 4, 4, false, dev), 256);  // at most 64 float4 packs
  EXPECT_EQ(choose_k_tile(p, 512, 8, 4, false, dev), 128);  // 64 double2 packs
}

TEST(Model, RowDecisionPrefersReorderingWhenItRaisesReuse) {
  const auto a = interleaved();
  DeviceModel dev = DeviceModel::h200();
  dev.l2_bytes = 0;  // no L2: only panel (L1) reuse counts, which reordering doubles
  RowsCalibration cal;
  cal.launch_us = 0;
  cal.batch_latency_us = 0;
  cal.l1_gbs = cal.l2_gbs = 1e9;  // isolate the DRAM term
  const auto d = decide_rows(a, 32, dev, {}, cal, 32);
  ASSERT_EQ(d.variants.size(), 4u);
  EXPECT_LT(d.variants[1].all_miss.b_bytes, d.variants[0].all_miss.b_bytes);
  EXPECT_TRUE(d.variants[d.chosen].reordered) << d.reason;
  EXPECT_THROW(device_by_name("v100"), ParseError);
}

TEST(Model, RowSegmentSizeFollowsTheBandwidthTime) {
  RowsCalibration cal;  // 0.8 µs per batch of 4, 5 % share
  EXPECT_EQ(rows_segsize(0, cal), 64);  // floor
  // 1 ms of bandwidth time: 5 % = 50 µs = 62.5 batches → S/4 <= 62.5 → S = 128 (256 needs 64).
  EXPECT_EQ(rows_segsize(1e-3, cal), 128);
  EXPECT_EQ(rows_segsize(2e-3, cal), 256);
  EXPECT_EQ(rows_segsize(1e9, cal), std::int64_t{1} << 20);  // cap
}

TEST(Model, RowDecisionSplitsOneVeryLongRow) {
  // 2000 rows of 2 nonzeros and one row of 20000: the whole-row walk (5000 batches, 4 ms)
  // dwarfs the bandwidth time; the segmented candidate splits only that row.
  Csr<double, std::int32_t> a;
  a.rows = 2001;
  a.cols = 20000;
  a.row_ptr.assign(1, 0);
  for (std::int32_t i = 0; i < a.rows; ++i) {
    const std::int32_t len = i == 1000 ? 20000 : 2;
    for (std::int32_t j = 0; j < len; ++j) {
      a.col_idx.push_back(len == 2 ? (i * 7 + j * 13) % a.cols : j);
      a.values.push_back(1.0);
    }
    if (len == 2 && a.col_idx[a.col_idx.size() - 2] > a.col_idx.back())
      std::swap(a.col_idx[a.col_idx.size() - 2], a.col_idx.back());
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
  }
  const auto d = decide_rows(a, 32, DeviceModel::h100());
  ASSERT_EQ(d.variants.size(), 4u);
  EXPECT_TRUE(d.variants[d.chosen].segsize > 0) << d.reason;
  // fp64 K = 32: 16 lanes a row, and the long row holds most of the nonzeros: segments of 32.
  EXPECT_EQ(d.variants[2].segsize, kShortSegsize);
  EXPECT_EQ(d.variants[2].profile.split_rows, 1);
  EXPECT_EQ(d.variants[2].profile.split_work_rows, (20000 + 31) / 32);
  EXPECT_LT(d.variants[2].predicted.seconds, d.variants[0].predicted.seconds / 10);
  // Bounds: optimistic <= predicted <= all-miss for every variant.
  for (const auto& v : d.variants) {
    EXPECT_LE(v.optimistic.seconds, v.predicted.seconds) << v.name;
    EXPECT_LE(v.predicted.seconds, v.all_miss.seconds) << v.name;
  }
}

/// `rows` rows of `len` nonzeros (columns spread over `cols`) plus `hubs` rows of `hub_len`.
Csr<float, std::int32_t> rows_and_hubs(std::int32_t rows, std::int32_t len, std::int32_t hubs, std::int32_t hub_len,
                                       std::int32_t cols) {
  Csr<float, std::int32_t> a;
  a.rows = rows + hubs;
  a.cols = cols;
  a.row_ptr.assign(1, 0);
  for (std::int32_t i = 0; i < a.rows; ++i) {
    const std::int32_t n = i < rows ? len : hub_len;
    const std::int32_t start = i < rows ? (i * 37) % (cols - n) : 0;
    for (std::int32_t j = 0; j < n; ++j) {
      a.col_idx.push_back(start + j);
      a.values.push_back(1.0f);
    }
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
  }
  return a;
}

TEST(Model, NarrowRowGroupsTakeShortSegmentsWhereFewRowsHoldMuchOfTheWork) {
  // fp32 K = 32: 8 lanes a row. 4000 rows of 6 and 40 hubs of 500 nonzeros: segments of 32
  // cut only the hubs, which hold 45% of the nonzeros.
  const auto graph = rows_and_hubs(4000, 6, 40, 500, 8000);
  const auto d = decide_rows(graph, 32, DeviceModel::h200());
  EXPECT_EQ(d.variants[2].segsize, kShortSegsize) << d.reason;
  EXPECT_EQ(d.variants[2].profile.split_rows, 40);
  EXPECT_EQ(d.variants[2].profile.split_work_rows, 40 * ((500 + 31) / 32));
  // fp32 K = 64: 16 lanes a row, the same; K = 128: a warp a row keeps the floor.
  EXPECT_EQ(decide_rows(graph, 64, DeviceModel::h200()).variants[2].segsize, kShortSegsize);
  EXPECT_EQ(decide_rows(graph, 128, DeviceModel::h200()).variants[2].segsize, kRowsMinSegsize);
  // A few rows just over 32 (4 rows of 40 among 4000 of 6: 0.7% of the nonzeros) keep the floor.
  const auto few = rows_and_hubs(4000, 6, 4, 40, 8000);
  EXPECT_EQ(decide_rows(few, 32, DeviceModel::h200()).variants[2].segsize, kRowsMinSegsize);
  // Rows of 40 nonzeros: segments of 32 would cut nearly every row; the floor stays.
  const auto fem = rows_and_hubs(4000, 40, 40, 500, 8000);
  EXPECT_EQ(decide_rows(fem, 32, DeviceModel::h200()).variants[2].segsize, kRowsMinSegsize);
}

}  // namespace
}  // namespace spmat::model
