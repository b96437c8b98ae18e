// spmat/cuda/buffer.cpp — device allocation with readable out-of-memory errors; events, streams.
// SPDX-License-Identifier: MIT
#include "spmat/cuda/buffer.hpp"

namespace spmat::cuda {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  std::string msg = std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                    cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ")";
  if (status == cudaErrorMemoryAllocation) throw OutOfMemoryError(msg);
  throw CudaError(msg);
}

void* device_alloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t st = cudaMalloc(&p, bytes);
  if (st == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free error so later calls work
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw OutOfMemoryError("GPU out of memory allocating " + std::to_string(bytes) + " bytes for " +
                           what + " (" + std::to_string(free_b >> 20) + " MiB free of " +
                           std::to_string(total_b >> 20) + " MiB)");
  }
  check(st, "cudaMalloc", __FILE__, __LINE__);
  return p;
}

void device_free(void* p) noexcept {
  if (p) cudaFree(p);
}

Event::Event() { SPMAT_CUDA_CHECK(cudaEventCreate(&e_)); }
Event::~Event() {
  if (e_) cudaEventDestroy(e_);
}
void Event::record(cudaStream_t s) { SPMAT_CUDA_CHECK(cudaEventRecord(e_, s)); }
void Event::synchronize() { SPMAT_CUDA_CHECK(cudaEventSynchronize(e_)); }
float Event::elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0;
  SPMAT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, stop.e_));
  return ms;
}

Stream::Stream() { SPMAT_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() {
  if (s_) cudaStreamDestroy(s_);
}
void Stream::synchronize() { SPMAT_CUDA_CHECK(cudaStreamSynchronize(s_)); }

DeviceInfo device_info() {
  int dev = 0;
  SPMAT_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  SPMAT_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  DeviceInfo d;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.global_mem_bytes = p.totalGlobalMem;
  d.major = p.major;
  d.minor = p.minor;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  return d;
}

void synchronize() { SPMAT_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace spmat::cuda
