// spmat/stream.hpp — the CUDA stream that spmat's GPU work goes to: current_stream() and the
// StreamScope that sets it.
// SPDX-License-Identifier: MIT
//
// Every GPU operation of spmat (builds and their uploads, prepare, spmv, spmv_t, spmm, add,
// update_values, to_csr, the cuSPARSE baselines) runs on current_stream() of the calling host
// thread. It is null, the legacy default stream, until a StreamScope sets another one, so a
// program that never names a stream runs as it always did:
//
//   cudaStream_t s;  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
//   {
//     spmat::StreamScope on(s);     // like `with cupy.cuda.Stream():` or torch.cuda.stream(s)
//     A.prepare(spmat::Op::spmv);   // allocations and setup, before any capture
//     A.spmv(x, y);                 // queued on s; returns without waiting
//   }                               // the previous stream (here the default one) is back
//   cudaStreamSynchronize(s);       // y is ready
//
// StreamHandle is CUDA's own stream type (cudaStream_t is `CUstream_st*`), declared here without
// CUDA's headers: CPU-only programs include this file as they are, and a cudaStream_t, a CuPy
// `stream.ptr` or a PyTorch `stream.cuda_stream` (cast from its integer) passes as it is.
//
// What a stream guarantees:
//   * Products (spmv, spmv_t, spmm) are asynchronous: they are queued on the stream and return.
//     The vectors must stay valid until the stream has run them. Once the operation was
//     prepared (Matrix::prepare with the same op, k and layout), a product neither allocates,
//     frees nor synchronizes anything, so it can be captured into a CUDA graph: begin the
//     capture on the stream inside a StreamScope of that stream; the graph replays the product
//     on the same vector addresses with whatever they hold at replay. An operation used before
//     it was prepared prepares itself on its first call (that call may allocate and
//     synchronize); an "auto" or "tune" matrix may build a storage then. Only products belong
//     in a capture: builds, prepare, add, update_values, to_csr and destroying a matrix
//     allocate, free or wait. A capture in cudaStreamCaptureModeGlobal also forbids those to
//     every other thread while it lasts (CUDA's rule); capture in
//     cudaStreamCaptureModeThreadLocal when other threads keep building matrices.
//   * Matrix::build, add and prepare, update_values with host values, to_csr and every other
//     call that hands something to the host return when their work is complete on the stream:
//     the matrix they leave behind can then be used on any stream. update_values with device
//     values may return before it is done (it reads them in the stream's order): products
//     queued after it on the same stream see the new values; another stream must wait for it
//     first (an event, or a synchronize), and the values must stay valid until then.
//   * A stream belongs to one device: use matrices built on the stream's device.
//
// Concurrency: one matrix, one stream at a time. Products of several formats keep scratch
// buffers and counters inside the matrix (written by every product), so the same Matrix, or a
// copy of it (copies share the storage), must not run on two streams at once; order such uses
// with an event or a synchronize. Distinct matrices may run concurrently on distinct streams,
// from one host thread or from several (current_stream() is per thread).
#pragma once

struct CUstream_st;  // CUDA's stream object; cudaStream_t is CUstream_st*

namespace spmat {

/// A CUDA stream (the same type as cudaStream_t); null is the legacy default stream.
using StreamHandle = CUstream_st*;

/// The stream this thread's GPU operations go to: the innermost live StreamScope's, else null.
/// A new thread starts with null.
StreamHandle current_stream() noexcept;

/// Sets current_stream() to `stream` for the scope's lifetime, then puts back the one it
/// replaced (scopes nest). Affects the calling thread only; spmat never creates, synchronizes
/// for the caller or destroys the stream.
class StreamScope {
 public:
  explicit StreamScope(StreamHandle stream) noexcept;
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  StreamHandle previous_;
};

}  // namespace spmat
