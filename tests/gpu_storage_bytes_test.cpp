// tests/gpu_storage_bytes_test.cpp — on the GPU, storage_bytes() is every device byte a matrix
// holds: spmat's device memory (spmat::device_memory_usage) rises by exactly storage_bytes()
// when a matrix is built, and stays equal to it after each operation the format supports was
// prepared (scratch sized by prepare is held from then on and counts: the rule of
// spmat/cuda/device_impl.hpp). Destroying the matrix gives every byte back.
// SPDX-License-Identifier: MIT
//
// Per registry entry with a CUDA backend (test names end in the entry's name), fp32 and fp64,
// int32 and int64 indices, on a small regular matrix, a skewed one (a dense row, long and empty
// rows, more rows than columns) and the 4×4 example. A format that refuses a matrix
// (UnsupportedError at build, e.g. too much padding) is skipped for it, as is a prepare that
// throws UnsupportedError (a cuSPARSE SpMM algorithm that does not take the layout); the test
// says which in a line on stdout, and the bytes must still match after a refused prepare.
//
// Exact equality, no allowance: device_memory_usage counts only what spmat allocates, and so
// does storage_bytes. Neither counts the CUDA context nor the memory cuSPARSE allocates itself
// (its handle, descriptors), nor the HiSparse pool's cached free blocks
// (spmat/core/device_memory.hpp). Temporaries a build or a prepare frees before it returns are
// gone when the usage is read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "spmat/core/device_memory.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

struct TestMatrix {
  std::string name;
  Csr<double, std::int64_t> a;
};

std::vector<TestMatrix> test_matrices() {
  std::vector<TestMatrix> v;
  // Regular: 8 entries in every row.
  v.push_back({"regular_512x512",
               testing::random_csr_of_lengths(512, 512, [](std::int64_t) { return 8; }, 7)});
  // Skewed: one full row, every 7th row long, every 5th empty, the rest short.
  v.push_back({"skewed_700x300", testing::random_csr_of_lengths(
                                     700, 300,
                                     [](std::int64_t r) -> std::int64_t {
                                       if (r == 3) return 300;
                                       if (r % 7 == 0) return 60;
                                       return r % 5 == 0 ? 0 : 2;
                                     },
                                     11)});
  v.push_back({"example_4x4", testing::example<double, std::int64_t>()});
  return v;
}

std::size_t held() { return device_memory_usage().bytes; }

/// Builds `format` from every test matrix and checks the device bytes after the build and after
/// each prepare; the names of the matrices it refused go to `refused`.
template <class Value, class Index>
void check(const FormatEntry& format, std::vector<std::string>& refused) {
  for (const auto& t : test_matrices()) {
    const auto a = convert<Value, Index>(t.a);
    const std::string what = format.name + " on " + t.name + " (" +
                             (sizeof(Value) == 4 ? "fp32" : "fp64") + ", " +
                             (sizeof(Index) == 4 ? "int32" : "int64") + ")";
    SCOPED_TRACE(what);
    const std::size_t before = held();
    {
      std::optional<Matrix<Value>> m;
      try {
        m = Matrix<Value>::build(a, format.name, Backend::cuda);
      } catch (const UnsupportedError& e) {
        refused.push_back(what + ": " + e.what());
        EXPECT_EQ(held(), before) << "a refused build gives back what it allocated";
        continue;
      }
      EXPECT_EQ(held() - before, m->storage_bytes()) << "after the build";
      struct Prepared {
        Op op;
        std::int64_t k;
        DenseLayout layout;
      };
      // spmm twice: a larger k may grow the scratch, which then counts at its new size.
      for (const Prepared& p : {Prepared{Op::spmv, 1, DenseLayout::row_major},
                                Prepared{Op::spmv_t, 1, DenseLayout::row_major},
                                Prepared{Op::spmm, 4, DenseLayout::row_major},
                                Prepared{Op::spmm, 33, DenseLayout::col_major},
                                Prepared{Op::add, 1, DenseLayout::row_major}}) {
        if (!m->supports(p.op)) continue;
        const std::string step =
            "prepare(" + std::string(to_string(p.op)) + ", k = " + std::to_string(p.k) + ")";
        try {
          m->prepare(p.op, p.k, p.layout);
        } catch (const UnsupportedError& e) {  // e.g. a cuSPARSE SpMM algorithm and layout
          refused.push_back(what + ", " + step + ": " + e.what());
        }
        EXPECT_EQ(held() - before, m->storage_bytes()) << "after " << step;
      }
    }
    EXPECT_EQ(held(), before) << "the destroyed matrix gives every byte back";
  }
}

class GpuStorageBytes : public ::testing::TestWithParam<const FormatEntry*> {};

TEST_P(GpuStorageBytes, EqualsTheDeviceBytesHeldAfterBuildAndPrepare) {
  SPMAT_SKIP_WITHOUT_GPU();
  const FormatEntry& format = *GetParam();
  std::vector<std::string> refused;
  check<float, std::int32_t>(format, refused);
  check<double, std::int32_t>(format, refused);
  check<float, std::int64_t>(format, refused);
  check<double, std::int64_t>(format, refused);
  for (const auto& r : refused) std::cout << "[ refused  ] " << r << "\n";
}

std::vector<const FormatEntry*> cuda_formats() {
  std::vector<const FormatEntry*> v;
  for (const auto& e : registry())
    if (e.caps.cuda.available) v.push_back(&e);
  return v;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuStorageBytes);
INSTANTIATE_TEST_SUITE_P(Formats, GpuStorageBytes, ::testing::ValuesIn(cuda_formats()),
                         [](const auto& info) { return testing::test_name(info.param->name); });

}  // namespace
}  // namespace spmat
