// tests/gpu_fault_test.cpp — device allocation failures, injected one at a time, in every
// registered format with a CUDA backend: the failure surfaces as a clear spmat error, nothing
// leaks, and the library keeps working.
// SPDX-License-Identifier: MIT
//
// Test names read GpuFault/DeviceAllocationFailure.<Check>/<format> (dashes become
// underscores). Per format (the planners "auto" and "tune" and the cuSPARSE baselines
// included), on one small power-law matrix with small-integer values (exact sums):
//   EveryAllocationFailsCleanly  the sequence build, spmv, spmv_t, spmm, add (A + A), to_csr,
//                                each where the caps have it, run once to count its device
//                                allocations N (some happen lazily, in the first product); then
//                                for k = 0..N-1 with ScopedDeviceAllocationFailure(k):
//                                - a named format throws OutOfMemoryError whose message says
//                                  the failure was injected; any other exception fails the test.
//                                  "auto" and "tune" give way to their next candidate on
//                                  OutOfMemoryError (spmat/plan/planned.cpp), so they may also
//                                  finish, with correct results;
//                                - when a product failed after the build, the same matrix runs
//                                  the rest of the sequence again, correctly (a failed lazy
//                                  setup leaves nothing half made);
//                                - once the matrix is gone, spmat's live device bytes and
//                                  allocations are back where they were (nothing leaked);
//                                - a fresh build and spmv, not injected, are correct.
//   TinyBudgetFailsCleanly       with a budget of 4 KiB above what the test holds, building a
//                                matrix of 100,000 entries throws OutOfMemoryError naming the
//                                bytes asked for, the budget and the device's free bytes, and
//                                leaves nothing allocated.
//   DeviceBuildFailsCleanlyAtEveryAllocation, DeviceBuildTinyBudgetFailsCleanly
//                                the same two checks for the build from a CSR already in
//                                device memory, for the formats with a device builder (csr,
//                                which adopts the arrays, may build within the tiny budget: then
//                                its spmv must be right).
// Without a GPU (or without CUDA) every case skips and says why.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <regex>
#include <string>
#include <typeinfo>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/core/device_memory.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/csr/csr.hpp"
#include "spmat/gen/generators.hpp"
#include "spmat/matrix.hpp"
#include "spmat/registry.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#endif

namespace spmat {
namespace {

/// One registered format with a CUDA backend (a struct, so that gtest prints its name).
struct Case {
  const FormatEntry* format;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.format->name; }

std::vector<Case> cuda_formats() {
  std::vector<Case> v;
  for (const auto& e : registry())
    if (e.caps.cuda.available) v.push_back({&e});
  return v;
}

std::string param_name(const ::testing::TestParamInfo<Case>& info) {
  return testing::test_name(info.param.format->name);
}

bool is_planner(const FormatEntry& f) { return f.name == "auto" || f.name == "tune"; }

/// Build options: "tune" times its candidates every build instead of reading the plan cache,
/// so that every run makes the same kind of allocations.
FormatOptions options_for(const FormatEntry& f) {
  return f.name == "tune" ? FormatOptions().set("cache", "0") : FormatOptions();
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(GpuFault, EveryCudaFormatIsCovered) {
  std::string why;
  if (cuda_formats().empty())
    GTEST_SKIP() << "no registered format has a cuda backend in this build ("
                 << (cuda_compiled() ? "CUDA compiled in" : "spmat was built without CUDA")
                 << "): no device allocation failure cases";
  if (!testing::gpu_available(&why))
    GTEST_SKIP() << "device allocation failure cases skip: " << why;
}

#if SPMAT_WITH_CUDA

using Csr32 = Csr<double, std::int32_t>;
using Csr64 = Csr<double, std::int64_t>;
constexpr std::int64_t kK = 3;  // spmm: dense columns

/// The matrix, its operands on the device (allocated before any counting) and the expected
/// results.
struct Fixture {
  Csr32 a;
  Csr64 a64, sum64;  // A and A + A, as to_csr gives them back
  std::vector<double> x, xt, b;
  std::vector<double> want_y, want_yt, want_c;
  cuda::DeviceBuffer<double> dx, dy, dxt, dyt, db, dc;

  explicit Fixture(Csr32 m) : a(std::move(m)) {
    a64 = convert<double, std::int64_t>(a);
    sum64 = convert<double, std::int64_t>(csr_add(a, a, 1.0, 1.0));
    x = testing::operand_vector<double>(a.cols, 1, true);
    xt = testing::operand_vector<double>(a.rows, 2, true);
    b = testing::operand_vector<double>(a.cols * kK, 3, true);
    want_y = reference::spmv<double, std::int32_t, double, double>(a, x);
    want_yt = reference::spmv_t<double, std::int32_t, double, double>(a, xt);
    want_c =
        reference::spmm<double, std::int32_t, double, double>(a, b, kK, DenseLayout::row_major);
    dx = cuda::DeviceBuffer<double>(x, "test x");
    dxt = cuda::DeviceBuffer<double>(xt, "test xt");
    db = cuda::DeviceBuffer<double>(b, "test B");
    dy = cuda::DeviceBuffer<double>(static_cast<std::size_t>(a.rows), "test y");
    dyt = cuda::DeviceBuffer<double>(static_cast<std::size_t>(a.cols), "test yt");
    dc = cuda::DeviceBuffer<double>(static_cast<std::size_t>(a.rows * kK), "test C");
  }
};

enum class Step { build, spmv, spmv_t, spmm, add, to_csr, done };

const char* step_name(Step s) {
  static const char* const names[] = {"build", "spmv", "spmv_t", "spmm", "add", "to_csr", "done"};
  return names[static_cast<int>(s)];
}

/// The steps build, spmv, spmv_t, spmm, add, to_csr of one format, resumable: run() starts at
/// the step after the last one that completed, so that after a failure the same matrix can
/// finish the sequence. Wrong results are collected in `wrong`, operations refused with
/// UnsupportedError in `unsupported`; other exceptions propagate.
class Sequence {
 public:
  Sequence(const FormatEntry& f, Fixture& fx, Step last = Step::to_csr)
      : f_(f), fx_(fx), last_(last) {}

  void run() {
    for (; next_ <= last_; next_ = static_cast<Step>(static_cast<int>(next_) + 1)) {
      if (next_ == Step::build) {
        m_.emplace(Matrix<double>::build(fx_.a, f_.name, Backend::cuda, options_for(f_)));
        continue;
      }
      try {
        step();
      } catch (const UnsupportedError& e) {
        // An operation the caps have but this case lacks (a cuSPARSE algorithm refusing the
        // dense layout, a planner asked for an operation it did not plan): not run.
        unsupported.push_back(std::string(step_name(next_)) + ": " + e.what());
      }
    }
  }

  Step next() const { return next_; }
  bool built() const { return m_.has_value(); }
  std::vector<std::string> wrong, unsupported;

 private:
  /// op(A)·x (spmv or spmv_t) into y poisoned with NaN, against `want`.
  void check_vector_product(Op op, const cuda::DeviceBuffer<double>& x,
                            cuda::DeviceBuffer<double>& y, const std::vector<double>& want) {
    y.fill_bytes(0xFF);
    if (op == Op::spmv)
      m_->spmv(x.span(), y.span());
    else
      m_->spmv_t(x.span(), y.span());
    cuda::synchronize();
    expect_close(y.download(), want, op == Op::spmv ? "spmv" : "spmv_t");
  }

  void step() {
    const BackendCaps& caps = f_.caps.cuda;
    switch (next_) {
      case Step::build:
        break;
      case Step::spmv:
        if (caps.supports(Op::spmv)) check_vector_product(Op::spmv, fx_.dx, fx_.dy, fx_.want_y);
        break;
      case Step::spmv_t:
        if (caps.supports(Op::spmv_t))
          check_vector_product(Op::spmv_t, fx_.dxt, fx_.dyt, fx_.want_yt);
        break;
      case Step::spmm:
        if (!caps.supports(Op::spmm)) break;
        fx_.dc.fill_bytes(0xFF);
        m_->spmm(std::span<const double>(fx_.db.span()), fx_.dc.span(), kK, DenseLayout::row_major);
        cuda::synchronize();
        expect_close(fx_.dc.download(), fx_.want_c, "spmm");
        break;
      case Step::add:
        if (!caps.supports(Op::add)) break;
        if (m_->add(*m_, 1.0, 1.0).to_csr() != fx_.sum64)
          wrong.push_back("add: A + A differs from csr_add");
        break;
      case Step::to_csr:
        if (m_->to_csr() != fx_.a64) wrong.push_back("to_csr does not give the matrix back");
        break;
      case Step::done:
        break;
    }
  }

  void expect_close(const std::vector<double>& got, const std::vector<double>& want,
                    const char* what) {
    const double err = reference::relative_norm2_error<double>(got, want);
    if (!(err <= 1e-12))
      wrong.push_back(std::string(what) + ": relative error " + std::to_string(err));
  }

  const FormatEntry& f_;
  Fixture& fx_;
  Step last_;
  Step next_ = Step::build;
  std::optional<Matrix<double>> m_;
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : "; ") + e;
  return s;
}

class DeviceAllocationFailure : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    std::string why;
    if (!testing::gpu_available(&why))
      GTEST_SKIP() << "cuda backend of '" << GetParam().format->name << "' not run: " << why;
  }
};

TEST_P(DeviceAllocationFailure, EveryAllocationFailsCleanly) {
  const FormatEntry& f = *GetParam().format;
  // Skewed rows (power-law lengths) so that the kernels' row binning allocates too; a format
  // that refuses them (too much padding) gets rows of equal length. A first run also sets up
  // what the process keeps (the cuSPARSE handle, the HiSparse pool), so that the counted run
  // and the injected ones start from the same state.
  std::unique_ptr<Fixture> fixture;
  for (const char* spec :
       {"gen:powerlaw:2000:8:values=int:seed=5", "gen:random_k:2000:8:values=int:seed=5"}) {
    auto candidate = std::make_unique<Fixture>(gen::generate<double, std::int32_t>(spec));
    try {
      Sequence warm(f, *candidate);
      warm.run();
      ASSERT_TRUE(warm.wrong.empty())
          << f.name << " on " << spec << ", no injected failures: " << joined(warm.wrong);
      for (const auto& u : warm.unsupported)
        std::cout << "[ REFUSED  ] " << f.name << " on " << spec << ", " << u << "\n";
      fixture = std::move(candidate);
      break;
    } catch (const UnsupportedError& e) {
      std::cout << "[ REFUSED  ] " << f.name << " refused " << spec << ": " << e.what() << "\n";
    }
  }
  if (!fixture) GTEST_SKIP() << f.name << " refused both test matrices";
  Fixture& fx = *fixture;
  const DeviceMemoryUsage baseline = device_memory_usage();
  {
    Sequence counted(f, fx);
    counted.run();
    ASSERT_TRUE(counted.wrong.empty()) << f.name << ": " << joined(counted.wrong);
  }
  const std::uint64_t n = device_memory_usage().attempts - baseline.attempts;
  ASSERT_EQ(device_memory_usage().bytes, baseline.bytes) << f.name << " leaked device memory";
  if (n == 0) GTEST_SKIP() << f.name << " makes no device allocation in this sequence";
  std::cout << "[ INJECT   ] " << f.name << ": " << n << " device allocations\n";
  RecordProperty("allocations", static_cast<int>(n));

  int recovered = 0;
  for (std::uint64_t k = 0; k < n; ++k) {
    SCOPED_TRACE(f.name + ": allocation " + std::to_string(k) + " of " + std::to_string(n) +
                 " failed");
    {
      Sequence s(f, fx);
      bool fired = false, threw = false;
      try {
        ScopedDeviceAllocationFailure fail(k);
        try {
          s.run();
        } catch (...) {
          fired = fail.fired();
          throw;
        }
        fired = fail.fired();
      } catch (const OutOfMemoryError& e) {
        threw = true;
        EXPECT_TRUE(contains(e.what(), "injected")) << "not the injected failure: " << e.what();
      } catch (const Error& e) {
        ADD_FAILURE() << "at step " << step_name(s.next()) << ": expected OutOfMemoryError, got "
                      << typeid(e).name() << ": " << e.what();
        threw = true;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "at step " << step_name(s.next())
                      << ": not a spmat::Error: " << typeid(e).name() << ": " << e.what();
        threw = true;
      }
      if (!fired) {
        // Fewer allocations than counted: only "tune" may vary (it keeps the fastest candidate
        // measured, which can differ from run to run).
        EXPECT_TRUE(f.name == "tune")
            << "the run made " << k << " allocations or fewer; the counted run made " << n;
      } else if (!threw) {
        EXPECT_TRUE(is_planner(f)) << "the injected failure was swallowed";
        ++recovered;
      }
      EXPECT_TRUE(s.wrong.empty()) << joined(s.wrong);
      if (threw && s.built()) {
        // The matrix was built; a product (or add, or to_csr) failed: it finishes now.
        const Step failed_at = s.next();
        try {
          s.run();
        } catch (const std::exception& e) {
          ADD_FAILURE() << "after a failure in " << step_name(failed_at)
                        << ", the same matrix cannot run it again: " << e.what();
        }
        EXPECT_TRUE(s.wrong.empty())
            << "after a failure in " << step_name(failed_at) << ": " << joined(s.wrong);
      }
    }
    const DeviceMemoryUsage after = device_memory_usage();
    EXPECT_EQ(after.bytes, baseline.bytes) << "device bytes leaked";
    EXPECT_EQ(after.allocations, baseline.allocations) << "device allocations leaked";
    {
      Sequence fresh(f, fx, Step::spmv);
      EXPECT_NO_THROW(fresh.run()) << "a fresh build after the failure";
      EXPECT_TRUE(fresh.wrong.empty())
          << "a fresh build after the failure: " << joined(fresh.wrong);
    }
    if (HasFailure()) break;  // one allocation's report is enough to work on
  }
  if (recovered)
    std::cout << "[ INJECT   ] " << f.name << " recovered from " << recovered << " of " << n
              << " failures\n";
}

/// The message of an allocation refused by a budget: the bytes asked for, the budget and the
/// device's free bytes.
void expect_budget_message(const std::string& msg, std::size_t budget) {
  std::smatch asked;
  ASSERT_TRUE(std::regex_search(msg, asked, std::regex("allocating ([0-9]+) bytes"))) << msg;
  EXPECT_GT(std::stoull(asked[1].str()), 0u) << msg;
  EXPECT_TRUE(contains(msg, "budget of " + std::to_string(budget) + " bytes")) << msg;
  EXPECT_TRUE(std::regex_search(msg, std::regex("the device has [0-9]+ bytes.* free of"))) << msg;
}

TEST_P(DeviceAllocationFailure, TinyBudgetFailsCleanly) {
  const FormatEntry& f = *GetParam().format;
  const auto a = gen::generate<double, std::int32_t>("gen:random_k:10000:10:values=int:seed=3");
  ASSERT_EQ(a.nnz(), 100000);
  try {
    (void)Matrix<double>::build(a, f.name, Backend::cuda, options_for(f));
  } catch (const UnsupportedError& e) {
    GTEST_SKIP() << f.name << " refuses the matrix even without a budget: " << e.what();
  }
  const DeviceMemoryUsage before = device_memory_usage();
  const std::size_t budget = before.bytes + 4096;
  {
    ScopedDeviceMemoryLimit limit(budget);
    try {
      const auto m = Matrix<double>::build(a, f.name, Backend::cuda, options_for(f));
      ADD_FAILURE() << f.name
                    << ": a matrix of 100,000 entries was built within 4 KiB of device memory";
    } catch (const OutOfMemoryError& e) {
      expect_budget_message(e.what(), budget);
    } catch (const std::exception& e) {
      ADD_FAILURE() << f.name << ": expected OutOfMemoryError, got " << typeid(e).name() << ": "
                    << e.what();
    }
  }
  EXPECT_EQ(device_memory_usage().bytes, before.bytes) << "device bytes left allocated";
  EXPECT_EQ(device_memory_usage().allocations, before.allocations);
}

/// A build from a CSR already in device memory (the format's device builder), for the formats
/// that have one: uploaded before any counting, so that only the builder's allocations count.
struct DeviceInput {
  Csr32 a;
  DeviceCsr<double, std::int32_t> d;
  std::vector<double> x, want_y;
  explicit DeviceInput(Csr32 m) : a(std::move(m)), d(cuda::upload_csr(a)) {
    x = testing::operand_vector<double>(a.cols, 1, true);
    want_y = reference::spmv<double, std::int32_t, double, double>(a, x);
  }
  /// spmv of a device-built matrix against the reference ("" when it matches).
  std::string check(const Matrix<double>& m) const {
    const cuda::DeviceBuffer<double> dx(x, "test x");
    cuda::DeviceBuffer<double> dy(static_cast<std::size_t>(a.rows), "test y");
    dy.fill_bytes(0xFF);  // NaN: every entry must be written
    m.spmv(dx.span(), dy.span());
    cuda::synchronize();
    const double err = reference::relative_norm2_error<double>(dy.download(), want_y);
    return err <= 1e-12 ? "" : "spmv of the device-built matrix: relative error " +
                                   std::to_string(err);
  }
};

/// The device input of TinyBudget/EveryAllocation for `f` (power-law rows, or equal rows for a
/// format that refuses them), or nullopt with the reason when `f` has no device builder.
std::unique_ptr<DeviceInput> device_input_for(const FormatEntry& f, std::string& why) {
  if (!f.builds_on_device()) {
    why = f.name + " has no device builder (it builds from a device CSR through the host)";
    return nullptr;
  }
  for (const char* spec :
       {"gen:powerlaw:2000:8:values=int:seed=5", "gen:random_k:2000:8:values=int:seed=5"}) {
    auto in = std::make_unique<DeviceInput>(gen::generate<double, std::int32_t>(spec));
    try {
      (void)Matrix<double>::build(in->d.view(), f.name, options_for(f));
      return in;
    } catch (const UnsupportedError& e) {
      why = f.name + " refused " + spec + ": " + e.what();
    }
  }
  return nullptr;
}

TEST_P(DeviceAllocationFailure, DeviceBuildFailsCleanlyAtEveryAllocation) {
  const FormatEntry& f = *GetParam().format;
  std::string why;
  const auto in = device_input_for(f, why);
  if (!in) GTEST_SKIP() << why;
  const DeviceMemoryUsage baseline = device_memory_usage();
  (void)Matrix<double>::build(in->d.view(), f.name, options_for(f));
  const std::uint64_t n = device_memory_usage().attempts - baseline.attempts;
  ASSERT_EQ(device_memory_usage().bytes, baseline.bytes) << f.name << " leaked device memory";
  if (n == 0) GTEST_SKIP() << f.name << " makes no device allocation in its device build";
  std::cout << "[ INJECT   ] " << f.name << " device build: " << n << " device allocations\n";
  for (std::uint64_t k = 0; k < n; ++k) {
    SCOPED_TRACE(f.name + " device build: allocation " + std::to_string(k) + " of " +
                 std::to_string(n) + " failed");
    try {
      ScopedDeviceAllocationFailure fail(k);
      (void)Matrix<double>::build(in->d.view(), f.name, options_for(f));
      if (fail.fired()) ADD_FAILURE() << "the injected failure was swallowed";
    } catch (const OutOfMemoryError& e) {
      EXPECT_TRUE(contains(e.what(), "injected")) << "not the injected failure: " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "expected OutOfMemoryError, got " << typeid(e).name() << ": " << e.what();
    }
    EXPECT_EQ(device_memory_usage().bytes, baseline.bytes) << "device bytes leaked";
    EXPECT_EQ(device_memory_usage().allocations, baseline.allocations)
        << "device allocations leaked";
    const auto fresh = Matrix<double>::build(in->d.view(), f.name, options_for(f));
    EXPECT_EQ(in->check(fresh), "") << "a fresh device build after the failure";
    if (HasFailure()) break;
  }
}

TEST_P(DeviceAllocationFailure, DeviceBuildTinyBudgetFailsCleanly) {
  const FormatEntry& f = *GetParam().format;
  std::string why;
  const auto in = device_input_for(f, why);
  if (!in) GTEST_SKIP() << why;
  const DeviceMemoryUsage before = device_memory_usage();
  const std::size_t budget = before.bytes + 1024;
  {
    std::optional<Matrix<double>> m;
    std::optional<ScopedDeviceMemoryLimit> limit(std::in_place, budget);
    try {
      m.emplace(Matrix<double>::build(in->d.view(), f.name, options_for(f)));
    } catch (const OutOfMemoryError& e) {
      expect_budget_message(e.what(), budget);
    } catch (const std::exception& e) {
      ADD_FAILURE() << f.name << ": expected OutOfMemoryError, got " << typeid(e).name() << ": "
                    << e.what();
    }
    if (m) {  // csr adopts the caller's arrays: its device build may fit (its plan is scalars)
      limit.reset();  // the check's own operands need memory
      EXPECT_EQ(in->check(*m), "") << f.name << ", built within the budget";
    }
  }
  EXPECT_EQ(device_memory_usage().bytes, before.bytes) << "device bytes left allocated";
  EXPECT_EQ(device_memory_usage().allocations, before.allocations);
}

// A freed matrix leaves its arrays cached in spmat's pool, so that building it again maps no
// new device memory; release_cached_device_memory gives the cache back to the device.
TEST(GpuMemoryPool, RebuildReusesTheCacheAndReleaseGivesItBack) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << "memory pool test skips: " << why;
  const char* cache = std::getenv("SPMAT_DEVICE_MEMORY_CACHE");
  if (cache && std::string(cache) != "1" && std::string(cache) != "on")
    GTEST_SKIP() << "SPMAT_DEVICE_MEMORY_CACHE=" << cache << ": arrays bypass the pool";
  // 3.2 M nonzeros: 51 MB of coo arrays, far above the pool's granularity.
  const auto a = gen::generate<double, std::int32_t>("gen:random_k:200000:16:seed=3");
  const std::size_t arrays = static_cast<std::size_t>(a.nnz()) * (8 + 4 + 4);
  const DeviceMemoryUsage before = device_memory_usage();
  { const auto A = Matrix<double>::build(a, "coo", Backend::cuda); }
  EXPECT_EQ(device_memory_usage().bytes, before.bytes) << "device bytes left allocated";
  const std::size_t cached = cuda::pool_reserved_bytes();
  EXPECT_GE(cached, arrays) << "the freed arrays are not cached";
  { const auto A = Matrix<double>::build(a, "coo", Backend::cuda); }
  EXPECT_LE(cuda::pool_reserved_bytes(), cached) << "the rebuild took new memory from the device";
  release_cached_device_memory();
  // What stays reserved holds live allocations of other matrices only (none of this test's).
  EXPECT_LT(cuda::pool_reserved_bytes() + arrays, cached + 1) << "the cache was not given back";
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DeviceAllocationFailure);
INSTANTIATE_TEST_SUITE_P(GpuFault, DeviceAllocationFailure, ::testing::ValuesIn(cuda_formats()),
                         param_name);

#endif  // SPMAT_WITH_CUDA

}  // namespace
}  // namespace spmat
