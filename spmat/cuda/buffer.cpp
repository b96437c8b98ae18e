// spmat/cuda/buffer.cpp — device allocation with readable out-of-memory errors; events, streams.
// SPDX-License-Identifier: MIT
#include "spmat/cuda/buffer.hpp"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>

namespace spmat::cuda {

namespace {

/// spmat's memory pool of the current device for `kind` (null where memory pools are
/// unsupported), made on first use with no release threshold: what a call gives back stays
/// cached for the next one instead of returning to the device at every synchronization. Not the
/// device's default pool, whose threshold belongs to the application's own cudaMallocAsync.
/// Matrices' arrays and temporaries have a pool each: a rebuild then finds its arrays' blocks
/// as it left them, where one pool would let the build's temporaries, taken first, cut them up
/// (measured: a coo rebuild of 0.5 GB mapping new memory each time, 5 times slower). `lookup_only`:
/// never creates one and never throws (null when there is none yet or CUDA cannot say).
cudaMemPool_t memory_pool(DeviceMemoryKind kind, bool lookup_only = false) {
  static std::mutex mu;
  static std::map<std::pair<int, DeviceMemoryKind>, cudaMemPool_t> pools;
  int dev = 0;
  if (lookup_only) {
    if (cudaGetDevice(&dev) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
  } else {
    SPMAT_CUDA_CHECK(cudaGetDevice(&dev));
  }
  const std::lock_guard<std::mutex> lock(mu);
  if (const auto it = pools.find({dev, kind}); it != pools.end()) return it->second;
  if (lookup_only) return nullptr;
  int supported = 0;
  SPMAT_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev));
  cudaMemPool_t pool = nullptr;
  if (supported) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    SPMAT_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    std::uint64_t keep = UINT64_MAX;
    SPMAT_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  pools.emplace(std::pair{dev, kind}, pool);
  return pool;
}

/// Whether a matrix's arrays (device_alloc) come from the pool too: on unless the environment
/// variable SPMAT_DEVICE_MEMORY_CACHE is 0, off, false or no. Read once: an array is given back
/// the way it was taken.
bool pool_held_memory() {
  static const bool on = [] {
    const char* v = std::getenv("SPMAT_DEVICE_MEMORY_CACHE");
    if (!v) return true;
    const std::string_view s(v);
    return !(s == "0" || s == "off" || s == "false" || s == "no");
  }();
  return on;
}

/// Gives the pools' cached memory back to the device (after the frees queued on this thread's
/// stream are done), so that an allocation refused for want of memory can be retried. False
/// when there was nothing to give back.
bool trim_pools() {
  bool trimmed = false;
  for (const DeviceMemoryKind kind : {DeviceMemoryKind::held, DeviceMemoryKind::scratch}) {
    const cudaMemPool_t pool = memory_pool(kind, true);
    if (!pool) continue;
    std::uint64_t reserved = 0;
    if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess ||
        reserved == 0) {
      (void)cudaGetLastError();
      continue;
    }
    if (cudaStreamSynchronize(stream()) != cudaSuccess || cudaMemPoolTrimTo(pool, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    trimmed = true;
  }
  return trimmed;
}

}  // namespace

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  std::string msg = std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                    cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ")";
  if (status == cudaErrorMemoryAllocation) throw OutOfMemoryError(msg);
  throw CudaError(msg);
}

bool device_free_bytes(std::size_t* free_bytes, std::size_t* total_bytes) {
  const bool ok = cudaMemGetInfo(free_bytes, total_bytes) == cudaSuccess;
  if (!ok) (void)cudaGetLastError();
  return ok;
}

void* device_alloc(std::size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;  // nothing to allocate, count or fail
  ::spmat::detail::reserve_device_memory(bytes, what, &device_free_bytes);
  // From the pool, a rebuild of a matrix of the same size (a value change of a tuner's
  // candidate, a time step) finds its arrays' memory mapped already; cudaMalloc would map it
  // again, about 0.1-1 ms a large array, more than many builds take. The allocation is ordered
  // on stream(), which the build or upload that fills it synchronizes before it returns.
  const cudaMemPool_t pool = pool_held_memory() ? memory_pool(DeviceMemoryKind::held) : nullptr;
  const char* call = pool ? "cudaMallocFromPoolAsync" : "cudaMalloc";
  void* p = nullptr;
  const auto allocate = [&] {
    return pool ? cudaMallocFromPoolAsync(&p, bytes, pool, stream()) : cudaMalloc(&p, bytes);
  };
  cudaError_t st = allocate();
  if (st == cudaErrorMemoryAllocation && trim_pools()) {
    (void)cudaGetLastError();
    st = allocate();
  }
  if (st != cudaSuccess) {
    ::spmat::detail::release_device_memory(bytes);
    if (st == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky, but clear it so later checks do not see it
      const std::string cause = std::string(call) + ": cudaErrorMemoryAllocation";
      ::spmat::detail::throw_device_out_of_memory(bytes, what, cause.c_str(), &device_free_bytes);
    }
    check(st, call, __FILE__, __LINE__);
  }
  return p;
}

void device_free(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  if (pool_held_memory() && memory_pool(DeviceMemoryKind::held, true)) {
    // Any stream may still read a matrix's arrays: wait for the device, as cudaFree does, then
    // give the memory to the pool, not back to the device.
    (void)cudaDeviceSynchronize();
    (void)cudaFreeAsync(p, stream());
  } else {
    (void)cudaFree(p);
  }
  ::spmat::detail::release_device_memory(bytes);
}

void release_cached_memory() {
  SPMAT_CUDA_CHECK(cudaDeviceSynchronize());
  for (const DeviceMemoryKind kind : {DeviceMemoryKind::held, DeviceMemoryKind::scratch})
    if (const cudaMemPool_t pool = memory_pool(kind, true)) SPMAT_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
}

void* scratch_alloc(std::size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  const cudaMemPool_t pool = memory_pool(DeviceMemoryKind::scratch);
  ::spmat::detail::reserve_device_memory(bytes, what, &device_free_bytes);
  void* p = nullptr;
  const auto allocate = [&] {
    return pool ? cudaMallocFromPoolAsync(&p, bytes, pool, stream()) : cudaMalloc(&p, bytes);
  };
  cudaError_t st = allocate();
  if (st == cudaErrorMemoryAllocation && trim_pools()) {  // the arrays' pool may hold the room
    (void)cudaGetLastError();
    st = allocate();
  }
  if (st != cudaSuccess) {
    ::spmat::detail::release_device_memory(bytes);
    (void)cudaGetLastError();
    if (st == cudaErrorMemoryAllocation) {
      ::spmat::detail::throw_device_out_of_memory(
          bytes, what,
          pool ? "cudaMallocFromPoolAsync: cudaErrorMemoryAllocation"
               : "cudaMalloc: cudaErrorMemoryAllocation",
          &device_free_bytes);
    }
    check(st, pool ? "cudaMallocFromPoolAsync" : "cudaMalloc", __FILE__, __LINE__);
  }
  return p;
}

void scratch_free(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  if (memory_pool(DeviceMemoryKind::scratch, true)) (void)cudaFreeAsync(p, stream());
  else (void)cudaFree(p);
  ::spmat::detail::release_device_memory(bytes);
}

std::size_t pool_reserved_bytes() {
  std::size_t total = 0;
  for (const DeviceMemoryKind kind : {DeviceMemoryKind::held, DeviceMemoryKind::scratch}) {
    std::uint64_t reserved = 0;
    if (const cudaMemPool_t pool = memory_pool(kind, true))
      SPMAT_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    total += static_cast<std::size_t>(reserved);
  }
  return total;
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

void synchronize_stream() { SPMAT_CUDA_CHECK(cudaStreamSynchronize(stream())); }

}  // namespace spmat::cuda
