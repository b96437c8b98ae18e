// spmat/formats/csc/csc_test.cpp — CSC: exact layout, CPU and GPU kernels against the fp64 reference.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <vector>

#include "spmat/formats/csc/csc.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/kernel_check.hpp"

namespace spmat {
namespace {

using testing::check_gpu_format;
using testing::example;
using testing::Pairs;

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
  testing::expect_example_bytes(s, a, "csc", 5 * sizeof(I) + 6 * (sizeof(I) + sizeof(V)), Op::spmv_t);
}

SPMAT_CPU_KERNEL_TESTS(CscFormat, "csc", CpuSpmvTDoesNotDependOnTheThreadCount, Op::spmv_t)

TEST(CscRegistry, DeclaresWhatTheKernelsPromise) {
  const auto& csc = find_format("csc");
  EXPECT_TRUE(csc.caps.cpu.supports(Op::spmv) && csc.caps.cpu.supports(Op::spmv_t));
  EXPECT_TRUE(csc.caps.cpu.deterministic_spmv && csc.caps.cpu.deterministic_spmv_t);
  EXPECT_FALSE(csc.caps.cuda.deterministic_spmv);
  EXPECT_TRUE(csc.caps.cuda.deterministic_spmv_t);
}

// ---- GPU: runs for real only where a GPU is present ---------------------------------------------

TYPED_TEST(CscFormat, GpuKernelsMatchTheReference) {
  SPMAT_SKIP_WITHOUT_GPU();
  check_gpu_format<typename TypeParam::Value, typename TypeParam::Index>("csc");
}

TYPED_TEST(CscFormat, GpuMultipliesTheExampleExactly) {
  SPMAT_SKIP_WITHOUT_GPU();
  testing::check_gpu_example<typename TypeParam::Value, typename TypeParam::Index>("csc");
}

}  // namespace
}  // namespace spmat
