// spmat/cuda/stream_hold.hpp — keep a stream's queue from starting until the host has filled it.
// SPDX-License-Identifier: MIT
//
// Timing a product of a few microseconds as back-to-back calls measures the host's launch rate,
// not the GPU, whenever the host enqueues a call more slowly than the GPU runs it: the GPU then
// idles between calls and the events bracket the host's jitter. A StreamHold puts a one-thread
// kernel on the stream that waits for a flag in pinned host memory; the host enqueues the
// calls to be timed behind it, then releases it, and the GPU runs them from a full queue.
// The wait ends by itself after a timeout, so a call that waits for the device (a
// synchronizing copy, say) costs that timeout once instead of hanging.
#pragma once
#include <cuda_runtime_api.h>

namespace spmat::cuda {

class StreamHold {
 public:
  StreamHold();
  ~StreamHold();
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;

  /// Enqueues the waiting kernel on `s`: work enqueued after it starts once release() is
  /// called or `timeout_ms` after the kernel began, whichever comes first.
  void hold(cudaStream_t s, double timeout_ms);
  /// Lets the held stream go on.
  void release();
  /// After the held work has completed (synchronize first): whether the last hold ended by
  /// its timeout rather than by release().
  bool timed_out() const;

 private:
  int* words_ = nullptr;  ///< pinned, mapped: [0] released by the host, [1] timed out
};

}  // namespace spmat::cuda
