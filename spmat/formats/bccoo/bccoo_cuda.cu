// spmat/formats/bccoo/bccoo_cuda.cu — CUDA kernels of bccoo-gpu: the stream SpMV (default:
// persistent blocks, one chunk per block iteration with the next chunk's header in registers and
// its data prefetched into L2), the block SpMV (one block per chunk; same per-chunk decode),
// both with 8 consecutive entries per thread and a deterministic two-kernel fix-up, the atomic
// SpMV (warp segmented sum + atomicAdd) and the atomic SpMV^T.
// SPDX-License-Identifier: MIT
//
// Common contract: row/column/format: nb, offset: nb+1 (int64), data: offset[nb] bytes, lut: 256
// values, x: cols (spmv) or rows (spmv_t), y: rows (spmv) or cols (spmv_t); all device memory
// (matrix arrays, the stream and block kernels' chunk descriptors (32 B per chunk, derived on
// the device by BccooGpuDevice::finish) and scratch allocated by finish, x and y by the caller).
// beta == 0 never reads y (NaN poison never leaks). Canonical input: no duplicates; explicit
// zeros multiplied (0·Inf = NaN propagates); empty rows get beta·y. Offsets, rows and columns
// are 64-bit inside the kernels. No launch of the chunk kernels when nb == 0 (y = beta·y only).
//
// Per-chunk decode of the stream and block kernels (stream_chunk; chunk <= kStreamMaxChunk).
// A block (T = 32·ceil(b/256) threads) decodes chunk h; thread t owns entries [8t, 8t+8): it
// reads the chunk's precomputed descriptor (two 16-byte loads), loads its slices of the three
// sub-arrays as aligned 8-byte words (w B per entry → w words) and unpacks them in registers,
// issues its 8 x gathers (__ldg) before any product, reads the value table from shared memory
// (only its lut_used real entries are copied, and only when the chunk uses the table). The
// partial sum of each thread's last row (its "tail", pass 1) is combined across threads by a
// block-wide segmented inclusive scan keyed by that row (warp shuffles plus one shared-memory
// pass over the ≤ 16 warps). Pass 2 starts from the scanned carry and ends a row wherever the
// next entry's row (or the next thread's first row) differs; the row sums go to a zeroed
// shared-memory row buffer (one predicated store per entry) and from there to y in one
// coalesced pass (y = α·s + β·y; empty rows get α·0 + β·y), or, when the chunk spans 1,024 local
// rows or more, straight to y. The chunk's first row (when the chunk holds more than one row)
// and its last row can be shared with the neighbour chunks: their partials go to scratch
// (head[h], tail[h], tail_row[h]), and a second kernel (one thread per chunk; the rare long cases
// by a whole warp) sums them in chunk order and writes those rows plus the empty rows between
// chunks and before the first / after the last chunk. Every row of y is written exactly
// once, in a fixed order of additions: DETERMINISTIC (bitwise, run to run). Products and the
// final α·s + β·y use explicitly rounded operations (mul_rn, axpby_rn_store), so stream and
// block, which inline the same decode into different kernels, cannot differ by the compiler's
// fma contraction. Chunks that fill the block (all but the last at
// the default b) take a copy of the decode without bounds tests (kFull), and a warp whose
// threads each end their own row skips the shuffle scan (the identity then). Chunk data is
// loaded and y stored with the streaming cache policy (.cs, see ld_chunk).
// Bytes: storage_bytes (LUT: lut_used values per block (stream) or per chunk (block) from L2)
// + x (gathered) + y (written once; read once where beta != 0) + 24 B of scratch per chunk.
//
// stream (default): grid = one wave of resident blocks (occupancy query, at most nb; option
// `blocks` caps it). Block b decodes chunks b, b+G, ...; table copied to shared memory once per
// block; while chunk h is decoded, chunk h+G's header is loaded into registers and its data bytes
// are prefetched into L2 (prefetch.global.L2, one per 32-B sector), so the serial chain per chunk
// is [data from L2] → [x gathers] instead of [header] → [data from DRAM] → [table + barrier] →
// [x gathers]. block: one block per chunk, table copied per chunk (when used).
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
#include "spmat/formats/bccoo/bccoo_device.hpp"

namespace spmat {

namespace bccoo_gpu {
/// Threads per block of the atomic kernel: 256 (spec §8 Q8: 256 threads × 4 steps for b = 1024).
constexpr int kBlock = 256;
/// Entries per thread of the stream kernel, and its largest block (chunk <= 512 · 8 = 4096).
constexpr int kE = bccoo::kStreamPerThread;
constexpr int kStreamMaxThreads = static_cast<int>(bccoo::kStreamMaxChunk / kE);
/// Resident blocks per SM the 128-thread stream and block kernels are compiled for: fp32 12
/// (register cap 65536 / (128 · 12) = 42, so 40 registers), fp64 9 (56 registers). On the H100,
/// with all 8 gathers issued up front, 10 blocks (48 registers) spill 16–32 bytes per thread and
/// 8 blocks (64) lose occupancy; 9 was fastest or tied on lap2d, lap3d, banded and G3_circuit
/// for the stream kernel.
template <class Value>
constexpr int small_chunk_blocks() {
  return sizeof(Value) == 8 ? 9 : 12;
}
/// The stream and block kernels decode chunk-local rows and columns in 32 bits: every local row
/// must be below 0xffffffff (their "no row" key) and every column offset must fit 4 bytes.
inline bool fits_local32(std::int64_t rows, std::int64_t cols) {
  return rows < 0xffffffffll && cols <= 0xffffffffll;
}
/// Threads of the stream kernel for chunk b: whole warps covering b entries at 8 per thread
/// (b = 1024 → 128 threads). `bench/reproduce bccoo-gpu` also times chunk = 2048 and 4096.
inline int stream_threads(std::int64_t chunk) {
  return static_cast<int>(32 * ((chunk + 32 * kE - 1) / (32 * kE)));
}
}  // namespace bccoo_gpu

/// Grid of the persistent stream kernel for nb chunks (defined after the kernel).
template <class Value, class Index>
unsigned stream_grid_for(std::int64_t nb, std::int64_t chunk, std::int64_t blocks);

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

/// Cache policy of the stream and block kernels. The chunk data is read once per
/// SpMV and y is written once: they are loaded and stored with the streaming policy
/// (ld.global.cs / st.global.cs, evict-first in L1 and L2), so they do not push the gathered x
/// out of L2. Same-run A/B on the H100, fp64: 4–15% faster
/// on every matrix of the >= 1M-row suite (gen:lap2d:2000 0.0822 → 0.0760 ms, G3_circuit
/// 0.0462 → 0.0395, random_k 0.3254 → 0.3160). A thread's repeated loads of one sector (its
/// 8-byte words of a 32-byte slice) still hit L1: evict-first is not no-allocate. The fix-up
/// kernel and the atomic kernel keep the default policy (little traffic / not tuned).
template <class T>
__device__ __forceinline__ T ld_chunk(const T* p) {
  return cuda::ld_stream(p);
}
template <class T>
__device__ __forceinline__ void st_y(T* p, T v) {
  __stcs(p, v);
}
/// Entries 0..7 of thread t's slice of a sub-array of W-byte unsigned fields (W ∈ {1,2,4}), as
/// 32-bit values. The slice is 8·W bytes = W aligned 8-byte words starting at word t·W (sub-arrays
/// start 8-byte aligned). Only words holding an entry < n are read: a sub-array padded to 8 B
/// contains every word that holds one of its entries, so no load leaves the chunk. Unread entries
/// are 0. 32-bit results halve the unpacking work against 64-bit fields (with 64-bit fields the
/// kernel was issue-bound, ~108 instructions per entry on gen:lap2d:2000, ncu).
template <int W>
__device__ __forceinline__ void load_slice(const std::uint8_t* sub, int t, int n,
                                           std::uint32_t (&out)[bccoo_gpu::kE]) {
  static_assert(W == 1 || W == 2 || W == 4, "32-bit slices: widths 1, 2, 4");
  const auto* words =
      reinterpret_cast<const unsigned long long*>(sub) + static_cast<std::int64_t>(t) * W;
  constexpr int kPerWord = 8 / W;
#pragma unroll
  for (int k = 0; k < W; ++k) {
    const unsigned long long wd = k * kPerWord < n ? ld_chunk(words + k) : 0ull;
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
      const float2 p = 2 * k < n ? ld_chunk(v2 + k) : float2{0.f, 0.f};
      out[2 * k] = p.x;
      out[2 * k + 1] = 2 * k + 1 < n ? p.y : 0.f;
    }
  } else {
#pragma unroll
    for (int i = 0; i < bccoo_gpu::kE; ++i) out[i] = i < n ? ld_chunk(v + i) : Value(0);
  }
}

/// a·b, rounded, never contracted into an fma with a later addition. The stream and block
/// kernels inline the same decode but the compiler may fuse products and sums differently in
/// each (once the bounds masks of full chunks are folded away, they do, and the results stop
/// being bitwise equal); explicit rounding keeps one sequence of operations.
template <class Value>
__device__ __forceinline__ Value mul_rn(Value a, Value b) {
  if constexpr (sizeof(Value) == 8)
    return __dmul_rn(a, b);
  else
    return __fmul_rn(a, b);
}
/// y = α·s + β·y with explicitly rounded operations (see mul_rn); β == 0 never reads y.
template <class Value>
__device__ __forceinline__ void axpby_rn_store(Value* y, Value alpha, Value s, Value beta) {
  const Value as = mul_rn(alpha, s);
  if (beta == Value(0)) {
    st_y(y, as);
  } else if constexpr (sizeof(Value) == 8) {
    st_y(y, __dadd_rn(as, __dmul_rn(beta, *y)));
  } else {
    st_y(y, __fadd_rn(as, __fmul_rn(beta, *y)));
  }
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

/// Per-chunk metadata (block-uniform), unpacked from a BccooChunkDesc.
struct ChunkHeader {
  std::int64_t begin = 0;
  std::uint32_t r0 = 0, c0 = 0, col_at = 0, val_at = 0, bytes = 0;
  int len = 0, wr = 1, wc = 1;
  bool lut = false;
};
/// A descriptor as loaded (8 registers); unpacked where it is used, so a header carried across a
/// chunk (the persistent kernel's next one) holds no more registers than this.
struct RawHeader {
  int4 a, b;
};
__device__ __forceinline__ RawHeader load_raw_header(const BccooChunkDesc* desc, std::int64_t h) {
  const auto* p = reinterpret_cast<const int4*>(desc + h);
  return {cuda::ldg(p), cuda::ldg(p + 1)};
}
__device__ __forceinline__ ChunkHeader unpack_header(const RawHeader& r) {
  const int4 a = r.a, b = r.b;
  ChunkHeader c;
  c.begin = static_cast<std::int64_t>(static_cast<std::uint64_t>(static_cast<std::uint32_t>(a.x)) |
                                      static_cast<std::uint64_t>(static_cast<std::uint32_t>(a.y)) << 32);
  c.r0 = static_cast<std::uint32_t>(a.z);
  c.c0 = static_cast<std::uint32_t>(a.w);
  c.col_at = static_cast<std::uint32_t>(b.x);
  c.val_at = static_cast<std::uint32_t>(b.y);
  c.bytes = static_cast<std::uint32_t>(b.z);
  const auto w = static_cast<std::uint32_t>(b.w);
  c.len = static_cast<int>(w & 0xffffu);
  c.wr = static_cast<int>((w >> 16) & 0xffu);
  c.wc = static_cast<int>((w >> 24) & 0x7fu);
  c.lut = (w >> 31) != 0;
  return c;
}
__device__ __forceinline__ ChunkHeader load_header(const BccooChunkDesc* desc, std::int64_t h) {
  return unpack_header(load_raw_header(desc, h));
}

/// Prefetches [p, p + bytes) into L2, one 32-B sector per prefetch, spread over the block (no
/// registers held; no fault possible: callers pass ranges inside the chunk data).
__device__ __forceinline__ void prefetch_l2(const std::uint8_t* p, std::uint32_t bytes) {
  for (std::uint32_t k = threadIdx.x * 32; k < bytes; k += blockDim.x * 32)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(p + k)));
}

/// Shared memory of one block-wide segmented scan: each warp's last key (lane 31's last row),
/// lane 0's last row (wfirst) and lane 0's first row (wstart), and the warp's scanned tail.
/// Keys are chunk-local rows (row − the chunk's first row), 32 bits.
template <class Value>
struct ScanShared {
  std::uint32_t wkey[32], wfirst[32], wstart[32];
  std::uint32_t last_row;  ///< the chunk's last local row (written by the thread holding it)
  Value wval[32];
};

/// Rows of the per-block row buffer in shared memory (see stream_chunk): a chunk whose local rows
/// (last row − first row) are fewer writes its row sums there and then to y in one coalesced
/// pass; a chunk spanning more rows (many empty rows) writes them directly.
constexpr int kRowBuffer = 1024;
/// Zeroes the row buffer (once per block; stream_chunk leaves it zero after each chunk).
template <class Value>
__device__ __forceinline__ void clear_row_buffer(Value* s_rows) {
  for (int i = threadIdx.x; i < kRowBuffer; i += blockDim.x) s_rows[i] = Value(0);
}

/// Pass 2's row walk over a thread's kE entries: adds product i to the running sum s and, where
/// the row ends (the next entry's row, or after the last entry next_first, differs), calls
/// on_end(row, next row, row sum) and restarts s at 0. One walk for both of stream_chunk's row
/// outputs (the shared row buffer and the direct path).
template <class Value, class OnEnd>
__device__ __forceinline__ void for_each_row_end(const Value (&p)[bccoo_gpu::kE],
                                                 const std::uint32_t (&ro)[bccoo_gpu::kE],
                                                 std::uint32_t next_first, Value s, OnEnd&& on_end) {
#pragma unroll
  for (int i = 0; i < bccoo_gpu::kE; ++i) {
    s += p[i];
    const std::uint32_t r = ro[i];
    const std::uint32_t nr = i + 1 < bccoo_gpu::kE ? ro[i + 1] : next_first;
    if (nr != r) {
      on_end(r, nr, s);
      s = Value(0);
    }
  }
}

/// The block decodes chunk h (header hd, len entries; see the contract at the top). Writes y for
/// rows wholly inside the chunk (and the empty rows between them), head[h] (first-row partial,
/// only when the chunk holds more than one row), tail[h] and tail_row[h] (last row and its
/// partial). fill_lut (block-uniform): copy the table's lut_used entries to s_lut first (when
/// the chunk uses it; the block kernel), else s_lut is already filled (the persistent kernel).
/// after_gathers(): called once the x gathers are issued (the stream kernel prefetches there).
/// Every thread of the block must call it (one barrier).
/// The thread's rows are summed in two branch-light passes around the scan (one branchy pass
/// with a separate "first row" path cost 736 warp instructions per thread-chunk on
/// gen:lap2d:2000 and issued the 8 gathers about two at a time, ncu source counters): pass 1
/// sums the last row's entries (the thread tail, the scan's input); pass 2 starts from the
/// scanned carry and writes every row that ends in this thread or at its right boundary (the
/// next thread's first row, by shuffle). Entries past the chunk end are masked to (row = last,
/// product 0), so no per-entry bounds test remains. All gathers are issued before any product.
template <class Value, bool kFull, class AfterGathers>
__device__ __forceinline__ void stream_chunk(
    std::int64_t h, const ChunkHeader& hd, const std::uint8_t* __restrict__ data,
    const Value* __restrict__ lut, int lut_used, Value* s_lut, bool fill_lut, ScanShared<Value>& sh,
    Value* s_rows, AfterGathers&& after_gathers, const Value* __restrict__ x,
    Value* __restrict__ y, Value alpha, Value beta, Value* __restrict__ head_out,
    Value* __restrict__ tail_out, std::int64_t* __restrict__ tail_row_out) {
  constexpr int kE = bccoo_gpu::kE;
  // Rows are chunk-local (row − r0) in 32 bits: upload keeps matrices of 2^32 − 1 or more rows
  // off this code, so a local row is never kNone, the key of threads without entries.
  constexpr std::uint32_t kNone = 0xffffffffu;
  const std::uint8_t* base = data + hd.begin;
  const Value* xc = x + hd.c0;  // columns are offsets from the chunk's smallest column
  Value* yc = y + hd.r0;        // rows are offsets from the chunk's first row
  const int t = threadIdx.x;
  const int len32 = hd.len;  // <= kStreamMaxChunk
  const int left = len32 - t * kE;
  // kFull: the chunk fills the block (len = T·8), so every thread has 8 entries and the bounds
  // tests below fold away (all chunks but the last, at the default b = 1024).
  const int n = kFull ? kE : (left <= 0 ? 0 : (left >= kE ? kE : left));

  // Columns first, then all kE gathers before anything consumes them. Entries >= n have column
  // offset 0 (load_slice): x[c0] is a real column, so the load is safe; the product is masked.
  std::uint32_t co[kE];
  load_slice(base + hd.col_at, hd.wc, t, n, co);
  Value xv[kE];
#pragma unroll
  // x keeps the default policy: an L2 evict-last policy for these gathers (createpolicy +
  // ld.global.nc.L2::cache_hint) measured within noise in two same-run A/B comparisons on the
  // H100, so it is not used.
  for (int i = 0; i < kE; ++i) xv[i] = cuda::ldg(xc + co[i]);
  std::uint32_t ro[kE];
  load_slice(base, hd.wr, t, n, ro);
  Value v[kE];
  if (hd.lut) {  // block-uniform
    std::uint32_t idx[kE];
    load_slice<1>(base + hd.val_at, t, n, idx);
    if (fill_lut) {
      for (int i = t; i < lut_used; i += blockDim.x) s_lut[i] = cuda::ldg(lut + i);
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kE; ++i) v[i] = s_lut[idx[i]];
  } else {
    load_raw_values(base + hd.val_at, t, n, v);
  }
  after_gathers();  // while the gathers are in flight

  // The thread's first and last row; entries >= n become (row = last, product 0).
  std::uint32_t first = n > 0 ? ro[0] : kNone, last = kNone;
#pragma unroll
  for (int i = 0; i < kE; ++i) last = i < n ? ro[i] : last;
  Value p[kE];
#pragma unroll
  for (int i = 0; i < kE; ++i) {
    p[i] = i < n ? mul_rn(v[i], xv[i]) : Value(0);
    ro[i] = i < n ? ro[i] : last;
  }
  // Pass 1: the thread tail = the sum of its last row's entries.
  Value tail = 0;
#pragma unroll
  for (int i = 0; i < kE; ++i) tail += ro[i] == last ? p[i] : Value(0);

  // Block-wide inclusive segmented scan of the tails keyed by the last row.
  const int lane = t & 31, warp = t >> 5;
  const std::uint32_t up = __shfl_up_sync(cuda::kFullMask, last, 1);
  // A lane continues the previous lane's last row only when its entries all lie in that row
  // (rows longer than 8 entries). Without such a lane every tail is its own segment and the
  // scan is the identity: skip its 5 shuffle steps (warp-uniform; same bits either way).
  const bool continues = lane > 0 && up == last;
  Value incl = tail;
  if (__any_sync(cuda::kFullMask, continues))
    incl = cuda::warp_segmented_inclusive_sum(!continues, tail);
  const std::uint32_t lane0_key = __shfl_sync(cuda::kFullMask, last, 0);
  if (lane == 31) {
    sh.wkey[warp] = last;
    sh.wval[warp] = incl;
  }
  if (lane == 0) {
    sh.wfirst[warp] = last;
    sh.wstart[warp] = first;
  }
  const bool chunk_last = n > 0 && t == (len32 - 1) / kE;  // holds the chunk's last entry
  if (chunk_last) sh.last_row = last;
  __syncthreads();
  const std::uint32_t last_local = sh.last_row;
  const bool buffered = last_local < static_cast<std::uint32_t>(kRowBuffer);  // block-uniform
  if (last == lane0_key) incl += warp_carry(last, warp - 1, sh.wkey, sh.wfirst, sh.wval);
  // The previous thread's last row and scanned tail; the next thread's first row.
  std::uint32_t prev_key = __shfl_up_sync(cuda::kFullMask, last, 1);
  Value prev_incl = __shfl_up_sync(cuda::kFullMask, incl, 1);
  std::uint32_t next_first = __shfl_down_sync(cuda::kFullMask, first, 1);
  if (lane == 0) {
    prev_key = warp > 0 ? sh.wkey[warp - 1] : kNone;
    prev_incl = warp > 0 ? warp_carry(prev_key, warp - 1, sh.wkey, sh.wfirst, sh.wval) : Value(0);
  }
  if (lane == 31) next_first = warp + 1 < static_cast<int>(blockDim.x >> 5) ? sh.wstart[warp + 1] : kNone;
  // The chunk's last row goes to tail[h] for the fix-up, never to y here.
  if (chunk_last) {
    next_first = last;
    tail_out[h] = incl;
    tail_row_out[h] = static_cast<std::int64_t>(hd.r0) + last;
  }

  // Pass 2: running row sums from the carry; a row ends where the next entry's row (or, after
  // the thread's last entry, the next thread's first row) differs. Local row 0 is the chunk's
  // first row, possibly shared with chunk h−1: its partial goes to head[h].
  Value s = prev_key == first ? prev_incl : Value(0);
  if (buffered) {
    // Row sums into the zeroed row buffer (no branches: one predicated shared store per entry),
    // then rows 0 .. last_local − 1 to y (row 0 to head[h]) in one coalesced pass that also
    // re-zeroes the buffer. Empty rows read 0 there: y = α·0 + β·y.
    if (n > 0)
      for_each_row_end(p, ro, next_first, s,
                       [&](std::uint32_t r, std::uint32_t, Value rs) { s_rows[r] = rs; });
    __syncthreads();
    for (int q = t; q < static_cast<int>(last_local); q += blockDim.x) {
      const Value rs = s_rows[q];
      s_rows[q] = Value(0);
      if (q == 0)
        head_out[h] = rs;
      else
        axpby_rn_store(yc + q, alpha, rs, beta);
    }
    return;
  }
  if (n == 0) return;
  for_each_row_end(p, ro, next_first, s, [&](std::uint32_t r, std::uint32_t nr, Value rs) {
    if (r == 0)
      head_out[h] = rs;
    else
      axpby_rn_store(yc + r, alpha, rs, beta);
    if (nr > r + 1 && nr != kNone)  // empty rows (rare)
#pragma unroll 1
      for (std::uint32_t q = r + 1; q < nr; ++q) cuda::scale_store(yc + q, beta);
  });
}

/// kernel=block: block h decodes chunk h; the table is copied per chunk.
template <class Value, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads,
                                  kMaxThreads <= 128 ? bccoo_gpu::small_chunk_blocks<Value>() : 1)
    bccoo_gpu_block_kernel(const BccooChunkDesc* __restrict__ desc,
                           const std::uint8_t* __restrict__ data, const Value* __restrict__ lut,
                           int lut_used, const Value* __restrict__ x, Value* __restrict__ y,
                           Value alpha, Value beta, Value* __restrict__ head_out,
                           Value* __restrict__ tail_out, std::int64_t* __restrict__ tail_row_out) {
  __shared__ Value s_lut[bccoo::kLutSize];
  __shared__ ScanShared<Value> sh;
  __shared__ Value s_rows[kRowBuffer];
  const std::int64_t h = blockIdx.x;
  const ChunkHeader hd = load_header(desc, h);
  clear_row_buffer(s_rows);  // visible after stream_chunk's scan barrier
  if (hd.len == static_cast<int>(blockDim.x) * bccoo_gpu::kE)  // block-uniform
    stream_chunk<Value, true>(h, hd, data, lut, lut_used, s_lut, true, sh, s_rows, [] {}, x, y,
                              alpha, beta, head_out, tail_out, tail_row_out);
  else
    stream_chunk<Value, false>(h, hd, data, lut, lut_used, s_lut, true, sh, s_rows, [] {}, x, y,
                               alpha, beta, head_out, tail_out, tail_row_out);
}

/// kernel=stream (default): persistent blocks (one wave: grid = resident blocks, at most nb).
/// Block b decodes chunks b, b + G, b + 2G, ... (G = gridDim.x) with the per-chunk code of the
/// block kernel; the table is copied to shared memory once per block; while chunk h is decoded
/// the header of chunk h + G is already in registers and its data is prefetched into L2, so a
/// chunk costs one L2 round trip (its data) and one x gather instead of header → data → table
/// (+ barrier) → x round trips in series. The scan's shared arrays alternate between two
/// buffers, so one barrier per chunk suffices (a warp can reuse a buffer only after the next
/// chunk's barrier, which every warp reaches after reading it).
/// The next chunk's descriptor is carried as its raw 8 registers (unpack_header).
/// kMaxThreads: 128 for chunks of up to 1,024 entries (the default), compiled for 9 (fp64) or 12
/// (fp32) resident blocks per SM (small_chunk_blocks), else 512 (chunks up to 4,096, 2 blocks
/// per SM).
template <class Value, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads,
                                  kMaxThreads <= 128 ? bccoo_gpu::small_chunk_blocks<Value>() : 2)
    bccoo_gpu_stream_kernel(std::int64_t nb, const BccooChunkDesc* __restrict__ desc,
                            const std::uint8_t* __restrict__ data, const Value* __restrict__ lut,
                            int lut_used, int prefetch, const Value* __restrict__ x,
                            Value* __restrict__ y, Value alpha, Value beta,
                            Value* __restrict__ head_out, Value* __restrict__ tail_out,
                            std::int64_t* __restrict__ tail_row_out) {
  __shared__ Value s_lut[bccoo::kLutSize];
  __shared__ ScanShared<Value> sh[2];
  __shared__ Value s_rows[kRowBuffer];
  const std::int64_t G = gridDim.x;
  std::int64_t h = blockIdx.x;
  ChunkHeader hd;
  if (h < nb) hd = load_header(desc, h);  // block-uniform
  for (int i = threadIdx.x; i < lut_used; i += blockDim.x) s_lut[i] = cuda::ldg(lut + i);
  clear_row_buffer(s_rows);
  __syncthreads();
  for (int parity = 0, first = 1; h < nb; h += G, parity ^= 1, first = 0) {  // block-uniform
    RawHeader next{};
    const bool has_next = h + G < nb;
    if (has_next) next = load_raw_header(desc, h + G);
    const auto after_gathers = [&] {
      // Distance 1 prefetches chunk h + G every iteration; distance 2 prefetches h + 2G, and
      // h + G only in the first iteration (later it was prefetched two iterations earlier).
      if (has_next && (prefetch == 1 || (prefetch == 2 && first))) {
        const ChunkHeader n1 = unpack_header(next);
        prefetch_l2(data + n1.begin, n1.bytes);
      }
      if (prefetch == 2 && h + 2 * G < nb) {  // also the data of chunk h + 2G
        const ChunkHeader n2 = load_header(desc, h + 2 * G);
        prefetch_l2(data + n2.begin, n2.bytes);
      }
    };
    if (hd.len == static_cast<int>(blockDim.x) * bccoo_gpu::kE)  // block-uniform
      stream_chunk<Value, true>(h, hd, data, lut, lut_used, s_lut, false, sh[parity], s_rows,
                                after_gathers, x, y, alpha, beta, head_out, tail_out, tail_row_out);
    else
      stream_chunk<Value, false>(h, hd, data, lut, lut_used, s_lut, false, sh[parity], s_rows,
                                 after_gathers, x, y, alpha, beta, head_out, tail_out, tail_row_out);
    hd = unpack_header(next);
  }
}

/// Sum of the tails of chunks g, g-1, ... that end in row r, walking back while a whole chunk
/// lies in row r (a row spanning k chunks: k tails). Called by all 32 lanes of a warp (r and g
/// warp-uniform); every lane returns the sum. The walk is warp-parallel: each step
/// looks at kCarryWindows × 32 chunks at once (lane i takes chunks g − base − i − 32w, all loads
/// issued before any test), so a row spanning k chunks costs ⌈k / 128⌉ dependent steps instead
/// of k (a serial walk in one lane costs ~2 L2 round trips per chunk: 0.2 ms for the
/// ~700-chunk rows of gen:powerlaw:2000000:8). Each lane sums its chunks in walk order and the
/// 32 lane sums are added by a fixed butterfly tree: deterministic (bitwise, run to run).
constexpr int kCarryWindows = 4;
/// Chunk g's first row, last row and tail partial (g < 0: none), loaded by the fix-up kernel
/// together with chunk h's own values, so its common case costs one round of loads.
template <class Value>
struct ChunkEnds {
  std::int64_t first = -1, last = -1;
  Value tail = 0;
};
template <class Value, class Index>
__device__ __forceinline__ Value chunk_carry(std::int64_t r, std::int64_t g,
                                            const ChunkEnds<Value>& ends_g, const Index* row,
                                            const Value* tail, const std::int64_t* tail_row) {
  // Almost every row is shared by at most two chunks, so look at chunk g alone first (its
  // values preloaded). The window walk issues 4 × 32 × 3 loads per call even then (with it
  // alone, the fix-up kernel took 11.5 of ~101 µs on gen:lap2d:2000, ncu).
  if (g < 0 || ends_g.last != r) return Value(0);  // g does not end in r
  if (ends_g.first != r) return ends_g.tail;       // g starts before r: only g
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

/// One thread per chunk h (lane i of warp w: chunk 32w + i): writes the chunk's first row when it
/// ends in chunk h (head[h] or, for a one-row chunk, tail[h], plus the tails of earlier chunks
/// ending in that row), its last row when it does not continue into chunk h+1, and the empty rows
/// after its last row (and, for h = 0, before its first row). A warp per chunk would spend most
/// of its time on launch shape and load rounds (~7.5 µs on gen:lap2d:2000, ncu); instead a
/// lane answers the common case (the carry is chunk h−1's tail or nothing) with one round of
/// loads, and the rare cases run warp-cooperatively afterwards, one chunk at a time: the window
/// walk when chunk h−1 lies wholly in the shared row (chunk_carry), and long empty-row runs.
/// A fixed order of additions: deterministic.
template <class Value, class Index>
__global__ void bccoo_gpu_fixup_kernel(std::int64_t nb, std::int64_t rows,
                                       const Index* __restrict__ row,
                                       const Value* __restrict__ head,
                                       const Value* __restrict__ tail,
                                       const std::int64_t* __restrict__ tail_row,
                                       Value* __restrict__ y, Value alpha, Value beta) {
  const std::int64_t h = cuda::global_thread_id();
  const int lane = cuda::lane_id();
  const bool valid = h < nb;
  if (__ballot_sync(cuda::kFullMask, valid) == 0) return;  // warp-uniform
  // Every load of the common case first, none depending on another (one round trip).
  std::int64_t fh = 0, lh = -1, next = 0;
  Value head_h = 0, tail_h = 0;
  ChunkEnds<Value> prev;
  if (valid) {
    fh = row[h];
    lh = tail_row[h];
    next = h + 1 < nb ? static_cast<std::int64_t>(row[h + 1]) : rows;
    head_h = head[h];  // only used when written (fh != lh); zeroed at upload
    tail_h = tail[h];
    if (h > 0) prev = {static_cast<std::int64_t>(row[h - 1]), tail_row[h - 1], tail[h - 1]};
  }
  const bool last_ends_here = h + 1 == nb || next != lh;
  const bool first_ends_here = fh != lh || last_ends_here;  // the chunk's first row ends in it
  // The walk case: chunk h−1 lies wholly in row fh (a row spanning three or more chunks).
  const bool walk = valid && first_ends_here && h > 0 && prev.first == fh && prev.last == fh;
  if (valid) {
    if (!walk && first_ends_here) {
      const Value carry = prev.last == fh ? prev.tail : Value(0);  // h = 0: prev.last = −1
      cuda::axpby_store(y + fh, alpha, (fh != lh ? head_h : tail_h) + carry, beta);
    }
    if (fh != lh && last_ends_here) cuda::axpby_store(y + lh, alpha, tail_h, beta);
  }
  for (unsigned m = __ballot_sync(cuda::kFullMask, walk); m != 0; m &= m - 1) {
    const int src = __ffs(m) - 1;  // warp-uniform
    const std::int64_t r = __shfl_sync(cuda::kFullMask, fh, src);
    const std::int64_t g = __shfl_sync(cuda::kFullMask, h, src) - 1;
    ChunkEnds<Value> ends;
    ends.first = __shfl_sync(cuda::kFullMask, prev.first, src);
    ends.last = __shfl_sync(cuda::kFullMask, prev.last, src);
    ends.tail = __shfl_sync(cuda::kFullMask, prev.tail, src);
    const Value carry = chunk_carry(r, g, ends, row, tail, tail_row);
    if (lane == src) cuda::axpby_store(y + fh, alpha, (fh != lh ? head_h : tail_h) + carry, beta);
  }
  // Empty rows after the last row (and before the first, for h = 0): short runs by the lane,
  // longer ones by the whole warp.
  constexpr std::int64_t kLaneRun = 4;
  const std::int64_t gap = valid ? next - lh - 1 : 0;
  if (gap > 0 && gap <= kLaneRun)
    for (std::int64_t q = lh + 1; q < next; ++q) cuda::scale_store(y + q, beta);
  for (unsigned m = __ballot_sync(cuda::kFullMask, gap > kLaneRun); m != 0; m &= m - 1) {
    const int src = __ffs(m) - 1;
    const std::int64_t from = __shfl_sync(cuda::kFullMask, lh, src) + 1;
    const std::int64_t to = __shfl_sync(cuda::kFullMask, next, src);
    for (std::int64_t q = from + lane; q < to; q += cuda::kWarpSize) cuda::scale_store(y + q, beta);
  }
  if (h - lane == 0) {  // warp 0: the rows before chunk 0's first row
    const std::int64_t first0 = __shfl_sync(cuda::kFullMask, fh, 0);
    for (std::int64_t q = lane; q < first0; q += cuda::kWarpSize) cuda::scale_store(y + q, beta);
  }
}

// ---- atomic kernel ------------------------------------------------------------------------------

/// The atomic kernels, one block per chunk (the chunk's value table staged in shared memory):
/// y[row] += alpha*Σ by warp-segmented sums, one atomicAdd per row segment; Transposed:
/// y[col] += alpha*v*x[row], one atomicAdd per entry. y holds beta*y beforehand.
template <bool Transposed, class Value, class Index>
__global__ void __launch_bounds__(bccoo_gpu::kBlock)
    bccoo_gpu_atomic_kernel(std::int64_t nb, std::int64_t nnz, std::int64_t chunk,
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
    if constexpr (Transposed) {
      for (std::int64_t e = threadIdx.x; e < len; e += blockDim.x) {
        std::int64_t r, c;
        Value v;
        decode_entry(base, g, e, r0, c0, s_lut, &r, &c, &v);
        atomicAdd(y + c, alpha * v * cuda::ldg(x + r));
      }
    } else {
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
}

/// Blocks for nb chunks: one per chunk, capped at 4 waves of resident blocks (grid-stride).
inline unsigned chunk_grid(std::int64_t nb) {
  return cuda::grid_for(nb * bccoo_gpu::kBlock, bccoo_gpu::kBlock);
}

/// y = alpha*op(A)*x + beta*y by the atomic kernel (op: Aᵀ when Transposed): y scaled by beta,
/// then the kernel, when there are chunks.
template <bool Transposed, class Value, class Index>
void atomic_product(const BccooGpuDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
                    Value beta) {
  cuda::scale_async(y, Transposed ? d.cols : d.rows, beta);
  if (d.nb == 0) return;
  bccoo_gpu_atomic_kernel<Transposed><<<chunk_grid(d.nb), bccoo_gpu::kBlock, 0, cuda::stream()>>>(
      d.nb, d.nnz, d.chunk, d.row.data(), d.column.data(), d.formats.data(), d.offset.data(),
      d.data.data(), d.lut.data(), x, y, alpha);
  cuda::check(cudaGetLastError(),
              Transposed ? "launch of bccoo_gpu_spmv_t_kernel" : "launch of bccoo_gpu_spmv_kernel",
              __FILE__, __LINE__);
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
          &per_sm, bccoo_gpu_stream_kernel<Value, 128>, threads, 0));
    else
      SPMAT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, bccoo_gpu_stream_kernel<Value, bccoo_gpu::kStreamMaxThreads>, threads, 0));
    g = static_cast<std::int64_t>(per_sm > 0 ? per_sm : 1) * cuda::sm_count();
  }
  return static_cast<unsigned>(g < nb ? g : nb);
}

/// desc[h] from chunk h's offset, first row, smallest column and format (one thread per chunk).
template <class Index>
__global__ void bccoo_gpu_desc_kernel(std::int64_t nb, std::int64_t nnz, std::int64_t chunk,
                                      int value_bytes, const Index* __restrict__ row,
                                      const Index* __restrict__ column,
                                      const std::uint8_t* __restrict__ format,
                                      const std::int64_t* __restrict__ offset,
                                      BccooChunkDesc* __restrict__ desc) {
  for (std::int64_t h = cuda::global_thread_id(); h < nb; h += cuda::grid_thread_count()) {
    const std::int64_t len = min(chunk, nnz - h * chunk);
    const bccoo::GpuChunk g = bccoo::gpu_chunk(format[h], len, value_bytes);
    desc[h] = {offset[h],
               static_cast<std::uint32_t>(row[h]),
               static_cast<std::uint32_t>(column[h]),
               static_cast<std::uint32_t>(g.col_at),
               static_cast<std::uint32_t>(g.val_at),
               static_cast<std::uint32_t>(g.bytes),
               static_cast<std::uint16_t>(len),
               static_cast<std::uint8_t>(g.wr),
               static_cast<std::uint8_t>(g.wc | (g.lut ? 0x80 : 0))};
  }
}

template <class Value, class Index>
void BccooGpuDevice<Value, Index>::finish() {
  if (chunk > bccoo::kStreamMaxChunk ||
      (kernel == BccooGpuKernel::block && nb > 0x7fffffff) ||  // one block per chunk: grid.x
      !bccoo_gpu::fits_local32(rows, cols))
    kernel = BccooGpuKernel::atomic;
  if (kernel == BccooGpuKernel::stream && nb > 0)
    stream_grid = stream_grid_for<Value, Index>(nb, chunk, blocks);
  if (kernel == BccooGpuKernel::atomic || nb == 0) return;
  const auto n = static_cast<std::size_t>(nb);
  desc = cuda::DeviceBuffer<BccooChunkDesc>(n, "bccoo-gpu chunk descriptors");
  cuda::launch_grid_for("bccoo_gpu_desc_kernel", bccoo_gpu_desc_kernel<Index>, nb, 256, nb, nnz,
                        chunk, static_cast<int>(sizeof(Value)), row.data(), column.data(),
                        formats.data(), offset.data(), desc.data());
  head = cuda::DeviceBuffer<Value>(n, "bccoo-gpu chunk head partials");
  head.fill_bytes(0);  // the fix-up loads head[h] unconditionally (one-row chunks skip it)
  tail = cuda::DeviceBuffer<Value>(n, "bccoo-gpu chunk tail partials");
  tail_row = cuda::DeviceBuffer<std::int64_t>(n, "bccoo-gpu chunk last rows");
  cuda::synchronize_stream();
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
                         ? bccoo_gpu_stream_kernel<Value, 128>
                         : bccoo_gpu_stream_kernel<Value, bccoo_gpu::kStreamMaxThreads>;
      kernel<<<d.stream_grid, threads, 0, cuda::stream()>>>(d.nb, d.desc.data(), d.data.data(),
          d.lut.data(), d.lut_used, d.prefetch, x, y, alpha, beta, d.head.data(), d.tail.data(),
          d.tail_row.data());
      SPMAT_CUDA_CHECK_LAUNCH("bccoo_gpu_stream_kernel");
    } else {
      auto* kernel = threads <= 128
                         ? bccoo_gpu_block_kernel<Value, 128>
                         : bccoo_gpu_block_kernel<Value, bccoo_gpu::kStreamMaxThreads>;
      kernel<<<static_cast<unsigned>(d.nb), threads, 0, cuda::stream()>>>(
          d.desc.data(), d.data.data(), d.lut.data(), d.lut_used, x, y, alpha, beta, d.head.data(),
          d.tail.data(), d.tail_row.data());
      SPMAT_CUDA_CHECK_LAUNCH("bccoo_gpu_block_kernel");
    }
    constexpr int kFixBlock = 128;  // one chunk per thread
    const std::int64_t fix_blocks = (d.nb + kFixBlock - 1) / kFixBlock;
    bccoo_gpu_fixup_kernel<<<static_cast<unsigned>(fix_blocks), kFixBlock, 0, cuda::stream()>>>(
        d.nb, d.rows, d.row.data(), d.head.data(), d.tail.data(), d.tail_row.data(), y, alpha,
        beta);
    SPMAT_CUDA_CHECK_LAUNCH("bccoo_gpu_fixup_kernel");
    return;
  }
  atomic_product<false>(d, x, y, alpha, beta);
}

/// y = alpha*Aᵀ*x + beta*y (x: rows, y: cols). NOT deterministic (atomic scatter).
template <class Value, class Index>
void spmv_t(const BccooGpuDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
            Value beta) {
  atomic_product<true>(d, x, y, alpha, beta);
}

SPMAT_DEFINE_CUDA_IMPL(BccooGpu, BccooGpuDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(BccooGpu, BccooGpuDevice)
#define SPMAT_INSTANTIATE(V, I) template void BccooGpuDevice<V, I>::finish();
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
