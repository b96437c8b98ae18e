// spmat/formats/bccoo/bccoo_device_build.cu — bccoo-gpu built on the GPU from a device CSR.
// SPDX-License-Identifier: MIT
//
// The host builder's steps (BccooGpu::build, bccoo.cpp), each a device pass:
//   1. the value table: the values' bit patterns sorted (CUB radix sort over the bits in which
//      they differ, found by an AND/OR pass; 64-bit patterns that differ in at most 32 bits are
//      sorted as those bits packed into 4-byte keys, which keeps their order), counted per
//      distinct pattern (CUB reduce-by-key;
//      the number of distinct patterns and the largest count downloaded), the patterns stably
//      sorted by decreasing count (CUB radix sort over the bits of the largest count: equal
//      counts keep the ascending pattern order, the host's tie rule; no sort when every count is
//      1, the ascending order then being that order), the first
//      min(256, distinct) of them make the table,
//      unused slots +0; a 256-thread kernel also sorts them by pattern for the lookups;
//   2. per chunk, one warp: first and last row (searches in row_ptr), smallest and largest
//      column, whether every value is in the table → format byte (bccoo::chunk_format, the
//      host's rule), chunk bytes, and a count of the raw chunks with wide column offsets;
//   3. offsets: a CUB scan of the chunk bytes; their total and the wide-raw count downloaded
//      (two scalars), the kernel chosen by the host's rule (bccoo::auto_kernel) unless given;
//   4. encoding, one thread per 8 entries of a chunk (the stream kernel's slices): the thread
//      packs its row offsets, column offsets and table indices or raw values into the aligned
//      8-byte words its slices occupy and writes each word whole, padding bytes (zero)
//      included, so the data array needs no clearing;
//   5. BccooGpuDevice::finish, shared with the upload: kernel fallback, persistent grid, chunk
//      descriptors, scratch.
// The arrays and the plan equal upload(BccooGpu::build(csr)) byte for byte. Every option
// (chunk, kernel, blocks, prefetch) is built on the device: no host fallback.
// Cost: two radix sorts of nnz patterns (the second over the distinct ones only, on the bits
// the largest count needs, with 32-bit counts below 2^32 entries) dominate when the values are
// mostly distinct; the rest is about three passes over the CSR arrays and one over the data. Every
// temporary is scratch memory freed in stream order. Chunks are scanned one warp each: a very
// large `chunk` option (far above the default 1,024) leaves few warps for step 2.
// No update_values: the value encoding of a chunk depends on its values (bccoo.hpp).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/constant_iterator.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <vector>
#include <cuda/std/functional>

#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/bccoo/bccoo_device.hpp"
#include "spmat/formats/ell/ell_device_build.cuh"

namespace spmat {

namespace {

constexpr int kBlock = 256;
constexpr int kE = bccoo::kStreamPerThread;  // entries per thread of the encoding

/// The row holding entry q (row_ptr[r] <= q < row_ptr[r+1]), searched from row lo on
/// (row_ptr[lo] <= q, q < nnz): steps doubling from lo, then a binary search, so that the next
/// row costs two loads and a run of k empty rows O(log k).
template <class Index>
__device__ std::int64_t row_of(const Index* __restrict__ row_ptr, std::int64_t rows,
                               std::int64_t lo, std::int64_t q) {
  std::int64_t hi = lo + 1, step = 1;
  while (hi < rows && static_cast<std::int64_t>(row_ptr[hi]) <= q) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > rows) hi = rows;  // row_ptr[rows] = nnz > q
  while (hi - lo > 1) {      // row_ptr[lo] <= q < row_ptr[hi]
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (static_cast<std::int64_t>(row_ptr[mid]) <= q)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// The position of pattern v among the n sorted table patterns (a lower bound), or -1.
template <class B>
__device__ __forceinline__ int table_position(const B* s_bits, int n, B v) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (s_bits[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && s_bits[lo] == v ? lo : -1;
}

/// The sorted table patterns (and their indices) copied to shared memory by the whole block.
template <class B>
__device__ __forceinline__ void load_table(const B* bits, const std::uint8_t* index, int n,
                                           B* s_bits, std::uint8_t* s_index) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    s_bits[i] = bits[i];
    if (s_index) s_index[i] = index[i];
  }
  __syncthreads();
}

/// The value table from the n most frequent patterns `top` (table order): lut[i] = top[i] for
/// i < n, else +0 (written as bit patterns), and the lookup form, the n patterns sorted with
/// their table index. One block of kLutSize threads; thread i ranks pattern i (all distinct).
template <class B>
__global__ void __launch_bounds__(bccoo::kLutSize)
    table_kernel(const B* __restrict__ top, int n, B* __restrict__ lut_bits,
                 B* __restrict__ sorted_bits, std::uint8_t* __restrict__ sorted_index) {
  __shared__ B s[bccoo::kLutSize];
  const int i = static_cast<int>(threadIdx.x);
  const B mine = i < n ? top[i] : B(0);
  s[i] = mine;
  __syncthreads();
  lut_bits[i] = mine;
  if (i < n) {
    int rank = 0;
    for (int j = 0; j < n; ++j) rank += s[j] < mine ? 1 : 0;
    sorted_bits[rank] = mine;
    sorted_index[rank] = static_cast<std::uint8_t>(i);
  }
}

/// One warp per chunk h: row[h] (its first entry's row), column[h] (its smallest column),
/// format[h] (bccoo::chunk_format), bytes[h] (its size in data) and, for a raw chunk with wide
/// column offsets, one count in *wide_raw (an integer sum: the order does not matter).
template <class Value, class Index>
__global__ void __launch_bounds__(kBlock)
    chunk_stats_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                       const bccoo::Bits<Value>* __restrict__ vals, std::int64_t rows,
                       std::int64_t nnz, std::int64_t chunk, std::int64_t nb,
                       const bccoo::Bits<Value>* __restrict__ table_bits, int table_n,
                       Index* __restrict__ row, Index* __restrict__ column,
                       std::uint8_t* __restrict__ format, std::int64_t* __restrict__ bytes,
                       unsigned long long* __restrict__ wide_raw) {
  using B = bccoo::Bits<Value>;
  __shared__ B s_bits[bccoo::kLutSize];
  load_table<B>(table_bits, nullptr, table_n, s_bits, nullptr);
  const int lane = cuda::lane_id();
  const std::int64_t warps = cuda::grid_thread_count() / cuda::kWarpSize;
  for (std::int64_t h = cuda::global_thread_id() / cuda::kWarpSize; h < nb; h += warps) {
    const std::int64_t p0 = h * chunk, len = min(chunk, nnz - p0), p1 = p0 + len;
    long long cmin = 0x7fffffffffffffffll, cmax = -1;
    bool all_lut = true;
    for (std::int64_t base = p0; base < p1; base += cuda::kWarpSize) {  // warp-uniform
      const std::int64_t q = base + lane;
      if (q < p1) {
        const long long c = col_idx[q];
        cmin = c < cmin ? c : cmin;
        cmax = c > cmax ? c : cmax;
        if (all_lut) all_lut = table_position<B>(s_bits, table_n, vals[q]) >= 0;
      }
      all_lut = __all_sync(cuda::kFullMask, all_lut);  // no lookups once one value misses
    }
    for (int o = cuda::kWarpSize / 2; o > 0; o /= 2) {
      const long long a = __shfl_xor_sync(cuda::kFullMask, cmin, o);
      const long long b = __shfl_xor_sync(cuda::kFullMask, cmax, o);
      cmin = a < cmin ? a : cmin;
      cmax = b > cmax ? b : cmax;
    }
    if (lane == 0) {
      const std::int64_t r0 = row_of(row_ptr, rows, 0, p0), r1 = row_of(row_ptr, rows, r0, p1 - 1);
      const std::uint8_t f = bccoo::chunk_format(all_lut, static_cast<std::uint64_t>(cmax - cmin),
                                                 static_cast<std::uint64_t>(r1 - r0));
      row[h] = static_cast<Index>(r0);
      column[h] = static_cast<Index>(cmin);
      format[h] = f;
      bytes[h] = bccoo::gpu_chunk(f, len, sizeof(Value)).bytes;
      if (bccoo::wide_raw(f)) atomicAdd(wide_raw, 1ull);
    }
  }
}

/// Thread t's entries 0..kE-1 of a sub-array of W-byte fields, packed little-endian into the W
/// aligned 8-byte words its slice occupies (the sub-array starts 8-byte aligned). Only the words
/// holding an entry < n are written: exactly the words of the sub-array padded to 8 bytes, each
/// once, with entries >= n (zero) as the padding.
template <int W>
__device__ __forceinline__ void store_slice(std::uint8_t* sub, std::int64_t t, int n,
                                            const std::uint64_t (&v)[kE]) {
  constexpr int kPerWord = 8 / W;
  auto* words = reinterpret_cast<unsigned long long*>(sub) + t * W;
#pragma unroll
  for (int k = 0; k < W; ++k) {
    if (k * kPerWord < n) {
      unsigned long long word = 0;
#pragma unroll
      for (int j = 0; j < kPerWord; ++j) {
        if constexpr (W == 8)
          word = v[k];
        else
          word |= (v[k * kPerWord + j] & ((1ull << (8 * W)) - 1)) << (8 * W * j);
      }
      words[k] = word;
    }
  }
}
/// Runtime width w ∈ {1, 2, 4, 8} (uniform over the chunk).
__device__ __forceinline__ void store_slice(std::uint8_t* sub, int w, std::int64_t t, int n,
                                            const std::uint64_t (&v)[kE]) {
  switch (w) {
    case 1: store_slice<1>(sub, t, n, v); break;
    case 2: store_slice<2>(sub, t, n, v); break;
    case 4: store_slice<4>(sub, t, n, v); break;
    default: store_slice<8>(sub, t, n, v); break;
  }
}

/// One thread per group of kE entries of a chunk (group t of chunk h: entries 8t .. 8t+7): the
/// row offsets, column offsets and values (table indices or raw) of the group written into the
/// chunk's three sub-arrays.
template <class Value, class Index>
__global__ void __launch_bounds__(kBlock)
    encode_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                  const bccoo::Bits<Value>* __restrict__ vals, std::int64_t rows, std::int64_t nnz,
                  std::int64_t chunk, std::int64_t groups_per_chunk, std::int64_t groups,
                  const bccoo::Bits<Value>* __restrict__ table_bits,
                  const std::uint8_t* __restrict__ table_index_of, int table_n,
                  const Index* __restrict__ row, const Index* __restrict__ column,
                  const std::uint8_t* __restrict__ format, const std::int64_t* __restrict__ offset,
                  std::uint8_t* __restrict__ data) {
  using B = bccoo::Bits<Value>;
  __shared__ B s_bits[bccoo::kLutSize];
  __shared__ std::uint8_t s_index[bccoo::kLutSize];
  load_table<B>(table_bits, table_index_of, table_n, s_bits, s_index);
  for (std::int64_t g = cuda::global_thread_id(); g < groups; g += cuda::grid_thread_count()) {
    const std::int64_t h = g / groups_per_chunk, t = g - h * groups_per_chunk;
    const std::int64_t p0 = h * chunk, len = min(chunk, nnz - p0), e0 = t * kE;
    if (e0 >= len) continue;  // the last chunk's groups past its end
    const int n = static_cast<int>(min(static_cast<std::int64_t>(kE), len - e0));
    const bccoo::GpuChunk geo = bccoo::gpu_chunk(format[h], len, sizeof(Value));
    std::uint8_t* base = data + offset[h];
    const std::int64_t r0 = row[h], c0 = column[h], q0 = p0 + e0;
    std::int64_t r = row_of(row_ptr, rows, r0, q0);
    std::int64_t end = row_ptr[r + 1];
    std::uint64_t ro[kE], co[kE], vv[kE];
#pragma unroll
    for (int i = 0; i < kE; ++i) {
      ro[i] = co[i] = vv[i] = 0;
      if (i < n) {
        const std::int64_t q = q0 + i;
        if (q >= end) {
          r = row_of(row_ptr, rows, r + 1, q);
          end = row_ptr[r + 1];
        }
        ro[i] = static_cast<std::uint64_t>(r - r0);
        co[i] = static_cast<std::uint64_t>(static_cast<std::int64_t>(col_idx[q]) - c0);
        vv[i] = vals[q];
      }
    }
    store_slice(base + geo.row_at, geo.wr, t, n, ro);
    store_slice(base + geo.col_at, geo.wc, t, n, co);
    if (geo.lut) {
#pragma unroll
      for (int i = 0; i < kE; ++i)  // every value of a table chunk is in the table
        vv[i] = i < n ? s_index[table_position<B>(s_bits, table_n, static_cast<B>(vv[i]))] : 0;
      store_slice<1>(base + geo.val_at, t, n, vv);
    } else {
      store_slice<static_cast<int>(sizeof(Value))>(base + geo.val_at, t, n, vv);
    }
  }
}

/// bits[0] &= every pattern, bits[1] |= every pattern (bits starts as {~0, 0}): the bits in
/// which the patterns differ are bits[0] ^ bits[1], the only ones a sort of them must look at.
template <class B>
__global__ void __launch_bounds__(kBlock)
    pattern_bits_kernel(const B* __restrict__ vals, std::int64_t n, unsigned long long* __restrict__ bits) {
  unsigned long long all = ~0ull, any = 0;
  for (std::int64_t q = cuda::global_thread_id(); q < n; q += cuda::grid_thread_count()) {
    all &= vals[q];
    any |= vals[q];
  }
  for (int o = cuda::kWarpSize / 2; o > 0; o /= 2) {
    all &= __shfl_xor_sync(cuda::kFullMask, all, o);
    any |= __shfl_xor_sync(cuda::kFullMask, any, o);
  }
  // Then over the block's warps: one atomic per block, not per warp, on the two words.
  __shared__ unsigned long long part[2][kBlock / 32];
  const int warp = static_cast<int>(threadIdx.x) / 32;
  if (cuda::lane_id() == 0) {
    part[0][warp] = all;
    part[1][warp] = any;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < static_cast<int>(blockDim.x) / 32; ++w) {
      all &= part[0][w];
      any |= part[1][w];
    }
    if (all != ~0ull) atomicAnd(&bits[0], all);
    if (any) atomicOr(&bits[1], any);
  }
}

/// The bits in which the patterns differ, as runs of adjacent bits (at most 32 bits in all):
/// a pattern's differing bits packed into 32 bits keep the patterns' order (the other bits are
/// the same in all of them), so the sort moves 4-byte keys over fewer passes.
struct PackedBits {
  int runs = 0;
  int shift[32] = {}, width[32] = {};
};

PackedBits packed_bits(unsigned long long differ) {
  PackedBits p;
  for (int b = 0; b < 64;) {
    if (!((differ >> b) & 1)) {
      ++b;
      continue;
    }
    int w = 0;
    while (b + w < 64 && ((differ >> (b + w)) & 1)) ++w;
    p.shift[p.runs] = b;
    p.width[p.runs] = w;
    ++p.runs;
    b += w;
  }
  return p;
}

__device__ __forceinline__ std::uint32_t pack_bits(unsigned long long x, const PackedBits& p) {
  std::uint32_t out = 0;
  int at = 0;
  for (int r = 0; r < p.runs; ++r) {
    out |= static_cast<std::uint32_t>((x >> p.shift[r]) & ((1ull << p.width[r]) - 1)) << at;
    at += p.width[r];
  }
  return out;
}

__device__ __forceinline__ unsigned long long unpack_bits(std::uint32_t v, const PackedBits& p,
                                                          unsigned long long same) {
  unsigned long long out = same;
  int at = 0;
  for (int r = 0; r < p.runs; ++r) {
    out |= ((static_cast<unsigned long long>(v) >> at) & ((1ull << p.width[r]) - 1)) << p.shift[r];
    at += p.width[r];
  }
  return out;
}

template <class B>
__global__ void pack_kernel(const B* __restrict__ vals, std::int64_t n, PackedBits p, std::uint32_t* __restrict__ out) {
  for (std::int64_t q = cuda::global_thread_id(); q < n; q += cuda::grid_thread_count()) out[q] = pack_bits(vals[q], p);
}

/// The first `n` packed patterns back to patterns (the value table's candidates).
template <class B>
__global__ void unpack_kernel(const std::uint32_t* __restrict__ packed, int n, PackedBits p, unsigned long long same,
                              B* __restrict__ out) {
  const int i = static_cast<int>(threadIdx.x);
  if (i < n) out[i] = static_cast<B>(unpack_bits(packed[i], p, same));
}

/// out[0] = *runs, out[1] = the largest of counts[0 .. *runs): sizes the rank sort (its key
/// bits) in the same download as the number of distinct patterns. out starts at zero.
template <class Count>
__global__ void __launch_bounds__(kBlock)
    count_range_kernel(const Count* __restrict__ counts, const std::int64_t* __restrict__ runs,
                       unsigned long long* __restrict__ out) {
  const std::int64_t n = *runs;
  unsigned long long most = 0;
  for (std::int64_t q = cuda::global_thread_id(); q < n; q += cuda::grid_thread_count())
    most = max(most, static_cast<unsigned long long>(counts[q]));
  for (int o = cuda::kWarpSize / 2; o > 0; o /= 2) most = max(most, __shfl_xor_sync(cuda::kFullMask, most, o));
  __shared__ unsigned long long part[kBlock / 32];
  if (cuda::lane_id() == 0) part[threadIdx.x / 32] = most;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < static_cast<int>(blockDim.x) / 32; ++w) most = max(most, part[w]);
    if (most) atomicMax(&out[1], most);
  }
  if (cuda::global_thread_id() == 0) out[0] = static_cast<unsigned long long>(n);
}

/// The lookup form of the value table: its patterns sorted, with their table indices (build
/// temporaries: scratch, freed in stream order after the kernels that read them).
template <class B>
struct ValueTable {
  cuda::ScratchBuffer<B> bits;
  cuda::ScratchBuffer<std::uint8_t> index;
  int used = 0;  ///< min(256, distinct patterns)
};

/// The distinct keys among keys[0 .. nnz) by decreasing count, equal counts in ascending key
/// order (the host's tie rule), into `out`; returns how many of them make the table
/// (min(256, distinct)). The sort looks at bits [begin_bit, end_bit) only. One wait: the number
/// of distinct keys and the largest count, which size the rank sort.
template <class Count, class K>
int ranked_keys(const K* keys, std::int64_t nnz, int begin_bit, int end_bit, cuda::ScratchBuffer<K>& out) {
  using Workspace = cuda::ScratchBuffer<std::byte>;
  const auto n = static_cast<std::size_t>(nnz);
  // Distinct keys and their counts, in ascending key order.
  cuda::ScratchBuffer<K> unique(n, "bccoo-gpu build: distinct values");
  cuda::ScratchBuffer<Count> counts(n, "bccoo-gpu build: value counts");
  std::int64_t runs = 0;
  unsigned long long most = 0;  // the largest count
  {
    cuda::ScratchBuffer<K> sorted(n, "bccoo-gpu build: sorted values");
    cuda::ScratchBuffer<std::int64_t> d_runs(1, "bccoo-gpu build: distinct value count");
    const auto sort_tmp = cuda::run_cub<Workspace>("bccoo-gpu build: value sort workspace",
                                                   [&](void* temp, std::size_t& bytes) {
      return cub::DeviceRadixSort::SortKeys(temp, bytes, keys, sorted.data(), nnz, begin_bit, end_bit,
                                            cuda::stream());
    });
    const auto count_tmp = cuda::run_cub<Workspace>("bccoo-gpu build: value count workspace",
                                                    [&](void* temp, std::size_t& bytes) {
      return cub::DeviceReduce::ReduceByKey(temp, bytes, sorted.data(), unique.data(),
                                            thrust::constant_iterator<Count>(1), counts.data(),
                                            d_runs.data(), ::cuda::std::plus<>{}, nnz,
                                            cuda::stream());
    });
    cuda::ScratchBuffer<unsigned long long> sizes(2, "bccoo-gpu build: distinct values and largest count");
    sizes.fill_bytes(0);
    cuda::launch_grid_for("count_range_kernel", count_range_kernel<Count>, nnz, kBlock, counts.data(),
                          d_runs.data(), sizes.data());
    const std::vector<unsigned long long> h = sizes.download();  // they size the rank sort
    runs = static_cast<std::int64_t>(h[0]);
    most = h[1];
  }
  const int used = static_cast<int>(runs < bccoo::kLutSize ? runs : bccoo::kLutSize);
  if (most == 1) {  // every count 1: the order by count is the ascending key order
    out = std::move(unique);
    return used;
  }
  // By decreasing count; the sort is stable, so equal counts stay in ascending key order.
  const auto nr = static_cast<std::size_t>(runs);
  cuda::ScratchBuffer<Count> counts_sorted(nr, "bccoo-gpu build: sorted value counts");
  out = cuda::ScratchBuffer<K>(nr, "bccoo-gpu build: values by count");
  const int count_bits = std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(most))));
  const auto rank_tmp = cuda::run_cub<Workspace>("bccoo-gpu build: value rank workspace",
                                                 [&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortPairsDescending(temp, bytes, counts.data(), counts_sorted.data(),
                                                     unique.data(), out.data(), runs, 0, count_bits,
                                                     cuda::stream());
  });
  return used;
}

/// The value table of the nnz values (step 1 of the file comment) written into `lut` (256
/// values), and its lookup form, queued on stream(). `Count`: the per-pattern counts, 32 bits
/// where nnz fits them (the rank sort then moves 12 bytes per distinct pattern, not 16). Two
/// waits: the bits in which the patterns differ, then the number of distinct patterns.
template <class Count, class Value>
ValueTable<bccoo::Bits<Value>> value_table(const Value* values, std::int64_t nnz, Value* lut) {
  using B = bccoo::Bits<Value>;
  ValueTable<B> t;
  t.bits = cuda::ScratchBuffer<B>(bccoo::kLutSize, "bccoo-gpu build: table patterns");
  t.index = cuda::ScratchBuffer<std::uint8_t>(bccoo::kLutSize, "bccoo-gpu build: table indices");
  if (nnz == 0) {
    cuda::fill_bytes_async(lut, 0, bccoo::kLutSize * sizeof(Value));
    return t;
  }
  // The sort looks at the bits in which the patterns differ only: values of a few binades, or
  // with short mantissas (integers, multiples of a power of two), need fewer radix passes.
  const B* patterns = reinterpret_cast<const B*>(values);
  cuda::ScratchBuffer<unsigned long long> range(2, "bccoo-gpu build: pattern bits");
  const unsigned long long start[2] = {~0ull, 0ull};
  cuda::copy_to_device(range.data(), start, 2);
  cuda::launch_grid_for("pattern_bits_kernel", pattern_bits_kernel<B>, nnz, kBlock, patterns, nnz, range.data());
  const std::vector<unsigned long long> r = range.download();
  const auto differ = static_cast<B>(r[0] ^ r[1]);
  cuda::ScratchBuffer<B> ranked;
  if (sizeof(B) > 4 && std::popcount(differ) <= 32) {
    // 64-bit patterns that differ in at most 32 bits (values of a few binades with short
    // mantissas, such as uniform 24-bit draws: the sign, a few exponent bits, at most 24
    // mantissa bits): their differing bits packed into 4-byte keys, sorted, then the table's
    // candidates unpacked.
    const PackedBits pb = packed_bits(differ);
    cuda::ScratchBuffer<std::uint32_t> packed(static_cast<std::size_t>(nnz), "bccoo-gpu build: packed values");
    cuda::launch_grid_for("pack_kernel", pack_kernel<B>, nnz, kBlock, patterns, nnz, pb, packed.data());
    cuda::ScratchBuffer<std::uint32_t> ranked_packed;
    t.used = ranked_keys<Count>(packed.data(), nnz, 0, std::max(1, std::popcount(differ)), ranked_packed);
    ranked = cuda::ScratchBuffer<B>(bccoo::kLutSize, "bccoo-gpu build: table candidates");
    cuda::launch("unpack_kernel", unpack_kernel<B>, 1, bccoo::kLutSize, ranked_packed.data(), t.used, pb, r[0],
                 ranked.data());
  } else {
    const int begin_bit = differ ? std::countr_zero(differ) : 0;
    const int end_bit = differ ? static_cast<int>(8 * sizeof(B)) - std::countl_zero(differ) : 1;
    t.used = ranked_keys<Count>(patterns, nnz, begin_bit, end_bit, ranked);
  }
  cuda::launch("table_kernel", table_kernel<B>, 1, bccoo::kLutSize, ranked.data(), t.used,
               reinterpret_cast<B*>(lut), t.bits.data(), t.index.data());
  return t;
}

/// The arrays and the plan of upload(BccooGpu::build(csr)) built on the GPU from a validated
/// device CSR, the options parsed as BccooGpu::build parses them.
template <class Value, class Index>
BccooGpuDevice<Value, Index> build_on_device(const DeviceCsrView<Value, Index>& a,
                                             const FormatOptions& o) {
  using B = bccoo::Bits<Value>;
  const auto opt = parse_options<BccooGpuOptions>(o);
  BccooGpuDevice<Value, Index> d;
  cuda::copy_shape(d, a);
  d.chunk = opt.chunk;
  d.blocks = opt.blocks;
  d.prefetch = static_cast<int>(opt.prefetch);
  const std::int64_t nnz = a.nnz, b = d.chunk;
  d.nb = nnz == 0 ? 0 : (nnz - 1) / b + 1;
  const auto nb = static_cast<std::size_t>(d.nb);
  d.lut = cuda::DeviceBuffer<Value>(bccoo::kLutSize, "bccoo-gpu value table");
  d.row = cuda::DeviceBuffer<Index>(nb, "bccoo-gpu chunk rows");
  d.column = cuda::DeviceBuffer<Index>(nb, "bccoo-gpu chunk columns");
  d.formats = cuda::DeviceBuffer<std::uint8_t>(nb, "bccoo-gpu chunk formats");
  d.offset = cuda::DeviceBuffer<std::int64_t>(nb + 1, "bccoo-gpu chunk offsets");
  const ValueTable<B> table =
      nnz <= static_cast<std::int64_t>(UINT32_MAX)
          ? value_table<std::uint32_t>(a.values, nnz, d.lut.data())
          : value_table<std::uint64_t>(a.values, nnz, d.lut.data());
  d.lut_used = table.used;
  std::uint64_t wide_raw = 0;
  std::int64_t total = 0;
  const B* vals = reinterpret_cast<const B*>(a.values);
  if (d.nb > 0) {
    cuda::ScratchBuffer<std::int64_t> bytes(nb, "bccoo-gpu build: chunk bytes");
    // stats[0]: the wide raw chunks (counted by the kernel); stats[1]: the data bytes (the last
    // offset, copied after the scan): both in one download.
    cuda::ScratchBuffer<unsigned long long> stats(2, "bccoo-gpu build: chunk totals");
    stats.fill_bytes(0);
    cuda::launch_grid_for("chunk_stats_kernel", chunk_stats_kernel<Value, Index>,
                          d.nb * cuda::kWarpSize, kBlock, a.row_ptr, a.col_idx, vals, a.rows, nnz,
                          b, d.nb, table.bits.data(), table.used, d.row.data(), d.column.data(),
                          d.formats.data(), bytes.data(), stats.data());
    ell_build::offsets(bytes.data(), d.nb, d.offset.data());
    static_assert(sizeof(std::int64_t) == sizeof(unsigned long long));
    cuda::copy_device(stats.data() + 1,
                      reinterpret_cast<const unsigned long long*>(d.offset.data() + d.nb), 1);
    const std::vector<unsigned long long> h = stats.download();
    wide_raw = h[0];
    total = static_cast<std::int64_t>(h[1]);
  } else {
    cuda::fill_bytes_async(d.offset.data(), 0, sizeof(std::int64_t));
  }
  d.kernel = opt.kernel ? *opt.kernel : bccoo::auto_kernel(wide_raw, static_cast<std::uint64_t>(d.nb));
  d.data = cuda::DeviceBuffer<std::uint8_t>(static_cast<std::size_t>(total), "bccoo-gpu chunk data");
  if (d.nb > 0) {
    const std::int64_t per_chunk = ((b < nnz ? b : nnz) + kE - 1) / kE;
    const std::int64_t groups = per_chunk * d.nb;
    cuda::launch_grid_for("encode_kernel", encode_kernel<Value, Index>, groups, kBlock, a.row_ptr,
                          a.col_idx, vals, a.rows, nnz, b, per_chunk, groups, table.bits.data(),
                          table.index.data(), table.used, d.row.data(), d.column.data(),
                          d.formats.data(), d.offset.data(), d.data.data());
  }
  d.finish();  // the table is scratch: freed after the encoding kernel, no wait here
  return d;
}

}  // namespace

SPMAT_DEFINE_DEVICE_BUILDER(BccooGpu, BccooGpuDevice)
SPMAT_INSTANTIATE_DEVICE_BUILDER_WITHOUT_UPDATES(BccooGpu)

}  // namespace spmat
