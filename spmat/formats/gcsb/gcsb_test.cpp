// spmat/formats/gcsb/gcsb_test.cpp — GCSB: the spec's worked examples array by array, padding vs zeros, kernels vs reference.
// SPDX-License-Identifier: MIT
#include "spmat/formats/gcsb/gcsb.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>

#include "spmat/formats/csb/block_test_support.hpp"

namespace spmat {
namespace {

using block_testing::letters;
constexpr int kP = -1;  // a pad in the expected comb lists

std::vector<std::int32_t> bin(std::initializer_list<int> codes) {  // "10" → 2 for β = 2
  std::vector<std::int32_t> v;
  for (int c : codes) v.push_back(c == kP ? csb_detail::kPad : (c / 10) * 2 + c % 10);
  return v;
}
FormatOptions toy() { return FormatOptions().set("beta", "2").set("group_size", "4"); }

TEST(Gcsb, EightByEightExampleMatchesTheThesisFigure35) {
  const auto s = Gcsb<float, std::int32_t>::build(block_testing::example8<float, std::int32_t>(), toy());
  EXPECT_EQ(s.block_indices, (std::vector<std::int32_t>{0, 9, 2, 3, 14, 1, 4, 11, 5, 12, 13, 6, 7, 8, 10, 15}));
  EXPECT_EQ(s.group_offset, (std::vector<std::int32_t>{0, 16, 28, 32, 32}));
  EXPECT_EQ(letters(s.values), "apcebqdfgsklht**ximryjnuz***ovw*");
  // The printed comb omits z's 11 (spec: typo); pads carry the marker, not 0.
  EXPECT_EQ(s.comb, bin({0, 0, 0, 0, 1, 1, 1, 1, 10, 10, 10, 11, 11, 11, kP, kP,  //
                         0, 10, 1, 0, 10, 11, 11, 11, 11, kP, kP, kP,            //
                         11, 1, 1, kP}));
  EXPECT_EQ(s.nnz, 26);
  // Eq. 3.2 with pads (the atomic kernel keeps no plan); the default fast kernel adds its spmv
  // window plan (11 listed blocks + 4 + 1 item bounds; spmv_t runs the dense-output kernel, no
  // plan), dense=off both plans.
  const auto t = Gcsb<float, std::int32_t>::build(block_testing::example8<float, std::int32_t>(),
                                                  toy().set("kernel", "atomic"));
  EXPECT_EQ(t.storage_bytes(), 32u * 4 + 32u * 4 + 16u * 4 + 5u * 4);
  EXPECT_EQ(s.storage_bytes(), t.storage_bytes() + (11 + 5) * 4u);
  const auto off = Gcsb<float, std::int32_t>::build(block_testing::example8<float, std::int32_t>(),
                                                    toy().set("dense", "off"));
  EXPECT_EQ(off.storage_bytes(), t.storage_bytes() + 2u * (11 + 5) * 4);
  EXPECT_EQ(s.to_csr(), (block_testing::example8<float, std::int32_t>()));
}

TEST(Gcsb, SixBySixExampleHandDerived) {
  // Block nnz (row-major ids 0..8): 3 1 3 2 1 0 1 0 1 → sorted 0 2 3 1 | 4 6 8 5 | 7 (a partial
  // last group whose three missing lanes would be padding, but its width is 0).
  const auto s = Gcsb<double, std::int64_t>::build(block_testing::example6<double, std::int64_t>(), toy());
  EXPECT_EQ(s.block_indices, (std::vector<std::int64_t>{0, 2, 3, 1, 4, 6, 8, 5, 7}));
  EXPECT_EQ(s.group_offset, (std::vector<std::int64_t>{0, 12, 16, 16}));
  EXPECT_EQ(letters(s.values), "achfbdi*eg**jkl*");
  EXPECT_EQ(s.comb, bin({0, 0, 1, 10, 1, 1, 11, kP, 10, 10, kP, kP, 11, 11, 11, kP}));
  EXPECT_EQ(s.to_csr(), (block_testing::example6<double, std::int64_t>()));
}

TEST(Gcsb, DroppingEmptyBlocksShortensBlockIndicesOnly) {
  auto o = toy();
  o.set("empty", "drop");
  const auto s = Gcsb<float, std::int32_t>::build(block_testing::example8<float, std::int32_t>(), o);
  EXPECT_EQ(s.block_indices, (std::vector<std::int32_t>{0, 9, 2, 3, 14, 1, 4, 11, 5, 12, 13}));
  EXPECT_EQ(s.group_offset, (std::vector<std::int32_t>{0, 16, 28, 32}));
  EXPECT_EQ(letters(s.values), "apcebqdfgsklht**ximryjnuz***ovw*");  // last pad: a phantom lane
  EXPECT_EQ(s.to_csr(), (block_testing::example8<float, std::int32_t>()));
}

/// 130×130 with four entries in three of the 65×65 = 4225 blocks of β = 2 (more than
/// kKeepEmptyMaxBlocks, so the default drops the empty ones): a(0,0) b(0,1) in block 0,
/// d(64,2) in block 32·65 + 1 = 2081, c(129,129) in block 64·65 + 64 = 4224.
Csr<float, std::int32_t> sparse_grid_example() {
  std::vector<double> m(130 * 130, 0);
  m[0] = 1;                // a
  m[1] = 2;                // b
  m[129 * 130 + 129] = 3;  // c
  m[64 * 130 + 2] = 4;     // d
  return block_testing::from_dense<float, std::int32_t>(130, 130, m);
}

TEST(Gcsb, LargeGridsKeepOnlyTheNonEmptyBlocksByDefault) {
  const auto s = Gcsb<float, std::int32_t>::build(sparse_grid_example(), toy());
  EXPECT_FALSE(s.keep_empty);
  EXPECT_EQ(s.block_indices, (std::vector<std::int32_t>{0, 2081, 4224}));
  EXPECT_TRUE(s.block_row.empty());
  EXPECT_EQ(s.group_offset, (std::vector<std::int32_t>{0, 8}));
  EXPECT_EQ(letters(s.values), "adc*b***");
  EXPECT_EQ(s.comb, bin({0, 0, 11, kP, 1, kP, kP, kP}));
  // 3 listed blocks + 66 item bounds (65 windows, one item each) for the spmv plan (spmv_t: the
  // dense-output kernel, no plan).
  EXPECT_EQ(s.storage_bytes(), 8u * 8 + 3u * 4 + 2u * 4 + (3 + 66) * 4u);
  EXPECT_EQ(s.to_csr(), sparse_grid_example());
  // empty=keep restores the thesis layout: all 4225 blocks listed.
  auto o = toy();
  o.set("empty", "keep");
  const auto k = Gcsb<float, std::int32_t>::build(sparse_grid_example(), o);
  EXPECT_EQ(k.n_sorted(), 4225);
  EXPECT_EQ(k.block_indices[3], 1);  // the first empty block
  EXPECT_EQ(k.values, s.values);
  EXPECT_EQ(k.group_offset.back(), 8);
}

TEST(Gcsb, BlockIdsBeyondTheIndexTypeAreStoredAsRowAndColumn) {
  ScopedInt32Limit limit(1000);  // 4225 block ids do not fit
  auto o = toy();
  o.set("kernel", "deterministic");
  const auto a = sparse_grid_example();
  const auto s = Gcsb<float, std::int32_t>::build(a, o);
  EXPECT_TRUE(s.block_indices.empty());
  EXPECT_EQ(s.block_row, (std::vector<std::int32_t>{0, 32, 64}));
  EXPECT_EQ(s.block_col, (std::vector<std::int32_t>{0, 1, 64}));
  EXPECT_EQ(letters(s.values), "adc*b***");
  EXPECT_EQ(s.row_plan.list, (std::vector<std::int32_t>{0, 1, 2}));
  EXPECT_EQ(s.row_plan.item_ptr.size(), 66u);
  EXPECT_TRUE(s.row_plan.window_item_ptr.empty());
  EXPECT_EQ(s.storage_bytes(), 8u * 8 + 2u * 3 * 4 + 2u * 4 + s.row_plan.bytes() + s.col_plan.bytes());
  EXPECT_EQ(s.to_csr(), a);
  EXPECT_THROW((Gcsb<float, std::int32_t>::build(a, toy().set("empty", "keep"))), IndexOverflowError);
  for (const char* name : {"gcsb", "gcsb-det"})
    for (bool t : {false, true})
      block_testing::check_against_reference<float, std::int32_t>(a, name, toy(), Backend::cpu, t, 2, 0, 9);
}

TEST(Gcsb, BillionsOfBlocksBuildWithStorageNearCsr) {
  // 200000² tridiagonal, fp64, β = 4: 2.5·10^9 blocks (ids beyond int32), 1.5·10^5 non-empty.
  const std::int32_t n = 200000;
  const auto a = block_testing::tridiagonal(
      n, [](std::int32_t r, std::int32_t c) { return static_cast<double>((3 * r + c) % 5) - 2; });
  const auto o = FormatOptions().set("beta", "4");
  const auto s = Gcsb<double, std::int32_t>::build(a, o);
  EXPECT_TRUE(s.split_ids());
  EXPECT_EQ(s.n_sorted(), 3 * (n / 4) - 2);
  const std::size_t csr_bytes = a.values.size() * 12 + a.row_ptr.size() * 4;
  const std::size_t plans = 2 * (static_cast<std::size_t>(s.n_sorted()) + n / 4 + 1) * 4;
  EXPECT_EQ(s.storage_bytes() - s.row_plan.bytes() - s.col_plan.bytes() + plans, s.storage_bytes());
  EXPECT_LE(s.storage_bytes() - plans, csr_bytes * 11 / 10);  // thesis arrays (kernel=atomic)
  for (const char* name : {"gcsb", "gcsb-det"})
    for (bool t : {false, true})
      block_testing::check_against_reference<double, std::int32_t>(a, name, o, Backend::cpu, t, 1, 0, 4);
}

TEST(Gcsb, ExplicitZerosAreStoredEntriesAndPaddingIsNot) {
  // a at (0,0) and an explicit zero at (2,2): two blocks of one entry, two empty ones.
  Csr<float, std::int32_t> a;
  a.rows = 4;
  a.cols = 4;
  a.row_ptr = {0, 1, 1, 2, 2};
  a.col_idx = {0, 2};
  a.values = {1, 0};
  const auto s = Gcsb<float, std::int32_t>::build(a, toy());
  EXPECT_EQ(s.block_indices, (std::vector<std::int32_t>{0, 3, 1, 2}));
  EXPECT_EQ(s.values, (std::vector<float>{1, 0, 0, 0}));
  EXPECT_EQ(s.comb, bin({0, 0, kP, kP}));
  EXPECT_EQ(s.to_csr(), a);
  EXPECT_EQ(s.shape().nnz, 2);
}

TEST(Gcsb, DeterministicPlanListsBlocksPerWindow) {
  auto o = toy();
  o.set("kernel", "deterministic");
  const auto s = Gcsb<float, std::int32_t>::build(block_testing::example8<float, std::int32_t>(), o);
  // Sorted positions of the non-empty blocks, per block row: row 0 = ids 0 2 3 1 at positions
  // 0 2 3 5; row 1 = ids 4 5 → 6 8; row 2 = 9 11 → 1 7; row 3 = 14 12 13 → 4 9 10.
  EXPECT_EQ(s.row_plan.list, (std::vector<std::int32_t>{0, 2, 3, 5, 6, 8, 1, 7, 4, 9, 10}));
  EXPECT_EQ(s.row_plan.item_ptr, (std::vector<std::int32_t>{0, 4, 6, 8, 11}));
  EXPECT_TRUE(s.row_plan.window_item_ptr.empty());
  // Per block column: col 0 = ids 0 4 12 → 0 6 9; col 1 = 9 1 5 13 → 1 5 8 10; col 2 = 2 14 → 2 4;
  // col 3 = 3 11 → 3 7.
  EXPECT_EQ(s.col_plan.list, (std::vector<std::int32_t>{0, 6, 9, 1, 5, 8, 10, 2, 4, 3, 7}));
  // 11 blocks over 4 windows: lanes = 2 (mean 2.75), blocks_per_lane = 2 → items of ≤ 4 blocks,
  // so no window is split and the GPU needs no work buffer.
  EXPECT_EQ(s.row_plan.lanes_log2, 1);
  EXPECT_TRUE(s.row_plan.item_window.empty());  // not split: item = window
  EXPECT_FALSE(s.row_plan.has_split());
  EXPECT_EQ(s.row_plan.n_windows(), 4);
  EXPECT_EQ(s.storage_bytes(), 32u * 8 + 21u * 4 + 2u * (11 + 5) * 4);
  EXPECT_EQ(s.det_workspace_bytes(Op::spmv), 0u);
  // The fast kernel keeps the same row plan; its spmv_t output (8 values) fits shared memory, so
  // spmv_t runs the dense-output kernel and no column plan is stored (dense=off keeps it).
  const auto f = Gcsb<float, std::int32_t>::build(block_testing::example8<float, std::int32_t>(), toy());
  EXPECT_EQ(f.row_plan.list, s.row_plan.list);
  EXPECT_TRUE(f.dense_t);
  EXPECT_FALSE(f.dense_n);
  EXPECT_TRUE(f.col_plan.list.empty());
  EXPECT_EQ(f.storage_bytes(), s.storage_bytes() - s.col_plan.bytes());
  const auto off = Gcsb<float, std::int32_t>::build(block_testing::example8<float, std::int32_t>(),
                                                    toy().set("dense", "off"));
  EXPECT_EQ(off.col_plan.list, s.col_plan.list);
  EXPECT_EQ(off.storage_bytes(), s.storage_bytes());
  const auto both = Gcsb<float, std::int32_t>::build(block_testing::example8<float, std::int32_t>(),
                                                     toy().set("dense", "both"));
  EXPECT_TRUE(both.dense_n && both.dense_t);
  EXPECT_EQ(both.storage_bytes(), 32u * 8 + 21u * 4);  // the thesis arrays alone
  for (const char* k : {"thesis", "atomic"}) {
    const auto t = Gcsb<float, std::int32_t>::build(block_testing::example8<float, std::int32_t>(),
                                                    toy().set("kernel", k));
    EXPECT_TRUE(t.row_plan.list.empty());
    EXPECT_EQ(t.storage_bytes(), 32u * 8 + 21u * 4);
  }
}

TEST(Gcsb, LongWindowsAreSplitIntoNearEqualItems) {
  // Block row 3 holds ids 14 12 13 (positions 4 9 10): with lanes = 1 and blocks_per_lane = 2
  // it becomes two items (1 + 2 blocks); block row 0 (4 blocks) two items of 2.
  auto o = toy();
  o.set("kernel", "deterministic").set("lanes", "1").set("blocks_per_lane", "2");
  const auto s = Gcsb<float, std::int32_t>::build(block_testing::example8<float, std::int32_t>(), o);
  EXPECT_EQ(s.row_plan.lanes_log2, 0);
  EXPECT_EQ(s.row_plan.item_ptr, (std::vector<std::int32_t>{0, 2, 4, 6, 8, 9, 11}));
  EXPECT_EQ(s.row_plan.item_window, (std::vector<std::int32_t>{0, 0, 1, 2, 3, 3}));
  EXPECT_EQ(s.row_plan.window_item_ptr, (std::vector<std::int32_t>{0, 2, 3, 4, 6}));
  EXPECT_TRUE(s.row_plan.has_split());
  EXPECT_EQ(s.det_workspace_bytes(Op::spmv), 6u * 2 * 4);
  // The 6×6 example with lanes=4 (default blocks_per_lane 2: items of ≤ 8 blocks): block rows
  // hold blocks 0 1 2 | 3 4 | 6 8, one item each.
  const auto e = Gcsb<double, std::int32_t>::build(block_testing::example6<double, std::int32_t>(),
                                                   toy().set("lanes", "4"));
  EXPECT_EQ(e.row_plan.lanes_log2, 2);
  EXPECT_EQ(e.row_plan.item_ptr, (std::vector<std::int32_t>{0, 3, 5, 7}));
  EXPECT_FALSE(e.row_plan.has_split());
  const auto shape = toy().set("lanes", "1").set("blocks_per_lane", "2");
  for (const char* name : {"gcsb", "gcsb-det"})
    for (bool t : {false, true})
      block_testing::check_against_reference<float, std::int32_t>(
          block_testing::example8<float, std::int32_t>(), name, shape, Backend::cpu, t, 2, 0, 3);
}

TEST(Gcsb, EmptyWindowsGetOneEmptyItem) {
  // 8×8 with entries only in block row 0 and block column 0 (β = 2): block rows 1..3 and block
  // columns 1..3 are empty windows of spmv and spmv_t.
  Csr<float, std::int32_t> a;
  a.rows = a.cols = 8;
  a.row_ptr = {0, 2, 3, 3, 3, 3, 3, 3, 3};
  a.col_idx = {0, 1, 0};
  a.values = {1, 2, 3};
  const auto s = Gcsb<float, std::int32_t>::build(a, toy().set("kernel", "deterministic"));
  EXPECT_EQ(s.row_plan.item_ptr, (std::vector<std::int32_t>{0, 1, 1, 1, 1}));
  EXPECT_EQ(s.col_plan.item_ptr, (std::vector<std::int32_t>{0, 1, 1, 1, 1}));
  EXPECT_EQ(s.row_plan.n_windows(), 4);
  for (bool t : {false, true})
    block_testing::check_against_reference<float, std::int32_t>(a, "gcsb-det", toy(), Backend::cpu, t, 1,
                                                                0.5f, 6);
}

TEST(Gcsb, RowPlanOfEqualCountBlockRowsIsStoredAsRuns) {
  // 64×64, β = 8: block row br holds 8 blocks of br + 1 entries each (the gen:ideal shape), so
  // the swizzle puts each block row's blocks at consecutive sorted positions: one run per block
  // row. Auto picks the runs form (8 runs + 9 + 8 items < 64 list entries) and the spmv results
  // are the same as with the list.
  Coo<float, std::int32_t> c;
  c.rows = c.cols = 64;
  for (int br = 0; br < 8; ++br)
    for (int bc = 0; bc < 8; ++bc)
      for (int e = 0; e <= br; ++e) {
        c.row_idx.push_back(br * 8 + e);
        c.col_idx.push_back(bc * 8 + (e * 3 + bc) % 8);
        c.values.push_back(1.0f + e + bc);
      }
  const auto a = to_csr(c);
  const auto o = FormatOptions().set("beta", "8").set("group_size", "8").set("lanes", "8");
  const auto s = Gcsb<float, std::int32_t>::build(a, o);
  ASSERT_TRUE(s.row_plan.runs());
  // Sorted order: block row 7 (8 entries each) first, … block row 0 last.
  EXPECT_EQ(s.row_plan.run_start, (std::vector<std::int32_t>{56, 48, 40, 32, 24, 16, 8, 0}));
  EXPECT_EQ(s.row_plan.run_ptr, (std::vector<std::int32_t>{0, 8, 16, 24, 32, 40, 48, 56, 64}));
  EXPECT_EQ(s.row_plan.item_run, (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(s.row_plan.bytes(), (8u + 9u + 8u + 9u) * 4);  // runs, run_ptr, item_run, item_ptr
  const auto l = Gcsb<float, std::int32_t>::build(a, FormatOptions(o).set("plan_form", "list"));
  ASSERT_FALSE(l.row_plan.runs());
  EXPECT_EQ(l.storage_bytes() - s.storage_bytes(), (64u - 8u - 9u - 8u) * 4);
  for (std::int64_t it = 0; it < l.row_plan.n_items(); ++it)
    for (std::int64_t e = l.row_plan.item_ptr[it]; e < l.row_plan.item_ptr[it + 1]; ++e)
      EXPECT_EQ(s.row_plan.at(it, e), l.row_plan.list[e]);
  // Split items start inside runs: item_run points at the run holding the item's first entry.
  const auto sp = Gcsb<float, std::int32_t>::build(
      a, FormatOptions(o).set("lanes", "2").set("blocks_per_lane", "3").set("plan_form", "runs"));
  for (std::int64_t it = 0; it < sp.row_plan.n_items(); ++it) {
    const std::int64_t j = sp.row_plan.item_run[it], e = sp.row_plan.item_ptr[it];
    if (e < 64) EXPECT_TRUE(sp.row_plan.run_ptr[j] <= e && e < sp.row_plan.run_ptr[j + 1]) << it;
  }
  for (const char* name : {"gcsb", "gcsb-det"})
    for (bool t : {false, true})
      for (const auto& oo : {o, FormatOptions(o).set("lanes", "2").set("blocks_per_lane", "3"),
                             FormatOptions(o).set("block_lanes", "4").set("plan_form", "runs")}) {
        block_testing::check_against_reference<float, std::int32_t>(a, name, oo, Backend::cpu, t, 1, 0, 4);
        if (testing::gpu_available())
          block_testing::check_against_reference<float, std::int32_t>(a, name, oo, Backend::cuda, t, -1, 0.5f, 4);
      }
}

TEST(Gcsb, BlockLanesAutoSplitsFewFullBlocks) {
  // fp32 β = 32 with ~100 entries per block and few blocks (the gen:ideal fp32 case): 4 block
  // lanes, items of (lanes / 4)·blocks_per_lane blocks; fp64 β = 16 with ~26 per block and many
  // blocks stays at 1 unless asked.
  const auto f = block_testing::random_csr<float, std::int32_t>(512, 512, 0.1, 23);
  const auto s = Gcsb<float, std::int32_t>::build(f, FormatOptions());
  EXPECT_EQ(s.beta(), 32);
  EXPECT_EQ(s.block_lanes_log2, 2);
  EXPECT_EQ(s.row_plan.block_lanes_log2, 2);
  EXPECT_EQ(s.row_plan.blocks_per_lane, 1);
  const auto d = block_testing::random_csr<double, std::int32_t>(512, 512, 0.01, 23);
  EXPECT_EQ((Gcsb<double, std::int32_t>::build(d, FormatOptions()).block_lanes_log2), 0);
  EXPECT_EQ((Gcsb<double, std::int32_t>::build(d, FormatOptions().set("block_lanes", "2")).block_lanes_log2), 1);
  // Capped at the plan's lanes.
  const auto n = Gcsb<float, std::int32_t>::build(f, FormatOptions().set("lanes", "2"));
  EXPECT_EQ(n.row_plan.block_lanes_log2, 1);
  for (bool t : {false, true})
    block_testing::check_against_reference<float, std::int32_t>(f, "gcsb", FormatOptions(), Backend::cpu, t, 1, 0, 23);
}

TEST(Gcsb, DenseOutputKernelIsChosenByOutputSize) {
  // 96 KB of output: 12288 doubles, 24576 floats. Only kernel=fast uses it (det keeps plans).
  using Gd = Gcsb<double, std::int32_t>;
  using Gf = Gcsb<float, std::int32_t>;
  auto shape = [](std::int32_t r, std::int32_t c) {
    Csr<double, std::int32_t> a;
    a.rows = r;
    a.cols = c;
    a.row_ptr.assign(static_cast<std::size_t>(r) + 1, 0);
    return a;
  };
  const auto tall = shape(12289, 12288);  // spmv output just too large, spmv_t output just fits
  const auto both = FormatOptions().set("dense", "both");
  EXPECT_TRUE(Gd::build(tall, {}).dense_t);
  EXPECT_FALSE(Gd::build(tall, {}).dense_n);
  EXPECT_FALSE(Gd::build(tall, both).dense_n);
  EXPECT_TRUE(Gd::build(shape(12288, 12288), both).dense_n);
  EXPECT_FALSE(Gd::build(shape(5, 12289), both).dense_t);
  EXPECT_TRUE(Gf::build(convert<float, std::int32_t>(shape(24576, 24577)), both).dense_n);
  EXPECT_FALSE(Gf::build(convert<float, std::int32_t>(shape(24576, 24577)), both).dense_t);
  EXPECT_FALSE(Gd::build(tall, FormatOptions().set("dense", "off")).dense_t);
  EXPECT_FALSE(Gd::build(tall, FormatOptions().set("kernel", "deterministic")).dense_t);
  EXPECT_FALSE(Gd::build(tall, FormatOptions().set("kernel", "atomic")).dense_t);
  EXPECT_FALSE(Gd::build(shape(0, 0), {}).dense_t);
  EXPECT_EQ(Gd::build(tall, FormatOptions().set("dense_parts", "7")).dense_parts, 7);
  // Split windows of the fast kernel use the work buffer by default, flush=atomic does not.
  const auto split = FormatOptions().set("lanes", "1").set("blocks_per_lane", "1").set("beta", "2");
  const auto e8 = block_testing::example8<double, std::int32_t>();
  EXPECT_GT(Gd::build(e8, FormatOptions(split).set("dense", "off")).det_workspace_bytes(Op::spmv_t), 0u);
  EXPECT_EQ(Gd::build(e8, FormatOptions(split).set("flush", "atomic")).det_workspace_bytes(Op::spmv), 0u);
}

TEST(Gcsb, BadOptionsAreRefusedWithTheirName) {
  const auto a = block_testing::example6<double, std::int32_t>();
  using G = Gcsb<double, std::int32_t>;
  EXPECT_THROW(G::build(a, FormatOptions().set("kernel", "magic")), ParseError);
  EXPECT_THROW(G::build(a, FormatOptions().set("empty", "maybe")), ParseError);
  EXPECT_THROW(G::build(a, FormatOptions().set("lanes", "3")), ParseError);
  EXPECT_THROW(G::build(a, FormatOptions().set("lanes", "64")), ParseError);
  EXPECT_THROW(G::build(a, FormatOptions().set("blocks_per_lane", "0")), ParseError);
  EXPECT_THROW(G::build(a, FormatOptions().set("dense", "yes")), ParseError);
  EXPECT_THROW(G::build(a, FormatOptions().set("flush", "never")), ParseError);
  EXPECT_THROW(G::build(a, FormatOptions().set("dense_parts", "-1")), ParseError);
  EXPECT_THROW(Matrix<double>::build(a, "gcsb-det", Backend::cpu, FormatOptions().set("dense", "both")),
               ParseError);  // gcsb-det is deterministic: no dense-output kernel
  EXPECT_THROW(Matrix<double>::build(a, "gcsb-det", Backend::cpu, FormatOptions().set("kernel", "x")),
               ParseError);  // kernel is not an option of the preset entries
}

template <class T>
class GcsbTyped : public ::testing::Test {};
TYPED_TEST_SUITE(GcsbTyped, spmat::testing::Pairs);

std::vector<FormatOptions> option_sets() {
  return {FormatOptions(),
          FormatOptions().set("beta", "4").set("group_size", "3"),
          FormatOptions().set("beta", "8").set("group_size", "16").set("empty", "drop"),
          FormatOptions().set("beta", "16").set("group_size", "32"),
          FormatOptions().set("beta", "2").set("group_size", "8"),  // > 4096 blocks: auto drops
          // Window plan shapes: every lane width, split windows (small items) and whole windows.
          FormatOptions().set("beta", "4").set("lanes", "1").set("blocks_per_lane", "1"),
          FormatOptions().set("beta", "2").set("lanes", "32").set("blocks_per_lane", "1"),
          FormatOptions().set("beta", "8").set("group_size", "5").set("lanes", "4").set("blocks_per_lane", "3"),
          FormatOptions().set("beta", "4").set("lanes", "8").set("blocks_per_lane", "4096"),
          FormatOptions().set("beta", "1").set("lanes", "16"),
          // gcsb only: dense-output kernel for both ops / for none; atomic flush of split windows.
          FormatOptions().set("dense", "both"),
          FormatOptions().set("dense", "both").set("beta", "4").set("group_size", "3"),
          FormatOptions().set("dense", "off").set("beta", "8"),
          FormatOptions().set("dense", "off").set("flush", "atomic").set("lanes", "1").set("blocks_per_lane", "1"),
          // Runs-form plans (split and whole windows) and block lanes (lanes sharing a block).
          FormatOptions().set("beta", "4").set("plan_form", "runs").set("lanes", "4").set("blocks_per_lane", "1"),
          FormatOptions().set("beta", "1").set("plan_form", "runs").set("lanes", "32"),
          FormatOptions().set("beta", "8").set("block_lanes", "4").set("lanes", "8").set("blocks_per_lane", "1"),
          FormatOptions().set("beta", "16").set("group_size", "32").set("block_lanes", "2").set("plan_form", "runs"),
          FormatOptions().set("beta", "4").set("plan_form", "list").set("block_lanes", "4").set("lanes", "2"),
          FormatOptions().set("dense", "both").set("beta", "2").set("block_lanes", "4"),
          FormatOptions().set("dense", "both").set("beta", "8").set("group_size", "5").set("block_lanes", "2"),
          FormatOptions().set("dense", "off").set("flush", "atomic").set("block_lanes", "2").set("plan_form", "runs").set("lanes", "4").set("blocks_per_lane", "1")};
}

/// Options of the window plans (gcsb, gcsb-det only).
bool plan_opts(const FormatOptions& o) {
  return o.has("lanes") || o.has("block_lanes") || o.has("plan_form") || o.has("blocks_per_lane");
}

/// Options that only the gcsb entry (kernel=fast) knows.
bool gcsb_only(const FormatOptions& o) { return o.has("empty") || o.has("dense") || o.has("flush"); }

TYPED_TEST(GcsbTyped, RoundTripIsExactAndStorageBytesAreCounted) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  for (auto [r, c] : {std::pair{37, 53}, std::pair{64, 29}, std::pair{5, 3}, std::pair{0, 7}, std::pair{7, 0}})
    for (const auto& o : option_sets()) {
      const auto a = block_testing::random_csr<V, I>(r, c, 0.2, testing::fresh_seed());
      const auto s = Gcsb<V, I>::build(a, o);
      EXPECT_EQ(s.to_csr(), a) << o.to_string();
      EXPECT_EQ(s.storage_bytes(), s.values.size() * (sizeof(V) + 4) +
                                       (s.block_indices.size() + s.group_offset.size()) * sizeof(I) +
                                       s.row_plan.bytes() + s.col_plan.bytes());
      if (s.has_plan(Op::spmv) && s.has_plan(Op::spmv_t))
        EXPECT_EQ(s.row_plan.item_ptr.back(), s.col_plan.item_ptr.back());
      for (const auto* p : {&s.row_plan, &s.col_plan}) {  // either form lists every block once
        if (p->item_ptr.empty()) continue;
        std::vector<std::int64_t> seen;
        for (std::int64_t it = 0; it < p->n_items(); ++it)
          for (std::int64_t e = p->item_ptr[it]; e < p->item_ptr[it + 1]; ++e) seen.push_back(p->at(it, e));
        std::sort(seen.begin(), seen.end());
        for (std::size_t e = 0; e < seen.size(); ++e) ASSERT_EQ(seen[e], static_cast<std::int64_t>(e));
        if (o.get_string("plan_form", "") == "runs") EXPECT_TRUE(p->runs() || p->item_ptr.back() == 0);
        if (o.get_string("plan_form", "") == "list") EXPECT_FALSE(p->runs());
      }
      if (s.has_plan(Op::spmv)) EXPECT_EQ(s.row_plan.n_windows(), (r + s.beta() - 1) / s.beta());
      else EXPECT_TRUE(s.row_plan.list.empty() && s.row_plan.item_ptr.empty() && s.row_plan.run_ptr.empty());
      if (s.has_plan(Op::spmv_t)) EXPECT_EQ(s.col_plan.n_windows(), (c + s.beta() - 1) / s.beta());
      else EXPECT_TRUE(s.col_plan.list.empty() && s.col_plan.item_ptr.empty());
      EXPECT_EQ(s.dense_t, o.get_string("dense", "auto") != "off" && c > 0);
      if (!s.keep_empty) EXPECT_LE(s.n_sorted(), static_cast<std::int64_t>(a.values.size()));
      // Padding: each group is group_size × (nnz of its first block); pads are marked.
      std::size_t pads = 0;
      for (auto c2 : s.comb) pads += (c2 & csb_detail::kPad) ? 1 : 0;
      EXPECT_EQ(s.values.size() - pads, a.values.size());
    }
}

TYPED_TEST(GcsbTyped, CpuKernelsMatchTheReference) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  for (const char* name : {"gcsb", "gcsb-det", "gcsb-atomic"})
    for (auto [r, c] : {std::pair{45, 70}, std::pair{100, 33}, std::pair{1, 50}, std::pair{70, 1}})
      for (const auto& o : option_sets()) {
        if (std::string(name) != "gcsb" && gcsb_only(o)) continue;
        if (std::string(name) == "gcsb-atomic" && plan_opts(o)) continue;
        const auto seed = testing::fresh_seed();
        const auto a = block_testing::random_csr<V, I>(r, c, 0.15, seed);
        for (bool t : {false, true})
          for (auto [al, be] : {std::pair<V, V>{1, 0}, std::pair<V, V>{V(-1.5), V(0.5)}})
            block_testing::check_against_reference(a, name, o, Backend::cpu, t, al, be, seed);
      }
}

TEST(Gcsb, DeterministicCpuResultDoesNotDependOnTheThreadCount) {
  const auto a = block_testing::random_csr<float, std::int32_t>(300, 200, 0.1, 7);
  auto m = Matrix<float>::build(a, "gcsb-det", Backend::cpu, FormatOptions().set("beta", "8"));
  const auto x = testing::random_vector<float>(300, 8);
  const int saved = omp_get_max_threads();
  std::vector<float> y1(200), y4(200);
  omp_set_num_threads(1);
  m.spmv_t(x, y1);
  omp_set_num_threads(4);
  m.spmv_t(x, y4);
  omp_set_num_threads(saved);
  EXPECT_EQ(std::memcmp(y1.data(), y4.data(), y1.size() * sizeof(float)), 0);
}

TYPED_TEST(GcsbTyped, GpuKernelsMatchTheReference) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  SPMAT_SKIP_WITHOUT_GPU();
  auto sets = option_sets();
  sets.push_back(FormatOptions().set("beta", "128"));  // fast: 64 (fp32) / 32 (fp64) threads
  sets.push_back(FormatOptions().set("beta", "64").set("group_size", "7"));
  for (const char* name : {"gcsb", "gcsb-thesis", "gcsb-det", "gcsb-atomic"})
    for (auto [r, c] : {std::pair{45, 70}, std::pair{300, 257}, std::pair{1, 50}, std::pair{70, 1},
                        std::pair{0, 5}})
      for (const auto& o : sets) {
        if (std::string(name) != "gcsb" && gcsb_only(o)) continue;
        if ((std::string(name) == "gcsb-thesis" || std::string(name) == "gcsb-atomic") &&
            plan_opts(o))
          continue;
        const auto seed = testing::fresh_seed();
        const auto a = block_testing::random_csr<V, I>(r, c, 0.1, seed);
        for (bool t : {false, true})
          for (auto [al, be] : {std::pair<V, V>{1, 0}, std::pair<V, V>{V(-1.5), V(0.5)}})
            block_testing::check_against_reference(a, name, o, Backend::cuda, t, al, be, seed);
      }
}

TEST(Gcsb, GpuKernelsReadSplitBlockIds) {
  SPMAT_SKIP_WITHOUT_GPU();
  ScopedInt32Limit limit(100000);  // 3000×2000 at β = 4: 375000 block ids do not fit
  const auto a = block_testing::random_csr<float, std::int32_t>(3000, 2000, 0.002, 13);
  for (const char* name : {"gcsb", "gcsb-thesis", "gcsb-det", "gcsb-atomic"})
    for (bool t : {false, true})
      block_testing::check_against_reference<float, std::int32_t>(
          a, name, FormatOptions().set("beta", "4"), Backend::cuda, t, 1, 0, 13);
}

TEST(Gcsb, GpuDenseOutputKernelUpToTheSharedMemoryLimit) {
  SPMAT_SKIP_WITHOUT_GPU();
  // Outputs of 64 KB and 96 KB (past the 48 KB default: the kernel attribute is raised), 12289
  // doubles (just too large: window plan), fp32 at 24576, the ideal-matrix size 8192, and
  // split block ids; dense=both runs spmv through it too.
  const auto both = FormatOptions().set("dense", "both");
  const auto a = block_testing::random_csr<double, std::int32_t>(8192, 8192, 0.003, 17);
  const auto w = block_testing::random_csr<double, std::int32_t>(12289, 12288, 0.0005, 18);
  const auto f = block_testing::random_csr<float, std::int32_t>(24576, 24577, 0.0003, 19);
  for (bool t : {false, true}) {
    for (const auto& o : {FormatOptions(), both, FormatOptions().set("beta", "32").set("group_size", "7"),
                          FormatOptions(both).set("dense_parts", "1"), FormatOptions(both).set("dense_parts", "300")}) {
      block_testing::check_against_reference<double, std::int32_t>(a, "gcsb", o, Backend::cuda, t, 1, 0, 17);
      block_testing::check_against_reference<double, std::int32_t>(w, "gcsb", o, Backend::cuda, t, -2, 0.5, 18);
    }
    block_testing::check_against_reference<float, std::int32_t>(f, "gcsb", both, Backend::cuda, t, 1, 0, 19);
    block_testing::check_against_reference<float, std::int32_t>(f, "gcsb", both, Backend::cuda, t, 0.5f, -1, 19);
    for (const char* bl : {"2", "4"})  // dense-output kernel with block lanes
      block_testing::check_against_reference<float, std::int32_t>(
          f, "gcsb", FormatOptions(both).set("block_lanes", bl), Backend::cuda, t, 1, 0.5f, 19);
  }
  ScopedInt32Limit limit(100000);  // 3000×2000 at β = 4: split block ids
  const auto s = block_testing::random_csr<float, std::int32_t>(3000, 2000, 0.002, 13);
  for (bool t : {false, true})
    block_testing::check_against_reference<float, std::int32_t>(
        s, "gcsb", FormatOptions(both).set("beta", "4"), Backend::cuda, t, 1, 0, 13);
}

TEST(Gcsb, GpuFastKernelFallsBackForHugeBlocksAndDetRefusesThem) {
  SPMAT_SKIP_WITHOUT_GPU();
  const auto a = block_testing::random_csr<double, std::int32_t>(600, 300, 0.05, 11);
  const auto o = FormatOptions().set("beta", "256");  // 256·8 B per thread: no shared window
  for (const char* name : {"gcsb", "gcsb-atomic"})
    for (bool t : {false, true})
      block_testing::check_against_reference<double, std::int32_t>(a, name, o, Backend::cuda, t, 2, 0, 11);
  EXPECT_THROW(Matrix<double>::build(a, "gcsb-det", Backend::cuda, o), UnsupportedError);
}

#if SPMAT_WITH_CUDA
/// Runs op 100 times on the GPU and asserts every result is bitwise equal to the first.
template <class V>
void expect_bitwise_repeatable(const Matrix<V>& m, bool transposed, V beta) {
  const std::int64_t nx = transposed ? m.rows() : m.cols(), ny = transposed ? m.cols() : m.rows();
  cuda::DeviceBuffer<V> dx(testing::random_vector<V>(nx, 21));
  const auto y0 = testing::random_vector<V>(ny, 22);
  cuda::DeviceBuffer<V> dy(ny);
  std::vector<V> first;
  for (int run = 0; run < 100; ++run) {
    dy.upload(y0);
    if (transposed) m.spmv_t(dx.span(), dy.span(), V(1), beta);
    else m.spmv(dx.span(), dy.span(), V(1), beta);
    const auto y = dy.download();
    if (run == 0) first = y;
    ASSERT_EQ(std::memcmp(y.data(), first.data(), y.size() * sizeof(V)), 0)
        << (transposed ? "spmv_t" : "spmv") << " differs at run " << run;
  }
}
#endif

TEST(Gcsb, GpuDeterministicModeIsBitwiseIdenticalOver100Runs) {
  SPMAT_SKIP_WITHOUT_GPU();
#if SPMAT_WITH_CUDA
  // Many blocks per block row and column (several plan items per window), real-valued data.
  const auto a = block_testing::random_csr<float, std::int32_t>(3000, 2500, 0.05, 5);
  const auto m = Matrix<float>::build(a, "gcsb-det", Backend::cuda);
  ASSERT_TRUE(m.format().caps.cuda.deterministic_spmv_t);
  expect_bitwise_repeatable(m, true, 0.0f);
  expect_bitwise_repeatable(m, false, 0.0f);
  expect_bitwise_repeatable(m, true, 0.5f);
  const auto d = Matrix<double>::build(convert<double, std::int64_t>(a), "gcsb-det", Backend::cuda);
  expect_bitwise_repeatable(d, true, 0.0);
  expect_bitwise_repeatable(d, false, 0.0);
  // Forced splits (second pass in item order) and narrow items, both precisions and ops.
  for (const char* shape : {"1", "8", "8r"}) {
    auto o = FormatOptions().set("lanes", shape[0] == '8' ? "8" : "1").set("blocks_per_lane", "1");
    if (shape[1] == 'r') o.set("plan_form", "runs").set("block_lanes", "4");  // runs + block lanes
    const auto ms = Matrix<float>::build(a, "gcsb-det", Backend::cuda, o);
    expect_bitwise_repeatable(ms, false, 0.0f);
    expect_bitwise_repeatable(ms, true, 0.5f);
    const auto md = Matrix<double>::build(convert<double, std::int64_t>(a), "gcsb-det", Backend::cuda, o);
    expect_bitwise_repeatable(md, false, 0.5);
    expect_bitwise_repeatable(md, true, 0.0);
  }
#endif
}

}  // namespace
}  // namespace spmat
