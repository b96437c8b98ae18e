// spmat/cuda/stream_hold.cu — the waiting kernel behind StreamHold.
// SPDX-License-Identifier: MIT
#include <atomic>
#include <cstdint>

#include "spmat/cuda/check.hpp"
#include "spmat/cuda/stream_hold.hpp"

namespace spmat::cuda {
namespace {

__device__ std::uint64_t global_nanoseconds() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread polls the host flag; __nanosleep keeps the polling off the PCIe bus most of the
// time (a release is seen within about a microsecond).
// words[0]: the host's release; words[1]: the kernel's timeout (separate words, so neither
// side overwrites the other's).
__global__ void wait_for_release(volatile int* words, std::uint64_t timeout_ns) {
  const std::uint64_t t0 = global_nanoseconds();
  while (words[0] == 0) {
    if (global_nanoseconds() - t0 > timeout_ns) {
      words[1] = 1;
      break;
    }
    __nanosleep(500);
  }
}

}  // namespace

StreamHold::StreamHold() {
  void* p = nullptr;
  SPMAT_CUDA_CHECK(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
  words_ = static_cast<int*>(p);
  words_[0] = 1;
  words_[1] = 0;
}

StreamHold::~StreamHold() {
  if (!words_) return;
  // A hold left by an exception between hold() and release() ends now, not at its timeout
  // (cudaFreeHost waits for the device).
  release();
  cudaFreeHost(words_);
}

void StreamHold::hold(cudaStream_t s, double timeout_ms) {
  // The previous hold has finished (the caller synchronized), so nothing reads the flag now.
  volatile int* words = words_;
  words[0] = 0;
  words[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  int* device_flag = nullptr;
  SPMAT_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flag), words_, 0));
  const auto timeout_ns = static_cast<std::uint64_t>(timeout_ms > 0 ? timeout_ms * 1e6 : 0);
  wait_for_release<<<1, 1, 0, s>>>(device_flag, timeout_ns);
  SPMAT_CUDA_CHECK_LAUNCH("wait_for_release");
}

void StreamHold::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  reinterpret_cast<volatile int*>(words_)[0] = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool StreamHold::timed_out() const { return reinterpret_cast<volatile const int*>(words_)[1] != 0; }

}  // namespace spmat::cuda
