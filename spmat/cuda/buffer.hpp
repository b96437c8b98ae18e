// spmat/cuda/buffer.hpp — RAII device memory, events and streams; the stream spmat's work goes
// to and the copies on it.
// SPDX-License-Identifier: MIT
//
// Every CUDA call of the library that queues work names cuda::stream(), the calling thread's
// spmat::current_stream() (spmat/stream.hpp): kernel launches <<<grid, block, smem,
// cuda::stream()>>>, CUB and cuSPARSE calls, and the copies below. Where the host needs the
// result (a download, a host array read by an upload) the copy waits for the stream, not for
// the device, so that other streams, and a graph capture on one of them, go on undisturbed.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "spmat/core/device_memory.hpp"
#include "spmat/cuda/check.hpp"
#include "spmat/stream.hpp"

namespace spmat::cuda {

/// The stream this thread's spmat work goes to (spmat::current_stream(); null: the legacy
/// default stream).
inline cudaStream_t stream() { return current_stream(); }
/// Waits until the work queued on stream() is done: before the host reads what it produced, or
/// frees device temporaries that queued work still reads.
void synchronize_stream();

/// dst[0..n) = src[0..n), host to device on stream(), complete on return: `src` may be freed or
/// changed at once, whatever memory it is in (pageable or pinned).
template <class T>
void copy_to_device(T* dst, const T* src, std::size_t n) {
  if (n == 0) return;
  SPMAT_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyHostToDevice, stream()));
  synchronize_stream();
}
/// dst[0..n) = src[0..n), device to host on stream(), complete on return.
template <class T>
void copy_to_host(T* dst, const T* src, std::size_t n) {
  if (n == 0) return;
  SPMAT_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost, stream()));
  synchronize_stream();
}
/// dst[0..n) = src[0..n), device to device, queued on stream() (asynchronous).
template <class T>
void copy_device(T* dst, const T* src, std::size_t n) {
  if (n == 0) return;
  SPMAT_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice, stream()));
}
/// Sets `bytes` bytes at device address `p` to `byte`, queued on stream() (asynchronous).
inline void fill_bytes_async(void* p, int byte, std::size_t bytes) {
  if (bytes) SPMAT_CUDA_CHECK(cudaMemsetAsync(p, byte, bytes, stream()));
}

/// Allocates `bytes` of device memory for `what` (named in errors), ordered on stream() and
/// taken from spmat's memory pool for arrays (scratch_alloc has its own) unless the environment
/// variable SPMAT_DEVICE_MEMORY_CACHE is 0, off, false or no (then cudaMalloc); throws OutOfMemoryError
/// naming the size, what for, spmat's usage and the device's free memory when the device is
/// full, spmat's budget would be exceeded or a test injected the failure
/// (spmat/core/device_memory.hpp: set_device_memory_limit, ScopedDeviceAllocationFailure).
/// Every device allocation of the library goes through here or scratch_alloc below, so
/// device_memory_usage() accounts for all of them. When the device
/// refuses, the memory cached by spmat's pools is given back to it and the allocation tried
/// once more. 0 bytes: returns null, allocates nothing.
void* device_alloc(std::size_t bytes, const char* what);
/// Frees what device_alloc(bytes, ...) returned; `bytes` must be the size asked for (the
/// accounting keeps no table of sizes). Null is ignored. Waits for the device, as cudaFree
/// does; the memory stays cached in spmat's pool for the next array (see
/// release_cached_memory) unless SPMAT_DEVICE_MEMORY_CACHE=0.
void device_free(void* p, std::size_t bytes) noexcept;
/// Gives the memory that spmat's pools keep cached (freed arrays and temporaries) back to the
/// device, after waiting for it: for an application that needs it for something else. spmat
/// does this itself before it reports the device full.
void release_cached_memory();
/// The bytes spmat's pools hold from the device now, handed out or cached (0 without pools).
std::size_t pool_reserved_bytes();
/// The device's free and total bytes (cudaMemGetInfo); false when CUDA cannot say.
bool device_free_bytes(std::size_t* free_bytes, std::size_t* total_bytes);

/// Device memory for a temporary of one call (a build's row lengths, CUB workspaces, a
/// validation's result slots): taken in stream order on stream() from a memory pool that
/// spmat keeps for the current device, and given back to it in stream order on stream()
/// (cudaMallocFromPoolAsync / cudaFreeAsync). Neither side synchronizes anything, unlike
/// cudaMalloc (about 0.1-1 ms for large sizes) and cudaFree (which waits for the whole device),
/// so a build may free its temporaries while its kernels still read them. Only for memory
/// allocated and freed on the same stream within one call: what outlives the call (a matrix's
/// arrays, used on other streams later) comes from device_alloc. Counted, budgeted and
/// fault-injected like device_alloc; the pool keeps what was freed cached for the next call
/// (both allocators give the pools' cache back to the device before they report it full).
/// Devices without memory pools get cudaMalloc / cudaFree.
void* scratch_alloc(std::size_t bytes, const char* what);
/// Gives back, in stream order on stream(), what scratch_alloc(bytes, ...) returned (the
/// stream must be the one it was allocated on). Null is ignored.
void scratch_free(void* p, std::size_t bytes) noexcept;

/// Where a DeviceBuffer's memory comes from: device_alloc (held: may outlive the call and be
/// used on any stream) or scratch_alloc (a temporary of one call on stream()).
enum class DeviceMemoryKind { held, scratch };

/// An owning, typed, uninitialised device array. Move-only.
template <class T, DeviceMemoryKind Kind = DeviceMemoryKind::held>
class DeviceBuffer {
  static void* allocate(std::size_t bytes, const char* what) {
    return Kind == DeviceMemoryKind::held ? device_alloc(bytes, what) : scratch_alloc(bytes, what);
  }
  static void release(void* p, std::size_t bytes) noexcept {
    if constexpr (Kind == DeviceMemoryKind::held) device_free(p, bytes);
    else scratch_free(p, bytes);
  }

 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n, const char* what = "device buffer")
      : p_(static_cast<T*>(n ? allocate(n * sizeof(T), what) : nullptr)), n_(n) {}
  /// Allocates and copies `host` to the device (on stream(); complete on return).
  explicit DeviceBuffer(std::span<const T> host, const char* what = "device buffer")
      : DeviceBuffer(host.size(), what) {
    copy_to_device(p_, host.data(), n_);
  }
  explicit DeviceBuffer(const std::vector<T>& host, const char* what = "device buffer")
      : DeviceBuffer(std::span<const T>(host), what) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release(p_, bytes());
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(p_, bytes()); }

  T* data() { return p_; }
  const T* data() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  std::span<T> span() { return {p_, n_}; }
  std::span<const T> span() const { return {p_, n_}; }

  void upload(std::span<const T> host) {
    if (host.size() != n_)
      throw DimensionMismatchError("DeviceBuffer::upload: " + std::to_string(host.size()) +
                                   " values into a buffer of " + std::to_string(n_));
    copy_to_device(p_, host.data(), n_);
  }
  /// The contents, after the work queued on stream() before it.
  std::vector<T> download() const {
    std::vector<T> h(n_);
    copy_to_host(h.data(), p_, n_);
    return h;
  }
  /// Fills every byte with `byte` (0xFF on floating point gives NaN: the poison value), queued
  /// on stream().
  void fill_bytes(int byte) { fill_bytes_async(p_, byte, bytes()); }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

/// A temporary device array of one call on stream() (scratch_alloc): freed in stream order,
/// so kernels queued before its destruction may still read it.
template <class T>
using ScratchBuffer = DeviceBuffer<T, DeviceMemoryKind::scratch>;

/// RAII cudaEvent_t.
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s = nullptr);
  void synchronize();
  cudaEvent_t get() const { return e_; }
  /// Milliseconds between two recorded events.
  static float elapsed_ms(const Event& start, const Event& stop);

 private:
  cudaEvent_t e_ = nullptr;
};

/// RAII cudaStream_t (non-blocking).
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize();

 private:
  cudaStream_t s_ = nullptr;
};

/// Facts about the current device, for the benchmark header and launch policies.
struct DeviceInfo {
  std::string name;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t global_mem_bytes = 0;
  int major = 0, minor = 0;
  int max_threads_per_sm = 0;
};
DeviceInfo device_info();

/// Waits for all work of the device, on every stream (tests and benchmarks; the library itself
/// waits for its stream only: synchronize_stream).
void synchronize();

}  // namespace spmat::cuda
