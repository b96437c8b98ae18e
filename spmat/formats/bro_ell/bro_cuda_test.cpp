// spmat/formats/bro_ell/bro_cuda_test.cpp — the CUDA kernels of the whole BRO family (bro-ell,
// bro-ell-bar, bro-coo, bro-hyb, bro-hyb-bar, bro-csr) against the fp64 reference: spmv and spmv_t,
// 4 type pairs, alpha/beta, NaN-poisoned y, h = 32 and 256, sym_len 32 and 64.
// SPDX-License-Identifier: MIT
//
// Skips (with the reason) when spmat was built without CUDA or no GPU is present.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/bro_ell/bro_test_support.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/kernel_check.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat {
namespace {

#if SPMAT_WITH_CUDA

TEST(BroFamilyCuda, MatchesTheReferenceOnEveryScenarioAndTypePair) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const auto& var : bro_testing::variants())
    for (const auto& sc : bro_testing::scenarios())
      testing::for_each_type_pair([&]<class V, class I>() {
        bro_testing::check_variant<V, I>(var, sc, Backend::cuda);
      });
}

TEST(BroFamilyCuda, BroEllSpmvIsDeterministicAsDeclared) {
  SPMAT_SKIP_WITHOUT_GPU();
  const auto& sc = bro_testing::scenarios()[2];  // long rows: the build limits are lifted
  const auto m = Matrix<double>::build(sc.a, "bro-ell", Backend::cuda,
                                       testing::without_row_limits("bro-ell"));
  ASSERT_TRUE(m.format().caps.cuda.deterministic_spmv);
  const auto x = testing::random_vector<double>(sc.a.cols, 5);
  const std::vector<double> y0(sc.a.rows, 0.0);
  EXPECT_EQ(testing::apply_spmv(m, Op::spmv, x, &y0), testing::apply_spmv(m, Op::spmv, x, &y0));
}

TEST(BroFamilyCuda, LargeSlicesAndIntervalsAgreeWithTheCpuKernels) {
  SPMAT_SKIP_WITHOUT_GPU();
  // ~300k rows: many blocks, grid-stride loops, a long BRO-HYB overflow.
  const auto a = testing::random_csr_of_lengths(300001, 200003, [](std::int64_t r) {
    return r % 1009 == 0 ? 400 : r % 9;
  }, 31);
  const bro_testing::Variant vars[] = {{"bro-ell", FormatOptions().set("h", "32"), "h=32"},
                                       {"bro-hyb", {}, "defaults"},
                                       {"bro-coo", {}, "defaults"}};
  for (const auto& v : vars) {
    SCOPED_TRACE(v.format);
    // Rows of 400 among rows of 4: bro-ell's build limits are lifted to run them.
    const auto gpu = Matrix<double>::build(a, v.format, Backend::cuda,
                                           testing::without_row_limits(v.format, v.options));
    const auto x = testing::random_vector<double>(a.cols, 6, true);
    const auto got = testing::apply_spmv(gpu, Op::spmv, x);  // y poisoned with NaN
    const auto want = reference::spmv(a, std::span<const double>(x), 1.0, 0.0, std::span<const double>());
    EXPECT_LE(reference::relative_norm2_error(std::span<const double>(got), std::span<const double>(want)), 1e-12);
  }
}

#else

TEST(BroFamilyCuda, SkipsWithoutCuda) {
  std::string why;
  ASSERT_FALSE(testing::gpu_available(&why));
  GTEST_SKIP() << "BRO CUDA tests skipped: " << why;
}

#endif

}  // namespace
}  // namespace spmat
