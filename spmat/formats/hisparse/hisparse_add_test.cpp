// spmat/formats/hisparse/hisparse_add_test.cpp — HiSparse addition battery: C = αA + βB with
// every transpose combination, empty and full operands, cancellation, vs csr_add (exact).
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "spmat/bench/harness.hpp"
#include "spmat/formats/csr/csr.hpp"
#include "spmat/formats/hisparse/hisparse.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

template <class Value, class Index>
void check_sum(const Csr<Value, Index>& a, const Csr<Value, Index>& b, Value alpha, Value beta,
               int d, const std::string& what) {
  SCOPED_TRACE(what + ", d = " + std::to_string(d));
  const FormatOptions o = FormatOptions().set("d", std::to_string(d));
  const auto ha = HiSparse<Value, Index>::build(a, o), hb = HiSparse<Value, Index>::build(b, o);
  const auto want = csr_add(a, b, alpha, beta);
  const auto c = add(ha, hb, alpha, beta);
  EXPECT_EQ(c.to_csr(), want);
  EXPECT_EQ(c.nnz, want.nnz());
  // The dual traversal yields the same tree as a fresh build of the sum: identical bytes.
  const auto fresh = HiSparse<Value, Index>::build(want, o);
  ASSERT_EQ(c.pool.size(), fresh.pool.size());
  EXPECT_EQ(0, std::memcmp(c.bytes(), fresh.bytes(), c.storage_bytes())) << "pool bytes";
}

/// A + B, Aᵀ + B, A + Bᵀ, Aᵀ + Bᵀ: once with the transposes materialised (spmat::transpose of
/// the inputs), once as HiSparse's transposed state (no data movement).
template <class Value, class Index>
void all_transpose_combinations(const Csr<double, std::int64_t>& a64,
                                const Csr<double, std::int64_t>& b64, int d) {
  const auto a = convert<Value, Index>(a64), b = convert<Value, Index>(b64);
  const auto at = transpose(a), bt = transpose(b);
  const Value al = 2, be = -3;
  check_sum(a, b, al, be, d, "A + B");
  check_sum(at, bt, al, be, d, "At + Bt");
  if (a.rows == a.cols) {
    check_sum(at, b, al, be, d, "At + B");
    check_sum(a, bt, al, be, d, "A + Bt");
  }
  // The same through the state flag.
  const FormatOptions o = FormatOptions().set("d", std::to_string(d));
  const auto ha = HiSparse<Value, Index>::build(a, o), hb = HiSparse<Value, Index>::build(b, o);
  const auto hat = hisparse_transposed(ha), hbt = hisparse_transposed(hb);
  EXPECT_EQ(add(hat, hbt, al, be).to_csr(), csr_add(at, bt, al, be)) << "state At + Bt";
  EXPECT_TRUE(add(hat, hbt, al, be).transposed) << "both transposed: added in storage order";
  if (a.rows == a.cols) {
    EXPECT_EQ(add(hat, hb, al, be).to_csr(), csr_add(at, b, al, be)) << "state At + B";
    EXPECT_EQ(add(ha, hbt, al, be).to_csr(), csr_add(a, bt, al, be)) << "state A + Bt";
    const auto fresh = HiSparse<Value, Index>::build(csr_add(a, bt, al, be), o);
    const auto c = add(ha, hbt, al, be);
    EXPECT_EQ(c.pool.size(), fresh.pool.size()) << "state A + Bt: same tree as a fresh build";
  }
}

template <class Value, class Index>
void battery() {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {2, 16, 128}) {
    SCOPED_TRACE("d = " + std::to_string(d));
    const auto a = testing::random_int_matrix(100, 100, 0.04, seed), b = testing::random_int_matrix(100, 100, 0.04, seed + 1);
    all_transpose_combinations<Value, Index>(a, b, d);
    all_transpose_combinations<Value, Index>(testing::random_int_matrix(70, 45, 0.1, seed + 2),
                                             testing::random_int_matrix(70, 45, 0.1, seed + 3), d);
    // Empty operands (one or both) and a full operand (dense leaves).
    // Full: d = 128 needs a 128×128 full block for a dense leaf; smaller d gets them at 48×48.
    const std::int64_t fn = d == 128 ? 130 : 48;
    const auto empty = testing::random_int_matrix(100, 100, 0.0, seed);
    const auto full = testing::random_int_matrix(fn, fn, 1.0, seed + 4);
    const auto b_small = testing::random_int_matrix(fn, fn, 0.04, seed + 5);
    const auto empty_small = testing::random_int_matrix(fn, fn, 0.0, seed);
    all_transpose_combinations<Value, Index>(a, empty, d);
    all_transpose_combinations<Value, Index>(empty, b, d);
    all_transpose_combinations<Value, Index>(empty, empty, d);
    all_transpose_combinations<Value, Index>(full, b_small, d);
    all_transpose_combinations<Value, Index>(full, empty_small, d);
    all_transpose_combinations<Value, Index>(full, full, d);
    {
      const auto o = FormatOptions().set("d", std::to_string(d));
      const auto hf = HiSparse<Value, Index>::build(convert<Value, Index>(full), o);
      EXPECT_GT(hf.levels.back().nodes_by_type[hisparse::dense], 0) << "full operand has dense leaves";
    }
    // Cancellation: A − A keeps every entry as a stored zero.
    const auto ac = convert<Value, Index>(a);
    check_sum(ac, ac, Value(1), Value(-1), d, "A - A");
    const auto o = FormatOptions().set("d", std::to_string(d));
    const auto h = HiSparse<Value, Index>::build(ac, o);
    const auto z = add(h, h, Value(1), Value(-1));
    EXPECT_EQ(z.nnz, ac.nnz());
    for (Value v : z.to_csr().values) EXPECT_EQ(v, Value(0));
    // Full − full: dense leaves full of stored zeros stay dense.
    const auto fc = convert<Value, Index>(full);
    check_sum(fc, fc, Value(1), Value(-1), d, "full - full");
  }
  // Different shapes and different d are refused with clear errors.
  const auto x = HiSparse<Value, Index>::build(convert<Value, Index>(testing::random_int_matrix(5, 6, 0.5, seed)), {});
  const auto y = HiSparse<Value, Index>::build(convert<Value, Index>(testing::random_int_matrix(6, 5, 0.5, seed)), {});
  EXPECT_THROW(add(x, y, Value(1), Value(1)), DimensionMismatchError);
  EXPECT_NO_THROW(add(x, hisparse_transposed(y), Value(1), Value(1)));
  const auto x2 = HiSparse<Value, Index>::build(convert<Value, Index>(testing::random_int_matrix(5, 6, 0.5, seed)),
                                                FormatOptions().set("d", "4"));
  EXPECT_THROW(add(x, x2, Value(1), Value(1)), UnsupportedError);
}

TEST(HiSparseAdd, CpuMatchesCsrAddFp32Int32) { battery<float, std::int32_t>(); }
TEST(HiSparseAdd, CpuMatchesCsrAddFp32Int64) { battery<float, std::int64_t>(); }
TEST(HiSparseAdd, CpuMatchesCsrAddFp64Int32) { battery<double, std::int32_t>(); }
TEST(HiSparseAdd, CpuMatchesCsrAddFp64Int64) { battery<double, std::int64_t>(); }

TEST(HiSparseAdd, CpuThroughTheMatrixHandle) {
  const auto a = testing::random_int_matrix(90, 90, 0.05, 7), b = testing::random_int_matrix(90, 90, 0.05, 8);
  const auto A = Matrix<double>::build(a, "hisparse", Backend::cpu);
  const auto Bt = Matrix<double>::build(transpose(b), "hisparse", Backend::cpu);
  EXPECT_EQ(A.add(Bt, 1.0, 1.0).to_csr(), csr_add(a, transpose(b), 1.0, 1.0));
}

/// Runs `c` through the harness on the GPU with the fewest repetitions (these tests check
/// results, not times) and expects every result to complete and match the reference.
void expect_gpu_bench_correct(bench::BenchConfig c) {
  c.backend = Backend::cuda;
  c.reps = 2;
  c.warmup = 1;
  c.copy_gbs = 1;
  for (const auto& x : bench::run_bench(c).results)
    EXPECT_TRUE(x.completed && x.correct)
        << x.format << " " << x.options << " " << x.matrix << ": " << x.error;
}

/// The add-mode matrices: a random one and an empty one (no entries to merge).
std::vector<bench::MatrixSource> add_mode_matrices() {
  return {bench::matrix_from_csr("m", testing::random_int_matrix(300, 300, 0.02, 3)),
          bench::matrix_from_csr("empty", Csr<double, std::int64_t>{
                                              5, 5, std::vector<std::int64_t>(6, 0), {}, {}})};
}

// The harness's add modes (add_b = a, t, t_flag) on the CPU: every result completed and
// correct against csr_add of the logical operands; t_flag builds B with transposed=1.
TEST(HiSparseAdd, BenchHarnessAddModes) {
  for (const char* mode : {"a", "t", "t_flag"}) {
    bench::BenchConfig c;
    c.matrices = {bench::matrix_from_csr("m", testing::random_int_matrix(70, 70, 0.08, 3))};
    c.formats = {{"hisparse", FormatOptions().set("add_b", mode).set("d", "16")},
                 {"csr", FormatOptions().set("add_b", mode)}};
    c.ops = {Op::add};
    c.reps = 1;
    c.warmup = 0;
    c.copy_gbs = 1;
    const bench::Report r = bench::run_bench(c);
    ASSERT_EQ(r.results.size(), 4u);
    for (const auto& x : r.results) {
      if (x.format == "csr" && std::string(mode) == "t_flag") {
        EXPECT_FALSE(x.completed) << "csr has no transposed option";  // rejected as unknown
        continue;
      }
      EXPECT_TRUE(x.completed && x.correct) << mode << " " << x.format << ": " << x.error;
      EXPECT_NE(x.options.find(std::string("add_b=") + mode), std::string::npos);
    }
  }
}

// On a GPU: cusparse-csr's add in every add_b mode (t_flag: csr2csc inside add, for int32 and
// int64 indices), and its transposed=1 products, through the harness.
TEST(HiSparseAdd, GpuBenchHarnessCusparseAddModes) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (auto index : {bench::IndexWidth::int32, bench::IndexWidth::int64})
    for (const char* mode : {"a", "t", "t_flag"}) {
      bench::BenchConfig c;
      c.index = index;
      c.matrices = add_mode_matrices();
      c.formats = {{"cusparse-csr", FormatOptions().set("add_b", mode)}};
      c.ops = {Op::add};
      expect_gpu_bench_correct(c);
    }
  bench::BenchConfig c;
  c.matrices = {bench::matrix_from_csr("m", testing::random_int_matrix(300, 200, 0.02, 4))};
  c.formats = {{"hisparse", {}}, {"hisparse", FormatOptions().set("spmv", "levels")},
               {"hisparse", FormatOptions().set("item_cost", "16").set("d", "16")}};
  c.ops = {Op::spmv, Op::spmv_t};
  expect_gpu_bench_correct(c);
  // cusparse-csr transposed=1: products swap N/T, to_csr is the transpose.
  const auto a = testing::random_int_matrix(60, 40, 0.1, 9);
  const auto T = Matrix<double>::build(a, "cusparse-csr", Backend::cuda,
                                       FormatOptions().set("transposed", "1"));
  EXPECT_EQ(T.rows(), 40);
  EXPECT_EQ(T.to_csr(), transpose(a));
}

TEST(HiSparseAdd, Gpu) {
  SPMAT_SKIP_WITHOUT_GPU();
  // caps.cuda.add = true: the CUDA add (hisparse_add_cuda.cu) through the Matrix API equals the
  // CPU add; the full GPU battery is hisparse_gpu_add_test.cpp.
  const auto a = testing::random_int_matrix(90, 90, 0.05, 7);
  const auto A = Matrix<double>::build(a, "hisparse", Backend::cuda);
  const auto C = A.add(A, 1.0, -2.0);
  const auto want = convert<double, std::int64_t>(csr_add(a, a, 1.0, -2.0));
  EXPECT_EQ(C.to_csr(), want);
  // Through the harness: hisparse's GPU add in every add_b mode (t_flag: B in the transposed
  // state), fp32 and fp64, int32 and int64; and spmv with build=gpu.
  for (auto index : {bench::IndexWidth::int32, bench::IndexWidth::int64})
    for (const char* mode : {"a", "t", "t_flag"}) {
      bench::BenchConfig c;
      c.index = index;
      c.matrices = add_mode_matrices();
      c.formats = {{"hisparse", FormatOptions().set("add_b", mode)},
                   {"hisparse", FormatOptions().set("add_b", mode).set("d", "4")}};
      c.ops = {Op::add};
      expect_gpu_bench_correct(c);
    }
  bench::BenchConfig c;
  c.matrices = {bench::matrix_from_csr("m", testing::random_int_matrix(300, 200, 0.02, 4))};
  c.formats = {{"hisparse", FormatOptions().set("build", "gpu")},
               {"hisparse", FormatOptions().set("build", "gpu").set("d", "8")}};
  c.ops = {Op::spmv, Op::spmv_t};
  expect_gpu_bench_correct(c);
}

}  // namespace
}  // namespace spmat
