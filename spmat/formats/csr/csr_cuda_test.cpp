// spmat/formats/csr/csr_cuda_test.cpp — the CUDA CSR kernels (auto, scalar, vector, merge)
// against the fp64 reference: spmv, spmv_t, spmm on ragged, skewed and degenerate matrices;
// and, on the CPU, their host-side plan (row bins, merge-path tiles) with a host model of the
// merge-path tile kernel.
// SPDX-License-Identifier: MIT
//
// GPU tests skip (with the reason) when spmat was built without CUDA or no GPU is present.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/csr/csr.hpp"
#include "spmat/formats/csr/csr_plan.hpp"
#include "spmat/gen/generators.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/kernel_check.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/core/device_memory.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#endif

namespace spmat {
namespace {

TEST(CsrCudaOptions, RejectsAnUnknownThreadsPerRow) {
  Csr<double, std::int32_t> a;
  a.rows = 1;
  a.cols = 1;
  a.row_ptr = {0, 1};
  a.col_idx = {0};
  a.values = {2};
  EXPECT_THROW((void)Matrix<double>::build(a, "csr", Backend::cpu, FormatOptions().set("tpr", "3")),
               ParseError);
  EXPECT_NO_THROW((void)Matrix<double>::build(a, "csr", Backend::cpu, FormatOptions().set("tpr", "8")));
}

using Csr64 = Csr<double, std::int64_t>;
/// The host models plan the merge tiles as for fp32 values, which the large matrices of local
/// columns get the wide tiles for (csr_plan::merge_items_per_thread); their sums stay exact in
/// double.
constexpr std::size_t kModelValueBytes = sizeof(float);

/// Random canonical CSR with the given row lengths (testing::random_csr_of_lengths: exact sums).
/// The lengths f(0), ..., f(rows - 1) of `rows` rows, for random_csr.
template <class LengthOf>
std::vector<std::int64_t> row_lengths(std::int64_t rows, LengthOf&& f) {
  std::vector<std::int64_t> l(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) l[static_cast<std::size_t>(r)] = f(r);
  return l;
}

Csr64 random_csr(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& lengths,
                 std::uint64_t seed) {
  return testing::random_csr_of_lengths(rows, cols, [&](std::int64_t r) { return lengths[r]; }, seed);
}

struct Scenario {
  std::string name;
  Csr64 a;
};

/// Skewed matrices for the binned auto kernel and the merge-path tiles: R-MAT and power-law
/// rows (values ±1..±4, exact sums), every row-length class with each bin and chunk boundary
/// present, a row holding most nonzeros, long stretches of empty rows, rows ending exactly on
/// merge-tile boundaries, and wide rows (32 lanes per row) with many rows just above the
/// medium bin.
const std::vector<Scenario>& skewed_scenarios() {
  static const std::vector<Scenario> all = [] {
    using csr_plan::kMergeTile;
    std::vector<Scenario> v;
    v.push_back({"rmat_scale14_ef16", gen::generate<double, std::int64_t>("gen:rmat:14:16:values=int")});
    v.push_back({"powerlaw_20000_mean16",
                 gen::generate<double, std::int64_t>("gen:powerlaw:20000:16:values=int")});
    // 2·tpr for tpr = 2..32, the medium/long boundary 512, the unbinned long threshold 1024 and
    // the chunk size 4096, each with its neighbours; medium rows every 31st row; empty rows.
    const std::vector<std::int64_t> boundary{0,   1,   2,    3,    4,    5,    7,    8,    9,   15,
                                             16,  17,  31,   32,   33,   63,   64,   65,   511, 512,
                                             513, 1023, 1024, 1025, 4095, 4096, 4097, 8192, 8193};
    v.push_back({"every_row_length_class_3000x9000",
                 random_csr(3000, 9000, row_lengths(3000, [&](std::int64_t r) -> std::int64_t {
                              if (r % 97 == 0 && r / 97 < static_cast<std::int64_t>(boundary.size()))
                                return boundary[r / 97];
                              if (r % 31 == 0) return 40 + r % 50;
                              return r % 5 == 0 ? 0 : r % 7;
                            }), 21)});
    v.push_back({"one_row_holds_most_nonzeros_2000x60000",
                 random_csr(2000, 60000, row_lengths(2000, [](std::int64_t r) -> std::int64_t {
                              return r == 1234 ? 50000 : r % 4;
                            }), 22)});
    v.push_back({"empty_stretches_6000x500",
                 random_csr(6000, 500, row_lengths(6000, [](std::int64_t r) -> std::int64_t {
                              if (r < 2000 || r >= 4000) return 0;
                              return r % 13 == 0 ? 300 : r % 9;
                            }), 23)});
    v.push_back({"rows_ending_on_merge_tile_boundaries_40x2000",
                 random_csr(40, 2000, row_lengths(40, [](std::int64_t) -> std::int64_t {
                              return kMergeTile - 1;  // + its row end = one tile
                            }), 24)});
    v.push_back({"rows_one_merge_tile_long_30x3000",
                 random_csr(30, 3000, row_lengths(30, [](std::int64_t) -> std::int64_t {
                              return kMergeTile;
                            }), 25)});
    v.push_back({"single_row_1x3000",
                 random_csr(1, 3000, std::vector<std::int64_t>{3000}, 26)});
    v.push_back({"wide_rows_500x30000",
                 random_csr(500, 30000, row_lengths(500, [](std::int64_t r) -> std::int64_t {
                              return r % 50 == 0 ? 25000 : 400 + (r * 37) % 600;
                            }), 27)});
    // Few rows (a warp each) with rows of 600-980 nonzeros every 100th: the spmv sends them to
    // blocks of one chunk each, the spmv_t keeps them in the sub-warp kernel.
    v.push_back({"few_rows_with_rows_past_sixteen_warp_steps_2000x3000",
                 random_csr(2000, 3000, row_lengths(2000, [](std::int64_t r) -> std::int64_t {
                              return r % 100 == 0 ? 600 + (r / 100) * 20 : r % 40;
                            }), 28)});
    return v;
  }();
  return all;
}

TEST(CsrCudaOptions, RejectsAnUnknownBinsMode) {
  const auto& a = skewed_scenarios()[7].a;  // single_row_1x3000
  EXPECT_THROW((void)Matrix<double>::build(a, "csr", Backend::cpu,
                                           FormatOptions().set("bins", "sometimes")),
               ParseError);
  for (const char* b : {"auto", "on", "off"})
    EXPECT_NO_THROW((void)Matrix<double>::build(a, "csr", Backend::cpu, FormatOptions().set("bins", b)))
        << b;
}

/// A 3×2^31 matrix (one column more than 32-bit column indices hold) with a handful of
/// nonzeros, the last one in the last column: cheap to build, too wide for narrow_cols=on.
template <class Value>
Csr<Value, std::int64_t> wider_than_int32_columns() {
  Csr<Value, std::int64_t> a;
  a.rows = 3;
  a.cols = std::int64_t{1} << 31;
  a.row_ptr = {0, 2, 2, 5};
  a.col_idx = {0, 7, 1, (std::int64_t{1} << 30), a.cols - 1};
  a.values = {1, 2, 3, 4, 5};
  return a;
}

TEST(CsrCudaOptions, NarrowColsTakesAutoOnOffAndRejectsOtherValues) {
  const struct {
    const char* text;
    CsrNarrowCols mode;
  } modes[] = {{"auto", CsrNarrowCols::automatic}, {"on", CsrNarrowCols::on}, {"off", CsrNarrowCols::off}};
  EXPECT_EQ(CsrOptions{}.narrow_cols, CsrNarrowCols::automatic);
  for (const auto& m : modes)
    EXPECT_EQ(parse_options<CsrOptions>(FormatOptions().set("narrow_cols", m.text)).narrow_cols, m.mode)
        << m.text;
  const auto& a = skewed_scenarios()[7].a;  // single_row_1x3000
  EXPECT_THROW((void)Matrix<double>::build(a, "csr", Backend::cpu,
                                           FormatOptions().set("narrow_cols", "32")),
               ParseError);
  // The CPU backend ignores it, even where the GPU would refuse narrow_cols=on.
  const auto wide = wider_than_int32_columns<double>();
  for (const auto& m : modes) {
    EXPECT_NO_THROW((void)Matrix<double>::build(a, "csr", Backend::cpu,
                                                FormatOptions().set("narrow_cols", m.text)))
        << m.text;
    const auto w = Matrix<double>::build(wide, "csr", Backend::cpu,
                                         FormatOptions().set("narrow_cols", m.text));
    EXPECT_EQ(w.to_csr(), wide) << m.text;
  }
}

std::int64_t row_len(const Csr64& a, std::int64_t r) { return a.row_ptr[r + 1] - a.row_ptr[r]; }
std::int64_t max_row_len(const Csr64& a) {
  std::int64_t m = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) m = std::max(m, row_len(a, r));
  return m;
}

/// Every row is owned by exactly one SpMV kernel of the plan (sub-warp: length <= short_max;
/// the medium list; the long list), and the chunks of each long row cover it once, in order.
void expect_rows_partitioned(const Csr64& a, const csr_plan::RowPlan& p) {
  std::vector<int> owners(static_cast<std::size_t>(a.rows), 0);
  for (std::int64_t r = 0; r < a.rows; ++r)
    if (row_len(a, r) <= p.short_max) ++owners[r];
  if (!p.binned) {
    EXPECT_TRUE(p.medium_rows.empty());
    EXPECT_EQ(p.short_max, p.long_threshold);
  }
  EXPECT_TRUE(std::is_sorted(p.medium_rows.begin(), p.medium_rows.end()));
  EXPECT_TRUE(std::is_sorted(p.long_rows.begin(), p.long_rows.end()));
  for (std::int64_t r : p.medium_rows) {
    ++owners[r];
    EXPECT_GT(row_len(a, r), p.short_max);
    EXPECT_LE(row_len(a, r), csr_plan::kWarpRowMax);
  }
  ASSERT_EQ(p.long_chunk_ptr.size(), p.long_rows.size() + 1);
  ASSERT_EQ(p.chunk_row.size(), p.chunk_begin.size());
  EXPECT_EQ(p.long_chunk_ptr.back(), static_cast<std::int64_t>(p.chunk_row.size()));
  for (std::size_t l = 0; l < p.long_rows.size(); ++l) {
    const std::int64_t r = p.long_rows[l];
    ++owners[r];
    EXPECT_GT(row_len(a, r), p.long_threshold);
    std::int64_t next = a.row_ptr[r];
    for (std::int64_t c = p.long_chunk_ptr[l]; c < p.long_chunk_ptr[l + 1]; ++c) {
      EXPECT_EQ(p.chunk_row[c], r);
      EXPECT_EQ(p.chunk_begin[c], next);
      next += p.chunk;
    }
    EXPECT_GE(next, a.row_ptr[r + 1]);
    EXPECT_LT(next - p.chunk, a.row_ptr[r + 1]);
  }
  for (std::int64_t r = 0; r < a.rows; ++r) ASSERT_EQ(owners[r], 1) << "row " << r << " length " << row_len(a, r);
}

csr_plan::RowPlan auto_plan(const Csr64& a, int tpr = 0, CsrBins bins = CsrBins::automatic) {
  return csr_plan::plan_rows(a.rows, a.row_ptr.data(), CsrKernel::automatic, tpr, bins);
}

TEST(CsrCudaPlan, RegularMatricesKeepTheUnbinnedAutoKernel) {
  // G3_circuit-like: 4–6 entries per row, mean about 4.8.
  const Csr64 circuit = random_csr(20000, 20000, row_lengths(20000, [](std::int64_t r) {
    return 4 + (r % 5 == 0) + (r % 7 == 0 ? 1 : 0);
  }), 31);
  const std::vector<std::pair<std::string, Csr64>> regular{
      {"lap2d:100", gen::generate<double, std::int64_t>("gen:lap2d:100")},
      {"lap3d:20", gen::generate<double, std::int64_t>("gen:lap3d:20")},
      {"banded:20000:8", gen::generate<double, std::int64_t>("gen:banded:20000:8")},
      {"random_k:20000:16", gen::generate<double, std::int64_t>("gen:random_k:20000:16")},
      {"lap3d27:12", gen::generate<double, std::int64_t>("gen:lap3d27:12")},
      {"g3_circuit_like", circuit},
      {"one_row_holds_most_nonzeros", skewed_scenarios()[3].a},  // a long row, no medium rows
  };
  for (const auto& [name, a] : regular) {
    SCOPED_TRACE(name);
    const auto p = auto_plan(a), off = auto_plan(a, 0, CsrBins::off);
    EXPECT_FALSE(p.binned);
    EXPECT_EQ(p.kernel, off.kernel);
    EXPECT_EQ(p.tpr, off.tpr);
    EXPECT_EQ(p.short_max, off.short_max);
    EXPECT_EQ(p.long_threshold, off.long_threshold);
    EXPECT_EQ(p.long_rows, off.long_rows);
    EXPECT_EQ(p.chunk_begin, off.chunk_begin);
    expect_rows_partitioned(a, p);
  }
  // The stencils and the circuit keep the scalar kernel, the others the sub-warp kernel.
  EXPECT_EQ(auto_plan(regular[0].second).kernel, CsrKernel::scalar);
  EXPECT_EQ(auto_plan(regular[5].second).kernel, CsrKernel::scalar);
  EXPECT_EQ(auto_plan(regular[2].second).kernel, CsrKernel::automatic);
  // Short rows but few of them: a warp per row, not the scalar kernel.
  const Csr64 few = random_csr(1000, 1000, row_lengths(1000, [](std::int64_t r) { return 2 + r % 5; }), 7);
  const auto pf = auto_plan(few);
  EXPECT_EQ(pf.kernel, CsrKernel::automatic);
  EXPECT_EQ(pf.tpr, 32);
}

TEST(CsrCudaPlan, LanesPerRowHalveFromEightUpWhenTheRowsFillTheGpuTwice) {
  using csr_plan::threads_per_row;
  // A warp per row while rows × 32 fit in kFewThreads (latency-bound) ...
  EXPECT_EQ(threads_per_row(1000, 3600), 32);
  EXPECT_EQ(threads_per_row(csr_plan::kFewThreads / 32, csr_plan::kFewThreads / 8), 32);
  // ... the largest power of two <= the mean while the matrix is small ...
  EXPECT_EQ(threads_per_row(csr_plan::kFewThreads / 32 + 1, 4 * (csr_plan::kFewThreads / 32 + 1)), 4);
  EXPECT_EQ(threads_per_row(10000, 170000), 16);
  EXPECT_EQ(threads_per_row(10000, 90000), 8);
  EXPECT_EQ(threads_per_row(10000, 50000), 4);
  EXPECT_EQ(threads_per_row(10000, 1000000), 32);
  // ... halved once rows x the halved lanes reach kManyThreads ...
  EXPECT_EQ(threads_per_row(2000000, 32000000), 8);   // 16 per row: no lane idles at 8
  // ... and 8 lanes once more to 4 when a mean row idles far fewer lanes at 4 ...
  EXPECT_EQ(threads_per_row(1000000, 17000000), 4);   // banded, 17 per row: 7/24 vs 3/20 idle
  EXPECT_EQ(threads_per_row(120000000, 2280000000), 4);  // 19 per row: 5/24 vs 1/20
  EXPECT_EQ(threads_per_row(2000000, 18000000), 4);   // 9 per row
  EXPECT_EQ(threads_per_row(100000, 5000000), 16);    // 50 per row: 32 -> 16
  const std::int64_t rows = csr_plan::kManyThreads / 8;  // exactly enough rows at 8 lanes
  EXPECT_EQ(threads_per_row(rows, 16 * rows), 8);
  EXPECT_EQ(threads_per_row(rows - 1, 16 * (rows - 1)), 16);
  // ... but never below 4 from the halving (short rows keep their 2 or 4 lanes).
  EXPECT_EQ(threads_per_row(4000000, 20000000), 4);  // lap2d-like, mean 5
  EXPECT_EQ(threads_per_row(4000000, 12000000), 2);
}

TEST(CsrCudaPlan, LongRowChunksShrinkWhileTheLongRowsAreFew) {
  // One long row of 20,000 entries among short ones: 5 chunks of 4096 would leave the GPU
  // idle, so the chunks shrink to the smallest size; a matrix of few rows keeps chunks of
  // kFewRowsMinChunk.
  for (const std::int64_t rows : {6000, 3000}) {
    SCOPED_TRACE(rows);
    std::vector<std::int64_t> lens(static_cast<std::size_t>(rows), 4);
    lens[17] = 20000;
    const Csr64 few = random_csr(rows, 30000, lens, 5);
    const auto p = auto_plan(few);
    ASSERT_EQ(p.long_rows.size(), 1u);
    EXPECT_EQ(p.chunk, csr_plan::few_rows(rows) ? csr_plan::kFewRowsMinChunk : csr_plan::kMinChunk);
    EXPECT_EQ(static_cast<std::int64_t>(p.chunk_row.size()), (20000 + p.chunk - 1) / p.chunk);
    expect_rows_partitioned(few, p);
  }
  // Long rows that make kTargetChunks chunks of kChunk keep kChunk (row offsets only: a
  // million one-entry rows, then 32 rows of 64 chunks each).
  const std::int64_t per_row = 64 * csr_plan::kChunk, n_long = csr_plan::kTargetChunks / 64;
  const std::int64_t n_short = 1000000, rows = n_short + n_long;
  std::vector<std::int64_t> row_ptr(static_cast<std::size_t>(rows) + 1);
  for (std::int64_t r = 1; r <= rows; ++r)
    row_ptr[static_cast<std::size_t>(r)] = row_ptr[static_cast<std::size_t>(r - 1)] + (r <= n_short ? 1 : per_row);
  const auto q = csr_plan::plan_rows(rows, row_ptr.data(), CsrKernel::automatic, 0, CsrBins::off);
  EXPECT_EQ(static_cast<std::int64_t>(q.long_rows.size()), n_long);
  EXPECT_EQ(q.chunk, csr_plan::kChunk);
  EXPECT_EQ(static_cast<std::int64_t>(q.chunk_row.size()), csr_plan::kTargetChunks);
}

TEST(CsrCudaPlan, SkewedMatricesGetRowBins) {
  for (const char* name : {"rmat_scale14_ef16", "powerlaw_20000_mean16", "empty_stretches_6000x500"}) {
    SCOPED_TRACE(name);
    const auto it = std::find_if(skewed_scenarios().begin(), skewed_scenarios().end(),
                                 [&](const Scenario& s) { return s.name == name; });
    ASSERT_NE(it, skewed_scenarios().end());
    const auto p = auto_plan(it->a);
    EXPECT_EQ(p.kernel, CsrKernel::automatic);
    EXPECT_TRUE(p.binned);
    EXPECT_EQ(p.long_threshold, csr_plan::kWarpRowMax);
    EXPECT_LT(p.tpr, 32);
    EXPECT_EQ(p.short_max, 2 * p.tpr);
    EXPECT_FALSE(p.medium_rows.empty());
    expect_rows_partitioned(it->a, p);
  }
  // Few rows (a warp each): rows up to kWarpRowMax stay in the sub-warp kernel and the longer
  // ones go to chunks without bins, which would send the same rows to the same kernels.
  for (const char* name : {"every_row_length_class_3000x9000", "wide_rows_500x30000"}) {
    SCOPED_TRACE(name);
    const auto few = std::find_if(skewed_scenarios().begin(), skewed_scenarios().end(),
                                  [&](const Scenario& s) { return s.name == name; });
    ASSERT_NE(few, skewed_scenarios().end());
    ASSERT_TRUE(csr_plan::few_rows(few->a.rows));
    const auto p = auto_plan(few->a);
    EXPECT_EQ(p.kernel, CsrKernel::automatic);
    EXPECT_EQ(p.tpr, 32);
    EXPECT_FALSE(p.binned);
    EXPECT_EQ(p.long_threshold, csr_plan::kWarpRowMax);
    EXPECT_FALSE(p.long_rows.empty());
    expect_rows_partitioned(few->a, p);
  }
}

TEST(CsrCudaPlan, FewRowsSendRowsPastSixteenWarpStepsToBlocks) {
  // Many rows: 32× the mean, at least 1024. Few rows: kWarpRowMax, whatever the mean.
  EXPECT_EQ(csr_plan::long_row_threshold(1000000, 10000000), 1024);
  EXPECT_EQ(csr_plan::long_row_threshold(100000, 5000000), 32 * 50);
  EXPECT_EQ(csr_plan::long_row_threshold(4096, 4096 * 44), csr_plan::kWarpRowMax);
  EXPECT_EQ(csr_plan::long_row_threshold(4096, 4096 * 200), csr_plan::kWarpRowMax);
  EXPECT_EQ(csr_plan::long_row_threshold(1, 300000), csr_plan::kWarpRowMax);
  EXPECT_EQ(csr_plan::warp_row_threshold(4096, 4096 * 44), 32 * 44);
  EXPECT_EQ(csr_plan::t_whole_row_max(4096, 4096 * 44), 32 * 44);
  EXPECT_EQ(csr_plan::t_whole_row_max(64, 64 * 8000), csr_plan::kFewRowsMinChunk);

  const auto named = [](const char* name) {
    return std::find_if(skewed_scenarios().begin(), skewed_scenarios().end(),
                        [&](const Scenario& s) { return s.name == name; });
  };
  const auto it = named("few_rows_with_rows_past_sixteen_warp_steps_2000x3000");
  ASSERT_NE(it, skewed_scenarios().end());
  ASSERT_TRUE(csr_plan::few_rows(it->a.rows));
  const auto p = auto_plan(it->a);
  EXPECT_EQ(p.tpr, 32);
  EXPECT_FALSE(p.binned);
  EXPECT_EQ(p.long_threshold, csr_plan::kWarpRowMax);
  EXPECT_EQ(p.long_rows.size(), 20u);       // rows 0, 100, ..., 1900
  EXPECT_EQ(p.chunk_row.size(), 20u);       // one chunk each
  EXPECT_TRUE(p.t_whole_rows);              // all within warp_row_threshold
  expect_rows_partitioned(it->a, p);

  // A few-row matrix with a row past warp_row_threshold keeps its chunks in spmv_t too.
  const auto every = named("every_row_length_class_3000x9000");
  ASSERT_NE(every, skewed_scenarios().end());
  const auto q = auto_plan(every->a);
  EXPECT_FALSE(q.long_rows.empty());
  EXPECT_FALSE(q.t_whole_rows);

  // Few rows that are (nearly) all long: every row past kWarpRowMax is chunked however large the
  // mean (a warp would walk each for hundreds of steps), and spmv_t takes the chunks for rows
  // past kFewRowsMinChunk.
  for (const char* name : {"single_row_1x3000", "rows_one_merge_tile_long_30x3000", "wide_rows_500x30000"}) {
    const auto all = named(name);
    ASSERT_NE(all, skewed_scenarios().end()) << name;
    const auto r = auto_plan(all->a);
    EXPECT_EQ(r.long_threshold, csr_plan::kWarpRowMax) << name;
    std::int64_t longer = 0;
    for (std::int64_t row = 0; row < all->a.rows; ++row) longer += row_len(all->a, row) > csr_plan::kWarpRowMax;
    EXPECT_EQ(static_cast<std::int64_t>(r.long_rows.size()), longer) << name;
    EXPECT_GE(longer * 10, all->a.rows * 8) << name;  // most rows are long
    EXPECT_EQ(r.t_whole_rows, max_row_len(all->a) <= csr_plan::kFewRowsMinChunk) << name;
    expect_rows_partitioned(all->a, r);
  }
}

/// Row lengths of a large skewed matrix (row offsets only): 2^20 rows of 6 entries, every 64th
/// row of 200 (medium rows the bins move off the sub-warp kernel), `scale` times fewer rows.
std::vector<std::int64_t> large_skewed_row_ptr(std::int64_t scale) {
  const std::int64_t rows = (std::int64_t(1) << 20) / scale;
  std::vector<std::int64_t> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
  for (std::int64_t r = 0; r < rows; ++r)
    row_ptr[static_cast<std::size_t>(r) + 1] = row_ptr[static_cast<std::size_t>(r)] + (r % 64 == 0 ? 200 : 6);
  return row_ptr;
}

TEST(CsrCudaPlan, LargeSkewedMatricesRunTheirSpmvOnTheMergePath) {
  const auto big = large_skewed_row_ptr(1);
  const std::int64_t rows = static_cast<std::int64_t>(big.size()) - 1;
  ASSERT_GE(big.back(), csr_plan::kMergeSpmvMinNnz);
  const auto p = csr_plan::plan_rows(rows, big.data(), CsrKernel::automatic, 0, CsrBins::automatic);
  EXPECT_TRUE(p.binned);
  EXPECT_TRUE(p.merge_spmv);
  EXPECT_FALSE(p.medium_rows.empty());  // spmv_t keeps the binned lists
  // Forced bins, another kernel, or fewer nonzeros: the binned spmv stays.
  EXPECT_FALSE(csr_plan::plan_rows(rows, big.data(), CsrKernel::automatic, 0, CsrBins::on).merge_spmv);
  EXPECT_FALSE(csr_plan::plan_rows(rows, big.data(), CsrKernel::vector, 0, CsrBins::automatic).merge_spmv);
  const auto small = large_skewed_row_ptr(4);
  ASSERT_LT(small.back(), csr_plan::kMergeSpmvMinNnz);
  const auto q = csr_plan::plan_rows(static_cast<std::int64_t>(small.size()) - 1, small.data(),
                                     CsrKernel::automatic, 0, CsrBins::automatic);
  EXPECT_TRUE(q.binned);
  EXPECT_FALSE(q.merge_spmv);
}

TEST(CsrCudaPlan, RowListsDoNotDependOnTheThreadCount) {
  // plan_rows fills its lists from per-thread row ranges: any thread count gives the lists a
  // serial pass makes (ascending rows), so device and host builds plan the same bytes.
  const int saved = omp_get_max_threads();
  for (const auto& sc : skewed_scenarios()) {
    SCOPED_TRACE(sc.name);
    omp_set_num_threads(1);
    const auto one = auto_plan(sc.a);
    for (int threads : {2, 3, 7}) {
      omp_set_num_threads(threads);
      const auto p = auto_plan(sc.a);
      EXPECT_EQ(p.medium_rows, one.medium_rows) << threads << " threads";
      EXPECT_EQ(p.long_rows, one.long_rows) << threads << " threads";
      EXPECT_EQ(p.long_chunk_ptr, one.long_chunk_ptr) << threads << " threads";
      EXPECT_EQ(p.chunk_row, one.chunk_row) << threads << " threads";
      EXPECT_EQ(p.chunk_begin, one.chunk_begin) << threads << " threads";
      EXPECT_EQ(p.max_len, one.max_len) << threads << " threads";
      EXPECT_EQ(p.chunk, one.chunk) << threads << " threads";
    }
  }
  omp_set_num_threads(saved);
}

TEST(CsrCudaPlan, EveryRowIsOwnedByExactlyOneKernelForEveryOption) {
  for (const auto& sc : skewed_scenarios()) {
    for (CsrKernel k : {CsrKernel::automatic, CsrKernel::scalar, CsrKernel::vector, CsrKernel::merge})
      for (CsrBins b : {CsrBins::automatic, CsrBins::on, CsrBins::off})
        for (int tpr : {0, 2, 4, 8, 16, 32}) {
          SCOPED_TRACE(sc.name + " kernel " + std::to_string(static_cast<int>(k)) + " bins " +
                       std::to_string(static_cast<int>(b)) + " tpr " + std::to_string(tpr));
          const auto p = csr_plan::plan_rows(sc.a.rows, sc.a.row_ptr.data(), k, tpr, b);
          if (k != CsrKernel::automatic || b == CsrBins::off) {
            EXPECT_FALSE(p.binned);
          }
          if (k == CsrKernel::automatic && b == CsrBins::on) {
            EXPECT_TRUE(p.binned);
            EXPECT_EQ(p.kernel, CsrKernel::automatic);  // bins=on never picks the scalar kernel
          }
          if (tpr > 0) EXPECT_EQ(p.tpr, tpr);
          expect_rows_partitioned(sc.a, p);
        }
  }
  // Degenerate shapes.
  for (std::int64_t rows : {0, 1, 5}) {
    const Csr64 empty = random_csr(rows, 3, std::vector<std::int64_t>(rows, 0), 1);
    for (CsrBins b : {CsrBins::automatic, CsrBins::on, CsrBins::off}) {
      const auto p = csr_plan::plan_rows(empty.rows, empty.row_ptr.data(), CsrKernel::automatic, 0, b);
      expect_rows_partitioned(empty, p);
      EXPECT_TRUE(p.long_rows.empty());
      EXPECT_TRUE(p.medium_rows.empty());
    }
  }
}

TEST(CsrCudaPlan, RegularMatricesArePlannedFromTheLongestRowAlone) {
  // The device build plans these from one reduction (the longest row): the plan must need no
  // row list, partition the rows like plan_rows' and equal it.
  for (const char* spec : {"gen:lap2d:60", "gen:random_k:3000:16", "gen:banded:4000:8",
                           "gen:random_k:500:40", "gen:lap3d:12"}) {
    const Csr64 a = gen::generate<double, std::int64_t>(spec);
    const std::int64_t max_len = max_row_len(a);
    for (CsrKernel k : {CsrKernel::automatic, CsrKernel::scalar, CsrKernel::vector})
      for (int tpr : {0, 4, 32}) {
        SCOPED_TRACE(std::string(spec) + " kernel " + std::to_string(static_cast<int>(k)) +
                     " tpr " + std::to_string(tpr));
        const auto q = csr_plan::plan_rows_without_lists(a.rows, a.nnz(), max_len, k, tpr,
                                                         CsrBins::automatic);
        ASSERT_TRUE(q.has_value());
        EXPECT_TRUE(q->medium_rows.empty());
        EXPECT_TRUE(q->long_rows.empty());
        expect_rows_partitioned(a, *q);
        const auto p = csr_plan::plan_rows(a.rows, a.row_ptr.data(), k, tpr, CsrBins::automatic);
        EXPECT_EQ(p.kernel, q->kernel);
        EXPECT_EQ(p.tpr, q->tpr);
        EXPECT_EQ(p.short_max, q->short_max);
        EXPECT_EQ(p.long_threshold, q->long_threshold);
        EXPECT_EQ(p.chunk, q->chunk);
        EXPECT_EQ(p.binned, q->binned);
      }
  }
  // Rows to bin or chunk need the row lengths: no plan from the longest row alone.
  for (const auto& sc : skewed_scenarios()) {
    const std::int64_t max_len = max_row_len(sc.a);
    const auto p = csr_plan::plan_rows(sc.a.rows, sc.a.row_ptr.data(), CsrKernel::automatic, 0,
                                       CsrBins::automatic);
    if (p.binned || !p.long_rows.empty()) {
      SCOPED_TRACE(sc.name);
      EXPECT_FALSE(csr_plan::plan_rows_without_lists(sc.a.rows, sc.a.nnz(), max_len,
                                                     CsrKernel::automatic, 0, CsrBins::automatic));
    }
  }
}

/// Row coordinate of every diagonal of the merge path, by walking it one item at a time.
std::vector<std::int64_t> brute_force_path_rows(const Csr64& a) {
  std::vector<std::int64_t> at;
  std::int64_t row = 0, nz = 0;
  const std::int64_t total = a.rows + a.nnz();
  for (std::int64_t d = 0; d <= total; ++d) {
    at.push_back(row);
    if (d == total) break;
    if (row < a.rows && a.row_ptr[row + 1] <= nz)
      ++row;  // the row end comes first when the row has no nonzero left
    else
      ++nz;
  }
  return at;
}

TEST(CsrCudaPlan, MergeTilesCutThePathWhereAWalkAlongItDoes) {
  std::vector<Scenario> small;
  small.push_back({"ragged", random_csr(300, 50, row_lengths(300, [](std::int64_t r) {
                     return r % 4 == 0 ? 0 : (r * 7) % 23;
                   }), 41)});
  small.push_back({"empty_rows_only", random_csr(50, 5, std::vector<std::int64_t>(50, 0), 42)});
  for (const auto& sc : skewed_scenarios())
    if (sc.a.nnz() < 100000) small.push_back(sc);
  for (const auto& sc : small) {
    SCOPED_TRACE(sc.name);
    const auto& a = sc.a;
    const auto at = brute_force_path_rows(a);
    for (std::int64_t d = 0; d < static_cast<std::int64_t>(at.size()); ++d)
      ASSERT_EQ(csr_plan::merge_path_row(d, a.row_ptr.data() + 1, a.rows, a.nnz()), at[d]) << d;
    const auto m =
        csr_plan::plan_merge(a.rows, a.nnz(), a.row_ptr.data(), a.col_idx.data(), kModelValueBytes);
    ASSERT_EQ(m.ipt, csr_plan::kMergeIpt);  // below kMergeWideMinNnz
    const std::int64_t total = a.rows + a.nnz();
    ASSERT_EQ(m.n_tiles, (total + csr_plan::kMergeTile - 1) / csr_plan::kMergeTile);
    ASSERT_EQ(m.tile_row.size(), static_cast<std::size_t>(m.n_tiles) + 1);
    for (std::int64_t b = 0; b <= m.n_tiles; ++b)
      EXPECT_EQ(m.tile_row[b], at[std::min(b * csr_plan::kMergeTile, total)]) << b;
    const std::int64_t max_len = max_row_len(a);
    ASSERT_EQ(m.owner, csr_plan::merge_owner_completes(a.rows, a.nnz(), max_len));
    EXPECT_EQ(m.skewed, static_cast<double>(max_len) > csr_plan::kSkewMaxOverMean *
                                                           static_cast<double>(a.nnz()) / static_cast<double>(a.rows));
    if (m.owner) {
      // Each row belongs to the tile holding its first merge item, diagonal row_ptr[r] + r.
      EXPECT_TRUE(m.fix_tile.empty());
      ASSERT_EQ(m.tile_own.size(), static_cast<std::size_t>(m.n_tiles));
      auto owner_of = [&](std::int64_t r) { return (a.row_ptr[r] + r) / csr_plan::kMergeTile; };
      for (std::int64_t b = 0; b < m.n_tiles; ++b) {
        const std::int64_t row0 = m.tile_row[b], row1 = m.tile_row[b + 1];
        std::int32_t want = owner_of(row0) != b ? csr_plan::kTileSkipsFirstRow : 0;
        if (row1 < a.rows && owner_of(row1) == b) {
          const std::int64_t nz1 = std::min((b + 1) * csr_plan::kMergeTile, total) - row1;
          want |= csr_plan::kTileCompletesLastRow |
                  static_cast<std::int32_t>((a.row_ptr[row1 + 1] - nz1) << csr_plan::kTilePastEndShift);
        }
        EXPECT_EQ(m.tile_own[b], want) << "tile " << b;
      }
      continue;
    }
    EXPECT_TRUE(m.tile_own.empty());
    // Wide fix-ups: exactly the tiles finishing a row whose carries span > kMaxShortFix tiles.
    std::vector<std::int64_t> want_tile, want_first;
    for (std::int64_t t = 1; t < m.n_tiles; ++t) {
      if (m.tile_row[t + 1] == m.tile_row[t]) continue;
      std::int64_t first = t - 1;
      while (first > 0 && m.tile_row[first] == m.tile_row[t]) --first;
      if (t - first > csr_plan::kMaxShortFix) {
        want_tile.push_back(t);
        want_first.push_back(first);
      }
    }
    EXPECT_EQ(m.fix_tile, want_tile);
    EXPECT_EQ(m.fix_first, want_first);
  }
}

/// Host model of csr_merge_tile_kernel and the two fix-up kernels (csr_cuda.cu): the same tile
/// plan, the same staging, per-thread search and walk, the block's segmented sum in thread
/// order and the same completion rule (owner tiles, or carries and fix-ups), for y = A·x.
/// `writes` counts the stores of each row (the kernels must store every row exactly once).
/// Carries and heads start as NaN so that reading one that was never written shows in y.
struct MergeModel {
  std::vector<double> y;
  std::vector<int> writes;
  std::int64_t wide_fixups = 0;
  bool owner = false;
  std::int64_t past_end = 0;  ///< owner completion: nonzeros read past their tile's end
};

MergeModel model_merge_spmv(const Csr64& a, const std::vector<double>& x) {
  using namespace csr_plan;
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  const std::int64_t rows = a.rows, nnz = a.nnz(), total = rows + nnz;
  MergeModel out{std::vector<double>(rows, kNan), std::vector<int>(rows, 0), 0};
  const MergePlan m = plan_merge(rows, nnz, a.row_ptr.data(), a.col_idx.data(), kModelValueBytes);
  out.owner = m.owner;
  EXPECT_EQ(m.tile_own.size(), m.owner ? static_cast<std::size_t>(m.n_tiles) : 0u);
  if (m.owner) EXPECT_TRUE(m.fix_tile.empty());
  const std::int64_t tile = static_cast<std::int64_t>(kMergeBlock) * m.ipt;
  std::vector<double> carry(m.n_tiles, kNan), head(m.n_tiles, kNan);
  auto store = [&](std::int64_t r, double v) {
    out.y[r] = v;
    ++out.writes[r];
  };
  for (std::int64_t b = 0; b < m.n_tiles; ++b) {
    const std::int64_t d0 = b * tile, d1 = std::min<std::int64_t>(d0 + tile, total);
    const std::int64_t row0 = m.tile_row[b], row1 = m.tile_row[b + 1], nz0 = d0 - row0;
    const int nr = static_cast<int>(row1 - row0), nzl = static_cast<int>((d1 - row1) - nz0);
    const int items = static_cast<int>(d1 - d0);
    EXPECT_EQ(items, nr + nzl);
    std::vector<int> row_end(static_cast<std::size_t>(nr) + 1);
    std::vector<double> prod(static_cast<std::size_t>(nzl));
    for (int j = 0; j < nzl; ++j) prod[j] = a.values[nz0 + j] * x[a.col_idx[nz0 + j]];
    for (int i = 0; i <= nr; ++i) row_end[i] = i < nr ? static_cast<int>(a.row_ptr[row0 + i + 1] - nz0) : nzl;
    std::vector<int> key(kMergeBlock), first(kMergeBlock);
    std::vector<double> part(kMergeBlock), hd(kMergeBlock);
    std::vector<char> has_head(kMergeBlock, 0);
    for (int tid = 0; tid < kMergeBlock; ++tid) {
      const int dl = std::min(tid * m.ipt, items), dl_end = std::min(dl + m.ipt, items);
      int k = static_cast<int>(merge_path_row(dl, row_end.data(), nr, nzl));
      int j = dl - k;
      first[tid] = k;
      double s = 0;
      for (int d = dl; d < dl_end; ++d) {
        EXPECT_LE(k, nr);
        if (j < row_end[k]) {
          s += prod[j++];
        } else {
          if (k == first[tid]) {
            hd[tid] = s;
            has_head[tid] = 1;
          } else {
            store(row0 + k, s);
          }
          s = 0;
          ++k;
        }
      }
      key[tid] = k;
      part[tid] = s;
    }
    std::vector<double> scan(kMergeBlock);
    for (int tid = 0; tid < kMergeBlock; ++tid) {
      if (tid > 0) EXPECT_EQ(key[tid - 1], first[tid]);  // what the head sum relies on
      scan[tid] = part[tid] + (tid > 0 && key[tid - 1] == key[tid] ? scan[tid - 1] : 0.0);
    }
    const std::int32_t own = m.owner ? m.tile_own[b] : 0;
    for (int tid = 0; tid < kMergeBlock; ++tid) {
      if (!has_head[tid]) continue;
      const double sum = tid > 0 ? scan[tid - 1] + hd[tid] : hd[tid];
      if (first[tid] != 0 || b == 0)
        store(row0 + first[tid], sum);
      else if (!m.owner)
        head[b] = sum;
      else if (!(own & kTileSkipsFirstRow))
        store(row0, sum);
    }
    EXPECT_EQ(key[kMergeBlock - 1], nr);
    if (own & kTileCompletesLastRow) {
      const std::int64_t nz1 = nz0 + nzl, n_past = own >> kTilePastEndShift;
      EXPECT_LT(row1, rows);
      EXPECT_EQ(nz1 + n_past, a.row_ptr[row1 + 1]);  // to the end of the row
      double past = 0;
      for (std::int64_t i = 0; i < n_past; ++i) past += a.values[nz1 + i] * x[a.col_idx[nz1 + i]];
      store(row1, scan[kMergeBlock - 1] + past);
      out.past_end += n_past;
    } else if (!m.owner) {
      carry[b] = scan[kMergeBlock - 1];
    }
  }
  if (m.owner) return out;
  std::size_t wide = 0;
  for (std::int64_t t = 1; t < m.n_tiles; ++t) {
    const std::int64_t r = m.tile_row[t];
    if (m.tile_row[t + 1] == r) continue;
    double s = 0;
    std::int64_t j = t - 1;
    bool is_wide = false;
    for (int n = 1;; ++n) {
      s += carry[j];
      if (j == 0 || m.tile_row[j] != r) break;
      if (n == kMaxShortFix) {
        is_wide = true;
        break;
      }
      --j;
    }
    if (!is_wide) {
      store(r, s + head[t]);
      continue;
    }
    EXPECT_LT(wide, m.fix_tile.size());
    if (wide >= m.fix_tile.size()) break;
    EXPECT_EQ(m.fix_tile[wide], t);
    s = 0;
    for (std::int64_t c = m.fix_first[wide]; c < t; ++c) s += carry[c];
    store(r, s + head[t]);
    ++wide;
  }
  EXPECT_EQ(wide, m.fix_tile.size());
  out.wide_fixups = static_cast<std::int64_t>(wide);
  return out;
}

/// Host model of the walk of csr_merge_tile_t_kernel: the row it assigns to every nonzero.
std::vector<std::int64_t> model_merge_rows_of_nonzeros(const Csr64& a) {
  using namespace csr_plan;
  const std::int64_t rows = a.rows, nnz = a.nnz(), total = rows + nnz;
  std::vector<std::int64_t> row_of(static_cast<std::size_t>(nnz), -1);
  const MergePlan m = plan_merge(rows, nnz, a.row_ptr.data(), a.col_idx.data(), kModelValueBytes);
  const std::int64_t tile = static_cast<std::int64_t>(kMergeBlock) * m.ipt;
  for (std::int64_t b = 0; b < m.n_tiles; ++b) {
    const std::int64_t d0 = b * tile, d1 = std::min<std::int64_t>(d0 + tile, total);
    const std::int64_t row0 = m.tile_row[b], row1 = m.tile_row[b + 1], nz0 = d0 - row0;
    const int nr = static_cast<int>(row1 - row0), nzl = static_cast<int>((d1 - row1) - nz0);
    const int items = static_cast<int>(d1 - d0);
    std::vector<int> row_end(static_cast<std::size_t>(nr) + 1);
    for (int i = 0; i <= nr; ++i) row_end[i] = i < nr ? static_cast<int>(a.row_ptr[row0 + i + 1] - nz0) : nzl;
    std::vector<int> local(static_cast<std::size_t>(nzl), -1);
    for (int tid = 0; tid < kMergeBlock; ++tid) {
      const int dl = std::min(tid * m.ipt, items), dl_end = std::min(dl + m.ipt, items);
      int k = static_cast<int>(merge_path_row(dl, row_end.data(), nr, nzl));
      int j = dl - k;
      for (int d = dl; d < dl_end; ++d) {
        if (j < row_end[k]) {
          EXPECT_EQ(local[j], -1);
          local[j++] = k;
        } else {
          ++k;
        }
      }
    }
    for (int j = 0; j < nzl; ++j) {
      EXPECT_NE(local[j], -1);
      EXPECT_EQ(row_of[nz0 + j], -1);
      row_of[nz0 + j] = row0 + local[j];
    }
  }
  return row_of;
}

TEST(CsrCudaPlan, HostModelOfTheMergeTileKernelsMatchesTheReference) {
  std::vector<Scenario> all = skewed_scenarios();
  all.push_back({"ragged_with_empty_rows", random_csr(1000, 777, row_lengths(1000, [](std::int64_t r) {
                   return r % 5 == 0 ? 0 : (r * 11) % 13;
                 }), 51)});
  all.push_back({"all_rows_empty_40x41", random_csr(40, 41, std::vector<std::int64_t>(40, 0), 52)});
  all.push_back({"one_by_one", random_csr(1, 1, {1}, 53)});
  // Local columns, rows not skewed, kMergeWideMinNnz nonzeros and more: the wide tiles.
  all.push_back({"band_250000_wide_tiles", gen::generate<double, std::int64_t>("gen:banded:250000:8:values=int")});
  std::int64_t wide_total = 0, wide_tiles = 0, owner = 0, carries = 0, past_end = 0;
  for (const auto& sc : all) {
    SCOPED_TRACE(sc.name);
    const auto& a = sc.a;
    // Small-integer values and x: every sum is exact, in any order.
    const auto x = testing::random_vector<double>(a.cols, 61, true);
    const auto model = model_merge_spmv(a, x);
    const auto want = reference::spmv(a, std::span<const double>(x), 1.0, 0.0, std::span<const double>());
    for (std::int64_t r = 0; r < a.rows; ++r) {
      ASSERT_EQ(model.writes[r], 1) << "row " << r << " length " << row_len(a, r);
      ASSERT_EQ(model.y[r], want[r]) << "row " << r << " length " << row_len(a, r);
    }
    wide_total += model.wide_fixups;
    past_end += model.past_end;
    (model.owner ? owner : carries) += 1;
    const std::int64_t max_len = max_row_len(a);
    EXPECT_EQ(model.owner, csr_plan::merge_owner_completes(a.rows, a.nnz(), max_len));
    const auto plan =
        csr_plan::plan_merge(a.rows, a.nnz(), a.row_ptr.data(), a.col_idx.data(), kModelValueBytes);
    wide_tiles += plan.ipt == csr_plan::kMergeWideIpt;
    const auto row_of = model_merge_rows_of_nonzeros(a);
    for (std::int64_t r = 0; r < a.rows; ++r)
      for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) ASSERT_EQ(row_of[k], r) << k;
  }
  EXPECT_GT(wide_total, 0) << "no scenario reaches the wide fix-up";
  EXPECT_GT(owner, 0) << "no scenario is completed by owner tiles";
  EXPECT_GT(carries, 0) << "no scenario passes carries";
  EXPECT_GT(past_end, 0) << "no owner tile reads past its end";
  EXPECT_EQ(wide_tiles, 1) << "the band is planned with the wide tiles, nothing else";
}

TEST(CsrCudaPlan, MergeRowsLongerThanTheOwnerMeanKeepTheCarries) {
  // Owner completion needs short rows on average, no row past kMergeOwnerMaxRow and at most
  // kMergeOwnerMaxItems merge items.
  constexpr std::int64_t mean = csr_plan::kMergeOwnerMaxMean;
  EXPECT_TRUE(csr_plan::merge_owner_completes(1000, 1000 * mean, mean));
  EXPECT_FALSE(csr_plan::merge_owner_completes(1000, 1000 * mean + 1, mean + 1));
  EXPECT_TRUE(csr_plan::merge_owner_completes(1000, 9000, csr_plan::kMergeOwnerMaxRow));
  EXPECT_FALSE(csr_plan::merge_owner_completes(1000, 9000, csr_plan::kMergeOwnerMaxRow + 1));
  EXPECT_FALSE(csr_plan::merge_owner_completes(1000, csr_plan::kMergeOwnerMaxItems, 9));
  // The plans of the host: even rows at and past the mean.
  for (const std::int64_t len : {mean, mean + 1, std::int64_t(1500)}) {
    SCOPED_TRACE(len);
    const auto a = random_csr(400, 5000, std::vector<std::int64_t>(400, len), 57);
    const auto m =
        csr_plan::plan_merge(a.rows, a.nnz(), a.row_ptr.data(), a.col_idx.data(), sizeof(double));
    EXPECT_EQ(m.owner, len <= mean);
    EXPECT_EQ(m.tile_own.empty(), len > mean);
  }
}

TEST(CsrCudaPlan, ColumnLocalityTellsBandsAndStencilsFromRandomColumns) {
  using csr_plan::column_locality;
  const auto band = gen::generate<double, std::int64_t>("gen:banded:20000:8");
  const auto l_band = column_locality(band.rows, band.row_ptr.data(), band.col_idx.data());
  // 17 a row but the sampled rows at the band's two ends (row 1 and one near the last).
  EXPECT_LE(l_band.sampled, csr_plan::kLocalityRows * 17);
  EXPECT_GE(l_band.sampled, csr_plan::kLocalityRows * 17 - 2 * 8);
  EXPECT_EQ(l_band.near, l_band.sampled);
  EXPECT_TRUE(l_band.local());
  const auto lap = gen::generate<double, std::int64_t>("gen:lap2d:100");
  const auto l_lap = column_locality(lap.rows, lap.row_ptr.data(), lap.col_idx.data());
  EXPECT_GT(l_lap.near * 10, l_lap.sampled * 9);
  const auto rnd = gen::generate<double, std::int64_t>("gen:random_k:100000:12");
  const auto l_rnd = column_locality(rnd.rows, rnd.row_ptr.data(), rnd.col_idx.data());
  EXPECT_EQ(l_rnd.sampled, csr_plan::kLocalityRows * 12);
  EXPECT_LT(l_rnd.near * 100, l_rnd.sampled);
  EXPECT_FALSE(l_rnd.local());
  // Long rows count their first kLocalityRowNnz nonzeros; a matrix of fewer rows samples each
  // row but the first; one row samples nothing and counts as local.
  const Csr64 wide = random_csr(50, 5000, std::vector<std::int64_t>(50, 300), 54);
  EXPECT_EQ(column_locality(wide.rows, wide.row_ptr.data(), wide.col_idx.data()).sampled,
            49 * csr_plan::kLocalityRowNnz);
  const Csr64 one = random_csr(1, 10, {3}, 55);
  EXPECT_EQ(column_locality(one.rows, one.row_ptr.data(), one.col_idx.data()).sampled, 0);
  EXPECT_TRUE(column_locality(one.rows, one.row_ptr.data(), one.col_idx.data()).local());
  for (std::int64_t i = 0; i < csr_plan::locality_samples(band.rows); ++i) {
    ASSERT_GE(csr_plan::locality_row(i, band.rows), 1);
    ASSERT_LT(csr_plan::locality_row(i, band.rows), band.rows);
  }
}

TEST(CsrCudaPlan, BatchedStepsAndWideTilesFollowTheColumnsAndTheSize) {
  using csr_plan::kMergeIpt;
  using csr_plan::kMergeWideIpt;
  using csr_plan::kMergeWideMinNnz;
  EXPECT_EQ(csr_plan::merge_items_per_thread(kMergeWideMinNnz, false, true, sizeof(float)), kMergeWideIpt);
  EXPECT_EQ(csr_plan::merge_items_per_thread(kMergeWideMinNnz - 1, false, true, sizeof(float)), kMergeIpt);
  EXPECT_EQ(csr_plan::merge_items_per_thread(kMergeWideMinNnz, true, true, sizeof(float)), kMergeIpt);
  EXPECT_EQ(csr_plan::merge_items_per_thread(kMergeWideMinNnz, false, false, sizeof(float)), kMergeIpt);
  // A wide tile of doubles would take 15 KiB of shared memory: fp64 keeps the narrow tiles.
  EXPECT_EQ(csr_plan::merge_items_per_thread(kMergeWideMinNnz, false, true, sizeof(double)), kMergeIpt);
  // Many rows of 12: 4 lanes, rows enough to batch; the same rows few, or binned, do not.
  const auto rows = [](std::int64_t n) { return std::vector<std::int64_t>(static_cast<std::size_t>(n), 12); };
  auto plan = [](const std::vector<std::int64_t>& lengths, CsrBins bins) {
    std::vector<std::int64_t> row_ptr(lengths.size() + 1, 0);
    for (std::size_t r = 0; r < lengths.size(); ++r) row_ptr[r + 1] = row_ptr[r] + lengths[r];
    return csr_plan::plan_rows(static_cast<std::int64_t>(lengths.size()), row_ptr.data(),
                               CsrKernel::automatic, 0, bins);
  };
  const auto many = plan(rows(200000), CsrBins::automatic);
  EXPECT_EQ(many.tpr, 4);
  EXPECT_TRUE(csr_plan::may_batch_steps(many, 200000));
  EXPECT_FALSE(csr_plan::may_batch_steps(plan(rows(20000), CsrBins::automatic), 20000));
  EXPECT_FALSE(csr_plan::may_batch_steps(plan(rows(200000), CsrBins::on), 200000));
  EXPECT_FALSE(many.batched);  // plan_rows reads no column: the caller decides
}

TEST(CsrCudaPlan, BatchedRowsGetLanesForOneRoundOfSteps) {
  using csr_plan::batched_lanes;
  using csr_plan::kBatchSteps;
  const std::int64_t rows = 2000000;
  // threads_per_row gives a mean row of 20 four lanes (it idles fewer than 8): five steps,
  // two batches. Batched, the row gets 8 lanes: three steps, one batch.
  ASSERT_EQ(csr_plan::threads_per_row(rows, 20 * rows), 4);
  EXPECT_EQ(batched_lanes(4, rows, 20 * rows), 8);
  // A mean row that already fits one batch keeps its lanes, at the boundary too.
  EXPECT_EQ(batched_lanes(4, rows, 12 * rows), 4);
  EXPECT_EQ(batched_lanes(4, rows, kBatchSteps * 4 * rows), 4);
  EXPECT_EQ(batched_lanes(4, rows, kBatchSteps * 4 * rows + 1), 8);
  // Never past 16 lanes (a warp a row batches its steps only for long rows:
  // may_batch_warp_rows), and never fewer than given.
  EXPECT_EQ(batched_lanes(4, rows, 1000 * rows), 16);
  EXPECT_EQ(batched_lanes(8, rows, 2 * rows), 8);
  for (std::int64_t mean = 1; mean <= 64; ++mean) {
    const int t = batched_lanes(csr_plan::threads_per_row(rows, mean * rows), rows, mean * rows);
    EXPECT_TRUE(t == 16 || mean <= kBatchSteps * t) << "mean " << mean << ", " << t << " lanes";
  }
}

#if SPMAT_WITH_CUDA

/// Shapes chosen to hit every path: empty rows, one 100,000-entry row (long-row chunks, wide
/// merge fix-ups), power-law rows, tall/wide, 5-point-like rows, sizes not multiples of 32,
/// and the degenerate 0×0, 0×n, n×0 and all-zero matrices.
const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all = [] {
    std::vector<Scenario> v;
    std::mt19937_64 rng(12345);
    auto lengths = [&](std::int64_t rows, auto&& f) {
      std::vector<std::int64_t> l(rows);
      for (std::int64_t r = 0; r < rows; ++r) l[r] = f(r);
      return l;
    };
    std::uniform_int_distribution<int> small(0, 12);
    v.push_back({"ragged_with_empty_rows_1000x777",
                 random_csr(1000, 777, row_lengths(1000, [&](auto r) {
                              return r % 5 == 0 ? 0 : small(rng);
                            }), 1)});
    v.push_back({"one_row_of_100000_entries_301x100003",
                 random_csr(301, 100003, row_lengths(301, [&](auto r) {
                              return r == 7 ? 100000 : r % 3;
                            }), 2)});
    v.push_back({"power_law_rows_3001x4099",
                 random_csr(3001, 4099, row_lengths(3001, [&](auto r) {
                              return r % 997 == 0 ? 3000 : (r % 61 == 0 ? 300 : r % 4);
                            }), 3)});
    v.push_back({"tall_5003x37", random_csr(5003, 37, row_lengths(5003, [&](auto) {
                                              return small(rng) % 6;
                                            }), 4)});
    v.push_back({"wide_33x5001", random_csr(33, 5001, row_lengths(33, [&](auto r) {
                                              return 40 * r + 1;
                                            }), 5)});
    v.push_back({"five_per_row_2025x2025", random_csr(2025, 2025, row_lengths(2025, [&](auto r) {
                                                        return r % 45 == 0 ? 4 : 5;
                                                      }), 6)});
    v.push_back({"dense_rows_65x70", random_csr(65, 70, row_lengths(65, [&](auto) { return 70; }), 7)});
    v.push_back({"zero_by_zero", random_csr(0, 0, {}, 8)});
    v.push_back({"zero_rows_0x5", random_csr(0, 5, {}, 9)});
    v.push_back({"zero_cols_6x0", random_csr(6, 0, row_lengths(6, [](auto) { return 0; }), 10)});
    v.push_back({"all_zero_pattern_40x41", random_csr(40, 41, row_lengths(40, [](auto) { return 0; }), 11)});
    return v;
  }();
  return all;
}

const char* const kKernels[] = {"csr", "csr-scalar", "csr-vector", "csr-merge"};


template <class V, class I>
void check_spmv_all(const char* format, const Scenario& sc, const FormatOptions& opts = {}) {
  SCOPED_TRACE(std::string(format) + " " + std::string(precision_name<V>()) + "/" +
               std::string(index_name<I>()) + " on " + sc.name);
  const auto a = convert<V, I>(sc.a);
  const auto m = Matrix<V>::build(a, format, Backend::cuda, opts);
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::expect_matrix_spmv_and_spmv_t_match(m, a, seed);
}

template <class V, class I>
void check_spmm_all(const char* format, const Scenario& sc, const FormatOptions& opts = {}) {
  SCOPED_TRACE(std::string(format) + " spmm " + std::string(precision_name<V>()) + "/" +
               std::string(index_name<I>()) + " on " + sc.name);
  const auto a = convert<V, I>(sc.a);
  const auto m = Matrix<V>::build(a, format, Backend::cuda, opts);
  for (DenseLayout layout : {DenseLayout::row_major, DenseLayout::col_major}) {
    for (std::int64_t k : {1, 5, 33}) {
      SCOPED_TRACE(std::string(to_string(layout)) + " k=" + std::to_string(k));
      const auto b = testing::random_vector<V>(a.cols * k, 77 + k, true);
      const auto c0 = testing::random_vector<V>(a.rows * k, 99 + k, true);
      for (V beta : {V(0), V(0.5)}) {
        const auto c_init = beta == V(0) ? testing::poisoned<V>(a.rows * k) : c0;
        cuda::DeviceBuffer<V> db(b, "test B"), dc(c_init, "test C");
        m.spmm(std::span<const V>(db.data(), db.size()), dc.span(), k, layout, V(-2), beta);
        cuda::synchronize();
        const auto got = dc.download();
        const auto want = reference::spmm(a, std::span<const V>(b), k, layout, -2.0, beta,
                                          std::span<const V>(c_init));
        EXPECT_LE(reference::relative_norm2_error(std::span<const V>(got), std::span<const double>(want)),
                  testing::tolerance<V>());
      }
    }
  }
}

template <class V, class I>
void check_all_types(const char* format) {
  for (const auto& sc : scenarios()) check_spmv_all<V, I>(format, sc);
}

TEST(CsrCuda, EveryKernelMatchesTheReferenceForSpmvAndSpmvT) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const char* k : kKernels)
    testing::for_each_type_pair([&]<class V, class I>() { check_all_types<V, I>(k); });
}

TEST(CsrCuda, AutoKernelMatchesTheReferenceForEveryForcedThreadsPerRow) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const char* tpr : {"2", "4", "8", "16", "32"})
    for (const auto& sc : scenarios())
      check_spmv_all<double, std::int32_t>("csr", sc, FormatOptions().set("tpr", tpr));
}

TEST(CsrCuda, SpmmMatchesTheReferenceInBothLayouts) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const auto& sc : scenarios()) {
    check_spmm_all<float, std::int32_t>("csr", sc);
    check_spmm_all<double, std::int64_t>("csr", sc);
    check_spmm_all<double, std::int32_t>("csr-merge", sc);
  }
}

TEST(CsrCuda, SpmvIsBitwiseReproducibleForEveryKernel) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const char* k : kKernels) {
    for (const auto& sc : scenarios()) {
      SCOPED_TRACE(std::string(k) + " on " + sc.name);
      auto a = convert<float, std::int32_t>(sc.a);
      const auto vals = testing::random_vector<float>(a.nnz(), 5);  // real-valued: order matters
      a.values = vals;
      const auto m = Matrix<float>::build(a, k, Backend::cuda);
      const auto x = testing::random_vector<float>(a.cols, 6);
      const auto y1 = testing::apply_spmv(m, Op::spmv, x);
      for (int run = 0; run < 3; ++run) {
        const auto y2 = testing::apply_spmv(m, Op::spmv, x);
        ASSERT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)));
      }
    }
  }
}

TEST(CsrCuda, NanAndInfInTheMatrixPropagateLikeTheReference) {
  SPMAT_SKIP_WITHOUT_GPU();
  auto a = convert<double, std::int32_t>(scenarios()[0].a);
  a.values[3] = std::numeric_limits<double>::quiet_NaN();
  a.values[10] = std::numeric_limits<double>::infinity();
  for (const char* k : kKernels) {
    SCOPED_TRACE(k);
    const auto m = Matrix<double>::build(a, k, Backend::cuda);
    const auto x = testing::random_vector<double>(a.cols, 3, true);
    const auto got = testing::apply_spmv(m, Op::spmv, x);
    const auto want = reference::spmv(a, std::span<const double>(x), 1.0, 0.0, std::span<const double>());
    EXPECT_LE(reference::relative_norm2_error(std::span<const double>(got), std::span<const double>(want)),
              1e-12);
  }
}

// ---- skewed rows: the binned auto kernel and the merge-path tiles ----

struct Variant {
  const char* format;
  FormatOptions options;
  std::string label;
};

/// The kernels that own skewed rows, and forced options that reach every path on every
/// skewed scenario: bins=on (medium rows with tpr 2 and tpr 32), bins=off (the unbinned path).
std::vector<Variant> skewed_variants() {
  return {{"csr", {}, "csr"},
          {"csr", FormatOptions().set("bins", "on"), "csr bins=on"},
          {"csr", FormatOptions().set("bins", "off"), "csr bins=off"},
          {"csr", FormatOptions().set("bins", "on").set("tpr", "2"), "csr bins=on tpr=2"},
          {"csr", FormatOptions().set("bins", "on").set("tpr", "32"), "csr bins=on tpr=32"},
          {"csr-merge", {}, "csr-merge"},
          {"csr-vector", {}, "csr-vector"},
          {"csr-scalar", {}, "csr-scalar"}};
}

TEST(CsrCuda, SkewedMatricesMatchTheReferenceForEveryKernelAndBinOption) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const auto& v : skewed_variants()) {
    SCOPED_TRACE(v.label);
    for (const auto& sc : skewed_scenarios()) {
      check_spmv_all<float, std::int32_t>(v.format, sc, v.options);
      check_spmv_all<double, std::int64_t>(v.format, sc, v.options);
    }
  }
  // Every index/value pair on the two paths this work adds.
  for (const auto& sc : skewed_scenarios()) {
    check_spmv_all<float, std::int64_t>("csr", sc, FormatOptions().set("bins", "on"));
    check_spmv_all<double, std::int32_t>("csr", sc, FormatOptions().set("bins", "on"));
    check_spmv_all<float, std::int64_t>("csr-merge", sc);
    check_spmv_all<double, std::int32_t>("csr-merge", sc);
  }
}

TEST(CsrCuda, BinnedAndMergeKernelsHandleDegenerateShapes) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const auto& v : skewed_variants())
    for (const auto& sc : scenarios()) {  // 0×0, 0×n, n×0, all-zero, one 100,000-entry row, ...
      SCOPED_TRACE(v.label);
      check_spmv_all<double, std::int32_t>(v.format, sc, v.options);
    }
}

TEST(CsrCuda, LargeSkewedMatricesMatchTheReferenceOnTheMergePath) {
  SPMAT_SKIP_WITHOUT_GPU();
  const auto row_ptr = large_skewed_row_ptr(1);
  const std::int64_t rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  Scenario sc{"large_skewed", random_csr(rows, rows, row_lengths(rows, [&](std::int64_t r) {
                return row_ptr[static_cast<std::size_t>(r) + 1] - row_ptr[static_cast<std::size_t>(r)];
              }), 31)};
  check_spmv_all<double, std::int32_t>("csr", sc);
  check_spmv_all<float, std::int64_t>("csr", sc);
  // The plan took the merge path, the same way from host and from device arrays, and the
  // product is deterministic (the merge fix-up sums in a fixed order).
  auto a = convert<double, std::int32_t>(sc.a);
  a.values = testing::random_vector<double>(a.nnz(), 52);
  const auto host = Matrix<double>::build(a, "csr", Backend::cuda);
  const auto dev = Matrix<double>::build(cuda::upload_csr(a), "csr");
  const auto hs = detail::impl_of(host).stored_arrays();
  const auto ds = detail::impl_of(dev).stored_arrays();
  ASSERT_EQ(hs.size(), ds.size());
  for (std::size_t i = 0; i < hs.size(); ++i) {
    EXPECT_TRUE(hs[i].bytes == ds[i].bytes) << "array " << hs[i].name << " differs";
    if (hs[i].name == "plan") {  // kernel, merge_spmv, ...
      std::int64_t merge_spmv = 0;
      std::memcpy(&merge_spmv, hs[i].bytes.data() + sizeof(std::int64_t), sizeof merge_spmv);
      EXPECT_EQ(merge_spmv, 1);
    }
  }
  const auto x = testing::random_vector<double>(a.cols, 53);
  const auto y = testing::apply_spmv(host, Op::spmv, x);
  for (int run = 0; run < 5; ++run) {
    const auto y2 = testing::apply_spmv(dev, Op::spmv, x);
    ASSERT_EQ(0, std::memcmp(y.data(), y2.data(), y.size() * sizeof(double))) << "run " << run;
  }
}

/// Scalar `i` of the "plan" array a CUDA csr matrix stores (stored_arrays in
/// csr_device_build.cu: ..., n_long_fix, merge_skewed, batched, merge_ipt).
template <class Value>
std::int64_t plan_scalar(const Matrix<Value>& m, std::size_t i) {
  for (const auto& a : detail::impl_of(m).stored_arrays()) {
    if (a.name != "plan") continue;
    std::int64_t v = 0;
    EXPECT_GE(a.bytes.size(), (i + 1) * sizeof v);
    if (a.bytes.size() >= (i + 1) * sizeof v) std::memcpy(&v, a.bytes.data() + i * sizeof v, sizeof v);
    return v;
  }
  ADD_FAILURE() << "no plan array";
  return -1;
}

TEST(CsrCuda, BatchedStepsAndWideTilesMatchTheReferenceAndTheDeviceBuild) {
  SPMAT_SKIP_WITHOUT_GPU();
  constexpr std::size_t kBatched = 10, kMergeIptAt = 11;
  struct Case {
    Scenario sc;
    const char* format;
    std::size_t slot;
    std::int64_t want;
  };
  const std::int64_t n = 200000;
  std::vector<Case> cases;
  cases.push_back({{"random_columns_200000x12", random_csr(n, n, std::vector<std::int64_t>(n, 12), 56)},
                   "csr", kBatched, 1});
  cases.push_back({{"band_250000", gen::generate<double, std::int64_t>("gen:banded:250000:8:values=int")},
                   "csr-merge", kMergeIptAt, csr_plan::kMergeIpt});  // fp64: the narrow tiles
  cases.push_back({{"band_250000_rows", gen::generate<double, std::int64_t>("gen:banded:250000:8:values=int")},
                   "csr", kBatched, 0});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.sc.name);
    check_spmv_all<double, std::int32_t>(c.format, c.sc);
    check_spmv_all<float, std::int64_t>(c.format, c.sc);
    auto a = convert<double, std::int32_t>(c.sc.a);
    a.values = testing::random_vector<double>(a.nnz(), 57);
    const auto host = Matrix<double>::build(a, c.format, Backend::cuda);
    const auto dev = Matrix<double>::build(cuda::upload_csr(a), c.format);
    EXPECT_EQ(plan_scalar(host, c.slot), c.want);
    const auto hs = detail::impl_of(host).stored_arrays();
    const auto ds = detail::impl_of(dev).stored_arrays();
    ASSERT_EQ(hs.size(), ds.size());
    for (std::size_t i = 0; i < hs.size(); ++i)
      EXPECT_TRUE(hs[i].bytes == ds[i].bytes) << "array " << hs[i].name << " differs";
    const auto x = testing::random_vector<double>(a.cols, 58);
    const auto y = testing::apply_spmv(host, Op::spmv, x);
    for (int run = 0; run < 5; ++run) {
      const auto y2 = testing::apply_spmv(dev, Op::spmv, x);
      ASSERT_EQ(0, std::memcmp(y.data(), y2.data(), y.size() * sizeof(double))) << "run " << run;
    }
  }
  // fp32 values get the wide tiles on the same band (7.5 KiB of shared memory a tile), from
  // host and device builds alike; check_spmv_all<float, ...> above ran them.
  const auto band = convert<float, std::int32_t>(cases[1].sc.a);
  const auto host = Matrix<float>::build(band, "csr-merge", Backend::cuda);
  const auto dev = Matrix<float>::build(cuda::upload_csr(band), "csr-merge");
  EXPECT_EQ(plan_scalar(host, kMergeIptAt), csr_plan::kMergeWideIpt);
  EXPECT_EQ(plan_scalar(dev, kMergeIptAt), csr_plan::kMergeWideIpt);
}

/// Expects the host-built and device-built matrices to store the same bytes in every array;
/// returns the array named `name` (nullopt if neither holds one).
std::optional<std::vector<std::byte>> expect_same_stored_arrays(const Matrix<double>& host,
                                                                const Matrix<double>& dev,
                                                                const std::string& name) {
  const auto hs = detail::impl_of(host).stored_arrays();
  const auto ds = detail::impl_of(dev).stored_arrays();
  EXPECT_EQ(hs.size(), ds.size());
  std::optional<std::vector<std::byte>> named;
  for (std::size_t i = 0; i < std::min(hs.size(), ds.size()); ++i) {
    EXPECT_TRUE(hs[i].bytes == ds[i].bytes) << "array " << hs[i].name << " differs";
    if (hs[i].name == name) named = hs[i].bytes;
  }
  return named;
}

/// The plan scalars of `csr` built for the GPU from the host and from device arrays (expected
/// to store the same bytes in every array): kernel, merge_spmv, tpr, ..., batched at [10]
/// (csr_device_build.cu). Empty where neither holds them.
std::vector<std::int64_t> csr_plan_from_host_and_device(const Csr64& a64) {
  const auto a = convert<double, std::int32_t>(a64);
  const auto host = Matrix<double>::build(a, "csr", Backend::cuda);
  const auto dev = Matrix<double>::build(cuda::upload_csr(a), "csr");
  const auto bytes = expect_same_stored_arrays(host, dev, "plan");
  if (!bytes) return {};
  std::vector<std::int64_t> plan(bytes->size() / sizeof(std::int64_t));
  std::memcpy(plan.data(), bytes->data(), plan.size() * sizeof(std::int64_t));
  return plan;
}

TEST(CsrCuda, MergeRowsAreOwnedOrCarriedAlikeFromHostAndDeviceBuilds) {
  SPMAT_SKIP_WITHOUT_GPU();
  std::vector<Scenario> all = skewed_scenarios();
  // Rows over several tiles (past the owner mean: carries), rows across tile ends at the owner
  // mean, and one row past the owner limit.
  all.push_back({"rows_of_1500_carried", random_csr(300, 4000, std::vector<std::int64_t>(300, 1500), 59)});
  all.push_back({"rows_of_64_owner", random_csr(3000, 4000,
                                                std::vector<std::int64_t>(3000, csr_plan::kMergeOwnerMaxMean), 58)});
  all.push_back({"one_row_past_the_owner_limit",
                 random_csr(2000, 9000, row_lengths(2000, [](std::int64_t r) -> std::int64_t {
                              return r == 700 ? csr_plan::kMergeOwnerMaxRow + 1 : r % 9;
                            }), 60)});
  int owner = 0, carries = 0;
  for (const auto& sc : all) {
    SCOPED_TRACE(sc.name);
    check_spmv_all<double, std::int32_t>("csr-merge", sc);
    auto a = convert<double, std::int32_t>(sc.a);
    a.values = testing::random_vector<double>(a.nnz(), 61);
    const std::int64_t max_len = max_row_len(sc.a);
    const bool want_owner = csr_plan::merge_owner_completes(a.rows, a.nnz(), max_len);
    (want_owner ? owner : carries) += 1;
    const auto host = Matrix<double>::build(a, "csr-merge", Backend::cuda);
    const auto dev = Matrix<double>::build(cuda::upload_csr(a), "csr-merge");
    const auto tile_own = expect_same_stored_arrays(host, dev, "tile_own");
    ASSERT_TRUE(tile_own.has_value()) << "no tile_own array";
    EXPECT_EQ(!tile_own->empty(), want_owner && a.rows > 0);
    const auto x = testing::random_vector<double>(a.cols, 62);
    const auto y = testing::apply_spmv(host, Op::spmv, x);
    for (int run = 0; run < 3; ++run) {
      const auto y2 = testing::apply_spmv(dev, Op::spmv, x);
      ASSERT_EQ(0, std::memcmp(y.data(), y2.data(), y.size() * sizeof(double))) << "run " << run;
    }
  }
  EXPECT_GT(owner, 0);
  EXPECT_GT(carries, 0);
}

TEST(CsrCudaPlan, TheScalarChoiceCanBeRuledOutByTheCaller) {
  // Short, even rows: the automatic kernel becomes the scalar one unless the caller rules it
  // out (columns not local); then the plan is the sub-warp kernel's, as with the lanes forced.
  const std::int64_t n = 300000;
  std::vector<std::int64_t> row_ptr(static_cast<std::size_t>(n) + 1);
  for (std::int64_t r = 0; r <= n; ++r) row_ptr[static_cast<std::size_t>(r)] = 6 * r;
  const auto with = csr_plan::plan_rows(n, row_ptr.data(), CsrKernel::automatic, 0, CsrBins::automatic);
  const auto without =
      csr_plan::plan_rows(n, row_ptr.data(), CsrKernel::automatic, 0, CsrBins::automatic, false);
  EXPECT_EQ(with.kernel, CsrKernel::scalar);
  EXPECT_EQ(without.kernel, CsrKernel::automatic);
  EXPECT_EQ(without.tpr, csr_plan::threads_per_row(n, 6 * n));
  EXPECT_TRUE(csr_plan::may_batch_steps(without, n));
  EXPECT_TRUE(csr_plan::scalar_suits_columns(true));
  EXPECT_FALSE(csr_plan::scalar_suits_columns(false));
  // Only the automatic kernel is affected: a kernel asked for stays.
  EXPECT_EQ(csr_plan::plan_rows(n, row_ptr.data(), CsrKernel::scalar, 0, CsrBins::automatic, false).kernel,
            CsrKernel::scalar);
}

TEST(CsrCudaPlan, AnXThatStaysInL1CountsAsLocalColumnsOnTallMatrices) {
  // 4 M rows over 1,000 or 16,384 columns: x of 8 KB or 128 KB in fp64 stays in L1.
  EXPECT_TRUE(csr_plan::x_stays_in_l1(4000000, 1000, 8));
  EXPECT_TRUE(csr_plan::x_stays_in_l1(4000000, 16384, 8));
  EXPECT_TRUE(csr_plan::x_stays_in_l1(4000000, 32768, 4));
  // One column more, or too few rows to fill the GPU: the sampled locality decides.
  EXPECT_FALSE(csr_plan::x_stays_in_l1(4000000, 16385, 8));
  EXPECT_FALSE(csr_plan::x_stays_in_l1(csr_plan::kManyThreads - 1, 1000, 8));
  EXPECT_FALSE(csr_plan::x_stays_in_l1(4000000, 1000000, 8));
}

TEST(CsrCudaPlan, PlanForColumnsSamplesTheColumnsOnceAndOnlyWhereAChoiceDependsOnThem) {
  const auto plan_even = [](std::int64_t n, std::int64_t len, CsrKernel kernel, int tpr) {
    std::vector<std::int64_t> row_ptr(static_cast<std::size_t>(n) + 1);
    for (std::int64_t r = 0; r <= n; ++r) row_ptr[static_cast<std::size_t>(r)] = len * r;
    return [=](bool local, int* samples) {
      return csr_plan::plan_for_columns(
          [&](bool scalar_allowed) {
            return csr_plan::plan_rows(n, row_ptr.data(), kernel, tpr, CsrBins::automatic, scalar_allowed);
          },
          [=] { return ++*samples, local; }, kernel, tpr, n, n, len * n, 8);
    };
  };
  // 300,000 rows of 6: local columns keep the scalar kernel; random ones take the batched
  // sub-warp kernel, sampled once for both decisions.
  const auto short_rows = plan_even(300000, 6, CsrKernel::automatic, 0);
  int samples = 0;
  EXPECT_EQ(short_rows(true, &samples).kernel, CsrKernel::scalar);
  EXPECT_EQ(samples, 1);
  samples = 0;
  const auto random = short_rows(false, &samples);
  EXPECT_EQ(random.kernel, CsrKernel::automatic);
  EXPECT_TRUE(random.batched);
  EXPECT_EQ(samples, 1);
  // 2,000,000 rows of 20 with random columns: batched, lanes widened (4 -> 8) unless forced.
  samples = 0;
  const auto wide = plan_even(2000000, 20, CsrKernel::automatic, 0)(false, &samples);
  EXPECT_TRUE(wide.batched);
  EXPECT_EQ(wide.tpr, csr_plan::batched_lanes(csr_plan::threads_per_row(2000000, 40000000), 2000000, 40000000));
  EXPECT_GT(wide.tpr, csr_plan::threads_per_row(2000000, 40000000));
  EXPECT_EQ(plan_even(2000000, 20, CsrKernel::automatic, 4)(false, &samples).tpr, 4);
  // A small matrix decides nothing from its columns: none are sampled.
  samples = 0;
  plan_even(1000, 6, CsrKernel::vector, 0)(false, &samples);
  EXPECT_EQ(samples, 0);
}

TEST(CsrCudaPlan, WarpRowsBatchTheirStepsOnlyWhenLongWithColumnsPastL1) {
  const auto plan = [](std::int64_t rows, std::int64_t cols, std::int64_t len, bool local, int* samples) {
    std::vector<std::int64_t> row_ptr(static_cast<std::size_t>(rows) + 1);
    for (std::int64_t r = 0; r <= rows; ++r) row_ptr[static_cast<std::size_t>(r)] = len * r;
    return csr_plan::plan_for_columns(
        [&](bool scalar_allowed) {
          return csr_plan::plan_rows(rows, row_ptr.data(), CsrKernel::automatic, 0, CsrBins::automatic,
                                     scalar_allowed);
        },
        [=] { return ++*samples, local; }, CsrKernel::automatic, 0, rows, cols, len * rows, 8);
  };
  // 10,000 rows of 1,500 random columns out of 500,000: a warp a row, batched.
  int samples = 0;
  const auto wide = plan(10000, 500000, 1500, false, &samples);
  EXPECT_EQ(wide.tpr, 32);
  EXPECT_TRUE(wide.batched);
  EXPECT_EQ(samples, 1);
  EXPECT_TRUE(csr_plan::may_batch_warp_rows(wide, 10000, 500000, 1500 * 10000, 8));
  // Local columns, rows shorter than kBatchWarpRowMean, or an x that fits L1: not batched.
  EXPECT_FALSE(plan(10000, 500000, 1500, true, &samples).batched);
  EXPECT_FALSE(plan(10000, 500000, csr_plan::kBatchWarpRowMean - 1, false, &samples).batched);
  samples = 0;
  EXPECT_FALSE(plan(10000, csr_plan::kL1ResidentX / 8, 1500, false, &samples).batched);
  EXPECT_EQ(samples, 0);  // nothing depended on the columns
  EXPECT_TRUE(plan(10000, csr_plan::kL1ResidentX / 8 + 1, 1500, false, &samples).batched);
  // A matrix of few rows chunks its long rows: no plain warp rows to batch.
  EXPECT_FALSE(plan(2000, 500000, 1500, false, &samples).batched);
}

TEST(CsrCuda, ShortRowsTakeTheScalarKernelOnlyWithLocalColumns) {
  SPMAT_SKIP_WITHOUT_GPU();
  // 200,000 rows of 6: random columns (batched sub-warp kernel) and a band (scalar kernel),
  // built from the host and from the device: the same plan, the fp64 reference's product.
  const std::int64_t n = 200000;
  const Csr64 random = random_csr(n, n, std::vector<std::int64_t>(static_cast<std::size_t>(n), 6), 63);
  const Csr64 band = gen::generate<double, std::int64_t>("gen:banded:200000:2");
  for (const auto& [name, a64, want_scalar] :
       {std::tuple{"random", &random, false}, std::tuple{"band", &band, true}}) {
    SCOPED_TRACE(name);
    check_spmv_all<double, std::int32_t>("csr", Scenario{name, *a64});
    const std::vector<std::int64_t> plan = csr_plan_from_host_and_device(*a64);
    ASSERT_GE(plan.size(), 11u) << "no plan scalars";
    EXPECT_EQ(plan[0] == static_cast<std::int64_t>(CsrKernel::scalar), want_scalar);
    EXPECT_EQ(plan[10] != 0, !want_scalar);  // random columns: batched steps
  }
}

TEST(CsrCuda, LongRowsOfRandomColumnsBatchTheStepsOfTheirWarps) {
  SPMAT_SKIP_WITHOUT_GPU();
  // 5,000 rows of 1,100 random columns out of 200,000: a warp a row (too few rows to halve the
  // lanes), x of 1.6 MB, columns not local: the warps batch their steps
  // (csr_plan::may_batch_warp_rows). Host and device builds plan alike; the products match the
  // fp64 reference in both precisions.
  const std::int64_t rows = 5000, cols = 200000, len = 1100;
  const Csr64 a64 = random_csr(rows, cols, std::vector<std::int64_t>(static_cast<std::size_t>(rows), len), 74);
  ASSERT_GE(len, csr_plan::kBatchWarpRowMean);
  ASSERT_FALSE(csr_plan::column_locality(a64.rows, a64.row_ptr.data(), a64.col_idx.data()).local());
  const Scenario sc{"random_5000_rows_of_1100", a64};
  check_spmv_all<double, std::int32_t>("csr", sc);
  check_spmv_all<float, std::int32_t>("csr", sc);
  const std::vector<std::int64_t> plan = csr_plan_from_host_and_device(a64);
  ASSERT_GE(plan.size(), 11u) << "no plan scalars";
  EXPECT_NE(plan[10], 0) << "batched steps";
}

TEST(CsrCuda, SkewedSpmvIsBitwiseReproducibleOverTwentyRuns) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const auto& v : skewed_variants()) {
    for (const auto& sc : skewed_scenarios()) {
      SCOPED_TRACE(v.label + " on " + sc.name);
      // Real values and x: the order of the additions shows in the last bits.
      auto af = convert<float, std::int32_t>(sc.a);
      af.values = testing::random_vector<float>(af.nnz(), 7);
      auto ad = convert<double, std::int64_t>(sc.a);
      ad.values = testing::random_vector<double>(ad.nnz(), 8);
      const auto mf = Matrix<float>::build(af, v.format, Backend::cuda, v.options);
      const auto md = Matrix<double>::build(ad, v.format, Backend::cuda, v.options);
      const auto xf = testing::random_vector<float>(af.cols, 9);
      const auto xd = testing::random_vector<double>(ad.cols, 10);
      const auto yf = testing::apply_spmv(mf, Op::spmv, xf);
      const auto yd = testing::apply_spmv(md, Op::spmv, xd);
      for (int run = 0; run < 20; ++run) {
        const auto yf2 = testing::apply_spmv(mf, Op::spmv, xf);
        const auto yd2 = testing::apply_spmv(md, Op::spmv, xd);
        ASSERT_EQ(0, std::memcmp(yf.data(), yf2.data(), yf.size() * sizeof(float))) << "run " << run;
        ASSERT_EQ(0, std::memcmp(yd.data(), yd2.data(), yd.size() * sizeof(double))) << "run " << run;
      }
      // And close to the fp64 reference (rounding only: no row lost or counted twice).
      const auto want = reference::spmv(ad, std::span<const double>(xd), 1.0, 0.0, std::span<const double>());
      EXPECT_LE(reference::relative_norm2_error(std::span<const double>(yd), std::span<const double>(want)),
                testing::tolerance<double>());
    }
  }
}

TEST(CsrCuda, NanAndInfInSkewedRowsPropagateLikeTheReference) {
  SPMAT_SKIP_WITHOUT_GPU();
  auto a = convert<double, std::int32_t>(skewed_scenarios()[2].a);  // every_row_length_class
  // A NaN in a short, a medium and a long row (2·tpr boundary, 511, 4096 entries); an Inf in
  // another long row (its 0·Inf, if x has a 0 there, is NaN as in the reference).
  for (std::int64_t r : {97 * 10, 97 * 18, 97 * 25}) {
    ASSERT_GT(a.row_ptr[r + 1], a.row_ptr[r]);
    a.values[a.row_ptr[r] + (a.row_ptr[r + 1] - a.row_ptr[r]) / 2] = std::numeric_limits<double>::quiet_NaN();
  }
  a.values[a.row_ptr[97 * 28]] = std::numeric_limits<double>::infinity();
  for (const auto& v : skewed_variants()) {
    SCOPED_TRACE(v.label);
    const auto m = Matrix<double>::build(a, v.format, Backend::cuda, v.options);
    const auto x = testing::random_vector<double>(a.cols, 3, true);
    const auto got = testing::apply_spmv(m, Op::spmv, x);
    const auto want = reference::spmv(a, std::span<const double>(x), 1.0, 0.0, std::span<const double>());
    for (std::int64_t r = 0; r < a.rows; ++r) {
      if (std::isnan(want[r]))
        ASSERT_TRUE(std::isnan(got[r])) << "row " << r;
      else
        ASSERT_EQ(got[r], want[r]) << "row " << r;  // small integers: exact
    }
  }
}

TEST(CsrCuda, SkewedSpmmMatchesTheReferenceInBothLayouts) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const auto& sc : skewed_scenarios()) {
    check_spmm_all<double, std::int32_t>("csr", sc);
    check_spmm_all<float, std::int64_t>("csr-merge", sc);
  }
}

// ---- narrow columns: 64-bit indices, 32-bit column indices on the device ----

/// Every csr kernel under narrow_cols, and the auto kernel with bins on (medium rows; long rows
/// in the chunked kernels): the option of the csr entry, with the kernel the other entries preset.
std::vector<Variant> narrow_variants() {
  return {{"csr", {}, "csr"},
          {"csr", FormatOptions().set("kernel", "scalar"), "csr kernel=scalar"},
          {"csr", FormatOptions().set("kernel", "vector"), "csr kernel=vector"},
          {"csr", FormatOptions().set("kernel", "merge"), "csr kernel=merge"},
          {"csr", FormatOptions().set("bins", "on"), "csr bins=on"}};
}

FormatOptions with_narrow_cols(FormatOptions o, const char* mode) {
  o.set("narrow_cols", mode);
  return o;
}

/// The ragged, long-row and degenerate scenarios, then the skewed ones.
std::vector<const Scenario*> narrow_scenarios() {
  std::vector<const Scenario*> v;
  for (const auto& sc : scenarios()) v.push_back(&sc);
  for (const auto& sc : skewed_scenarios()) v.push_back(&sc);
  return v;
}

template <class V>
void append(std::vector<V>& out, const std::vector<V>& part) {
  out.insert(out.end(), part.begin(), part.end());
}

/// The deterministic products of `m`, downloaded one after the other: spmv into NaN poison and
/// with alpha = -1.5, beta = 0.5; spmm in both layouts for k = 1, 5, 33, beta 0 (into NaN
/// poison) and 0.5. Real-valued operands: the order of the additions shows in the last bits.
template <class V>
std::vector<V> deterministic_products(const Matrix<V>& m, std::uint64_t seed) {
  std::vector<V> out;
  const auto x = testing::random_vector<V>(m.cols(), seed);
  const auto y0 = testing::random_vector<V>(m.rows(), seed + 1);
  append(out, testing::apply_spmv(m, Op::spmv, x));
  append(out, testing::apply_spmv(m, Op::spmv, x, &y0, V(-1.5), V(0.5)));
  for (DenseLayout layout : {DenseLayout::row_major, DenseLayout::col_major}) {
    for (std::int64_t k : {1, 5, 33}) {
      const auto b = testing::random_vector<V>(m.cols() * k, seed + 2 + k);
      for (V beta : {V(0), V(0.5)}) {
        const auto c_init = beta == V(0) ? testing::poisoned<V>(m.rows() * k)
                                         : testing::random_vector<V>(m.rows() * k, seed + 3 + k);
        cuda::DeviceBuffer<V> db(b, "test B"), dc(c_init, "test C");
        m.spmm(std::span<const V>(db.data(), db.size()), dc.span(), k, layout, V(-1.5), beta);
        cuda::synchronize();
        append(out, dc.download());
      }
    }
  }
  return out;
}

template <class V>
void expect_narrow_products_bitwise_wide(const Variant& v, const Scenario& sc) {
  SCOPED_TRACE(v.label + " " + std::string(precision_name<V>()) + " on " + sc.name);
  auto a = convert<V, std::int64_t>(sc.a);
  a.values = testing::random_vector<V>(a.nnz(), 31);
  const auto on = Matrix<V>::build(a, v.format, Backend::cuda, with_narrow_cols(v.options, "on"));
  const auto off = Matrix<V>::build(a, v.format, Backend::cuda, with_narrow_cols(v.options, "off"));
  const auto got = deterministic_products(on, 41), want = deterministic_products(off, 41);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(V)));
}

TEST(CsrCuda, NarrowColumnsGiveBitwiseTheProductsOfWideColumns) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const auto& v : narrow_variants())
    for (const Scenario* sc : narrow_scenarios()) {
      expect_narrow_products_bitwise_wide<float>(v, *sc);
      expect_narrow_products_bitwise_wide<double>(v, *sc);
    }
}

TEST(CsrCuda, NarrowAndWideColumnsMatchTheReferenceForEveryKernel) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const auto& v : narrow_variants())
    for (const char* mode : {"on", "off"}) {
      SCOPED_TRACE(v.label + " narrow_cols=" + mode);
      const FormatOptions o = with_narrow_cols(v.options, mode);
      for (const Scenario* sc : narrow_scenarios()) {
        check_spmv_all<float, std::int64_t>(v.format, *sc, o);  // spmv and spmv_t (atomics)
        check_spmv_all<double, std::int64_t>(v.format, *sc, o);
        check_spmm_all<float, std::int64_t>(v.format, *sc, o);
        check_spmm_all<double, std::int64_t>(v.format, *sc, o);
      }
    }
}

TEST(CsrCuda, NarrowColumnsHoldFourBytesLessPerNonzeroAndRoundTrip) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const auto& v : narrow_variants())
    for (const Scenario* sc : narrow_scenarios()) {
      SCOPED_TRACE(v.label + " on " + sc->name);
      const auto a = convert<float, std::int64_t>(sc->a);
      const auto on = Matrix<float>::build(a, v.format, Backend::cuda, with_narrow_cols(v.options, "on"));
      const auto off = Matrix<float>::build(a, v.format, Backend::cuda, with_narrow_cols(v.options, "off"));
      const auto automatic = Matrix<float>::build(a, v.format, Backend::cuda, v.options);
      EXPECT_EQ(on.storage_bytes() + 4 * static_cast<std::size_t>(a.nnz()), off.storage_bytes());
      EXPECT_EQ(automatic.storage_bytes(), on.storage_bytes());  // auto narrows where it can
      EXPECT_EQ(on.to_csr(), a);
      EXPECT_EQ(off.to_csr(), a);
      // 32-bit indices: the columns are 32-bit already, the three modes store the same.
      const auto a32 = convert<float, std::int32_t>(sc->a);
      const auto on32 = Matrix<float>::build(a32, v.format, Backend::cuda, with_narrow_cols(v.options, "on"));
      for (const char* mode : {"auto", "off"}) {
        const auto m32 = Matrix<float>::build(a32, v.format, Backend::cuda, with_narrow_cols(v.options, mode));
        EXPECT_EQ(m32.storage_bytes(), on32.storage_bytes()) << mode;
        const auto ms = detail::impl_of(m32).stored_arrays(), os = detail::impl_of(on32).stored_arrays();
        ASSERT_EQ(ms.size(), os.size()) << mode;
        for (std::size_t i = 0; i < ms.size(); ++i)
          EXPECT_TRUE(ms[i].name == os[i].name && ms[i].bytes == os[i].bytes) << mode << " " << ms[i].name;
      }
      EXPECT_EQ(on32.to_csr(), a);
    }
}

TEST(CsrCuda, NarrowColumnsDeviceBuiltArraysEqualTheHostBuilt) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const auto& v : narrow_variants())
    for (const char* mode : {"on", "off"}) {
      const FormatOptions o = with_narrow_cols(v.options, mode);
      for (const Scenario* sc : narrow_scenarios()) {
        SCOPED_TRACE(v.label + " narrow_cols=" + mode + " on " + sc->name);
        auto a = convert<double, std::int64_t>(sc->a);
        a.values = testing::random_vector<double>(a.nnz(), 51);
        const auto host = Matrix<double>::build(a, v.format, Backend::cuda, o);
        const auto dev = Matrix<double>::build(cuda::upload_csr(a), v.format, o);
        const auto hs = detail::impl_of(host).stored_arrays();
        const auto ds = detail::impl_of(dev).stored_arrays();
        ASSERT_EQ(hs.size(), ds.size());
        for (std::size_t i = 0; i < hs.size(); ++i) {
          EXPECT_EQ(hs[i].name, ds[i].name);
          EXPECT_TRUE(hs[i].bytes == ds[i].bytes) << "array " << hs[i].name << " differs";
          if (hs[i].name == "col_idx")  // the width held
            EXPECT_EQ(hs[i].bytes.size(), (mode == std::string("on") ? 4u : 8u) * static_cast<std::size_t>(a.nnz()));
        }
        EXPECT_EQ(host.storage_bytes(), dev.storage_bytes());
        EXPECT_EQ(dev.to_csr(), a);
        const auto got = deterministic_products(dev, 61), want = deterministic_products(host, 61);
        ASSERT_EQ(got.size(), want.size());
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(double)));
      }
    }
}

TEST(CsrCuda, NarrowColumnsTakeValueUpdates) {
  SPMAT_SKIP_WITHOUT_GPU();
  const auto a0 = convert<double, std::int64_t>(skewed_scenarios()[2].a);  // every_row_length_class
  auto a1 = a0;
  a1.values = testing::random_vector<double>(a1.nnz(), 71, true);
  for (const auto& v : narrow_variants()) {
    SCOPED_TRACE(v.label);
    const FormatOptions o = with_narrow_cols(v.options, "on");
    auto host = Matrix<double>::build(a0, v.format, Backend::cuda, o);
    auto dev = Matrix<double>::build(cuda::upload_csr(a0), v.format, o);
    host.update_values(std::span<const double>(a1.values), Memory::host);
    cuda::DeviceBuffer<double> dv(a1.values, "test values");
    dev.update_values(std::span<const double>(dv.data(), dv.size()), Memory::device);
    cuda::synchronize();
    testing::expect_matrix_spmv_and_spmv_t_match(host, a1, 81);
    testing::expect_matrix_spmv_and_spmv_t_match(dev, a1, 82);
    EXPECT_EQ(host.to_csr(), a1);
    EXPECT_EQ(dev.to_csr(), a1);
  }
}

TEST(CsrCuda, NarrowColsOnRefusesMoreThanInt32MaxColumnsBeforeAllocating) {
  SPMAT_SKIP_WITHOUT_GPU();
  const auto a = wider_than_int32_columns<float>();
  const FormatOptions on = FormatOptions().set("narrow_cols", "on");
  // From the host: not a single device allocation before the error.
  const auto before = device_memory_usage();
  try {
    (void)Matrix<float>::build(a, "csr", Backend::cuda, on);
    ADD_FAILURE() << "narrow_cols=on built a matrix of 2^31 columns";
  } catch (const ParseError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("narrow_cols"), std::string::npos) << what;
    EXPECT_NE(what.find("cols = 2147483648"), std::string::npos) << what;
  }
  EXPECT_EQ(device_memory_usage().attempts, before.attempts);
  // From the device: the same error, nothing big allocated (the validation's scratch only).
  const auto d = cuda::upload_csr(a);
  const std::size_t held = device_memory_usage().bytes;
  reset_device_memory_peak();
  EXPECT_THROW((void)Matrix<float>::build(d.view(), "csr", on), ParseError);
  EXPECT_LT(device_memory_usage().peak_bytes - held, std::size_t{1} << 20);
  EXPECT_EQ(device_memory_usage().bytes, held);
  // auto and off keep 64-bit columns, which round-trip.
  for (const char* mode : {"auto", "off"}) {
    const auto m = Matrix<float>::build(a, "csr", Backend::cuda, FormatOptions().set("narrow_cols", mode));
    EXPECT_EQ(m.to_csr(), a) << mode;
    const auto dm = Matrix<float>::build(cuda::upload_csr(a), "csr", FormatOptions().set("narrow_cols", mode));
    EXPECT_EQ(dm.to_csr(), a) << mode;
    EXPECT_EQ(dm.storage_bytes(), m.storage_bytes()) << mode;
  }
}

#else
TEST(CsrCuda, KernelTestsNeedACudaBuild) { GTEST_SKIP() << "spmat was built without CUDA"; }
#endif  // SPMAT_WITH_CUDA

}  // namespace
}  // namespace spmat
