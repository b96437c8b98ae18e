// spmat/formats/hisparse/hisparse_build_cuda.cu — GPU construction of HiSparse (option
// build=gpu): one radix sort of interleaved base-d digit keys, per-level node and entry
// boundaries by adjacent difference + scan, then the device serializer (hisparse_add_cuda.cu).
// The pool is byte-identical to the CPU build's.
// SPDX-License-Identifier: MIT
//
// Steps (host launches; CUDA 13 has no device-side synchronize):
//   rows    one thread per entry: its row by binary search in row_ptr
//   keys    one thread per entry: the build key (steps::build_key), value = entry index
//   sort    CUB DeviceRadixSort::SortPairs over 2·log2d·depth bits (≤ 64: else UnsupportedError)
//   gather  row, column and value of every sorted entry
//   per level l (top-down): node heads (coordinates >> log2d·(depth − l) change) and entry heads
//           (>> log2d·(depth − 1 − l) change), two exclusive scans, a fill kernel: begin, block
//           coordinates, local coordinates (and values at the leaves). The entries of level l are
//           the nodes of level l + 1, so children are numbered in entry order, as on the CPU.
//   serialize_device: the CPU serializer's two passes on the device; the pool is downloaded
//           into the host struct (the CUDA impl then uploads it with its SpMV plans, as for a
//           CPU build, so setup_ms of build=cpu and build=gpu differ only in the construction).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <string>

#include "spmat/cuda/check.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/hisparse/hisparse_add_steps.hpp"
#include "spmat/formats/hisparse/hisparse_device_proto.cuh"
#include "spmat/formats/hisparse/hisparse_device_util.cuh"

namespace spmat {

namespace {

namespace st = hisparse::steps;
constexpr int kBlock = 256;

template <class Index>
__global__ void key_kernel(const Index* row_ptr, std::int64_t rows, const Index* col_idx,
                           std::int64_t nnz, int log2d, int depth, std::uint64_t* keys,
                           std::int64_t* idx) {
  SPMAT_GRID_LOOP(k, nnz) {
    std::int64_t lo = 0, hi = rows;  // largest r with row_ptr[r] <= k
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<std::int64_t>(row_ptr[mid]) <= k) lo = mid;
      else hi = mid;
    }
    keys[k] = st::build_key(lo, static_cast<std::int64_t>(col_idx[k]), log2d, depth);
    idx[k] = k;
  }
}

template <class Value, class Index>
__global__ void gather_kernel(const std::int64_t* perm, const std::uint64_t* skeys,
                              const Value* values, std::int64_t nnz, int log2d, int depth,
                              std::int64_t* r, std::int64_t* c, Value* v) {
  SPMAT_GRID_LOOP(i, nnz) {
    // Decode the key back into coordinates (cheaper than another binary search).
    const std::uint64_t key = skeys[i];
    const std::uint64_t mask = (std::uint64_t{1} << log2d) - 1;
    std::int64_t rr = 0, cc = 0;
    for (int l = 0; l < depth; ++l) {
      const int sh = 2 * log2d * (depth - 1 - l);
      const std::uint64_t pair = key >> sh;
      rr = (rr << log2d) | static_cast<std::int64_t>((pair >> log2d) & mask);
      cc = (cc << log2d) | static_cast<std::int64_t>(pair & mask);
    }
    r[i] = rr;
    c[i] = cc;
    v[i] = values[perm[i]];
  }
}

__global__ void heads_kernel(const std::int64_t* r, const std::int64_t* c, std::int64_t nnz,
                             int node_shift, int entry_shift, std::int64_t* nh,
                             std::int64_t* eh) {
  SPMAT_GRID_LOOP(i, nnz + 1) {
    if (i == nnz) {
      nh[i] = 0;
      eh[i] = 0;
    } else if (i == 0) {
      nh[i] = 1;
      eh[i] = 1;
    } else {
      nh[i] = st::differs(r[i - 1], c[i - 1], r[i], c[i], node_shift) ? 1 : 0;
      eh[i] = st::differs(r[i - 1], c[i - 1], r[i], c[i], entry_shift) ? 1 : 0;
    }
  }
}

template <class Value>
__global__ void level_fill_kernel(const std::int64_t* r, const std::int64_t* c,
                                  const Value* v, std::int64_t nnz, const std::int64_t* nh,
                                  const std::int64_t* npos, const std::int64_t* eh,
                                  const std::int64_t* epos, int log2d, int node_shift,
                                  int entry_shift, std::int64_t* begin, std::int64_t* brow,
                                  std::int64_t* bcol, std::uint8_t* lr, std::uint8_t* lc,
                                  Value* vals) {
  const std::int64_t mask = (std::int64_t{1} << log2d) - 1;
  SPMAT_GRID_LOOP(i, nnz) {
    if (!eh[i]) continue;
    const std::int64_t e = epos[i];
    lr[e] = static_cast<std::uint8_t>((r[i] >> entry_shift) & mask);
    lc[e] = static_cast<std::uint8_t>((c[i] >> entry_shift) & mask);
    if (vals) vals[e] = v[i];
    if (nh[i]) {
      const std::int64_t n = npos[i];
      begin[n] = e;
      brow[n] = r[i] >> node_shift;
      bcol[n] = c[i] >> node_shift;
    }
  }
}

}  // namespace

namespace hisparse {

template <class Value, class Index>
HiSparse<Value, Index> build_on_gpu(const Csr<Value, Index>& a, int log2d, int depth,
                                    bool allow_dense) {
  if (2 * log2d * depth > 64)
    throw UnsupportedError("hisparse build=gpu: " + std::to_string(a.rows) + "x" +
                           std::to_string(a.cols) + " with d = " + std::to_string(1 << log2d) +
                           " needs " + std::to_string(2 * log2d * depth) +
                           " key bits, the GPU build sorts 64-bit keys; use build=cpu");
  using I64 = cuda::DeviceBuffer<std::int64_t>;
  hisparse_gpu::DevProto<Value> t;
  t.rows = a.rows;
  t.cols = a.cols;
  t.log2d = log2d;
  t.depth = depth;
  const std::int64_t nnz = a.nnz();
  if (nnz > 0) {
    cuda::DeviceBuffer<Index> row_ptr(a.row_ptr, "hisparse build row_ptr");
    cuda::DeviceBuffer<Index> col_idx(a.col_idx, "hisparse build col_idx");
    cuda::DeviceBuffer<Value> values(a.values, "hisparse build values");
    cuda::DeviceBuffer<std::uint64_t> keys(static_cast<std::size_t>(nnz), "hisparse build keys");
    cuda::DeviceBuffer<std::uint64_t> skeys(static_cast<std::size_t>(nnz), "hisparse build keys");
    I64 idx(static_cast<std::size_t>(nnz), "hisparse build idx");
    I64 perm(static_cast<std::size_t>(nnz), "hisparse build idx");
    const unsigned grid = cuda::grid_for(nnz + 1, kBlock);
    key_kernel<Index><<<grid, kBlock, 0, cuda::stream()>>>(row_ptr.data(), a.rows, col_idx.data(),
        nnz, log2d, depth, keys.data(), idx.data());
    SPMAT_CUDA_CHECK_LAUNCH("hisparse build key_kernel");
    {
      const int end_bit = 2 * log2d * depth;
      const auto tmp = cuda::run_cub<cuda::DeviceBuffer<unsigned char>>(
          "hisparse sort temp", [&](void* temp, std::size_t& bytes) {
            return cub::DeviceRadixSort::SortPairs(temp, bytes, keys.data(), skeys.data(),
                                                   idx.data(), perm.data(), nnz, 0, end_bit,
                                                   cuda::stream());
          });
    }
    I64 r(static_cast<std::size_t>(nnz), "hisparse build rows");
    I64 c(static_cast<std::size_t>(nnz), "hisparse build cols");
    cuda::DeviceBuffer<Value> v(static_cast<std::size_t>(nnz), "hisparse build values");
    gather_kernel<Value, Index><<<grid, kBlock, 0, cuda::stream()>>>(perm.data(), skeys.data(),
        values.data(), nnz, log2d, depth, r.data(), c.data(), v.data());
    SPMAT_CUDA_CHECK_LAUNCH("hisparse build gather_kernel");
    I64 nh(static_cast<std::size_t>(nnz + 1), "hisparse build heads");
    I64 eh(static_cast<std::size_t>(nnz + 1), "hisparse build heads");
    I64 npos(static_cast<std::size_t>(nnz + 1), "hisparse build positions");
    I64 epos(static_cast<std::size_t>(nnz + 1), "hisparse build positions");
    for (int l = 0; l < depth; ++l) {
      const bool leaf = l + 1 == depth;
      const int node_shift = log2d * (depth - l), entry_shift = log2d * (depth - 1 - l);
      heads_kernel<<<grid, kBlock, 0, cuda::stream()>>>(r.data(), c.data(), nnz, node_shift,
          entry_shift, nh.data(), eh.data());
      SPMAT_CUDA_CHECK_LAUNCH("hisparse build heads_kernel");
      hisparse_gpu::exclusive_scan<cuda::DeviceBuffer<unsigned char>>(
          nh.data(), npos.data(), nnz + 1, "hisparse scan temp");
      hisparse_gpu::exclusive_scan<cuda::DeviceBuffer<unsigned char>>(
          eh.data(), epos.data(), nnz + 1, "hisparse scan temp");
      hisparse_gpu::DevLevel lv;
      lv.nodes = hisparse_gpu::read_back(npos.data() + nnz);
      lv.entries = hisparse_gpu::read_back(epos.data() + nnz);
      lv.begin = hisparse_gpu::PoolBuffer<std::int64_t>(static_cast<std::size_t>(lv.nodes + 1), "hisparse proto begin");
      lv.brow = hisparse_gpu::PoolBuffer<std::int64_t>(static_cast<std::size_t>(lv.nodes), "hisparse proto brow");
      lv.bcol = hisparse_gpu::PoolBuffer<std::int64_t>(static_cast<std::size_t>(lv.nodes), "hisparse proto bcol");
      lv.lr = hisparse_gpu::PoolBuffer<std::uint8_t>(static_cast<std::size_t>(lv.entries), "hisparse proto lr");
      lv.lc = hisparse_gpu::PoolBuffer<std::uint8_t>(static_cast<std::size_t>(lv.entries), "hisparse proto lc");
      if (leaf) t.values = hisparse_gpu::PoolBuffer<Value>(static_cast<std::size_t>(lv.entries), "hisparse proto values");
      // begin[nodes] = entries
      cuda::copy_to_device(lv.begin.data() + lv.nodes, &lv.entries, 1);
      level_fill_kernel<Value><<<grid, kBlock, 0, cuda::stream()>>>(
          r.data(), c.data(), v.data(), nnz, nh.data(), npos.data(), eh.data(), epos.data(),
          log2d, node_shift, entry_shift, lv.begin.data(), lv.brow.data(), lv.bcol.data(),
          lv.lr.data(), lv.lc.data(), leaf ? t.values.data() : nullptr);
      SPMAT_CUDA_CHECK_LAUNCH("hisparse build level_fill_kernel");
      t.levels.push_back(std::move(lv));
    }
  }
  hisparse_gpu::DevPool p = hisparse_gpu::serialize_device(t, allow_dense);
  HiSparse<Value, Index> s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = p.nnz;
  s.log2d = log2d;
  s.depth = depth;
  s.allow_dense = allow_dense;
  s.root = p.root;
  s.pool = p.pool.download();
  s.levels = std::move(p.stats);
  return s;
}

#define SPMAT_INSTANTIATE(V, I) \
  template HiSparse<V, I> build_on_gpu(const Csr<V, I>&, int, int, bool);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace hisparse
}  // namespace spmat
