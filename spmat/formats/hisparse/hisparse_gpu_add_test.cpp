// spmat/formats/hisparse/hisparse_gpu_add_test.cpp — the GPU addition of HiSparse
// (hisparse_add_cuda.cu) against the CPU add (byte-identical pools, root, level statistics) and
// against csr_add (values, exact: small-integer data): every transpose combination as state
// flags, α/β with 0, empty and full operands, one-sided subtrees, cancellation to explicit zeros,
// dense leaves (small d), dense=never; fp32/fp64 × int32/int64; chained adds and SpMV of a sum.
// Skips, saying why, without a GPU.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/csr/csr.hpp"
#include "spmat/formats/hisparse/hisparse.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/hisparse_cases.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat {
namespace {

#if SPMAT_WITH_CUDA
/// GPU add of (a, b) with their states against the CPU add and against `want` (logical sum).
template <class Value, class Index>
void expect_gpu_add(const HiSparse<Value, Index>& a, const HiSparse<Value, Index>& b, Value al,
                    Value be, const Csr<Value, Index>& want, const std::string& what) {
  SCOPED_TRACE(what);
  const HiSparse<Value, Index> cpu = add(a, b, al, be);
  for (const int mode : {0, 1, 2}) {  // add=merge (default), add=sort, add=merge_ct
  const bool sort = mode == 1;
  SCOPED_TRACE(mode == 0 ? "add=merge" : mode == 1 ? "add=sort" : "add=merge_ct");
  HiSparse<Value, Index> ac(a), bc(b);
  ac.gpu_add_sort = sort;  // the left operand's option picks the path
  bc.gpu_add_sort = sort;
  ac.gpu_add_tcount = mode == 2;
  bc.gpu_add_tcount = mode == 2;
  const auto da = make_cuda_impl(std::move(ac));
  const auto db = make_cuda_impl(std::move(bc));
  const auto dc = da->add(*db, al, be);
  // On the GPU storage_bytes is every device byte held: the sum's pool and the device proto
  // it keeps for the next add (the pool's size is compared with the CPU's below).
  EXPECT_GE(dc->storage_bytes(), cpu.storage_bytes());
  const HiSparse<Value, Index> gpu = cuda_host_copy<Value, Index>(*dc);
  ASSERT_EQ(gpu.pool.size(), cpu.pool.size()) << "pool sizes";
  EXPECT_EQ(0, std::memcmp(gpu.bytes(), cpu.bytes(), cpu.storage_bytes())) << "pool bytes";
  EXPECT_EQ(gpu.root, cpu.root);
  EXPECT_EQ(gpu.nnz, cpu.nnz);
  EXPECT_EQ(gpu.transposed, cpu.transposed);
  EXPECT_EQ(gpu.rows, cpu.rows);
  EXPECT_EQ(gpu.cols, cpu.cols);
  ASSERT_EQ(gpu.levels.size(), cpu.levels.size());
  for (std::size_t l = 0; l < gpu.levels.size(); ++l) {
    EXPECT_EQ(gpu.levels[l].nodes_by_type, cpu.levels[l].nodes_by_type) << "level " << l;
    EXPECT_EQ(gpu.levels[l].entries_by_type, cpu.levels[l].entries_by_type) << "level " << l;
    EXPECT_EQ(gpu.levels[l].nodes_by_class, cpu.levels[l].nodes_by_class) << "level " << l;
  }
  const auto want64 = convert<Value, std::int64_t>(want);
  EXPECT_EQ(dc->to_csr(), want64) << "values vs csr_add";
  }
}

template <class Value, class Index>
void gpu_add_battery() {
  const std::uint64_t seed = testing::fresh_seed();
  struct Case {
    std::int64_t m, n;
    double da, db;
    std::int64_t full;  // a full full×full block in A (dense leaves for small d)
  };
  for (const Case& cs : {Case{70, 70, 0.05, 0.08, 20}, Case{37, 37, 0.3, 0.0, 0},
                         Case{37, 37, 0.0, 0.0, 0}, Case{33, 33, 1.0, 0.02, 0},
                         Case{300, 300, 0.002, 0.01, 40}, Case{50, 29, 0.1, 0.1, 10},
                         Case{1, 1, 1.0, 1.0, 0}}) {
    const auto a = convert<Value, Index>(testing::random_int_matrix(cs.m, cs.n, cs.da, seed, cs.full));
    const auto b = convert<Value, Index>(testing::random_int_matrix(cs.m, cs.n, cs.db, seed + 1, 0));
    const auto at = transpose(a), bt = transpose(b);
    testing::for_each_d_and_dense(cs.m, cs.n, seed, [&](const FormatOptions& o, const std::string& tag) {
      const auto ha = HiSparse<Value, Index>::build(a, o), hb = HiSparse<Value, Index>::build(b, o);
      const auto hat = hisparse_transposed(HiSparse<Value, Index>::build(at, o));
      const auto hbt = hisparse_transposed(HiSparse<Value, Index>::build(bt, o));
      expect_gpu_add(ha, hb, Value(2), Value(-3), csr_add(a, b, Value(2), Value(-3)), tag + " A + B");
      expect_gpu_add(ha, ha, Value(1), Value(-1), csr_add(a, a, Value(1), Value(-1)),
                     tag + " A - A (cancellation to explicit zeros)");
      expect_gpu_add(ha, hb, Value(0), Value(1), csr_add(a, b, Value(0), Value(1)), tag + " 0A + B");
      expect_gpu_add(ha, hb, Value(1), Value(0), csr_add(a, b, Value(1), Value(0)), tag + " A + 0B");
      expect_gpu_add(hat, hbt, Value(2), Value(-3), csr_add(a, b, Value(2), Value(-3)),
                     tag + " state At + state Bt");
      expect_gpu_add(hat, hb, Value(2), Value(1), csr_add(a, b, Value(2), Value(1)), tag + " state At + B");
      expect_gpu_add(ha, hbt, Value(1), Value(-2), csr_add(a, b, Value(1), Value(-2)), tag + " A + state Bt");
      if (cs.m == cs.n) {
        expect_gpu_add(ha, hisparse_transposed(ha), Value(1), Value(1),
                       csr_add(a, at, Value(1), Value(1)), tag + " A + Aᵀ (state)");
        expect_gpu_add(hisparse_transposed(hb), ha, Value(1), Value(1),
                       csr_add(bt, a, Value(1), Value(1)), tag + " Bᵀ (state) + A");
      }
    });
  }
}

/// Through the Matrix API: chained adds (a sum as an operand), SpMV of a sum, t_flag builds.
template <class Value, class Index>
void gpu_add_matrix_api() {
  const auto a = convert<Value, Index>(testing::random_int_matrix(90, 90, 0.05, 11, 12));
  const auto b = convert<Value, Index>(testing::random_int_matrix(90, 90, 0.07, 12, 0));
  const FormatOptions o = FormatOptions().set("d", "4");
  const auto A = Matrix<Value>::build(a, "hisparse", Backend::cuda, o);
  const auto B = Matrix<Value>::build(b, "hisparse", Backend::cuda, o);
  const auto Bt = Matrix<Value>::build(b, "hisparse", Backend::cuda,
                                       FormatOptions(o).set("transposed", "1"));
  const auto C = A.add(B, Value(1), Value(2));
  const auto D = C.add(A, Value(-1), Value(1));  // = 2B + explicit zeros where A is
  const auto want_d = convert<Value, std::int64_t>(
      csr_add(csr_add(a, b, Value(1), Value(2)), a, Value(-1), Value(1)));
  EXPECT_EQ(D.to_csr(), want_d);
  const auto As = Matrix<Value>::build(a, "hisparse", Backend::cuda,
                                       FormatOptions(o).set("add", "sort"));
  const auto want_sort = convert<Value, std::int64_t>(csr_add(a, transpose(b), Value(1), Value(1)));
  EXPECT_EQ(As.add(Bt).to_csr(), want_sort) << "add=sort, A + state Bt";
  const auto Act = Matrix<Value>::build(a, "hisparse", Backend::cuda,
                                        FormatOptions(o).set("add", "merge_ct"));
  EXPECT_EQ(Act.add(Bt).to_csr(), want_sort) << "add=merge_ct, A + state Bt";
  const auto E = A.add(Bt);
  const auto want_e = convert<Value, std::int64_t>(csr_add(a, transpose(b), Value(1), Value(1)));
  EXPECT_EQ(E.to_csr(), want_e);
  // SpMV of a sum (its device plan is made on first use), beta = 0 over NaN.
  const auto want_csr = csr_add(a, b, Value(1), Value(2));
  const auto x = testing::random_vector<Value>(90, 21);
  const auto want = reference::spmv<Value, Index, Value, Value>(want_csr, x);
  cuda::DeviceBuffer<Value> dx(x, "x"), dy(90, "y");
  dy.fill_bytes(0xFF);
  C.spmv(std::span<const Value>(dx.data(), 90), std::span<Value>(dy.data(), 90), Value(1), Value(0));
  cuda::synchronize();
  EXPECT_LE(reference::relative_norm2_error<Value>(dy.download(), want), testing::tolerance<Value>());
}

/// build=gpu against build=cpu: identical pools, roots and statistics.
template <class Value, class Index>
void gpu_build_battery() {
  const std::uint64_t seed = testing::fresh_seed();
  for (const auto& src : {testing::random_int_matrix(70, 70, 0.05, seed, 20), testing::random_int_matrix(300, 200, 0.01, seed, 40),
                          testing::random_int_matrix(1, 1, 1.0, seed, 0), testing::random_int_matrix(33, 45, 1.0, seed, 0),
                          testing::random_int_matrix(20, 20, 0.0, seed, 0), testing::random_int_matrix(3000, 2500, 0.001, seed, 0)})
    testing::for_each_d_and_dense(src.rows, src.cols, seed, [&](const FormatOptions& o, const std::string& tag) {
      SCOPED_TRACE(tag);
      const auto a = convert<Value, Index>(src);
      const auto cpu = HiSparse<Value, Index>::build(a, o);
      if (2 * cpu.log2d * cpu.depth > 64) {
        using HS = HiSparse<Value, Index>;
        EXPECT_THROW((void)HS::build(a, FormatOptions(o).set("build", "gpu")), UnsupportedError);
        return;
      }
      const auto gpu = HiSparse<Value, Index>::build(a, FormatOptions(o).set("build", "gpu"));
      ASSERT_EQ(gpu.pool.size(), cpu.pool.size());
      EXPECT_EQ(0, std::memcmp(gpu.bytes(), cpu.bytes(), cpu.storage_bytes())) << "pool bytes";
      EXPECT_EQ(gpu.root, cpu.root);
      EXPECT_EQ(gpu.nnz, cpu.nnz);
      ASSERT_EQ(gpu.levels.size(), cpu.levels.size());
      for (std::size_t l = 0; l < gpu.levels.size(); ++l) {
        EXPECT_EQ(gpu.levels[l].nodes_by_type, cpu.levels[l].nodes_by_type);
        EXPECT_EQ(gpu.levels[l].nodes_by_class, cpu.levels[l].nodes_by_class);
      }
    });
}
#endif

/// The GPU add tests of one type pair (skipped, saying why, without a GPU): the add battery and,
/// where `with_api_and_build`, the Matrix API chain and build=gpu against build=cpu too.
template <class Value, class Index>
void run_gpu_add_tests(bool with_api_and_build) {
  SPMAT_SKIP_WITHOUT_GPU();
#if SPMAT_WITH_CUDA
  gpu_add_battery<Value, Index>();
  if (with_api_and_build) {
    gpu_add_matrix_api<Value, Index>();
    gpu_build_battery<Value, Index>();
  }
#else
  (void)with_api_and_build;
#endif
}

TEST(HiSparseGpuAdd, Fp32Int32) { run_gpu_add_tests<float, std::int32_t>(true); }
TEST(HiSparseGpuAdd, Fp32Int64) { run_gpu_add_tests<float, std::int64_t>(false); }
TEST(HiSparseGpuAdd, Fp64Int32) { run_gpu_add_tests<double, std::int32_t>(false); }
TEST(HiSparseGpuAdd, Fp64Int64) { run_gpu_add_tests<double, std::int64_t>(true); }

}  // namespace
}  // namespace spmat
