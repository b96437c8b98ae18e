// spmat/core/device_memory.hpp — the accounting of spmat's GPU memory: a budget, the live bytes
// and allocations, and a fault injector for tests.
// SPDX-License-Identifier: MIT
//
// Every device allocation the library makes goes through spmat::cuda::device_alloc /
// device_free (cuda/buffer.hpp: DeviceBuffer, the cuSPARSE baselines' matrices, buffers and
// workspaces, the benchmark's and the tuner's operands), scratch_alloc / scratch_free (the
// temporaries of one call, CUB workspaces and the HiSparse work memory among them); both take
// their memory from stream-ordered pools of spmat's (one for arrays, one for temporaries, per
// device) and pass through reserve/release here.
// Not counted, because spmat does not hand it out: the CUDA context, the cuSPARSE handle's own
// memory, and the blocks the pool keeps cached after they were freed (a pool keeps its peak, so
// that rebuilding a matrix maps no new memory; release_cached_device_memory gives them back,
// and SPMAT_DEVICE_MEMORY_CACHE=0 makes a matrix's arrays bypass the pool).
//
//   spmat::set_device_memory_limit(std::size_t(2) << 30);   // or SPMAT_DEVICE_MEMORY_LIMIT=2G
//   auto A = spmat::Matrix<double>::build(csr, "csr", spmat::Backend::cuda);
//   // -> OutOfMemoryError "... allocating 805306368 bytes (768.0 MiB) for csr values would take
//   //    spmat's device memory to ..., over its budget of ...; the device has ... bytes free"
//
//   {  // tests: the third device allocation from now fails as if the device were full
//     spmat::ScopedDeviceAllocationFailure fail(2);
//     EXPECT_THROW(build(...), spmat::OutOfMemoryError);
//   }
//   EXPECT_EQ(spmat::device_memory_usage().bytes, before.bytes);   // nothing leaked
//
// This file is plain C++ (it never calls CUDA), so the bookkeeping is the same, and testable, in
// builds without CUDA. The allocation path costs a few relaxed atomic operations.
#pragma once
#include <cstddef>
#include <cstdint>

namespace spmat {

/// What spmat holds on the device now (see the file comment for what is counted).
struct DeviceMemoryUsage {
  std::size_t bytes = 0;        ///< live bytes
  std::size_t allocations = 0;  ///< live allocations
  /// Device allocations attempted since the process started, failed ones included: the
  /// difference over a call is the number of allocations it makes (what
  /// ScopedDeviceAllocationFailure counts).
  std::uint64_t attempts = 0;
  /// The most live bytes at any moment since the process started or since the last
  /// reset_device_memory_peak(): what a build needed at its height, transients included.
  std::size_t peak_bytes = 0;
};
DeviceMemoryUsage device_memory_usage();
/// Starts a new peak from the bytes held now (DeviceMemoryUsage::peak_bytes).
void reset_device_memory_peak();
/// Waits for the device, then gives the memory spmat's pools keep cached (what freed matrices
/// and finished calls gave back) to the device, for other libraries or processes. spmat does
/// this by itself before it reports the device full. Does nothing without CUDA or a GPU.
void release_cached_device_memory();

/// The most bytes spmat may hold on the device at once; 0: no budget (the default). An
/// allocation that would go beyond it throws OutOfMemoryError naming the bytes asked for, what
/// for, the bytes spmat holds, the budget and the device's free bytes, without asking CUDA.
/// Until set_device_memory_limit is called, the environment variable SPMAT_DEVICE_MEMORY_LIMIT
/// gives it: a byte count with an optional K, M, G or T suffix (powers of 1024), e.g. 512M;
/// a malformed value makes the first device allocation throw ParseError naming it.
/// The budget bounds spmat's allocations only; it does not reserve anything.
void set_device_memory_limit(std::size_t bytes);
std::size_t device_memory_limit();

/// Sets the budget for its lifetime, then puts the previous one back.
class ScopedDeviceMemoryLimit {
 public:
  explicit ScopedDeviceMemoryLimit(std::size_t bytes);
  ~ScopedDeviceMemoryLimit();
  ScopedDeviceMemoryLimit(const ScopedDeviceMemoryLimit&) = delete;
  ScopedDeviceMemoryLimit& operator=(const ScopedDeviceMemoryLimit&) = delete;

 private:
  std::size_t previous_;
};

/// Fault injection for tests: the `n`-th device allocation from now (0: the next one) throws
/// OutOfMemoryError as if the device were full (the message says the failure was injected);
/// the allocations before and after it are served normally. One failure per guard; the
/// destructor disarms it if it has not fired. Process-wide, like the device: an allocation made
/// by another thread counts too. A guard replaces an armed one for its lifetime.
class ScopedDeviceAllocationFailure {
 public:
  explicit ScopedDeviceAllocationFailure(std::uint64_t n);
  ~ScopedDeviceAllocationFailure();
  ScopedDeviceAllocationFailure(const ScopedDeviceAllocationFailure&) = delete;
  ScopedDeviceAllocationFailure& operator=(const ScopedDeviceAllocationFailure&) = delete;
  /// Whether the failure has happened.
  bool fired() const;

 private:
  std::int64_t previous_;
  std::uint64_t injected_before_;
};

namespace detail {

/// The device's free and total bytes (cudaMemGetInfo in CUDA builds); false when unknown.
using DeviceFreeBytesFn = bool (*)(std::size_t* free_bytes, std::size_t* total_bytes);

/// Called by the allocators before they ask CUDA for `bytes` for `what`: counts the attempt,
/// throws OutOfMemoryError when an injected failure is due or the budget would be exceeded
/// (`free_bytes` is only called then, for the message), else counts the bytes as held.
void reserve_device_memory(std::size_t bytes, const char* what, DeviceFreeBytesFn free_bytes);
/// Undoes one reserve_device_memory(bytes): after a free, or when CUDA refused the allocation.
void release_device_memory(std::size_t bytes) noexcept;
/// The OutOfMemoryError of an allocation CUDA itself refused (after release_device_memory):
/// `cause` (e.g. the CUDA error) with the same account of spmat's usage and the device's.
[[noreturn]] void throw_device_out_of_memory(std::size_t bytes, const char* what, const char* cause,
                                             DeviceFreeBytesFn free_bytes);

}  // namespace detail
}  // namespace spmat
