// tests/gpu_timer_test.cpp — the benchmark's GPU timing (spmat/bench/timer.hpp) and the stream
// hold behind it (spmat/cuda/stream_hold.hpp).
// SPDX-License-Identifier: MIT
//
// Test names:
//   StreamHold.ReleaseLetsTheHeldWorkRun      work queued behind a hold runs once released, and
//                                             the hold reports no timeout
//   StreamHold.AnUnreleasedHoldEndsByItsTimeout  nothing hangs: the hold ends by itself and says so
//   GpuTimer.SamplesOfQueuedCallsArePerCall   several calls per sample, every time positive and
//                                             finite, per call (well under a sample's span)
//   GpuTimer.ACallThatWaitsForTheDeviceIsStillTimed  a call that synchronizes (which a hold
//                                             would stall) gives as many samples, promptly
// Without a GPU (or without CUDA) each case skips and says why.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "spmat/config.hpp"
#include "tests/support/test_support.hpp"

#if SPMAT_WITH_CUDA
#include "spmat/bench/timer.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/stream_hold.hpp"
#endif

namespace spmat {
namespace {

#if SPMAT_WITH_CUDA
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
#endif

TEST(StreamHold, ReleaseLetsTheHeldWorkRun) {
  SPMAT_SKIP_WITHOUT_GPU();
#if SPMAT_WITH_CUDA
  cuda::DeviceBuffer<unsigned char> buf(std::size_t(1) << 20, "test buffer");
  cuda::StreamHold hold;
  hold.hold(cuda::stream(), 10000.0);
  cuda::fill_bytes_async(buf.data(), 7, buf.bytes());
  const auto t0 = std::chrono::steady_clock::now();
  hold.release();
  cuda::synchronize_stream();
  EXPECT_LT(seconds_since(t0), 5.0) << "the release did not reach the waiting kernel";
  EXPECT_FALSE(hold.timed_out());
  const auto host = buf.download();
  EXPECT_EQ(host.front(), 7);
  EXPECT_EQ(host.back(), 7);
#endif
}

TEST(StreamHold, AnUnreleasedHoldEndsByItsTimeout) {
  SPMAT_SKIP_WITHOUT_GPU();
#if SPMAT_WITH_CUDA
  cuda::StreamHold hold;
  const auto t0 = std::chrono::steady_clock::now();
  hold.hold(cuda::stream(), 5.0);
  cuda::synchronize_stream();
  EXPECT_LT(seconds_since(t0), 5.0);
  EXPECT_TRUE(hold.timed_out());
  // The next hold starts afresh.
  hold.hold(cuda::stream(), 10000.0);
  hold.release();
  cuda::synchronize_stream();
  EXPECT_FALSE(hold.timed_out());
#endif
}

TEST(GpuTimer, SamplesOfQueuedCallsArePerCall) {
  SPMAT_SKIP_WITHOUT_GPU();
#if SPMAT_WITH_CUDA
  cuda::DeviceBuffer<unsigned char> buf(4096, "test buffer");
  int calls = 0;
  const auto t = bench::gpu::time_runs([&] { cuda::fill_bytes_async(buf.data(), 1, buf.bytes()); },
                                       3, 12, false, 1.0, 0.2, &calls);
  ASSERT_EQ(t.size(), 12u);
  EXPECT_GT(calls, 1) << "a call of a few microseconds gets several per sample";
  for (double ms : t) {
    EXPECT_TRUE(std::isfinite(ms));
    EXPECT_GT(ms, 0.0);
    EXPECT_LT(ms, 0.2) << "times are per call, not per sample";
  }
#endif
}

TEST(GpuTimer, ACallThatWaitsForTheDeviceIsStillTimed) {
  SPMAT_SKIP_WITHOUT_GPU();
#if SPMAT_WITH_CUDA
  cuda::DeviceBuffer<unsigned char> buf(4096, "test buffer");
  const auto t0 = std::chrono::steady_clock::now();
  const auto t = bench::gpu::time_runs(
      [&] {
        cuda::fill_bytes_async(buf.data(), 1, buf.bytes());
        cuda::synchronize_stream();
      },
      3, 12, false, 1.0, 0.2);
  EXPECT_LT(seconds_since(t0), 10.0) << "a synchronizing call stalled the timing";
  ASSERT_EQ(t.size(), 12u);
  for (double ms : t) {
    EXPECT_TRUE(std::isfinite(ms));
    EXPECT_GT(ms, 0.0);
  }
#endif
}

}  // namespace
}  // namespace spmat
