// tests/bench_test.cpp — the benchmark harness: golden JSON (timings masked), failures recorded
// per measurement, speedups vs cuSPARSE, the JSON writer/reader.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "spmat/bench/harness.hpp"
#include "spmat/bench/json.hpp"
#include "spmat/bench/timer.hpp"

namespace spmat::bench {
namespace {

/// 5×5 with an empty row and integer values (sums are exact in fp32 and fp64):
///   [ 1 0 2 0 0 ]
///   [ 0 0 0 0 0 ]
///   [ 3 4 0 5 0 ]
///   [ 0 0 0 6 0 ]
///   [ 0 7 0 0 8 ]
Csr<double, std::int64_t> tiny() {
  Csr<double, std::int64_t> a;
  a.rows = a.cols = 5;
  a.row_ptr = {0, 2, 2, 5, 6, 8};
  a.col_idx = {0, 2, 0, 1, 3, 3, 1, 4};
  a.values = {1, 2, 3, 4, 5, 6, 7, 8};
  return a;
}

BenchConfig tiny_config() {
  BenchConfig c;
  c.backend = Backend::cpu;
  c.matrices = {matrix_from_csr("tiny", tiny())};
  // csr-scalar has no CPU backend: its measurements must fail and the suite go on to csr.
  c.formats = {{"csr", {}}, {"csr-scalar", {}}, {"csr", FormatOptions().set("kernel", "scalar")}};
  c.ops = {Op::spmv, Op::spmv_t, Op::spmm, Op::add};
  c.ks = {3};
  c.layouts = {DenseLayout::row_major, DenseLayout::col_major};
  c.precisions = {Precision::fp64, Precision::fp32};
  c.reps = 3;
  c.warmup = 1;
  c.integer_inputs = true;
  c.copy_gbs = 1.0;  // do not spend a second measuring the copy bandwidth
  return c;
}

/// Ginkgo-style masking: values of machine- and run-dependent fields become "*" (null stays
/// null, so "was it measured" is still compared).
void mask(Json& j) {
  static const std::set<std::string> masked = {
      "time_ms",       "time_min_ms",  "time_max_ms",  "setup_ms",
      "build_ms",      "prepare_ms",   "upload_ms",    "gbs",          "csr_equiv_gbs",
      "gflops",        "bw_fraction",  "speedup_vs_cusparse", "date",
      "commit",        "device",       "spmat_version", "build_host_before_bytes",
      "build_host_peak_bytes"};
  if (j.is_array())
    for (auto& v : j.items()) mask(v);
  if (j.is_object())
    for (auto& [k, v] : j.members()) {
      if (masked.count(k) && !v.is_null())
        v = Json("*");
      else
        mask(v);
    }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Bench, TinyCpuRunMatchesTheGoldenJsonWithTimingsMasked) {
  const Report rep = run_bench(tiny_config());
  Json j = Json::parse(to_json(rep).dump(2));  // the written text must parse back
  mask(j);
  const std::string got = j.dump(2) + "\n";
  const std::string path = std::string(SPMAT_TEST_DATA_DIR) + "/bench/tiny_cpu.json";
  if (std::getenv("SPMAT_UPDATE_GOLDEN")) {
    std::ofstream(path) << got;
    GTEST_SKIP() << "golden file rewritten: " << path;
  }
  const std::string want = read_text(path);
  ASSERT_FALSE(want.empty()) << "missing golden file " << path
                             << " (rerun with SPMAT_UPDATE_GOLDEN=1 to create it)";
  EXPECT_EQ(got, want) << "rerun with SPMAT_UPDATE_GOLDEN=1 if the change is intended";
}

TEST(Bench, EveryMeasurementIsRecordedAndFailuresDoNotStopTheSuite) {
  BenchConfig c = tiny_config();
  std::size_t calls = 0, last_total = 0;
  c.on_result = [&](const Result&, std::size_t done, std::size_t total) {
    EXPECT_EQ(done, ++calls);
    last_total = total;
  };
  const Report rep = run_bench(c);
  // 2 precisions × 3 formats × (spmv, spmv_t, 2 spmm layouts, add).
  ASSERT_EQ(rep.results.size(), 2u * 3u * 5u);
  EXPECT_EQ(calls, rep.results.size());
  EXPECT_EQ(last_total, rep.results.size());
  for (const Result& r : rep.results) {
    SCOPED_TRACE(r.format + " " + std::string(to_string(r.op)) + " " +
                 std::string(to_string(r.precision)));
    if (r.format == "csr-scalar") {
      EXPECT_FALSE(r.completed);
      EXPECT_FALSE(r.correct);
      EXPECT_NE(r.error.find("no cpu backend"), std::string::npos) << r.error;
      EXPECT_TRUE(r.unsupported) << "a backend the format lacks is a refusal by design";
      EXPECT_TRUE(std::isnan(r.time_ms));
      const Json j = to_json(r);
      ASSERT_NE(j.find("error"), nullptr);
      EXPECT_TRUE(j.find("time_ms")->is_null());
    } else {
      EXPECT_TRUE(r.completed) << r.error;
      EXPECT_TRUE(r.correct);
      EXPECT_EQ(r.max_relative_norm2, 0.0);  // integer inputs: exact
      EXPECT_EQ(r.repetitions, 3);
      EXPECT_LE(r.time_min_ms, r.time_ms);
      EXPECT_LE(r.time_ms, r.time_max_ms);
      EXPECT_GT(r.gbs, 0);
      EXPECT_GT(r.storage_bytes, 0u);
      EXPECT_EQ(to_json(r).find("error"), nullptr);
    }
  }
}

TEST(Bench, AMatrixThatFailsToLoadIsRecordedAndTheNextOneStillRuns) {
  BenchConfig c = tiny_config();
  c.formats = {{"csr", {}}};
  c.ops = {Op::spmv};
  c.precisions = {Precision::fp64};
  MatrixSource broken{"broken", [](Precision, IndexWidth) -> AnyCsr {
                        throw ParseError("broken.mtx:3: expected 3 numbers");
                      }};
  c.matrices.insert(c.matrices.begin(), broken);
  const Report rep = run_bench(c);
  ASSERT_EQ(rep.results.size(), 2u);
  EXPECT_FALSE(rep.results[0].completed);
  EXPECT_EQ(rep.results[0].error, "load: broken.mtx:3: expected 3 numbers");
  EXPECT_TRUE(rep.results[1].completed);
  EXPECT_EQ(rep.results[1].matrix, "tiny");
}

TEST(Bench, IndexOverflowIsRecordedPerMeasurement) {
  BenchConfig c = tiny_config();
  c.formats = {{"csr", {}}};
  c.ops = {Op::spmv};
  c.precisions = {Precision::fp64};
  ScopedInt32Limit limit(4);  // 5 rows do not fit
  const Report rep = run_bench(c);
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_FALSE(rep.results[0].completed);
  EXPECT_NE(rep.results[0].error.find("int64"), std::string::npos) << rep.results[0].error;
}

Result synthetic(std::string format, Op op, Precision p, double ms, std::int64_t k = 1) {
  Result r;
  r.matrix = "m";
  r.format = std::move(format);
  r.op = op;
  r.precision = p;
  r.k = k;
  r.time_ms = ms;
  r.completed = true;
  r.correct = true;
  return r;
}

TEST(Bench, SpeedupIsTheFastestCusparseMedianOverThisMedian) {
  std::vector<Result> v = {
      synthetic("cusparse-csr", Op::spmv, Precision::fp64, 2.0),
      synthetic("cusparse-coo", Op::spmv, Precision::fp64, 1.0),
      synthetic("csr", Op::spmv, Precision::fp64, 0.5),
      synthetic("ell", Op::spmv, Precision::fp64, 4.0),
      synthetic("csr", Op::spmv, Precision::fp32, 0.5),        // no cuSPARSE in fp32
      synthetic("cusparse-csr", Op::spmm, Precision::fp64, 3.0, 32),
      synthetic("csr", Op::spmm, Precision::fp64, 1.5, 32),
      synthetic("csr", Op::spmm, Precision::fp64, 1.5, 128),    // other k: no baseline
      synthetic("cusparse-csr", Op::spmv_t, Precision::fp64, 0.1),
      synthetic("csr", Op::spmv_t, Precision::fp64, 1.0),
  };
  v[8].correct = false;  // a wrong cuSPARSE result is no baseline
  Result failed = synthetic("csr", Op::spmv, Precision::fp64, NAN);
  failed.completed = false;
  v.push_back(failed);
  Result failed_cusparse = synthetic("cusparse-bsr", Op::spmv, Precision::fp64, 0.01);
  failed_cusparse.completed = false;
  v.push_back(failed_cusparse);

  compute_speedups(v);
  EXPECT_DOUBLE_EQ(v[0].speedup_vs_cusparse, 0.5);
  EXPECT_DOUBLE_EQ(v[1].speedup_vs_cusparse, 1.0);
  EXPECT_DOUBLE_EQ(v[2].speedup_vs_cusparse, 2.0);
  EXPECT_DOUBLE_EQ(v[3].speedup_vs_cusparse, 0.25);
  EXPECT_TRUE(std::isnan(v[4].speedup_vs_cusparse));
  EXPECT_DOUBLE_EQ(v[6].speedup_vs_cusparse, 2.0);
  EXPECT_TRUE(std::isnan(v[7].speedup_vs_cusparse));
  EXPECT_TRUE(std::isnan(v[9].speedup_vs_cusparse));
  EXPECT_TRUE(std::isnan(v[10].speedup_vs_cusparse));
  EXPECT_TRUE(to_json(v[4]).find("speedup_vs_cusparse")->is_null());
  EXPECT_DOUBLE_EQ(to_json(v[2]).find("speedup_vs_cusparse")->as_number(), 2.0);
}

TEST(Bench, TheTableMarksIncorrectAndFailedResults) {
  Report rep;
  rep.results = {synthetic("csr", Op::spmv, Precision::fp64, 1.0),
                 synthetic("ell", Op::spmv, Precision::fp64, 1.0),
                 synthetic("coo", Op::spmv, Precision::fp64, NAN)};
  rep.results[1].correct = false;
  rep.results[1].max_relative_norm2 = 0.03;
  rep.results[2].completed = false;
  rep.results[2].error = "format 'coo' does not support spmv on cuda";
  const std::string plain = format_table(rep, false);
  EXPECT_NE(plain.find("INCORRECT: relative error 3.00e-02"), std::string::npos) << plain;
  EXPECT_NE(plain.find("ERROR: format 'coo' does not support spmv on cuda"), std::string::npos);
  EXPECT_EQ(plain.find("\033[31m"), std::string::npos);
  EXPECT_NE(format_table(rep, true).find("\033[31m"), std::string::npos);
}

TEST(Bench, OnlyFailedOrIncorrectResultsFailTheRun) {
  BenchConfig c = tiny_config();
  c.ops = {Op::spmv};
  c.precisions = {Precision::fp64};
  Report rep = run_bench(c);
  EXPECT_EQ(failure_summary(rep), "") << "csr-scalar's missing cpu backend is not a failure";
  // A build that fails for another reason (a bad option value) is a failure.
  c.formats = {{"csr", FormatOptions().set("kernel", "no-such-kernel")}};
  rep = run_bench(c);
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_FALSE(rep.results[0].completed);
  EXPECT_FALSE(rep.results[0].unsupported) << rep.results[0].error;
  EXPECT_NE(failure_summary(rep).find("1 measurement(s) failed"), std::string::npos) << failure_summary(rep);
  // So is an incorrect result.
  Report wrong;
  wrong.results = {synthetic("csr", Op::spmv, Precision::fp64, 1.0)};
  wrong.results[0].correct = false;
  EXPECT_NE(failure_summary(wrong).find("1 result(s) exceed the error tolerance"), std::string::npos);
  EXPECT_NE(format_table(rep, false).find("ERROR: build:"), std::string::npos) << format_table(rep, false);
}

TEST(Bench, TimingSummaryIsMedianMinMax) {
  TimingStats s = summarize({5, 1, 3});
  EXPECT_EQ(s.median_ms, 3);
  EXPECT_EQ(s.min_ms, 1);
  EXPECT_EQ(s.max_ms, 5);
  EXPECT_EQ(s.repetitions, 3);
  EXPECT_EQ(summarize({4, 1, 2, 8}).median_ms, 3);
  EXPECT_EQ(summarize({}).repetitions, 0);
}

TEST(BenchJson, WritesAndReadsBackTheSameDocument) {
  Json o = Json::object();
  o.set("s", "quote \" backslash \\ newline \n tab \t ctrl \x01")
      .set("n", 20000000)
      .set("f", 0.1)
      .set("neg", -1.5e-300)
      .set("nan", NAN)
      .set("inf", INFINITY)
      .set("t", true)
      .set("z", nullptr)
      .set("a", Json::array().push(1).push("x").push(Json::object()))
      .set("e", Json::array());
  const std::string text = o.dump(2);
  EXPECT_NE(text.find("\"n\": 20000000,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"f\": 0.1,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"nan\": null,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"inf\": null,"), std::string::npos) << text;
  EXPECT_NE(text.find("\\u0001"), std::string::npos) << text;
  const Json back = Json::parse(text);
  EXPECT_EQ(back.dump(2), text);
  EXPECT_EQ(back.find("s")->as_string(), o.find("s")->as_string());
  EXPECT_EQ(back.find("neg")->as_number(), -1.5e-300);
  EXPECT_EQ(Json::parse(o.dump(-1)).dump(2), text);
}

TEST(BenchJson, MalformedTextNamesTheOffset) {
  try {
    (void)Json::parse("{\"a\": [1, 2,, 3]}");
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("offset 12"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)Json::parse("{\"a\": 1} x"), ParseError);
  EXPECT_THROW((void)Json::parse("\"open"), ParseError);
}

}  // namespace
}  // namespace spmat::bench
