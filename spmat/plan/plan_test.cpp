// spmat/plan/plan_test.cpp — the planner: statistics, choices on synthetic families, the plan
// cache, and the "auto" format's lazily built transpose.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "spmat/gen/generators.hpp"
#include "spmat/matrix.hpp"
#include "spmat/plan/candidate_builder.hpp"
#include "spmat/plan/model.hpp"
#include "spmat/plan/plan.hpp"
#include "spmat/plan/plan_cache.hpp"
#include "spmat/plan/planned.hpp"
#include "spmat/registry.hpp"

namespace spmat {
namespace {

namespace fs = std::filesystem;

Csr<double, std::int32_t> gen(const std::string& spec) { return gen::generate<double, std::int32_t>(spec); }

/// A matrix whose first row holds every column: the extreme of skew.
Csr<double, std::int32_t> one_dense_row(std::int32_t n) {
  Csr<double, std::int32_t> a;
  a.rows = a.cols = n;
  a.row_ptr.assign(1, 0);
  for (std::int32_t c = 0; c < n; ++c) a.col_idx.push_back(c);
  a.row_ptr.push_back(n);
  for (std::int32_t r = 1; r < n; ++r) {
    a.col_idx.push_back(r);
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
  }
  a.values.assign(a.col_idx.size(), 1.0);
  return a;
}

bool is_ell_family(const std::string& f) {
  return f == "ell" || f == "ellr" || f == "sell" || f == "bro-ell" || f == "bro-ell-bar" ||
         f == "bro-csr";
}

TEST(PlanStats, StencilIsEvenAndShifted) {
  const MatrixStats s = matrix_stats(gen("gen:lap2d:100"));
  EXPECT_EQ(s.rows, 10000);
  EXPECT_NEAR(s.mean_row, 4.96, 0.01);
  EXPECT_EQ(s.max_row, 5);
  EXPECT_EQ(s.heavy_share, 0.0);
  EXPECT_EQ(s.long_share, 0.0);
  EXPECT_GT(s.shifted_rows, 0.9);
  EXPECT_LT(s.col_spread, 0.01);
  EXPECT_EQ(s.max_col, 5);
  EXPECT_EQ(plan_model::classify(s), plan_model::StructureClass::stencil);
}

TEST(PlanStats, DenseRowIsSkewedAndLong) {
  const MatrixStats s = matrix_stats(one_dense_row(5000));
  EXPECT_EQ(s.max_row, 5000);
  EXPECT_GT(s.long_share, 0.4);
  EXPECT_GT(s.heavy_share, 0.4);
  EXPECT_EQ(s.max_col, 2);  // column 0 and the diagonal
  EXPECT_EQ(plan_model::classify(s), plan_model::StructureClass::skewed);
  // Aᵀ has one dense column turned into a dense row: skew moves with it.
  const MatrixStats t = s.transposed();
  EXPECT_EQ(t.max_row, 2);
  EXPECT_EQ(t.max_col, 5000);
}

TEST(PlanStats, RandomColumnsAreIrregular) {
  const MatrixStats s = matrix_stats(gen("gen:random_k:20000:8"));
  EXPECT_GT(s.col_spread, 0.2);
  EXPECT_GT(s.sectors_per_nnz, 0.9);
  EXPECT_EQ(plan_model::classify(s), plan_model::StructureClass::irregular);
}

TEST(PlanStats, FingerprintIgnoresValuesOnly) {
  auto a = gen("gen:random_k:3000:6");
  auto b = a;
  for (auto& v : b.values) v *= 2;
  EXPECT_EQ(structure_fingerprint(a), structure_fingerprint(b));
  b.col_idx[10] = b.col_idx[10] == 0 ? 1 : 0;
  EXPECT_NE(structure_fingerprint(a), structure_fingerprint(b));
}

// The GPU choices are a pure function of the statistics: checked without a GPU.
class GpuPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_compiled()) GTEST_SKIP() << "spmat built without CUDA: no GPU formats to plan among";
  }
  static PlanRequest request(std::vector<Op> ops) {
    PlanRequest r;
    r.backend = Backend::cuda;
    r.ops = std::move(ops);
    return r;
  }
};

TEST_F(GpuPlan, SkewedMatricesNeverGetAnEllFamilyFormat) {
  // Skewed rows: no ELL-family kernel runs A. (Aᵀ of a power-law matrix has even rows, and
  // an ELL format on a stored Aᵀ is fair game there.)
  for (const char* spec : {"gen:powerlaw:200000:16", "gen:rmat:16:16", "gen:powerlaw:20000:4"}) {
    const FormatPlan p = plan(gen(spec), request({Op::spmv, Op::spmv_t}));
    for (const auto& c : p.candidates)
      if (!c.transposed) EXPECT_FALSE(is_ell_family(c.format)) << spec << ": " << c.format;
  }
  // Skewed both ways (a dense row and a dense column): no ELL-family candidate at all.
  auto a = one_dense_row(100000);
  const auto both = [&] {
    Coo<double, std::int32_t> c = to_coo(a);
    for (std::int32_t r = 1; r < a.rows; ++r) {
      c.row_idx.push_back(r);
      c.col_idx.push_back(0);
      c.values.push_back(1.0);
    }
    return to_csr(c);
  }();
  for (const auto& m : {a, both}) {
    const FormatPlan p = plan(m, request({Op::spmv, Op::spmv_t}));
    for (const auto& c : p.candidates)
      if (!c.transposed || &m == &both) EXPECT_FALSE(is_ell_family(c.format)) << c.format;
  }
}

// Rows even enough that the structure class is not "skewed" (4.8 % of the entries in long
// rows), yet one row in 500 is 24 times the mean: ellr's padding ratio (19.2) and sell's
// longest row (100 entries, over 64) are past their build limits, so neither is a candidate
// that would only be refused when built.
TEST_F(GpuPlan, FormatsTheBuildLimitsRefuseAreNoCandidates) {
  Coo<double, std::int32_t> c;
  c.rows = c.cols = 20000;
  for (std::int32_t r = 0; r < c.rows; ++r)
    for (std::int32_t j = 0; j < (r % 500 == 0 ? 100 : 4); ++j) {
      c.row_idx.push_back(r);
      c.col_idx.push_back((r + 37 * j) % c.cols);
      c.values.push_back(1.0);
    }
  const auto a = to_csr(c);
  const MatrixStats s = matrix_stats(a);
  ASSERT_NE(plan_model::classify(s), plan_model::StructureClass::skewed) << s.summary();
  const FormatPlan p = plan(a, request({Op::spmv}));
  for (const auto& cand : p.candidates)
    EXPECT_TRUE(cand.format != "ellr" && cand.format != "sell") << cand.format;
  EXPECT_THROW((void)Matrix<double>::build(a, "ellr", Backend::cpu), UnsupportedError);
  EXPECT_THROW((void)Matrix<double>::build(a, "sell", Backend::cpu), UnsupportedError);
  // The same rows without the long ones: both are candidates again.
  const FormatPlan even = plan(gen("gen:random_k:20000:4"), request({Op::spmv}));
  int found = 0;
  for (const auto& cand : even.candidates) found += cand.format == "ellr" || cand.format == "sell";
  EXPECT_EQ(found, 2);
}

TEST_F(GpuPlan, DeterministicRequestsGetNoAtomicKernel) {
  for (const char* spec : {"gen:lap2d:300", "gen:rmat:14:8", "gen:random_k:50000:16", "gen:banded:100000:4"}) {
    auto r = request({Op::spmv, Op::spmv_t});
    r.deterministic = true;
    const FormatPlan p = plan(gen(spec), r);
    ASSERT_EQ(p.choices.size(), 2u);
    for (const auto& c : p.choices) {
      const auto& caps = find_format(c.format).caps.cuda;
      const Op run_op = c.transposed ? Op::spmv : c.op;
      EXPECT_TRUE(run_op == Op::spmv ? caps.deterministic_spmv : caps.deterministic_spmv_t)
          << spec << ": " << to_string(c.op) << " -> " << c.format;
    }
    for (const auto& c : p.candidates) {
      const auto& caps = find_format(c.format).caps.cuda;
      const Op run_op = c.transposed ? Op::spmv : c.op;
      EXPECT_TRUE(run_op == Op::spmv ? caps.deterministic_spmv : caps.deterministic_spmv_t) << c.format;
    }
  }
}

TEST_F(GpuPlan, CusparseIsAlwaysACandidate) {
  const FormatPlan p = plan(gen("gen:lap2d:200"), request({Op::spmv, Op::spmv_t}));
  for (Op op : {Op::spmv, Op::spmv_t}) {
    bool vendor = false;
    for (const auto& c : p.candidates) vendor = vendor || (c.op == op && c.format.rfind("cusparse", 0) == 0);
    EXPECT_TRUE(vendor) << to_string(op);
  }
}

// A tall matrix whose x stays in L1 (csr_plan::x_stays_in_l1): csr's scalar kernel gathers from
// L1 as on a stencil, so csr is chosen over cuSPARSE; the same rows over a million columns keep
// the irregular class's figures, where cuSPARSE CSR is ahead.
TEST_F(GpuPlan, TallMatricesWithAnXInL1PreferCsr) {
  MatrixStats s = matrix_stats(gen("gen:random_k:20000:4"));
  ASSERT_NE(plan_model::classify(s), plan_model::StructureClass::stencil) << s.summary();
  s.rows = 4000000;
  s.nnz = 16000000;
  const auto spmv_choice = [&](std::int64_t cols, int value_bytes) {
    s.cols = cols;
    return plan_from_stats(s, request({Op::spmv}), value_bytes, 4).choices.at(0).format;
  };
  EXPECT_EQ(spmv_choice(1000, 8), "csr");
  EXPECT_EQ(spmv_choice(1000, 4), "csr");
  EXPECT_NE(spmv_choice(1000000, 8), "csr");
}

// Even rows of 64 nonzeros or more past L2 take the kernels' long-row efficiencies, on which
// csr leads whatever the columns (bands, which the stencil figures gave to bccoo-gpu, and random
// columns, which they gave to cuSPARSE); the same rows in L2, and short rows past it, do not.
TEST_F(GpuPlan, LongEvenRowsPastL2PreferCsr) {
  const auto spmv_choice = [&](const MatrixStats& s) {
    const FormatPlan p = plan_from_stats(s, request({Op::spmv}), 8, 4);
    return p.choices.at(0).format;
  };
  for (const char* spec : {"gen:banded:20000:60", "gen:random_k:6000:1000"}) {
    MatrixStats s = matrix_stats(gen(spec));
    ASSERT_NE(plan_model::classify(s), plan_model::StructureClass::skewed) << spec;
    ASSERT_GE(s.mean_row, 64.0) << spec;
    const double scale = 100e6 / (12.0 * static_cast<double>(s.nnz));  // past any L2: 100 MB
    s.rows = static_cast<std::int64_t>(static_cast<double>(s.rows) * scale);
    s.cols = static_cast<std::int64_t>(static_cast<double>(s.cols) * scale);
    s.nnz = static_cast<std::int64_t>(static_cast<double>(s.nnz) * scale);
    EXPECT_EQ(spmv_choice(s), "csr") << spec;
    const FormatPlan p = plan_from_stats(s, request({Op::spmv}), 8, 4);
    EXPECT_NE(p.reason.find("spmv: csr"), std::string::npos) << p.reason;
    for (const auto& c : p.candidates)
      if (c.format == "csr") EXPECT_NE(c.note.find("rows of 64 or more"), std::string::npos) << c.note;
  }
  // Short even rows of a band past L2 keep the stencil figures (bccoo-gpu ahead).
  MatrixStats band = matrix_stats(gen("gen:banded:20000:4"));
  band.rows = band.cols = 10000000;
  band.nnz = 9 * band.rows;
  EXPECT_EQ(spmv_choice(band), "bccoo-gpu");
}

// cuSPARSE's CSR_ALG1 is slower than CSR_ALG2 only where one row holds millions of entries:
// the same skewed statistics with a longest row of 60 K and of 2 M entries out of 36 M.
TEST_F(GpuPlan, ARowOfMillionsPrefersCusparseAlg2) {
  MatrixStats s = matrix_stats(gen("gen:powerlaw:20000:16"));
  ASSERT_EQ(plan_model::classify(s), plan_model::StructureClass::skewed) << s.summary();
  s.rows = s.cols = 2000000;
  s.nnz = 36000000;
  const auto rank = [&](std::int64_t max_row, int value_bytes) {
    s.max_row = max_row;
    const FormatPlan p = plan_from_stats(s, request({Op::spmv}), value_bytes, 4);
    double alg1 = 0, alg2 = 0;
    for (const auto& c : p.candidates) {
      if (c.format == "cusparse-csr") alg1 = c.predicted_ms;
      if (c.format == "cusparse-csr-alg2") alg2 = c.predicted_ms;
    }
    EXPECT_GT(alg1, 0);
    EXPECT_GT(alg2, 0);
    return alg2 / alg1;
  };
  for (int vb : {4, 8}) {
    EXPECT_GT(rank(60000, vb), 1.0) << vb;
    EXPECT_LT(rank(2000000, vb), 1.0) << vb;
  }
}

TEST_F(GpuPlan, MemoryBudgetRulesOutAStoredTranspose) {
  const auto a = gen("gen:random_k:50000:8");
  auto r = request({Op::spmv_t});
  r.memory_budget = storage_bytes(a) + storage_bytes(a) / 2;  // room for one copy, not two
  for (const auto& c : plan(a, r).candidates) EXPECT_FALSE(c.transposed) << c.format;
  r.transpose = "store";
  r.memory_budget = 0;
  for (const auto& c : plan(a, r).candidates) EXPECT_TRUE(c.transposed) << c.format;
}

TEST_F(GpuPlan, ChoicesAreRankedAndExplained) {
  const FormatPlan p = plan(gen("gen:lap2d:300"), request({Op::spmv}));
  ASSERT_FALSE(p.candidates.empty());
  for (std::size_t i = 1; i < p.candidates.size(); ++i)
    EXPECT_LE(p.candidates[i - 1].predicted_ms, p.candidates[i].predicted_ms);
  EXPECT_EQ(p.choices.front().format, p.candidates.front().format);
  EXPECT_NE(p.reason.find("stencil"), std::string::npos) << p.reason;
  EXPECT_NE(p.describe().find(p.choices.front().format), std::string::npos);
}

// tiled's model plans its work rows for one K and dense layout: the plan builds it for the
// product's, named in the choice.
TEST_F(GpuPlan, SpmmBuildsTiledForTheProductsKAndLayout) {
  auto r = request({Op::spmm});
  r.k = 128;
  r.layout = DenseLayout::col_major;
  const FormatPlan p = plan(gen("gen:lap2d:100"), r);
  ASSERT_EQ(p.choices.size(), 1u);
  EXPECT_EQ(p.choices.front().format, "tiled:k=128,layout=col");
  const FormatSpec spec = FormatSpec::parse(p.choices.front().format);
  EXPECT_EQ(spec.name, "tiled");
  EXPECT_EQ(spec.options.get_int("k", 0), 128);
  EXPECT_EQ(spec.options.get_string("layout", ""), "col");
}

// SpMM's candidates on the GPU: tiled, the model's choice, and cuSPARSE's SpMM behind it,
// which tune times beside it and keeps where it is faster.
TEST_F(GpuPlan, SpmmOffersCusparseBehindTiled) {
  auto r = request({Op::spmm});
  r.k = 128;
  const FormatPlan p = plan(gen("gen:powerlaw:20000:4"), r);
  ASSERT_EQ(p.candidates.size(), 2u);
  EXPECT_EQ(p.choices.front().format, "tiled:k=128,layout=row");
  EXPECT_EQ(p.candidates[1].format, "cusparse-coo");
  EXPECT_GT(p.candidates[1].predicted_ms, p.candidates[0].predicted_ms);
  // COO's default SpMM adds with atomics: a deterministic plan offers the CSR kernel.
  r.deterministic = true;
  const FormatPlan det = plan(gen("gen:powerlaw:20000:4"), r);
  ASSERT_EQ(det.candidates.size(), 2u);
  EXPECT_EQ(det.candidates[1].format, "cusparse-csr");
}

TEST(FormatSpec, SplitsNameAndOptions) {
  const FormatSpec plain = FormatSpec::parse("csr");
  EXPECT_EQ(plain.name, "csr");
  EXPECT_TRUE(plain.options.all().empty());
  const FormatSpec with = FormatSpec::parse("tiled:k=64,layout=row");
  EXPECT_EQ(with.name, "tiled");
  EXPECT_EQ(with.options.to_string(), "k=64,layout=row");
  EXPECT_THROW(FormatSpec::parse("tiled:k"), ParseError);
}

// The options of a spec reach the format's build: a bad one is the format's own error.
TEST(CandidateBuilderSpec, PassesTheOptionsToTheFormat) {
  const auto a = gen("gen:lap2d:30");
  CandidateBuilder<double, std::int32_t> builder(a, Backend::cpu);
  const auto m = builder.build("tiled:k=128,layout=row", false);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->shape().rows, a.rows);
  try {
    builder.build("tiled:kernel=none", false);
    ADD_FAILURE() << "tiled accepted kernel=none";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel"), std::string::npos) << e.what();
  }
}

TEST(PlanRequestOptions, ParsesAndRejects) {
  FormatOptions o;
  o.set("ops", "spmv+spmm").set("k", "64").set("deterministic", "1").set("memory", "1000");
  const PlanRequest r = PlanRequest::from_options(o, Backend::cpu, PlanLevel::automatic);
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_EQ(r.ops[1], Op::spmm);
  EXPECT_EQ(r.k, 64);
  EXPECT_TRUE(r.deterministic);
  EXPECT_EQ(r.memory_budget, 1000u);
  EXPECT_THROW(PlanRequest::from_options(FormatOptions().set("ops", "spmx"), Backend::cpu,
                                         PlanLevel::automatic), Error);
  EXPECT_THROW(PlanRequest::from_options(FormatOptions().set("transpose", "sideways"), Backend::cpu,
                                         PlanLevel::automatic), ParseError);
  EXPECT_THROW(PlanRequest::from_options(FormatOptions().set("deterministic", "maybe"), Backend::cpu,
                                         PlanLevel::automatic), ParseError);
}

/// Points the plan cache at a fresh directory for one test.
class PlanCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("spmat-plan-cache-test-" + std::to_string(std::random_device{}()));
    fs::remove_all(dir_);
    const char* old = std::getenv("SPMAT_CACHE_DIR");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("SPMAT_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_) setenv("SPMAT_CACHE_DIR", old_.c_str(), 1);
    else unsetenv("SPMAT_CACHE_DIR");
    fs::remove_all(dir_);
  }
  static PlanRequest tune_request() {
    PlanRequest r;  // cpu: spmv_t has two candidates (scatter, stored transpose) to time
    r.level = PlanLevel::tune;
    r.ops = {Op::spmv, Op::spmv_t};
    return r;
  }
  fs::path dir_;
  bool had_ = false;
  std::string old_;
};

TEST_F(PlanCacheTest, SecondTuneComesFromTheCache) {
  const auto a = gen("gen:random_k:20000:8");
  const FormatPlan first = plan(a, tune_request());
  EXPECT_FALSE(first.from_cache);
  const OpChoice* t = first.choice(Op::spmv_t);
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(std::isnan(t->measured_ms)) << "the spmv_t candidates were timed";
  const FormatPlan second = plan(a, tune_request());
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.tune_ms, 0.0);
  ASSERT_EQ(second.choices.size(), first.choices.size());
  for (std::size_t i = 0; i < first.choices.size(); ++i) {
    EXPECT_EQ(second.choices[i].format, first.choices[i].format);
    EXPECT_EQ(second.choices[i].transposed, first.choices[i].transposed);
  }
  // Another structure misses the cache.
  EXPECT_FALSE(plan(gen("gen:random_k:20000:7"), tune_request()).from_cache);
}

TEST_F(PlanCacheTest, CorruptCacheIsIgnoredAndRewritten) {
  const auto a = gen("gen:lap2d:120");
  plan(a, tune_request());
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  std::string header_and_key;  // the valid file's first two lines
  {
    std::ifstream in(files[0]);
    std::string l1, l2;
    std::getline(in, l1);
    std::getline(in, l2);
    header_and_key = l1 + "\n" + l2 + "\n";
  }
  const std::string corrupt[] = {"", "spmat-plan-cache 1\nkey nonsense\n", "\x01\x02\x03 binary",
                                 header_and_key + "choice spmv\n", header_and_key + "choice spmv csr 7 1 1\n",
                                 header_and_key};
  for (const auto& garbage : corrupt) {
    std::ofstream(files[0], std::ios::trunc) << garbage;
    testing::internal::CaptureStderr();
    const FormatPlan p = plan(a, tune_request());
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_FALSE(p.from_cache) << garbage;
    EXPECT_NE(err.find("plan cache"), std::string::npos) << err;
    EXPECT_TRUE(plan(a, tune_request()).from_cache) << "rewritten after the corrupt read";
  }
}

TEST_F(PlanCacheTest, UnknownFormatInCacheIsNotTrusted) {
  const auto a = gen("gen:lap2d:90");
  plan(a, tune_request());
  fs::path f = fs::directory_iterator(dir_)->path();
  std::ifstream in(f);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const auto pos = text.find("choice spmv csr");
  ASSERT_NE(pos, std::string::npos) << text;
  text.replace(pos, 15, "choice spmv no-such-format");
  std::ofstream(f, std::ios::trunc) << text;
  testing::internal::CaptureStderr();
  EXPECT_FALSE(plan(a, tune_request()).from_cache);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("no-such-format"), std::string::npos);
}

TEST(AutoFormat, IsTheDefaultAndReportsItsPlan) {
  const auto a = gen("gen:lap2d:50");
  const auto A = Matrix<double>::build(a);
  EXPECT_EQ(A.format_name(), "auto");
  ASSERT_NE(A.plan(), nullptr);
  EXPECT_EQ(A.plan()->choice(Op::spmv)->format, "csr");
  EXPECT_EQ(Matrix<double>::build(a, "csr").plan(), nullptr);
}

TEST(AutoFormat, TransposedCopyIsBuiltOnFirstUse) {
  const auto a = gen("gen:random_k:4000:5");  // not symmetric
  const auto A = Matrix<double>::build(a, "auto", Backend::cpu, FormatOptions().set("transpose", "store"));
  const std::size_t one = A.storage_bytes();
  EXPECT_EQ(one, storage_bytes(a));
  std::vector<double> x(a.rows, 1.0), y(a.cols, NAN);
  A.spmv_t(x, y);
  EXPECT_EQ(A.storage_bytes(), 2 * one) << "the transposed copy exists after the first spmv_t";
  std::vector<double> want(a.cols, 0.0);
  for (std::int32_t r = 0; r < a.rows; ++r)
    for (std::int32_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) want[a.col_idx[i]] += a.values[i];
  for (std::int32_t c = 0; c < a.cols; ++c) EXPECT_NEAR(y[c], want[c], 1e-12) << c;

  // A symmetric matrix's transpose is the matrix itself: no second storage.
  const auto s = gen("gen:lap2d:60");
  const auto S = Matrix<double>::build(s, "auto", Backend::cpu, FormatOptions().set("transpose", "store"));
  std::vector<double> xs(s.rows, 1.0), ys(s.cols, NAN);
  S.spmv_t(xs, ys);
  EXPECT_EQ(S.storage_bytes(), storage_bytes(s));
}

TEST(AutoFormat, SpmvOnlyPlanAnswersSpmvTFromTheSameStorage) {
  const auto a = gen("gen:random_k:3000:4");
  const auto A = Matrix<double>::build(a, "auto", Backend::cpu, FormatOptions().set("ops", "spmv"));
  std::vector<double> x(a.rows, 1.0), y(a.cols, NAN);
  A.spmv_t(x, y);
  EXPECT_EQ(A.storage_bytes(), storage_bytes(a));
  for (double v : y) EXPECT_FALSE(std::isnan(v));
}

}  // namespace
}  // namespace spmat

namespace spmat {
namespace {

// A format that refuses the matrix (ELL on one dense row: too much padding) gives way to the
// operation's next candidate, at once for the first operation and lazily for the others.
TEST(AutoFormat, RefusingFormatGivesWayToTheNextCandidate) {
  auto a = one_dense_row(3000);
  FormatPlan p;
  p.backend = Backend::cpu;
  p.precision = "fp64";
  p.choices = {{Op::spmv, "ell", false, 1.0, NAN}, {Op::spmv_t, "ell", true, 1.0, NAN}};
  p.candidates = {{Op::spmv, "ell", false, 1.0}, {Op::spmv, "csr", false, 2.0},
                  {Op::spmv_t, "ell", true, 1.0}, {Op::spmv_t, "csr", true, 2.0}};
  auto both = to_coo(a);  // and a dense column, so that Aᵀ's ELL refuses as well
  for (std::int32_t r = 1; r < a.rows; ++r) {
    both.row_idx.push_back(r);
    both.col_idx.push_back(0);
    both.values.push_back(2.0);
  }
  const auto m = to_csr(both);
  auto impl = PlannedImpl<double>::build(m, p);
  ASSERT_EQ(impl->plan()->choice(Op::spmv)->format, "csr");
  EXPECT_NE(impl->plan()->reason.find("ell refused spmv"), std::string::npos) << impl->plan()->reason;
  std::vector<double> x(m.rows, 1.0), y(m.cols, NAN);
  impl->spmv_t(x.data(), y.data(), 1.0, 0.0);
  EXPECT_EQ(impl->plan()->choice(Op::spmv_t)->format, "csr");
  EXPECT_TRUE(impl->plan()->choice(Op::spmv_t)->transposed);
  EXPECT_NE(impl->plan()->reason.find("refused spmv_t"), std::string::npos) << impl->plan()->reason;
  std::vector<double> want(m.cols, 0.0);
  for (std::int32_t r = 0; r < m.rows; ++r)
    for (std::int32_t i = m.row_ptr[r]; i < m.row_ptr[r + 1]; ++i) want[m.col_idx[i]] += m.values[i];
  for (std::int32_t c = 0; c < m.cols; ++c) ASSERT_NEAR(y[c], want[c], 1e-9) << c;
}

TEST(AutoFormat, EveryCandidateRefusingIsAClearError) {
  FormatPlan p;
  p.backend = Backend::cpu;
  p.choices = {{Op::spmv, "ell", false, 1.0, NAN}};
  p.candidates = {{Op::spmv, "ell", false, 1.0}};
  try {
    PlannedImpl<double>::build(one_dense_row(3000), p);
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("every candidate format refused spmv"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace spmat
