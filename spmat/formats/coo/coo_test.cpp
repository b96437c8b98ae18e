// spmat/formats/coo/coo_test.cpp — COO: exact layout, CPU and GPU kernels against the fp64 reference.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <vector>

#include "spmat/formats/coo/coo.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/kernel_check.hpp"

namespace spmat {
namespace {

using testing::check_gpu_format;
using testing::example;
using testing::Pairs;

template <class P>
class CooFormat : public ::testing::Test {};
TYPED_TEST_SUITE(CooFormat, Pairs);

TYPED_TEST(CooFormat, StoresTheExampleAsSortedTripletsWithExactBytes) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  const auto a = example<V, I>();
  const auto s = CooStorage<V, I>::build(a, {});
  EXPECT_EQ(s.a.row_idx, (std::vector<I>{0, 0, 2, 2, 2, 3}));
  EXPECT_EQ(s.a.col_idx, (std::vector<I>{0, 2, 0, 1, 3, 3}));
  EXPECT_EQ(s.a.values, (std::vector<V>{1, 2, 3, 4, 5, 6}));
  testing::expect_example_bytes(s, a, "coo", 6 * (2 * sizeof(I) + sizeof(V)), Op::spmv);
}

SPMAT_CPU_KERNEL_TESTS(CooFormat, "coo", CpuSpmvDoesNotDependOnTheThreadCount, Op::spmv)

TEST(CooRegistry, DeclaresWhatTheKernelsPromise) {
  const auto& coo = find_format("coo");
  EXPECT_TRUE(coo.caps.cpu.supports(Op::spmv) && coo.caps.cpu.supports(Op::spmv_t));
  EXPECT_TRUE(coo.caps.cpu.deterministic_spmv && coo.caps.cpu.deterministic_spmv_t);
  EXPECT_FALSE(coo.caps.cuda.deterministic_spmv);
  const auto& seg = find_format("coo-seg");
  EXPECT_FALSE(seg.caps.cpu.available);
  EXPECT_TRUE(seg.caps.cuda.deterministic_spmv);
  EXPECT_FALSE(seg.caps.cuda.deterministic_spmv_t);
  EXPECT_THROW((Matrix<double>::build(example<double, std::int32_t>(), "coo-seg")),
               UnsupportedError);
  EXPECT_THROW((Matrix<double>::build(example<double, std::int32_t>(), "coo", Backend::cpu,
                                      FormatOptions().set("kernel", "bogus"))),
               ParseError);
}

// ---- GPU: runs for real only where a GPU is present ---------------------------------------------

TYPED_TEST(CooFormat, GpuAtomicKernelsMatchTheReference) {
  SPMAT_SKIP_WITHOUT_GPU();
  check_gpu_format<typename TypeParam::Value, typename TypeParam::Index>("coo");
}

TYPED_TEST(CooFormat, GpuSegmentedKernelMatchesTheReferenceAndIsDeterministic) {
  SPMAT_SKIP_WITHOUT_GPU();
  check_gpu_format<typename TypeParam::Value, typename TypeParam::Index>("coo-seg");
}

TYPED_TEST(CooFormat, GpuMultipliesTheExampleExactly) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const char* fmt : {"coo", "coo-seg"})
    testing::check_gpu_example<typename TypeParam::Value, typename TypeParam::Index>(fmt);
}

}  // namespace
}  // namespace spmat
