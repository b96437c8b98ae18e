// spmat/bench/timer_cuda.cpp — GPU side of the benchmark: device memory, CUDA-event timing,
// L2 flushing, the device-to-device copy-bandwidth probe and the device description.
// SPDX-License-Identifier: MIT
//
// Everything runs on cuda::stream(), the stream the timed operations go to (the legacy default
// stream unless the caller set one, e.g. a "tune" build inside a spmat::StreamScope), so that
// the events bracket exactly the timed work.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cuda_runtime_api.h>

#include "spmat/bench/timer.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/stream_hold.hpp"

namespace spmat::bench::gpu {

void* alloc(std::size_t bytes, const char* what) { return cuda::device_alloc(bytes, what); }
void free(void* p, std::size_t bytes) noexcept { cuda::device_free(p, bytes); }
void upload(void* dst, const void* src, std::size_t bytes) {
  cuda::copy_to_device(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src),
                       bytes);
}
void download(void* dst, const void* src, std::size_t bytes) {
  cuda::copy_to_host(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src),
                     bytes);
}
void fill_bytes(void* p, int byte, std::size_t bytes) { cuda::fill_bytes_async(p, byte, bytes); }
void synchronize() { cuda::synchronize_stream(); }

std::vector<double> time_runs(const std::function<void()>& run, int warmup, int reps,
                              bool flush_l2, double min_warmup_ms, double min_sample_ms,
                              int* calls_per_sample) {
  release_host_threads();  // spinning OpenMP workers of the host phase delay the launches
  cuda::DeviceBuffer<unsigned char> flush;
  if (flush_l2) flush = cuda::DeviceBuffer<unsigned char>(2 * cuda::device_info().l2_bytes, "L2 flush buffer");
  // After a host-side phase (a build, the reference product) the GPU has idled and its clocks
  // are down; a few microsecond-long warm-up runs do not bring them back up, and a small
  // matrix then measures up to 3x slow. So the warm-up lasts `warmup` runs and at least
  // min_warmup_ms of wall time.
  constexpr int kMaxWarmupRuns = 100000;
  const auto t0 = std::chrono::steady_clock::now();
  int done = 0;
  for (; done < kMaxWarmupRuns; ++done) {
    if (done >= warmup && (done % 8 == 0)) {
      cuda::synchronize_stream();
      if (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() >=
          min_warmup_ms)
        break;
    }
    run();
  }
  cuda::synchronize_stream();
  const double warm_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // Calls per sample from the warm-up's wall time per call (an upper bound of the GPU time per
  // call, so a sample spans at least about min_sample_ms). Bounded so that a sample never
  // takes long and the median still has `reps` independent samples.
  constexpr int kMaxCallsPerSample = 64;
  int calls = 1;
  if (!flush_l2 && min_sample_ms > 0 && done > 0) {
    const double per_call_ms = warm_ms / done;
    if (per_call_ms > 0)
      calls = static_cast<int>(std::clamp(std::ceil(min_sample_ms / per_call_ms), 1.0,
                                          static_cast<double>(kMaxCallsPerSample)));
  }
  if (calls_per_sample) *calls_per_sample = calls;
  // A sample of several calls is enqueued behind a StreamHold and released as a whole, so the
  // GPU runs the calls back to back from a full queue and the events time the GPU, not the
  // rate at which this thread launches (which varies by 10-20% between runs on products of a
  // few microseconds). A call that waits for the device itself makes the hold time out: that
  // sample is discarded and the rest are timed without the hold.
  constexpr double kHoldTimeoutMs = 20;
  bool use_hold = calls > 1;
  cuda::StreamHold hold;
  cuda::Event start, stop;
  std::vector<double> t;
  t.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    // The flush runs on the stream before `start`, so it is outside the timed interval.
    if (flush_l2 && flush.size()) cuda::fill_bytes_async(flush.data(), i & 0xFF, flush.bytes());
    if (use_hold) hold.hold(cuda::stream(), kHoldTimeoutMs);
    start.record(cuda::stream());
    for (int c = 0; c < calls; ++c) run();
    stop.record(cuda::stream());
    if (use_hold) hold.release();
    stop.synchronize();
    if (use_hold && hold.timed_out()) {
      use_hold = false;
      --i;
      continue;
    }
    t.push_back(static_cast<double>(cuda::Event::elapsed_ms(start, stop)) / calls);
  }
  return t;
}

double copy_bandwidth_gbs() {
  const std::size_t bytes = std::size_t(512) << 20;
  cuda::DeviceBuffer<unsigned char> a(bytes, "copy-bandwidth source"), b(bytes, "copy-bandwidth target");
  a.fill_bytes(1);
  b.fill_bytes(0);
  auto copy = [&] {
    cuda::copy_device(b.data(), a.data(), bytes);
  };
  const auto t = time_runs(copy, 2, 20, false);
  const double ms = summarize(t).median_ms;
  return ms > 0 ? 2.0 * static_cast<double>(bytes) / (ms * 1e6) : 0;
}

DeviceDescription describe() {
  const cuda::DeviceInfo info = cuda::device_info();
  DeviceDescription d;
  d.name = info.name;
  d.sm_count = info.sm_count;
  d.l2_bytes = info.l2_bytes;
  return d;
}

}  // namespace spmat::bench::gpu
