// spmat/formats/csc/csc_test.cpp — CSC: exact layout, CPU and GPU kernels against the fp64 reference.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/csc/csc.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/kernel_check.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat {
namespace {

using testing::fresh_seed;
using testing::poisoned;
using testing::random_vector;
using testing::AlphaBeta;
using testing::check_gpu_format;
using testing::cpu_specs;
using testing::example;
using testing::host_check;
using testing::kAlphaBeta;
using testing::Pairs;
using testing::random_matrix;
using testing::Spec;
#if SPMAT_WITH_CUDA
using testing::gpu_run;
#endif

template <class P>
class CscFormat : public ::testing::Test {};
TYPED_TEST_SUITE(CscFormat, Pairs);

TYPED_TEST(CscFormat, StoresTheExampleColumnByColumnWithExactBytes) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  const auto a = example<V, I>();
  const auto s = CscStorage<V, I>::build(a, {});
  EXPECT_EQ(s.a.col_ptr, (std::vector<I>{0, 2, 3, 4, 6}));
  EXPECT_EQ(s.a.row_idx, (std::vector<I>{0, 2, 2, 0, 2, 3}));
  EXPECT_EQ(s.a.values, (std::vector<V>{1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(s.storage_bytes(), 5 * sizeof(I) + 6 * (sizeof(I) + sizeof(V)));
  EXPECT_EQ(s.to_csr(), a);
  const auto A = Matrix<V>::build(a, "csc");
  EXPECT_EQ(A.storage_bytes(), 5 * sizeof(I) + 6 * (sizeof(I) + sizeof(V)));
  EXPECT_EQ(A.traffic_bytes(Op::spmv_t), 5 * sizeof(I) + 6 * (sizeof(I) + sizeof(V)) + 8 * sizeof(V));
  EXPECT_EQ(A.to_csr(), (convert<V, std::int64_t>(a)));
}

TYPED_TEST(CscFormat, MultipliesTheExampleExactlyOnTheCpu) {
  testing::check_cpu_example<typename TypeParam::Value, typename TypeParam::Index>("csc");
}

TYPED_TEST(CscFormat, CpuKernelsMatchTheReferenceOnRaggedRandomMatrices) {
  testing::check_cpu_format<typename TypeParam::Value, typename TypeParam::Index>("csc");
}

TYPED_TEST(CscFormat, CpuSpmvTDoesNotDependOnTheThreadCount) {
  testing::check_cpu_thread_independence<typename TypeParam::Value, typename TypeParam::Index>("csc", Op::spmv_t);
}

TEST(CscRegistry, DeclaresWhatTheKernelsPromise) {
  const auto& csc = find_format("csc");
  EXPECT_TRUE(csc.caps.cpu.supports(Op::spmv) && csc.caps.cpu.supports(Op::spmv_t));
  EXPECT_TRUE(csc.caps.cpu.deterministic_spmv && csc.caps.cpu.deterministic_spmv_t);
  EXPECT_FALSE(csc.caps.cuda.deterministic_spmv);
  EXPECT_TRUE(csc.caps.cuda.deterministic_spmv_t);
}

// ---- GPU: runs for real only where a GPU is present ---------------------------------------------

TYPED_TEST(CscFormat, GpuKernelsMatchTheReference) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << "GPU test skipped: " << why;
  check_gpu_format<typename TypeParam::Value, typename TypeParam::Index>("csc");
}

TYPED_TEST(CscFormat, GpuMultipliesTheExampleExactly) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << "GPU test skipped: " << why;
#if SPMAT_WITH_CUDA
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  const std::vector<V> x{1, 2, 3, 4};
  EXPECT_EQ(gpu_run(example<V, I>(), "csc", Op::spmv, {1, 0}, x, std::vector<V>(4)),
            (std::vector<V>{7, 0, 31, 24}));
  EXPECT_EQ(gpu_run(example<V, I>(), "csc", Op::spmv_t, {1, 0}, x, std::vector<V>(4)),
            (std::vector<V>{10, 12, 2, 39}));
  EXPECT_EQ(gpu_run(example<V, I>(), "csc", Op::spmv_t, {2, -1}, x, std::vector<V>(4, V(1))),
            (std::vector<V>{19, 23, 3, 77}));
#endif
}

}  // namespace
}  // namespace spmat
