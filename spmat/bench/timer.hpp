// spmat/bench/timer.hpp — run timing (CPU steady_clock; GPU CUDA events), copy bandwidth, device facts.
// SPDX-License-Identifier: MIT
//
// The harness never includes CUDA headers: the GPU side lives in timer_cuda.cpp (compiled only
// with the CUDA backend) behind the `gpu` functions declared here. Calls to them are guarded
// by `#if SPMAT_WITH_CUDA`.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace spmat::bench {

/// Median, min and max of a set of run times (milliseconds).
struct TimingStats {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  int repetitions = 0;
};
/// Empty input gives repetitions = 0 and zeros. Median of an even count: mean of the middle two.
TimingStats summarize(std::vector<double> times_ms);

/// What the JSON "device" object reports.
struct DeviceDescription {
  std::string name;
  int sm_count = 0;          ///< SMs (GPU) or OpenMP threads (CPU)
  std::size_t l2_bytes = 0;  ///< 0 when unknown
  double copy_gbs = 0;       ///< measured device copy bandwidth (read + write bytes)
};

/// Wall-clock milliseconds of `f()` on the host (std::chrono::steady_clock).
template <class F>
double wall_ms(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

/// Ends the OpenMP worker threads that earlier host work (a host build, the reference product)
/// left waiting. GNU OpenMP's workers spin for a while after a parallel region unless
/// OMP_WAIT_POLICY=passive; spinning on every core, they take the CPU from the thread that
/// launches the timed GPU work and from the CUDA driver's threads, and a device build measured
/// there ran up to 13 times slower. Called before GPU timing, outside the timed region; the next
/// parallel region starts new workers. No effect inside a parallel region or without OpenMP.
void release_host_threads();

namespace cpu {
/// `warmup` untimed calls, then `reps` calls each timed with steady_clock. With `flush_caches`,
/// a buffer of 2× the last-level cache is written before each timed call (outside the timing).
std::vector<double> time_runs(const std::function<void()>& run, int warmup, int reps,
                              bool flush_caches);
/// OpenMP stream copy of 2×256 MiB: median of 20 runs, GB/s counting read + write bytes.
double copy_bandwidth_gbs();
/// Model name from /proc/cpuinfo + " (N threads)", threads, L2 from sysconf (0 if unknown).
DeviceDescription describe();
}  // namespace cpu

namespace gpu {
// Defined in timer_cuda.cpp; only present when the CUDA backend is compiled in.
void* alloc(std::size_t bytes, const char* what);
/// Frees what alloc(bytes, ...) returned (`bytes`: the size asked for, for the accounting).
void free(void* p, std::size_t bytes) noexcept;
void upload(void* dst, const void* src, std::size_t bytes);
void download(void* dst, const void* src, std::size_t bytes);
/// Sets every byte (0xFF on floating point gives NaN: the poison value).
void fill_bytes(void* p, int byte, std::size_t bytes);
void synchronize();
/// `warmup` untimed calls and at least `min_warmup_ms` of them (the GPU's clocks come back up
/// after a host-side phase), then `reps` samples bracketed by CUDA events on the default
/// stream; each returned time is per call. A sample holds enough back-to-back calls to span
/// about `min_sample_ms` (estimated from the warm-up; 0: one call per sample), so that a
/// product of a few microseconds is timed as a solver loop runs it, queued behind the previous
/// one, and not with the host's launch latency inside the events. The calls of such a sample
/// are all enqueued before the GPU starts them (cuda::StreamHold), so their time is the GPU's
/// and not the rate at which the host launches them. With `flush_l2`, a buffer of
/// 2× L2 is written before each sample, outside the events, and a sample is one call.
/// `calls_per_sample`, when given, receives the number of calls per sample.
std::vector<double> time_runs(const std::function<void()>& run, int warmup, int reps,
                              bool flush_l2, double min_warmup_ms = 25.0,
                              double min_sample_ms = 0.2, int* calls_per_sample = nullptr);
/// Device-to-device cudaMemcpy between two 512 MiB buffers: median of 20, read + write bytes.
double copy_bandwidth_gbs();
/// Name, SM count and L2 size of the current device.
DeviceDescription describe();
}  // namespace gpu

}  // namespace spmat::bench
