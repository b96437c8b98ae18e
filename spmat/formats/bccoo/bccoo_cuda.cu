// spmat/formats/bccoo/bccoo_cuda.cu — CUDA kernels of bccoo-gpu: the stream SpMV (default:
// persistent blocks, one chunk per block iteration with the next chunk's header in registers and
// its data prefetched into L2), the block SpMV (round 1: one block per chunk; same per-chunk
// decode), both with 8 consecutive entries per thread and a deterministic two-kernel fix-up, the
// atomic SpMV (session 1: warp segmented sum + atomicAdd) and the atomic SpMV^T.
// SPDX-License-Identifier: MIT
//
// Common contract: row/column/format: nb, offset: nb+1 (int64), data: offset[nb] bytes, lut: 256
// values, x: cols (spmv) or rows (spmv_t), y: rows (spmv) or cols (spmv_t); all device memory
// (matrix arrays and the stream kernel's scratch allocated by upload, x and y by the caller).
// beta == 0 never reads y (NaN poison never leaks). Canonical input: no duplicates; explicit
// zeros multiplied (0·Inf = NaN propagates); empty rows get beta·y. Offsets, rows and columns
// are 64-bit inside the kernels. No launch of the chunk kernels when nb == 0 (y = beta·y only).
//
// Per-chunk decode of the stream and block kernels (stream_chunk; chunk <= kStreamMaxChunk).
// A block (T = 32·ceil(b/256) threads) decodes chunk h; thread t owns entries [8t, 8t+8): it
// loads its slices of the three
// sub-arrays as aligned 8-byte words (w B per entry → w words) and unpacks them in registers,
// reads the value table from shared memory (only its lut_used real entries are copied, and only
// when the chunk uses the table), gathers x with __ldg and sums the 8 products sequentially per
// row. A row that starts and ends inside one thread is written at once (y = α·s + β·y, one
// store per row, no atomics). The partial sum of each thread's last row (its "tail") is combined
// across threads by a block-wide segmented inclusive scan keyed by that row (warp shuffles plus
// one shared-memory pass over the ≤ 16 warps); a thread whose first row continues from earlier
// threads adds the scanned carry to its own first-row partial and writes the row (a row that
// ends exactly at a thread boundary is written by the next thread from the scan). The chunk's
// first row (when the chunk holds more than one row) and its last row can be shared with the
// neighbour chunks: their partials go to scratch (head[h], tail[h], tail_row[h]), and a second
// kernel (one warp per chunk) sums them in chunk order and writes those rows plus the empty rows
// between chunks and before the first / after the last chunk. Every row of y is written exactly
// once, in a fixed order of additions: DETERMINISTIC (bitwise, run to run).
// Bytes: storage_bytes (LUT: lut_used values per block (stream) or per chunk (block) from L2)
// + x (gathered) + y (written once; read once where beta != 0) + 24 B of scratch per chunk.
//
// stream (default): grid = one wave of resident blocks (occupancy query, at most nb; option
// `blocks` caps it). Block b decodes chunks b, b+G, ...; table copied to shared memory once per
// block; while chunk h is decoded, chunk h+G's header is loaded into registers and its data bytes
// are prefetched into L2 (prefetch.global.L2, one per 32-B sector), so the serial chain per chunk
// is [data from L2] → [x gathers] instead of [header] → [data from DRAM] → [table + barrier] →
// [x gathers]. block (round 1): one block per chunk, table copied per chunk (when used).
//
// atomic spmv (kernel=atomic, and any chunk > kStreamMaxChunk). y is first scaled by beta
// (scale_async); then block h decodes chunk h (grid-stride over chunks): in each step the 256
// threads hold 256 consecutive entries (element e = step·256 + tid, coalesced loads), each warp
// sums its 32 products per row with cuda::warp_segmented_sum, and the last lane of each row run
// adds alpha·sum to y[row] with atomicAdd. NOT deterministic (atomic order).
//
// spmv_t: y (cols) scaled by beta, then every entry adds alpha·v·x[row] to y[col] (atomicAdd).
#include <cstdint>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/bccoo/bccoo.hpp"

namespace spmat {

namespace bccoo_gpu {
/// Threads per block of the atomic kernel: 256 (spec §8 Q8: 256 threads × 4 steps for b = 1024).
constexpr int kBlock = 256;
/// Entries per thread of the stream kernel, and its largest block (chunk <= 512 · 8 = 4096).
constexpr int kE = bccoo::kStreamPerThread;
constexpr int kStreamMaxThreads = static_cast<int>(bccoo::kStreamMaxChunk / kE);
/// Resident blocks per SM the 128-thread stream kernel is compiled for: fp32 12 (register cap
/// 65536 / (128 · 12) = 42, so 40 registers, no spills), fp64 10 (48 registers: at 40 the fp64
/// build spills 64 bytes per thread).
template <class Value>
constexpr int small_chunk_blocks() {
  return sizeof(Value) == 8 ? 10 : 12;
}
/// The stream and block kernels decode chunk-local rows and columns in 32 bits: every local row
/// must be below 0xffffffff (their "no row" key) and every column offset must fit 4 bytes.
inline bool fits_local32(std::int64_t rows, std::int64_t cols) {
  return rows < 0xffffffffll && cols <= 0xffffffffll;
}
/// Threads of the stream kernel for chunk b: whole warps covering b entries at 8 per thread
/// (b = 1024 → 128 threads). Not tuned yet: the H100/H200 runs of bench/bccoo_gpu.sh decide
/// (they also time chunk = 2048 and 4096).
inline int stream_threads(std::int64_t chunk) {
  return static_cast<int>(32 * ((chunk + 32 * kE - 1) / (32 * kE)));
}
}  // namespace bccoo_gpu

/// Grid of the persistent stream kernel for nb chunks (defined after the kernel).
template <class Value, class Index>
unsigned stream_grid_for(std::int64_t nb, std::int64_t chunk, std::int64_t blocks);

template <class Value, class Index>
struct BccooGpuDevice {
  std::int64_t rows = 0, cols = 0, nnz = 0, chunk = 1024, nb = 0;
  int lut_used = 0;
  /// SpMV kernel: stream (persistent), block (one block per chunk) or atomic; chunk >
  /// bccoo::kStreamMaxChunk (or more chunks than a grid holds, for block) uses atomic.
  BccooGpuKernel kernel = BccooGpuKernel::stream;
  unsigned stream_grid = 0;  ///< blocks of the persistent stream kernel (set by upload)
  int prefetch = 1;          ///< stream kernel: L2 prefetch distance in chunks per block (0–2)
  cuda::DeviceBuffer<Value> lut;
  cuda::DeviceBuffer<Index> row, column;
  cuda::DeviceBuffer<std::uint8_t> format;
  cuda::DeviceBuffer<std::int64_t> offset;
  cuda::DeviceBuffer<std::uint8_t> data;
  // Scratch of the stream kernel, nb each: the chunk's first-row partial (when the chunk holds
  // more than one row), its last-row partial and its last row. Written by every spmv.
  mutable cuda::DeviceBuffer<Value> head, tail;
  mutable cuda::DeviceBuffer<std::int64_t> tail_row;

  static BccooGpuDevice upload(const BccooGpu<Value, Index>& s) {
    BccooGpuDevice d;
    d.rows = s.rows;
    d.cols = s.cols;
    d.nnz = s.nnz;
    d.chunk = s.chunk;
    d.nb = s.chunks();
    d.lut_used = s.lut_used;
    d.kernel = s.kernel;
    d.prefetch = static_cast<int>(s.prefetch);
    if (s.chunk > bccoo::kStreamMaxChunk ||
        (s.kernel == BccooGpuKernel::block && d.nb > 0x7fffffff) ||  // one block per chunk: grid.x
        !bccoo_gpu::fits_local32(s.rows, s.cols))
      d.kernel = BccooGpuKernel::atomic;
    d.lut = cuda::DeviceBuffer<Value>(s.lut, "bccoo-gpu value table");
    d.row = cuda::DeviceBuffer<Index>(s.row, "bccoo-gpu chunk rows");
    d.column = cuda::DeviceBuffer<Index>(s.column, "bccoo-gpu chunk columns");
    d.format = cuda::DeviceBuffer<std::uint8_t>(s.format, "bccoo-gpu chunk formats");
    d.offset = cuda::DeviceBuffer<std::int64_t>(s.offset, "bccoo-gpu chunk offsets");
    d.data = cuda::DeviceBuffer<std::uint8_t>(s.data, "bccoo-gpu chunk data");
    if (d.kernel == BccooGpuKernel::stream && d.nb > 0)
      d.stream_grid = stream_grid_for<Value, Index>(d.nb, d.chunk, s.blocks);
    if (d.kernel != BccooGpuKernel::atomic && d.nb > 0) {
      const auto nb = static_cast<std::size_t>(d.nb);
      d.head = cuda::DeviceBuffer<Value>(nb, "bccoo-gpu chunk head partials");
      d.tail = cuda::DeviceBuffer<Value>(nb, "bccoo-gpu chunk tail partials");
      d.tail_row = cuda::DeviceBuffer<std::int64_t>(nb, "bccoo-gpu chunk last rows");
    }
    return d;
  }
};

namespace {

/// Unsigned of w ∈ {1,2,4,8} bytes, element e of a sub-array starting 8-byte aligned (so the
/// typed load is aligned). `w` is uniform over the block: no divergence.
__device__ __forceinline__ std::uint64_t load_width(const std::uint8_t* p, std::int64_t e, int w) {
  switch (w) {
    case 1: return cuda::ldg(p + e);
    case 2: return cuda::ldg(reinterpret_cast<const std::uint16_t*>(p) + e);
    case 4: return cuda::ldg(reinterpret_cast<const std::uint32_t*>(p) + e);
    default: return cuda::ldg(reinterpret_cast<const unsigned long long*>(p) + e);
  }
}

/// Decodes entry e of a chunk: row, column, value.
template <class Value>
__device__ __forceinline__ void decode_entry(const std::uint8_t* base, const bccoo::GpuChunk& g,
                                             std::int64_t e, std::int64_t r0, std::int64_t c0,
                                             const Value* s_lut, std::int64_t* r, std::int64_t* c,
                                             Value* v) {
  *r = r0 + static_cast<std::int64_t>(load_width(base + g.row_at, e, g.wr));
  *c = c0 + static_cast<std::int64_t>(load_width(base + g.col_at, e, g.wc));
  *v = g.lut ? s_lut[cuda::ldg(base + g.val_at + e)]
             : cuda::ldg(reinterpret_cast<const Value*>(base + g.val_at) + e);
}

// ---- stream kernel ----------------------------------------------------------------------------

/// Entries 0..7 of thread t's slice of a sub-array of W-byte unsigned fields (W ∈ {1,2,4}), as
/// 32-bit values. The slice is 8·W bytes = W aligned 8-byte words starting at word t·W (sub-arrays
/// start 8-byte aligned). Only words holding an entry < n are read: a sub-array padded to 8 B
/// contains every word that holds one of its entries, so no load leaves the chunk. Unread entries
/// are 0. 32-bit results halve the unpacking work against 64-bit fields (session 4: the kernel
/// was issue-bound, ~108 instructions per entry on gen:lap2d:2000, ncu).
template <int W>
__device__ __forceinline__ void load_slice(const std::uint8_t* sub, int t, int n,
                                           std::uint32_t (&out)[bccoo_gpu::kE]) {
  static_assert(W == 1 || W == 2 || W == 4, "32-bit slices: widths 1, 2, 4");
  const auto* words =
      reinterpret_cast<const unsigned long long*>(sub) + static_cast<std::int64_t>(t) * W;
  constexpr int kPerWord = 8 / W;
#pragma unroll
  for (int k = 0; k < W; ++k) {
    const unsigned long long wd = k * kPerWord < n ? cuda::ldg(words + k) : 0ull;
    const std::uint32_t half[2] = {static_cast<std::uint32_t>(wd),
                                   static_cast<std::uint32_t>(wd >> 32)};
#pragma unroll
    for (int j = 0; j < kPerWord; ++j) {
      const std::uint32_t h = half[j * W / 4];
      if constexpr (W == 4)
        out[k * kPerWord + j] = h;
      else
        out[k * kPerWord + j] = (h >> (8 * W * (j % (4 / W)))) & ((1u << (8 * W)) - 1u);
    }
  }
}
/// Runtime width (block-uniform: no divergence). Widths of 8 bytes never reach the stream and
/// block kernels (upload sends matrices of 2^32 − 1 or more rows, or more than 2^32 columns, to
/// the atomic kernel: fits_local32).
__device__ __forceinline__ void load_slice(const std::uint8_t* sub, int w, int t, int n,
                                           std::uint32_t (&out)[bccoo_gpu::kE]) {
  switch (w) {
    case 1: load_slice<1>(sub, t, n, out); break;
    case 2: load_slice<2>(sub, t, n, out); break;
    default: load_slice<4>(sub, t, n, out); break;
  }
}
/// Thread t's 8 raw values (sub-array of Values, 8-byte aligned); entries >= n are 0.
template <class Value>
__device__ __forceinline__ void load_raw_values(const std::uint8_t* sub, int t, int n,
                                                Value (&out)[bccoo_gpu::kE]) {
  const Value* v = reinterpret_cast<const Value*>(sub) + static_cast<std::int64_t>(t) * bccoo_gpu::kE;
  if constexpr (sizeof(Value) == 4) {  // two floats per aligned 8-byte load, as the words above
    const auto* v2 = reinterpret_cast<const float2*>(v);
#pragma unroll
    for (int k = 0; k < bccoo_gpu::kE / 2; ++k) {
      const float2 p = 2 * k < n ? cuda::ldg(v2 + k) : float2{0.f, 0.f};
      out[2 * k] = p.x;
      out[2 * k + 1] = 2 * k + 1 < n ? p.y : 0.f;
    }
  } else {
#pragma unroll
    for (int i = 0; i < bccoo_gpu::kE; ++i) out[i] = i < n ? cuda::ldg(v + i) : Value(0);
  }
}

/// y = beta*y for an empty row (beta == 0 writes 0 without reading y).
template <class Value>
__device__ __forceinline__ void scale_store(Value* y, Value beta) {
  *y = beta == Value(0) ? Value(0) : beta * *y;
}

/// Sum of the warp tails (wval) of warps w, w-1, ... whose trailing key is `key`, walking back
/// while a whole warp has that key (wfirst[w] == key). Fixed order: deterministic.
template <class Value>
__device__ __forceinline__ Value warp_carry(std::uint32_t key, int w, const std::uint32_t* wkey,
                                           const std::uint32_t* wfirst, const Value* wval) {
  Value c = 0;
  for (; w >= 0 && wkey[w] == key; --w) {
    c += wval[w];
    if (wfirst[w] != key) break;
  }
  return c;
}

/// Per-chunk metadata (block-uniform): data byte range, first row, smallest column, format.
struct ChunkHeader {
  std::int64_t begin = 0, end = 0, r0 = 0, c0 = 0;
  std::uint8_t fmt = 0;
};
template <class Index>
__device__ __forceinline__ ChunkHeader load_header(std::int64_t h, const Index* row,
                                                   const Index* column, const std::uint8_t* format,
                                                   const std::int64_t* offset) {
  ChunkHeader c;
  c.begin = offset[h];
  c.end = offset[h + 1];
  c.r0 = row[h];
  c.c0 = column[h];
  c.fmt = format[h];
  return c;
}

/// Prefetches [p, p + bytes) into L2, one 32-B sector per prefetch, spread over the block (no
/// registers held; no fault possible: callers pass ranges inside the chunk data).
__device__ __forceinline__ void prefetch_l2(const std::uint8_t* p, std::int64_t bytes) {
  for (std::int64_t k = static_cast<std::int64_t>(threadIdx.x) * 32; k < bytes;
       k += static_cast<std::int64_t>(blockDim.x) * 32)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(p + k)));
}

/// Shared memory of one block-wide segmented scan: each warp's last key, first key, tail.
/// Keys are chunk-local rows (row − the chunk's first row), 32 bits.
template <class Value>
struct ScanShared {
  std::uint32_t wkey[32], wfirst[32];
  Value wval[32];
};

/// The block decodes chunk h (header hd, len entries; see the contract at the top). Writes y for
/// rows wholly inside the chunk (and the empty rows between them), head[h] (first-row partial,
/// only when the chunk holds more than one row), tail[h] and tail_row[h] (last row and its
/// partial). fill_lut (block-uniform): copy the table's lut_used entries to s_lut first (when
/// the chunk uses it; the block kernel), else s_lut is already filled (the persistent kernel).
/// after_gathers(): called once the x gathers are issued (the stream kernel prefetches there).
/// Every thread of the block must call it (one barrier).
template <class Value, class AfterGathers>
__device__ __forceinline__ void stream_chunk(
    std::int64_t h, const ChunkHeader& hd, std::int64_t len, const std::uint8_t* __restrict__ data,
    const Value* __restrict__ lut, int lut_used, Value* s_lut, bool fill_lut, ScanShared<Value>& sh,
    AfterGathers&& after_gathers, const Value* __restrict__ x,
    Value* __restrict__ y, Value alpha, Value beta, Value* __restrict__ head_out,
    Value* __restrict__ tail_out, std::int64_t* __restrict__ tail_row_out) {
  constexpr int kE = bccoo_gpu::kE;
  // Rows are chunk-local (row − r0) in 32 bits: upload keeps matrices of 2^32 − 1 or more rows
  // off this code, so a local row is never kNone, the key of threads without entries.
  constexpr std::uint32_t kNone = 0xffffffffu;
  const bccoo::GpuChunk g = bccoo::gpu_chunk(hd.fmt, len, sizeof(Value));
  const std::uint8_t* base = data + hd.begin;
  const Value* xc = x + hd.c0;  // columns are offsets from the chunk's smallest column
  Value* yc = y + hd.r0;        // rows are offsets from the chunk's first row
  const int t = threadIdx.x;
  const std::int64_t left = len - static_cast<std::int64_t>(t) * kE;
  const int n = left <= 0 ? 0 : (left >= kE ? kE : static_cast<int>(left));

  // Issue the slice loads first, then fill the table (its latency overlaps theirs).
  std::uint32_t ro[kE], co[kE];
  load_slice(base + g.row_at, g.wr, t, n, ro);
  load_slice(base + g.col_at, g.wc, t, n, co);
  Value v[kE];
  if (g.lut) {  // block-uniform
    std::uint32_t idx[kE];
    load_slice<1>(base + g.val_at, t, n, idx);
    if (fill_lut) {
      for (int i = t; i < lut_used; i += blockDim.x) s_lut[i] = cuda::ldg(lut + i);
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kE; ++i) v[i] = s_lut[idx[i]];
  } else {
    load_raw_values(base + g.val_at, t, n, v);
  }

  // All 8 gathers of x are independent: issue them before the row logic.
  Value prod[kE];
#pragma unroll
  for (int i = 0; i < kE; ++i) prod[i] = i < n ? v[i] * cuda::ldg(xc + co[i]) : Value(0);
  after_gathers();  // while the gathers are in flight

  // Sequential per-row sums over this thread's entries.
  std::uint32_t first = kNone, cur = kNone;
  Value s = 0, head = 0;
  bool changed = false;
#pragma unroll
  for (int i = 0; i < kE; ++i) {
    if (i < n) {
      const std::uint32_t r = ro[i];
      if (i == 0) {
        first = cur = r;
      } else if (r != cur) {
        if (!changed) {
          head = s;  // the first row may continue from earlier threads
          changed = true;
        } else {
          cuda::axpby_store(yc + cur, alpha, s, beta);  // row wholly inside this thread
        }
        for (std::uint32_t q = cur + 1; q < r; ++q) scale_store(yc + q, beta);  // empty rows
        cur = r;
        s = Value(0);
      }
      s += prod[i];
    }
  }

  // Block-wide inclusive segmented scan of the tails (s) keyed by the last row (cur).
  const int lane = t & 31, warp = t >> 5;
  const std::uint32_t up = __shfl_up_sync(cuda::kFullMask, cur, 1);
  Value incl = cuda::warp_segmented_inclusive_sum(lane == 0 || up != cur, s);
  const std::uint32_t lane0_key = __shfl_sync(cuda::kFullMask, cur, 0);
  if (lane == 31) {
    sh.wkey[warp] = cur;
    sh.wval[warp] = incl;
  }
  if (lane == 0) sh.wfirst[warp] = cur;
  __syncthreads();
  if (cur == lane0_key) incl += warp_carry(cur, warp - 1, sh.wkey, sh.wfirst, sh.wval);
  // The previous thread's last row and scanned tail.
  std::uint32_t prev_key = __shfl_up_sync(cuda::kFullMask, cur, 1);
  Value prev_incl = __shfl_up_sync(cuda::kFullMask, incl, 1);
  if (lane == 0) {
    prev_key = warp > 0 ? sh.wkey[warp - 1] : kNone;
    prev_incl = warp > 0 ? warp_carry(prev_key, warp - 1, sh.wkey, sh.wfirst, sh.wval) : Value(0);
  }
  if (n == 0) return;

  if (t > 0 && prev_key != first) {
    // The previous thread's last row ends exactly at the thread boundary: it is complete, with
    // the scanned sum prev_incl. Then the empty rows up to my first row.
    if (prev_key == 0)
      head_out[h] = prev_incl;  // the chunk's first row: may be shared with chunk h-1
    else
      cuda::axpby_store(yc + prev_key, alpha, prev_incl, beta);
    for (std::uint32_t q = prev_key + 1; q < first; ++q) scale_store(yc + q, beta);
  }
  if (changed) {
    const Value hs = (prev_key == first ? prev_incl : Value(0)) + head;
    if (first == 0)
      head_out[h] = hs;  // the chunk's first row: may be shared with chunk h-1
    else
      cuda::axpby_store(yc + first, alpha, hs, beta);
  }
  if (static_cast<std::int64_t>(t) == (len - 1) / kE) {  // the chunk's last entry
    tail_out[h] = incl;
    tail_row_out[h] = hd.r0 + cur;
  }
}

/// kernel=block (round 1): block h decodes chunk h; the table is copied per chunk.
template <class Value, class Index>
__global__ void __launch_bounds__(bccoo_gpu::kStreamMaxThreads)
    bccoo_gpu_block_kernel(std::int64_t nnz, std::int64_t chunk, const Index* __restrict__ row,
                           const Index* __restrict__ column,
                           const std::uint8_t* __restrict__ format,
                           const std::int64_t* __restrict__ offset,
                           const std::uint8_t* __restrict__ data, const Value* __restrict__ lut,
                           int lut_used, const Value* __restrict__ x, Value* __restrict__ y,
                           Value alpha, Value beta, Value* __restrict__ head_out,
                           Value* __restrict__ tail_out, std::int64_t* __restrict__ tail_row_out) {
  __shared__ Value s_lut[bccoo::kLutSize];
  __shared__ ScanShared<Value> sh;
  const std::int64_t h = blockIdx.x;
  const std::int64_t len = min(chunk, nnz - h * chunk);
  const ChunkHeader hd = load_header(h, row, column, format, offset);
  stream_chunk<Value>(h, hd, len, data, lut, lut_used, s_lut, true, sh, [] {}, x, y, alpha, beta,
                      head_out, tail_out, tail_row_out);
}

/// kernel=stream (default): persistent blocks (one wave: grid = resident blocks, at most nb).
/// Block b decodes chunks b, b + G, b + 2G, ... (G = gridDim.x) with the per-chunk code of the
/// block kernel; the table is copied to shared memory once per block; while chunk h is decoded
/// the header of chunk h + G is already in registers and its data is prefetched into L2, so a
/// chunk costs one L2 round trip (its data) and one x gather instead of header → data → table
/// (+ barrier) → x round trips in series. The scan's shared arrays alternate between two
/// buffers, so one barrier per chunk suffices (a warp can reuse a buffer only after the next
/// chunk's barrier, which every warp reaches after reading it).
/// kMaxThreads: 128 for chunks of up to 1,024 entries (the default), compiled for 10 (fp64) or 12
/// (fp32) resident blocks per SM instead of 8 (session 4: ncu on gen:lap2d:2000 found the
/// 64-register build latency-bound at 32 warps/SM, 10.3 cycles between a warp's instructions),
/// else 512 (chunks up to 4,096, 2 blocks per SM).
template <class Value, class Index, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads,
                                  kMaxThreads <= 128 ? bccoo_gpu::small_chunk_blocks<Value>() : 2)
    bccoo_gpu_stream_kernel(std::int64_t nb, std::int64_t nnz, std::int64_t chunk,
                            const Index* __restrict__ row, const Index* __restrict__ column,
                            const std::uint8_t* __restrict__ format,
                            const std::int64_t* __restrict__ offset,
                            const std::uint8_t* __restrict__ data, const Value* __restrict__ lut,
                            int lut_used, int prefetch, const Value* __restrict__ x,
                            Value* __restrict__ y, Value alpha, Value beta,
                            Value* __restrict__ head_out, Value* __restrict__ tail_out,
                            std::int64_t* __restrict__ tail_row_out) {
  __shared__ Value s_lut[bccoo::kLutSize];
  __shared__ ScanShared<Value> sh[2];
  const std::int64_t G = gridDim.x;
  std::int64_t h = blockIdx.x;
  ChunkHeader hd;
  if (h < nb) hd = load_header(h, row, column, format, offset);  // block-uniform
  for (int i = threadIdx.x; i < lut_used; i += blockDim.x) s_lut[i] = cuda::ldg(lut + i);
  __syncthreads();
  for (int parity = 0, first = 1; h < nb; h += G, parity ^= 1, first = 0) {  // block-uniform
    ChunkHeader next;
    const bool has_next = h + G < nb;
    if (has_next) next = load_header(h + G, row, column, format, offset);
    // prefetch = 2: also the data range of chunk h + 2G (its offsets only).
    std::int64_t far_begin = 0, far_end = 0;
    if (prefetch == 2 && h + 2 * G < nb) {
      far_begin = offset[h + 2 * G];
      far_end = offset[h + 2 * G + 1];
    }
    const std::int64_t len = min(chunk, nnz - h * chunk);
    stream_chunk<Value>(
        h, hd, len, data, lut, lut_used, s_lut, false, sh[parity],
        [&] {
          // Distance 1 prefetches chunk h + G every iteration; distance 2 prefetches h + 2G, and
          // h + G only in the first iteration (later it was prefetched two iterations earlier).
          if (has_next && (prefetch == 1 || (prefetch == 2 && first)))
            prefetch_l2(data + next.begin, next.end - next.begin);
          if (far_end > far_begin) prefetch_l2(data + far_begin, far_end - far_begin);
        },
        x, y, alpha, beta, head_out, tail_out, tail_row_out);
    hd = next;
  }
}

/// Sum of the tails of chunks g, g-1, ... that end in row r, walking back while a whole chunk
/// lies in row r (a row spanning k chunks: k tails). Called by all 32 lanes of a warp (r and g
/// warp-uniform); every lane returns the sum. Round 3: the walk is warp-parallel — each step
/// looks at kCarryWindows × 32 chunks at once (lane i takes chunks g − base − i − 32w, all loads
/// issued before any test), so a row spanning k chunks costs ⌈k / 128⌉ dependent steps instead
/// of k (round 2: one lane walked back serially, ~2 L2 round trips per chunk: 0.2 ms for the
/// ~700-chunk rows of gen:powerlaw:2000000:8). Each lane sums its chunks in walk order and the
/// 32 lane sums are added by a fixed butterfly tree: deterministic (bitwise, run to run).
constexpr int kCarryWindows = 4;
template <class Value, class Index>
__device__ __forceinline__ Value chunk_carry(std::int64_t r, std::int64_t g, const Index* row,
                                            const Value* tail, const std::int64_t* tail_row) {
  const int lane = cuda::lane_id();
  Value c = 0;
  for (std::int64_t base = g; base >= 0; base -= kCarryWindows * cuda::kWarpSize) {  // uniform
    bool in_r[kCarryWindows], cont[kCarryWindows];
    Value tv[kCarryWindows];
#pragma unroll
    for (int w = 0; w < kCarryWindows; ++w) {  // issue every load of the step first
      const std::int64_t j = base - lane - static_cast<std::int64_t>(w) * cuda::kWarpSize;
      in_r[w] = j >= 0 && tail_row[j] == r;  // chunk j ends in row r
      cont[w] = j >= 0 && static_cast<std::int64_t>(row[j]) == r;  // ... and starts in it
      tv[w] = j >= 0 ? tail[j] : Value(0);
    }
#pragma unroll
    for (int w = 0; w < kCarryWindows; ++w) {
      // Chunks base − 32w − i for lanes i < n are taken: n = the first lane whose chunk does
      // not end in r (excluded), or one past the first whose chunk does not start in r.
      const unsigned out = __ballot_sync(cuda::kFullMask, !in_r[w]);
      const unsigned stop = __ballot_sync(cuda::kFullMask, in_r[w] && !cont[w]);
      const int n_out = out ? __ffs(out) - 1 : cuda::kWarpSize;
      const int n_stop = stop ? __ffs(stop) : cuda::kWarpSize;
      const int n = n_out < n_stop ? n_out : n_stop;
      if (lane < n) c += tv[w];
      if (n < cuda::kWarpSize) return cuda::warp_sum(c);  // warp-uniform
    }
  }
  return cuda::warp_sum(c);
}

/// One warp per chunk h: writes the chunk's first row when it ends in chunk h (head[h] or, for a
/// one-row chunk, tail[h], plus the tails of earlier chunks ending in that row), its last row when
/// it does not continue into chunk h+1, and the empty rows after its last row (and, for h = 0,
/// before its first row). All branches are warp-uniform (chunk_carry needs the whole warp).
template <class Value, class Index>
__global__ void bccoo_gpu_fixup_kernel(std::int64_t nb, std::int64_t rows,
                                       const Index* __restrict__ row,
                                       const Value* __restrict__ head,
                                       const Value* __restrict__ tail,
                                       const std::int64_t* __restrict__ tail_row,
                                       Value* __restrict__ y, Value alpha, Value beta) {
  const std::int64_t h = cuda::global_thread_id() / cuda::kWarpSize;
  if (h >= nb) return;  // warp-uniform
  const int lane = cuda::lane_id();
  const std::int64_t fh = row[h], lh = tail_row[h];
  const std::int64_t next = h + 1 < nb ? static_cast<std::int64_t>(row[h + 1]) : rows;
  const bool last_ends_here = h + 1 == nb || next != lh;
  if (fh != lh) {
    const Value carry = chunk_carry(fh, h - 1, row, tail, tail_row);
    if (lane == 0) {
      cuda::axpby_store(y + fh, alpha, head[h] + carry, beta);
      if (last_ends_here) cuda::axpby_store(y + lh, alpha, tail[h], beta);
    }
  } else if (last_ends_here) {
    const Value carry = chunk_carry(fh, h - 1, row, tail, tail_row);
    if (lane == 0) cuda::axpby_store(y + fh, alpha, tail[h] + carry, beta);
  }
  for (std::int64_t q = lh + 1 + lane; q < next; q += cuda::kWarpSize) scale_store(y + q, beta);
  if (h == 0)
    for (std::int64_t q = lane; q < fh; q += cuda::kWarpSize) scale_store(y + q, beta);
}

// ---- atomic kernel (session 1) ------------------------------------------------------------------

template <class Value, class Index>
__global__ void __launch_bounds__(bccoo_gpu::kBlock)
    bccoo_gpu_spmv_kernel(std::int64_t nb, std::int64_t nnz, std::int64_t chunk,
                          const Index* __restrict__ row, const Index* __restrict__ column,
                          const std::uint8_t* __restrict__ format,
                          const std::int64_t* __restrict__ offset,
                          const std::uint8_t* __restrict__ data, const Value* __restrict__ lut,
                          const Value* __restrict__ x, Value* __restrict__ y, Value alpha) {
  __shared__ Value s_lut[bccoo::kLutSize];
  for (int i = threadIdx.x; i < bccoo::kLutSize; i += blockDim.x) s_lut[i] = lut[i];
  __syncthreads();
  for (std::int64_t h = blockIdx.x; h < nb; h += gridDim.x) {  // block-uniform loop
    const std::int64_t begin = h * chunk;
    const std::int64_t len = min(chunk, nnz - begin);
    const bccoo::GpuChunk g = bccoo::gpu_chunk(format[h], len, sizeof(Value));
    const std::uint8_t* base = data + offset[h];
    const std::int64_t r0 = row[h], c0 = column[h];
    for (std::int64_t step = 0; step < len; step += blockDim.x) {  // block-uniform
      const std::int64_t e = step + threadIdx.x;
      std::int64_t r = -1, c = 0;  // lanes past the end: key −1 (never equal to a row)
      Value p = 0;
      if (e < len) {
        Value v;
        decode_entry(base, g, e, r0, c0, s_lut, &r, &c, &v);
        p = v * cuda::ldg(x + c);
      }
      bool tail = false;
      const Value s = cuda::warp_segmented_sum(r, p, &tail);
      if (e < len && tail) atomicAdd(y + r, alpha * s);
    }
  }
}

template <class Value, class Index>
__global__ void __launch_bounds__(bccoo_gpu::kBlock)
    bccoo_gpu_spmv_t_kernel(std::int64_t nb, std::int64_t nnz, std::int64_t chunk,
                            const Index* __restrict__ row, const Index* __restrict__ column,
                            const std::uint8_t* __restrict__ format,
                            const std::int64_t* __restrict__ offset,
                            const std::uint8_t* __restrict__ data, const Value* __restrict__ lut,
                            const Value* __restrict__ x, Value* __restrict__ y, Value alpha) {
  __shared__ Value s_lut[bccoo::kLutSize];
  for (int i = threadIdx.x; i < bccoo::kLutSize; i += blockDim.x) s_lut[i] = lut[i];
  __syncthreads();
  for (std::int64_t h = blockIdx.x; h < nb; h += gridDim.x) {
    const std::int64_t begin = h * chunk;
    const std::int64_t len = min(chunk, nnz - begin);
    const bccoo::GpuChunk g = bccoo::gpu_chunk(format[h], len, sizeof(Value));
    const std::uint8_t* base = data + offset[h];
    const std::int64_t r0 = row[h], c0 = column[h];
    for (std::int64_t e = threadIdx.x; e < len; e += blockDim.x) {
      std::int64_t r, c;
      Value v;
      decode_entry(base, g, e, r0, c0, s_lut, &r, &c, &v);
      atomicAdd(y + c, alpha * v * cuda::ldg(x + r));
    }
  }
}

/// Blocks for nb chunks: one per chunk, capped at 4 waves of resident blocks (grid-stride).
inline unsigned chunk_grid(std::int64_t nb) {
  return cuda::grid_for(nb * bccoo_gpu::kBlock, bccoo_gpu::kBlock);
}

}  // namespace

/// One wave of resident blocks (occupancy × SMs), or `blocks` when > 0; at most nb.
template <class Value, class Index>
unsigned stream_grid_for(std::int64_t nb, std::int64_t chunk, std::int64_t blocks) {
  std::int64_t g = blocks;
  if (g <= 0) {
    int per_sm = 0;
    const int threads = bccoo_gpu::stream_threads(chunk);
    if (threads <= 128)
      SPMAT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, bccoo_gpu_stream_kernel<Value, Index, 128>, threads, 0));
    else
      SPMAT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, bccoo_gpu_stream_kernel<Value, Index, bccoo_gpu::kStreamMaxThreads>, threads, 0));
    g = static_cast<std::int64_t>(per_sm > 0 ? per_sm : 1) * cuda::sm_count();
  }
  return static_cast<unsigned>(g < nb ? g : nb);
}

/// y = alpha*A*x + beta*y. Example: the 4×4 matrix of bccoo.hpp with x = {1,1,1,1}, alpha = 1,
/// beta = 0 gives y = {3, 0, 12, 6}.
template <class Value, class Index>
void spmv(const BccooGpuDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
          Value beta) {
  if (d.nb > 0 && d.kernel != BccooGpuKernel::atomic) {
    const int threads = bccoo_gpu::stream_threads(d.chunk);
    if (d.kernel == BccooGpuKernel::stream) {
      auto* kernel = threads <= 128
                         ? bccoo_gpu_stream_kernel<Value, Index, 128>
                         : bccoo_gpu_stream_kernel<Value, Index, bccoo_gpu::kStreamMaxThreads>;
      kernel<<<d.stream_grid, threads>>>(
          d.nb, d.nnz, d.chunk, d.row.data(), d.column.data(), d.format.data(), d.offset.data(),
          d.data.data(), d.lut.data(), d.lut_used, d.prefetch, x, y, alpha, beta, d.head.data(),
          d.tail.data(), d.tail_row.data());
      SPMAT_CUDA_CHECK_LAUNCH("bccoo_gpu_stream_kernel");
    } else {
      bccoo_gpu_block_kernel<<<static_cast<unsigned>(d.nb), threads>>>(
          d.nnz, d.chunk, d.row.data(), d.column.data(), d.format.data(), d.offset.data(),
          d.data.data(), d.lut.data(), d.lut_used, x, y, alpha, beta, d.head.data(),
          d.tail.data(), d.tail_row.data());
      SPMAT_CUDA_CHECK_LAUNCH("bccoo_gpu_block_kernel");
    }
    constexpr int kFixBlock = 128;  // 4 chunks per block
    const std::int64_t fix_blocks = (d.nb * cuda::kWarpSize + kFixBlock - 1) / kFixBlock;
    bccoo_gpu_fixup_kernel<<<static_cast<unsigned>(fix_blocks), kFixBlock>>>(
        d.nb, d.rows, d.row.data(), d.head.data(), d.tail.data(), d.tail_row.data(), y, alpha,
        beta);
    SPMAT_CUDA_CHECK_LAUNCH("bccoo_gpu_fixup_kernel");
    return;
  }
  cuda::scale_async(y, d.rows, beta);
  if (d.nb == 0) return;
  bccoo_gpu_spmv_kernel<<<chunk_grid(d.nb), bccoo_gpu::kBlock>>>(
      d.nb, d.nnz, d.chunk, d.row.data(), d.column.data(), d.format.data(), d.offset.data(),
      d.data.data(), d.lut.data(), x, y, alpha);
  SPMAT_CUDA_CHECK_LAUNCH("bccoo_gpu_spmv_kernel");
}

/// y = alpha*Aᵀ*x + beta*y (x: rows, y: cols). NOT deterministic (atomic scatter).
template <class Value, class Index>
void spmv_t(const BccooGpuDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
            Value beta) {
  cuda::scale_async(y, d.cols, beta);
  if (d.nb == 0) return;
  bccoo_gpu_spmv_t_kernel<<<chunk_grid(d.nb), bccoo_gpu::kBlock>>>(
      d.nb, d.nnz, d.chunk, d.row.data(), d.column.data(), d.format.data(), d.offset.data(),
      d.data.data(), d.lut.data(), x, y, alpha);
  SPMAT_CUDA_CHECK_LAUNCH("bccoo_gpu_spmv_t_kernel");
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(BccooGpu<Value, Index>&& host) {
  return std::make_unique<cuda::DeviceImpl<BccooGpu<Value, Index>, BccooGpuDevice<Value, Index>>>(
      std::move(host));
}

#define SPMAT_INSTANTIATE(V, I) \
  template std::unique_ptr<MatrixImpl<V>> make_cuda_impl(BccooGpu<V, I>&&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
