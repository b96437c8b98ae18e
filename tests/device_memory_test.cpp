// tests/device_memory_test.cpp — the bookkeeping of spmat's device-memory accounting (budget,
// live bytes and allocations, injected failures), driven through the allocators' hooks with a
// stand-in for the device: it runs in every build, with or without CUDA or a GPU.
// SPDX-License-Identifier: MIT
//
// The GPU side (every format's builds and products failing at each of their allocations) is
// tests/gpu_fault_test.cpp.
#include "spmat/core/device_memory.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "spmat/core/error.hpp"

namespace spmat {
namespace {

// A device with 123456789 bytes free of 987654321.
bool fake_device(std::size_t* free_bytes, std::size_t* total_bytes) {
  *free_bytes = 123456789;
  *total_bytes = 987654321;
  return true;
}

bool unknown_device(std::size_t*, std::size_t*) { return false; }

/// One fake allocation: reserved on construction (may throw), released on destruction.
struct FakeAllocation {
  std::size_t bytes;
  FakeAllocation(std::size_t n, const char* what) : bytes(n) {
    detail::reserve_device_memory(n, what, &fake_device);
  }
  ~FakeAllocation() { detail::release_device_memory(bytes); }
  FakeAllocation(const FakeAllocation&) = delete;
  FakeAllocation& operator=(const FakeAllocation&) = delete;
};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// Expects `allocate()` to throw OutOfMemoryError (`why_it_should` in the failure otherwise)
/// whose message holds each of `parts`.
template <class Allocate>
void expect_out_of_memory(Allocate&& allocate, const char* why_it_should,
                          std::initializer_list<std::string> parts) {
  try {
    allocate();
    ADD_FAILURE() << why_it_should;
  } catch (const OutOfMemoryError& e) {
    const std::string m = e.what();
    for (const std::string& part : parts) EXPECT_TRUE(contains(m, part)) << m;
  }
}

TEST(DeviceMemory, CountsLiveBytesAllocationsAndAttempts) {
  const DeviceMemoryUsage before = device_memory_usage();
  {
    FakeAllocation a(1000, "a");
    FakeAllocation b(24, "b");
    const DeviceMemoryUsage during = device_memory_usage();
    EXPECT_EQ(during.bytes, before.bytes + 1024);
    EXPECT_EQ(during.allocations, before.allocations + 2);
    EXPECT_EQ(during.attempts, before.attempts + 2);
  }
  const DeviceMemoryUsage after = device_memory_usage();
  EXPECT_EQ(after.bytes, before.bytes);
  EXPECT_EQ(after.allocations, before.allocations);
  EXPECT_EQ(after.attempts, before.attempts + 2);
}

TEST(DeviceMemory, InjectedFailureHitsTheNthAllocationOnly) {
  const DeviceMemoryUsage before = device_memory_usage();
  {
    ScopedDeviceAllocationFailure fail(2);
    FakeAllocation a(10, "first");
    FakeAllocation b(20, "second");
    EXPECT_FALSE(fail.fired());
    expect_out_of_memory([] { FakeAllocation c(4321, "the third buffer"); },
                         "the third allocation should have failed",
                         {"injected", "4321 bytes", "the third buffer",
                          "spmat holds " + std::to_string(before.bytes + 30) + " bytes",
                          "123456789 bytes (117.7 MiB) free of 987654321 bytes"});
    EXPECT_TRUE(fail.fired());
    // The failed allocation holds nothing; the next ones are served again.
    EXPECT_EQ(device_memory_usage().bytes, before.bytes + 30);
    EXPECT_EQ(device_memory_usage().allocations, before.allocations + 2);
    FakeAllocation d(40, "fourth");
    FakeAllocation e(50, "fifth");
  }
  EXPECT_EQ(device_memory_usage().bytes, before.bytes);
  EXPECT_EQ(device_memory_usage().attempts, before.attempts + 5);
}

TEST(DeviceMemory, InjectorThatDidNotFireIsDisarmedByItsDestructor) {
  {
    ScopedDeviceAllocationFailure fail(5);
    FakeAllocation a(1, "a");
    EXPECT_FALSE(fail.fired());
  }
  for (int i = 0; i < 10; ++i) EXPECT_NO_THROW(FakeAllocation(1, "after the guard"));
  {
    ScopedDeviceAllocationFailure fail(0);
    EXPECT_THROW(FakeAllocation(1, "the next one"), OutOfMemoryError);
    EXPECT_TRUE(fail.fired());
  }
}

TEST(DeviceMemory, BudgetRefusesWhatWouldExceedItAndSaysWhy) {
  // Relative to what the process holds already (a GPU run may hold operands of other tests).
  const DeviceMemoryUsage before = device_memory_usage();
  const std::size_t outer = device_memory_limit();
  const std::size_t budget = before.bytes + 4096;
  {
    ScopedDeviceMemoryLimit limit(budget);
    EXPECT_EQ(device_memory_limit(), budget);
    FakeAllocation a(4000, "most of it");
    expect_out_of_memory([] { FakeAllocation b(200, "csr values"); },
                         "200 more bytes should exceed the budget",
                         {"budget", "allocating 200 bytes for csr values",
                          "budget of " + std::to_string(budget) + " bytes",
                          "SPMAT_DEVICE_MEMORY_LIMIT",
                          "spmat holds " + std::to_string(before.bytes + 4000) + " bytes in " +
                              std::to_string(before.allocations + 1) + " allocations",
                          "123456789 bytes (117.7 MiB) free"});
    EXPECT_EQ(device_memory_usage().bytes, before.bytes + 4000);
    EXPECT_NO_THROW(FakeAllocation(96, "exactly the rest"));
    // A size near 2^64 wraps around neither the check nor the message.
    EXPECT_THROW(FakeAllocation(~std::size_t(0) - 10, "too much"), OutOfMemoryError);
    EXPECT_EQ(device_memory_usage().bytes, before.bytes + 4000);
  }
  EXPECT_EQ(device_memory_limit(), outer);
  EXPECT_EQ(device_memory_usage().bytes, before.bytes);
}

TEST(DeviceMemory, OutOfMemoryFromTheDeviceNamesTheCauseAndTheUsage) {
  expect_out_of_memory(
      [] {
        detail::throw_device_out_of_memory(1 << 20, "ell values",
                                           "cudaMalloc: cudaErrorMemoryAllocation",
                                           &unknown_device);
      },
      "throw_device_out_of_memory should throw",
      {"1048576 bytes (1.0 MiB) for ell values", "cudaErrorMemoryAllocation",
       "an unknown number of bytes free"});
}

TEST(DeviceMemory, PeakKeepsTheHeightUntilReset) {
  reset_device_memory_peak();
  const DeviceMemoryUsage before = device_memory_usage();
  EXPECT_EQ(before.peak_bytes, before.bytes);
  {
    FakeAllocation a(100, "first");
    {
      FakeAllocation b(50, "second");
    }
    FakeAllocation c(20, "third");
    EXPECT_EQ(device_memory_usage().peak_bytes, before.bytes + 150);
  }
  EXPECT_EQ(device_memory_usage().bytes, before.bytes);
  EXPECT_EQ(device_memory_usage().peak_bytes, before.bytes + 150);
  reset_device_memory_peak();
  EXPECT_EQ(device_memory_usage().peak_bytes, before.bytes);
}

}  // namespace
}  // namespace spmat
