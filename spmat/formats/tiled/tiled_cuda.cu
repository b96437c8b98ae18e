// spmat/formats/tiled/tiled_cuda.cu — CUDA tiled SpMM (register tile R, B staged in shared memory
// per panel and stage, 16-bit S-ELL), row- and column-major B/C; spmv = spmm with k = 1.
// SPDX-License-Identifier: MIT
//
// Two kernels, chosen by the build option `kernel`:
//   rows (default): tiled_rows_kernel — a group of G lanes (G = 1..32, a power of two) owns one
//     work row; lane `sub` of the group owns the columns k0 + (v·G + sub)·V .. +V (V = 4 fp32 /
//     2 fp64 with 16-byte float4/double2 loads when k % V == 0 and B, C are 16-byte aligned; V = 1
//     otherwise), v < NV. The group loads G nonzeros (column id, value) coalesced, broadcasts them
//     with __shfl_sync, and gathers the B rows in batches of B (template: 4 = full batches of 4
//     then a dependent tail, 8 = predicated batches of min(G, 8); option batch, auto by the mean
//     work-row length); C is written once, vectorized, plain or streaming (option cstore).
//     K is cut into tiles of kt columns (grid.y, the model's choice per call): all row blocks of tile 0 run before tile 1, so a tile's slice of B
//     (touched rows × kt) stays in L2 — the "register tile R" of the paper, applied to L2.
//     Schedule (option schedule): grid — group w of the launch owns work row w; stride (fp32 at
//     a warp a row only: tiled_rows_stride_kernel) — one resident grid whose groups walk rows
//     w, w + S, …, the next row's ids and bounds in flight during this row's gathers.
//     Column-major B/C: tiled_rows_col_kernel, one thread per work row (lanes along rows, so the
//     C stores are coalesced), R = min(16, pow2 >= k) columns in registers per grid.y tile.
//   sell: tiled_spmm_kernel — the paper's design, below.
//
// Kernel contract (tiled_rows_kernel / tiled_rows_col_kernel): wr_begin/wr_end work_rows
// entries, col/val nnz (device copies of TiledStorage); b cols×k, c rows×k in `layout`,
// caller-allocated; partial work_rows×k row-major (segmented only). Empty work rows give
// alpha·0 + beta·C; explicit zeros are multiplied (NaN/Inf propagate like the reference); beta
// == 0 never reads C. Deterministic (no atomics; segments summed in column order by
// tiled_reduce_kernel). Bytes: A once per K-tile + the B rows gathered + C (+ 2·partials).
//
// Kernel contract (tiled_spmm_kernel): grid = (panels, tiles of R dense columns), block =
// panel_rows threads, one work row per thread. Arrays as in TiledStorage (device copies):
// panel_stage_ptr panels+1, stage_map_ptr stages+1, map Σ D_p, slab_ptr stages·wpp+1 (64-bit
// offsets), ell_idx/ell_val slab_ptr.back(); b cols×k, c rows×k in `layout`, caller-allocated.
// For each stage the block copies the R-column slab of B rows map[stage] into shared memory
// (sh[r][slot]), then each thread walks its S-ELL slab (coalesced over the warp) and
// accumulates R outputs in registers. Padding slots (0xFFFF) are skipped, never multiplied.
// Columns past k are predicated (tail tile). Output: direct (identity order), through out_row
// (reordered, one work row per output row) or, when rows are segmented, into a W×k partial
// buffer summed per output row in column order by tiled_reduce_kernel: deterministic.
// beta == 0 never reads C. Bytes per tile: the S-ELL stream + Σ D_p·R staged values + C.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/tiled/tiled.hpp"
#include "spmat/formats/tiled/tiled_device.hpp"

namespace spmat {


template <class Value, class Index>
TiledStorage<Value, Index> TiledDevice<Value, Index>::download() const {
  TiledStorage<Value, Index> h;
  cuda::copy_shape(h, *this);
  h.r = r;
  h.panel_rows = panel_rows;
  h.stage_cap = stage_cap;
  h.smem_bytes = smem_bytes;
  h.segsize = segsize;
  h.reordered = reordered;
  h.sell = sell;
  h.kt = kt;
  h.panel_per_sm = panel_per_sm;
  h.device = device;
  h.batch = batch_auto ? 0 : batch;  // the options as given: auto stays auto
  h.cstore = cstore_auto ? 0 : (stream ? 2 : 1);
  h.schedule = schedule;
  h.panel_r = panel_r;
  h.panel_forced = panel_forced;
  h.panel_reuse = panel_reuse;
  h.reuse = reuse;
  // The host storage holds the panel arrays; a matrix whose arrays wait builds them for the
  // download and lets them wait again (to_csr does not change what it holds).
  const bool pending = panels_pending;
  ensure_panels(*this);
  cuda::download_arrays(tiled_gpu::device_arrays(*this), tiled_gpu::host_arrays(h));
  if (pending) {
    pn_col_ptr = {};
    pn_val_ptr = {};
    pn_col = {};
    pn_mask = {};
    pn_val = {};
    panels_pending = true;
  }
  return h;
}

template <class Value, class Index>
std::vector<StoredArray> stored_arrays(const TiledDevice<Value, Index>& d) {
  std::vector<StoredArray> out;
  cuda::append_stored(out, tiled_gpu::device_arrays(d));
  cuda::append_stored(out, std::tuple{cuda::Field{"dest", d.dest}, cuda::Field{"long_row", d.long_row},
                                      cuda::Field{"long_ptr", d.long_ptr}});
  using tiled_gpu::bits_of;
  const auto& p = d.reuse;
  const std::int64_t device = d.device == "h100" ? 0 : d.device == "h200" ? 1 : 2;
  std::vector<std::int64_t> sc{d.rows, d.cols, d.nnz, d.work_rows, d.panels, d.panel_rows, d.stage_cap,
                               d.smem_bytes, d.r, d.segmented, d.permuted, d.sell, d.kt, d.batch, d.stream,
                               d.batch_auto, d.cstore_auto, device, d.mapped, d.long_rows, d.long_slots, d.panel_r, d.panel_forced,
                               d.pn_panels, bits_of(d.panel_reuse), d.segsize, d.reordered, d.panel_per_sm, d.schedule};
  out.push_back(cuda::stored_scalars(
      "rows, cols, nnz, work_rows, panels, panel_rows, stage_cap, smem_bytes, r, segmented, permuted, "
      "sell, kt, batch, stream, batch_auto, cstore_auto, device, mapped, long_rows, long_slots, panel_r, panel_forced, pn_panels, "
      "panel_reuse, segsize, reordered, panel_per_sm, schedule", sc));
  std::vector<std::int64_t> rp{p.rows, p.cols, p.nnz, p.work_rows, p.panel_rows, p.panels, p.max_work_row,
                               bits_of(p.n_touched), bits_of(p.sum_d), bits_of(p.cold), p.split_rows,
                               p.split_work_rows};
  for (double h : p.hist) rp.push_back(bits_of(h));
  for (double w : p.warp_nnz) rp.push_back(bits_of(w));
  rp.push_back(bits_of(p.sum_sq));
  out.push_back(cuda::stored_scalars(
      "reuse: rows, cols, nnz, work_rows, panel_rows, panels, max_work_row, n_touched, sum_d, cold, "
      "split_rows, split_work_rows, hist[48], warp_nnz[6], sum_sq", rp));
  return out;
}

template <class Value, class Index>
void upload_values(TiledDevice<Value, Index>& d, const TiledStorage<Value, Index>& h) {
  cuda::upload_value_arrays<Value>(tiled_gpu::without_panels(tiled_gpu::device_arrays(d)),
                                   tiled_gpu::without_panels(tiled_gpu::host_arrays(h)));
  if (!d.panels_pending && d.pn_val.size() > 0) d.pn_val.upload(h.pn_val);  // built: refreshed
}

namespace tiled_gpu {
enum Store : int { direct = 0, permuted = 1, partial = 2, mapped = 3 };
}

template <int R, class Value, class Index>
__global__ void tiled_spmm_kernel(std::int64_t work_rows, std::int64_t rows, std::int64_t cols,
                                  std::int64_t k, std::int64_t tile0, std::int64_t stage_cap,
                                  int wpp, const std::int64_t* __restrict__ panel_stage_ptr,
                                  const std::int64_t* __restrict__ stage_map_ptr,
                                  const Index* __restrict__ map,
                                  const std::int64_t* __restrict__ slab_ptr,
                                  const std::uint16_t* __restrict__ ell_idx,
                                  const Value* __restrict__ ell_val,
                                  const Index* __restrict__ out_row, const Value* __restrict__ b,
                                  Value* __restrict__ c, bool row_major, int store,
                                  Value* __restrict__ partial, Value alpha, Value beta) {
  extern __shared__ unsigned char tiled_smem[];
  Value* sh = reinterpret_cast<Value*>(tiled_smem);
  const std::int64_t p = blockIdx.x;
  const int tid = threadIdx.x, nthreads = blockDim.x, warp = tid / 32, lane = tid % 32;
  const std::int64_t k0 = (tile0 + blockIdx.y) * R;
  Value acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = Value(0);
  for (std::int64_t s = panel_stage_ptr[p]; s < panel_stage_ptr[p + 1]; ++s) {
    const std::int64_t m0 = stage_map_ptr[s], len = stage_map_ptr[s + 1] - m0;
    for (std::int64_t e = tid; e < len * R; e += nthreads) {
      const std::int64_t n = row_major ? e / R : e % len, rr = row_major ? e % R : e / len;
      const std::int64_t col = map[m0 + n], kk = k0 + rr;
      sh[rr * stage_cap + n] = kk < k ? (row_major ? b[col * k + kk] : b[kk * cols + col]) : Value(0);
    }
    __syncthreads();
    const std::int64_t sb = slab_ptr[s * wpp + warp], se = slab_ptr[s * wpp + warp + 1];
    for (std::int64_t q = sb + lane; q < se; q += 32) {
      const std::uint16_t idx = ell_idx[q];
      if (idx != 0xFFFF) {
        const Value v = ell_val[q];
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] += v * sh[r * stage_cap + idx];
      }
    }
    __syncthreads();
  }
  const std::int64_t w = p * nthreads + tid;
  if (w >= work_rows) return;
  if (store == tiled_gpu::partial) {
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (k0 + r < k) partial[w * k + k0 + r] = acc[r];
    return;
  }
  const std::int64_t row = store == tiled_gpu::permuted ? static_cast<std::int64_t>(out_row[w]) : w;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::int64_t kk = k0 + r;
    if (kk >= k) break;
    cuda::axpby_store(row_major ? &c[row * k + kk] : &c[kk * rows + row], alpha, acc[r], beta);
  }
}


// ---------------------------------------------------------------------------------------------
// kernel=rows
// ---------------------------------------------------------------------------------------------

namespace tiled_gpu {
constexpr int kRowsBlock = 256;
/// Threads of a tiled_rows_kernel block with G lanes a work row: 128 (four rows) for a warp a
/// row, else kRowsBlock. A block holds its SM slot until its slowest warp is done, and with a
/// warp a row on skewed rows (graphs at K = 128) most of a block's warps idle behind one long
/// row: half the warps a block, half the idling. Measured on an H100 against 256 threads, same
/// build and run, K = 128 against the fastest cuSPARSE (25 matrices): fp32 EAT_RS 0.93× ->
/// 0.97×, email-Enron 0.88× -> 0.94×, loc-Brightkite 0.89× -> 0.96×, ca-HepPh 0.84× -> 0.88×,
/// HEP-th-new 0.96× -> 1.00×, EX5 1.45× -> 1.42×; fp64 EAT_RS 0.95× -> 1.04×, loc-Brightkite
/// 0.94× -> 1.04×, email-Enron 0.92× -> 0.99×, HEP-th-new 1.02× -> 1.10×, vibrobox 1.17× ->
/// 1.10×; the others within 3% (bench/results/2026-11-28-h100/tiled-split-rows/summary.json).
constexpr int rows_block(int group_lanes) { return group_lanes == 32 ? 128 : kRowsBlock; }
/// Threads of a tiled_panel_kernel block: 128, so that a few thousand panels of a small matrix
/// spread over all SMs at the kernel's 70–100 registers a thread.
constexpr int kPanelBlock = 128;

/// V consecutive values at p (16-byte aligned when V > 1), read-only path.
template <int V, class Value>
__device__ __forceinline__ void load_pack(const Value* p, Value (&x)[V]) {
  if constexpr (V == 1) {
    x[0] = __ldg(p);
  } else if constexpr (sizeof(Value) == 4) {
    static_assert(V == 4, "fp32 packs are float4");
    const float4 t = __ldg(reinterpret_cast<const float4*>(p));
    x[0] = t.x, x[1] = t.y, x[2] = t.z, x[3] = t.w;
  } else {
    static_assert(V == 2, "fp64 packs are double2");
    const double2 t = __ldg(reinterpret_cast<const double2*>(p));
    x[0] = t.x, x[1] = t.y;
  }
}

/// The byte offset of B's row `cc` (row_bytes = k·sizeof(Value)): one 32×32 → 64-bit multiply
/// instead of a 64-bit one, added to the lane's own column pointer. The inner loop issues a few
/// instructions per nonzero, so the ones saved show where a row group is narrow: fp32 K = 32 ran
/// 3% faster over 25 matrices, every one of them faster, K = 128 level (H200, same run;
/// bench/results/2026-11-28-h200/tiled-row-offsets). Exact while cc and row_bytes are below
/// 2^32 (spmm_rows checks).
template <class Index>
__device__ __forceinline__ std::uint64_t row_offset(Index cc, std::uint32_t row_bytes) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(cc)) * row_bytes;
}
template <class Value>
__device__ __forceinline__ const Value* at_offset(const Value* p, std::uint64_t bytes) {
  return reinterpret_cast<const Value*>(reinterpret_cast<const char*>(p) + bytes);
}

/// Plain (coherent) load of V values of C.
template <int V, class Value>
__device__ __forceinline__ void load_plain(const Value* p, Value (&x)[V]) {
  if constexpr (V == 1) {
    x[0] = *p;
  } else if constexpr (sizeof(Value) == 4) {
    const float4 t = *reinterpret_cast<const float4*>(p);
    x[0] = t.x, x[1] = t.y, x[2] = t.z, x[3] = t.w;
  } else {
    const double2 t = *reinterpret_cast<const double2*>(p);
    x[0] = t.x, x[1] = t.y;
  }
}

template <int V, class Value>
__device__ __forceinline__ void store_pack(Value* p, const Value (&x)[V]) {
  if constexpr (V == 1) {
    *p = x[0];
  } else if constexpr (sizeof(Value) == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(x[0], x[1], x[2], x[3]);
  } else {
    *reinterpret_cast<double2*>(p) = make_double2(x[0], x[1]);
  }
}

/// Streaming (evict-first, st.global.cs) store of V values of C: C is written once and never
/// re-read by the kernel, so it should not push B rows out of L2.
template <int V, class Value>
__device__ __forceinline__ void store_stream(Value* p, const Value (&x)[V]) {
  if constexpr (V == 1) {
    __stcs(p, x[0]);
  } else if constexpr (sizeof(Value) == 4) {
    __stcs(reinterpret_cast<float4*>(p), make_float4(x[0], x[1], x[2], x[3]));
  } else {
    __stcs(reinterpret_cast<double2*>(p), make_double2(x[0], x[1]));
  }
}

/// C's pack of V values at dst = alpha·acc + beta·C (C is not read when beta == 0), stored
/// streaming or plain.
template <int V, class Value>
__device__ __forceinline__ void blend_store(Value* dst, const Value (&acc)[V], Value alpha, Value beta,
                                            bool stream) {
  Value o[V];
  if (beta == Value(0)) {
#pragma unroll
    for (int e = 0; e < V; ++e) o[e] = alpha * acc[e];
  } else {
    load_plain<V>(dst, o);
#pragma unroll
    for (int e = 0; e < V; ++e) o[e] = alpha * acc[e] + beta * o[e];
  }
  if (stream) {
    store_stream<V>(dst, o);
  } else {
    store_pack<V>(dst, o);
  }
}

/// The panel kernels' stores: panel p's R work rows, columns cv..cv+V. A row past work_rows
/// (the last partial panel) is not stored. Under the mapped store, dest[w] < 0 marks a segment
/// of a split row, whose sums go unscaled to its partial slot (tiled_long_reduce_kernel adds
/// them); otherwise dest[w] is the output row.
template <int R, int V, class Value, class Index>
__device__ __forceinline__ void store_panel_rows(std::int64_t p, std::int64_t work_rows, std::int64_t k,
                                                 std::int64_t cv, const Value (&acc)[R][V],
                                                 const Index* __restrict__ dest, int store,
                                                 Value* __restrict__ partial, Value* __restrict__ c,
                                                 Value alpha, Value beta) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::int64_t w = p * R + r;
    if (w >= work_rows) break;
    std::int64_t row = w;
    if (store == mapped) {
      const std::int64_t dw = static_cast<std::int64_t>(dest[w]);
      if (dw < 0) {
        store_pack<V>(partial + (-dw - 1) * k + cv, acc[r]);
        continue;
      }
      row = dw;
    }
    blend_store<V>(c + row * k + cv, acc[r], alpha, beta, false);
  }
}
}  // namespace tiled_gpu

namespace tiled_gpu {
/// The predicated gather of one chunk of a work row: the group's lanes hold the chunk's n ≤ G
/// nonzeros (lane t: column cj, value vj); B's rows are loaded kBatch at a time, all of a batch
/// issued before any is used, and a slot past n is neither loaded nor multiplied (0·Inf).
/// kBatch divides G, so t + u < G.
template <int G, int NV, int V, int kBatch, class Value, class Index>
__device__ __forceinline__ void gather_chunk(unsigned gmask, Index cj, Value vj, int n,
                                             const Value* const (&b_cols)[NV], const bool (&ok)[NV],
                                             std::uint32_t row_bytes, Value (&acc)[NV][V]) {
  for (int t = 0; t < n; t += kBatch) {
    Value vv[kBatch];
    Value x[kBatch][NV][V];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const Index cc = __shfl_sync(gmask, cj, t + u, G);
      vv[u] = __shfl_sync(gmask, vj, t + u, G);
      const std::uint64_t brow = row_offset(cc, row_bytes);
      const bool in = t + u < n;
#pragma unroll
      for (int v = 0; v < NV; ++v) {
        if (in && ok[v]) {
          load_pack<V>(at_offset(b_cols[v], brow), x[u][v]);
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e) x[u][v][e] = Value(0);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (t + u < n)
#pragma unroll
        for (int v = 0; v < NV; ++v)
#pragma unroll
          for (int e = 0; e < V; ++e) acc[v][e] += vv[u] * x[u][v][e];
  }
}

/// One chunk of a work row (n ≤ G nonzeros, lane t holding column cj and value vj) gathered
/// into acc: with B = 4, full batches of 4 (4·NV independent loads in flight), then a dependent
/// tail one nonzero at a time — fewer registers than the predicated batch of 8, the faster one
/// for short rows (H100: lap2d, G3_circuit); with B = 8, predicated batches of min(G, 8): a row
/// of 5 issues its 5 B loads at once (one round trip), not a batch of 4 and a dependent tail.
template <int G, int NV, int V, int B, class Value, class Index>
__device__ __forceinline__ void gather_row_chunk(unsigned gmask, Index cj, Value vj, int n,
                                                 const Value* const (&b_cols)[NV], const bool (&ok)[NV],
                                                 std::uint32_t row_bytes, Value (&acc)[NV][V]) {
  constexpr int kBatch = G < B ? G : B;
  if constexpr (B == 4) {
    int t = 0;
    if constexpr (G >= 4) {
      for (; t + 4 <= n; t += 4) {
        Value vv[4];
        Value x[4][NV][V];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const Index cc = __shfl_sync(gmask, cj, t + u, G);
          vv[u] = __shfl_sync(gmask, vj, t + u, G);
          const std::uint64_t brow = row_offset(cc, row_bytes);
#pragma unroll
          for (int v = 0; v < NV; ++v) {
            if (ok[v]) {
              load_pack<V>(at_offset(b_cols[v], brow), x[u][v]);
            } else {
#pragma unroll
              for (int e = 0; e < V; ++e) x[u][v][e] = Value(0);
            }
          }
        }
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
          for (int v = 0; v < NV; ++v)
#pragma unroll
            for (int e = 0; e < V; ++e) acc[v][e] += vv[u] * x[u][v][e];
      }
    }
    for (; t < n; ++t) {
      const Index cc = __shfl_sync(gmask, cj, t, G);
      const Value vt = __shfl_sync(gmask, vj, t, G);
      const std::uint64_t brow = row_offset(cc, row_bytes);
#pragma unroll
      for (int v = 0; v < NV; ++v) {
        if (!ok[v]) continue;
        Value x[V];
        load_pack<V>(at_offset(b_cols[v], brow), x);
#pragma unroll
        for (int e = 0; e < V; ++e) acc[v][e] += vt * x[e];
      }
    }
  } else {
    gather_chunk<G, NV, V, kBatch>(gmask, cj, vj, n, b_cols, ok, row_bytes, acc);
  }
}

/// The columns of this lane's packs in the K-tile starting at k0: cv[v] = k0 + (v·G + sub)·V,
/// whether the pack is in range (with V > 1, k % V == 0 and kt % V == 0: the whole pack is),
/// and B's row 0 at those columns.
template <int G, int NV, int V, class Value>
__device__ __forceinline__ void lane_columns(std::int64_t k, std::int64_t k0, std::int64_t kt, int sub, const Value* b,
                                             std::int64_t (&cv)[NV], bool (&ok)[NV], const Value* (&b_cols)[NV]) {
  const std::int64_t kend = min(k, k0 + kt);
#pragma unroll
  for (int v = 0; v < NV; ++v) {
    cv[v] = k0 + static_cast<std::int64_t>(v * G + sub) * V;
    ok[v] = cv[v] < kend;
    b_cols[v] = b + cv[v];
  }
}

/// Work row w's sums: to C's row (w, or dest[w] under the mapped store), scaled and blended, or
/// unscaled to the partial slot of a split row's segment (tiled_long_reduce_kernel adds them).
template <int NV, int V, class Value, class Index>
__device__ __forceinline__ void store_work_row(std::int64_t w, std::int64_t k, const std::int64_t (&cv)[NV],
                                               const bool (&ok)[NV], const Value (&acc)[NV][V],
                                               const Index* __restrict__ dest, int store,
                                               Value* __restrict__ partial, Value* __restrict__ c,
                                               Value alpha, Value beta, bool stream) {
  std::int64_t row = w;
  if (store == mapped) {
    const std::int64_t dw = static_cast<std::int64_t>(dest[w]);
    if (dw < 0) {
      Value* dst = partial + (-dw - 1) * k;
#pragma unroll
      for (int v = 0; v < NV; ++v)
        if (ok[v]) store_pack<V>(dst + cv[v], acc[v]);
      return;
    }
    row = dw;
  }
  Value* dst = c + row * k;
#pragma unroll
  for (int v = 0; v < NV; ++v)
    if (ok[v]) blend_store<V>(dst + cv[v], acc[v], alpha, beta, stream);
}
}  // namespace tiled_gpu

#define SPMAT_TILED_ROWS_PARAMS                                                                  \
  std::int64_t work_rows, std::int64_t k, std::int64_t tile0, std::int64_t kt,                     \
      const Index *__restrict__ wr_begin, const Index *__restrict__ wr_end,                        \
      const Index *__restrict__ col, const Value *__restrict__ val, const Index *__restrict__ dest, \
      const Value *__restrict__ b, Value *__restrict__ c, int store, Value *__restrict__ partial,   \
      Value alpha, Value beta, bool stream, std::uint32_t row_bytes
#define SPMAT_TILED_ROWS_ARGS \
  work_rows, k, tile0, kt, wr_begin, wr_end, col, val, dest, b, c, store, partial, alpha, beta, stream, row_bytes
// Row-major B and C. Block = rows_block(G) threads, (threads / 32)·(32/G) work rows; grid = (row blocks,
// K-tiles). See the file header for the mapping.
template <int G, int NV, int V, int B, class Value, class Index>
__device__ __forceinline__ void tiled_rows_body(SPMAT_TILED_ROWS_PARAMS) {
  static_assert(B == 4 || B == 8, "batch of 4 (+ dependent tail) or 8 (predicated)");
  constexpr int kRowsPerWarp = 32 / G;
  const int lane = static_cast<int>(threadIdx.x & 31u), sub = lane % G, grp = lane / G;
  const std::int64_t warp_id = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t w = warp_id * kRowsPerWarp + grp;
  cuda::allow_dependent_launch();  // the split rows' sums: launched once the last blocks run
  if (w >= work_rows) return;  // the whole group leaves together (same w)
  const unsigned gmask = cuda::subwarp_mask<G>();
  const std::int64_t k0 = (tile0 + blockIdx.y) * kt;
  std::int64_t cv[NV];
  bool ok[NV];
  const Value* b_cols[NV];  // this lane's columns of B's row 0
  tiled_gpu::lane_columns<G, NV, V>(k, k0, kt, sub, b, cv, ok, b_cols);
  Value acc[NV][V];
#pragma unroll
  for (int v = 0; v < NV; ++v)
#pragma unroll
    for (int e = 0; e < V; ++e) acc[v][e] = Value(0);

  const std::int64_t begin = wr_begin[w], end = wr_end[w];
  for (std::int64_t base = begin; base < end; base += G) {  // uniform over the group
    const std::int64_t q = base + sub;
    Index cj = 0;
    Value vj = Value(0);
    if (q < end) {
      cj = __ldg(col + q);
      vj = __ldg(val + q);
    }
    const int n = static_cast<int>(min(static_cast<std::int64_t>(G), end - base));
    tiled_gpu::gather_row_chunk<G, NV, V, B>(gmask, cj, vj, n, b_cols, ok, row_bytes, acc);
  }

  tiled_gpu::store_work_row<NV, V>(w, k, cv, ok, acc, dest, store, partial, c, alpha, beta, stream);
}

// The strided schedule (model::rows_stride_runs says where auto takes it): one resident grid;
// group w walks work rows w, w + S, w + 2S, ... (S = groups in the grid) and, while it gathers
// row w's B rows, has row w + S's first chunk of column ids and values and row w + 2S's bounds
// in flight, so that a row waits on its gathers, not on bounds → ids → gathers. Each row's sum
// is the grid schedule's (same chunks, same batches): the two give the same bits.
template <int G, int NV, int V, int B, class Value, class Index>
__device__ __forceinline__ void tiled_rows_stride_body(SPMAT_TILED_ROWS_PARAMS) {
  constexpr int kRowsPerWarp = 32 / G;
  const int lane = static_cast<int>(threadIdx.x & 31u), sub = lane % G, grp = lane / G;
  const std::int64_t warp_id = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * (blockDim.x >> 5) * kRowsPerWarp;
  std::int64_t w = warp_id * kRowsPerWarp + grp;
  cuda::allow_dependent_launch();
  if (w >= work_rows) return;
  const unsigned gmask = cuda::subwarp_mask<G>();
  const std::int64_t k0 = (tile0 + blockIdx.y) * kt;
  std::int64_t cv[NV];
  bool ok[NV];
  const Value* b_cols[NV];  // this lane's columns of B's row 0
  tiled_gpu::lane_columns<G, NV, V>(k, k0, kt, sub, b, cv, ok, b_cols);
  Index b0 = __ldg(wr_begin + w), e0 = __ldg(wr_end + w);
  Index b1 = 0, e1 = 0;
  if (w + stride < work_rows) {
    b1 = __ldg(wr_begin + w + stride);
    e1 = __ldg(wr_end + w + stride);
  }
  Index cj0 = 0;
  Value vj0 = Value(0);
  if (b0 + sub < e0) {
    cj0 = __ldg(col + b0 + sub);
    vj0 = __ldg(val + b0 + sub);
  }
  for (; w < work_rows; w += stride) {
    // Row w + 2S's bounds and row w + S's first chunk, in flight during row w's gathers.
    Index b2 = 0, e2 = 0;
    if (w + 2 * stride < work_rows) {
      b2 = __ldg(wr_begin + w + 2 * stride);
      e2 = __ldg(wr_end + w + 2 * stride);
    }
    Index cj1 = 0;
    Value vj1 = Value(0);
    if (b1 + sub < e1) {
      cj1 = __ldg(col + b1 + sub);
      vj1 = __ldg(val + b1 + sub);
    }
    Value acc[NV][V];
#pragma unroll
    for (int v = 0; v < NV; ++v)
#pragma unroll
      for (int e = 0; e < V; ++e) acc[v][e] = Value(0);
    const std::int64_t begin = b0, end = e0;
    if (begin < end) {
      tiled_gpu::gather_row_chunk<G, NV, V, B>(gmask, cj0, vj0,
                                               static_cast<int>(min(static_cast<std::int64_t>(G), end - begin)),
                                               b_cols, ok, row_bytes, acc);
      for (std::int64_t base = begin + G; base < end; base += G) {
        const std::int64_t q = base + sub;
        Index cj = 0;
        Value vj = Value(0);
        if (q < end) {
          cj = __ldg(col + q);
          vj = __ldg(val + q);
        }
        tiled_gpu::gather_row_chunk<G, NV, V, B>(gmask, cj, vj, static_cast<int>(min(static_cast<std::int64_t>(G), end - base)),
                                                 b_cols, ok, row_bytes, acc);
      }
    }
    tiled_gpu::store_work_row<NV, V>(w, k, cv, ok, acc, dest, store, partial, c, alpha, beta, stream);
    b0 = b1, e0 = e1, b1 = b2, e1 = e2, cj0 = cj1, vj0 = vj1;
  }
}
template <int G, int NV, int V, int B, class Value, class Index>
__global__ void __launch_bounds__(tiled_gpu::kRowsBlock) tiled_rows_kernel(SPMAT_TILED_ROWS_PARAMS) {
  tiled_rows_body<G, NV, V, B>(SPMAT_TILED_ROWS_ARGS);
}
/// The row kernel compiled for MinBlocks blocks an SM: fewer registers, more warps in flight
/// (tiled_gpu::rows_min_blocks says which builds and why).
template <int G, int NV, int V, int B, int MinBlocks, class Value, class Index>
__global__ void __launch_bounds__(tiled_gpu::rows_block(G), MinBlocks) tiled_rows_capped_kernel(SPMAT_TILED_ROWS_PARAMS) {
  tiled_rows_body<G, NV, V, B>(SPMAT_TILED_ROWS_ARGS);
}
template <int G, int NV, int V, int B, int MinBlocks, class Value, class Index>
__global__ void __launch_bounds__(tiled_gpu::rows_block(G), MinBlocks) tiled_rows_stride_kernel(SPMAT_TILED_ROWS_PARAMS) {
  tiled_rows_stride_body<G, NV, V, B>(SPMAT_TILED_ROWS_ARGS);
}
#undef SPMAT_TILED_ROWS_PARAMS
#undef SPMAT_TILED_ROWS_ARGS
// Column-major B and C: one thread per work row, R columns k0..k0+R-1 of the grid.y tile.
template <int R, class Value, class Index>
__global__ void __launch_bounds__(tiled_gpu::kRowsBlock)
    tiled_rows_col_kernel(std::int64_t work_rows, std::int64_t rows, std::int64_t cols,
                          std::int64_t k, std::int64_t tile0, const Index* __restrict__ wr_begin,
                          const Index* __restrict__ wr_end, const Index* __restrict__ col,
                          const Value* __restrict__ val, const Index* __restrict__ dest,
                          const Value* __restrict__ b, Value* __restrict__ c, int store,
                          Value* __restrict__ partial, Value alpha, Value beta) {
  const std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  cuda::allow_dependent_launch();  // the split rows' sums: launched once the last blocks run
  if (w >= work_rows) return;
  const std::int64_t k0 = (tile0 + blockIdx.y) * R;
  const int rn = static_cast<int>(min(static_cast<std::int64_t>(R), k - k0));
  Value acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = Value(0);
  const std::int64_t end = wr_end[w];
  for (std::int64_t q = wr_begin[w]; q < end; ++q) {
    const Value v = __ldg(val + q);
    const Value* bc = b + static_cast<std::int64_t>(__ldg(col + q)) + k0 * cols;
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (r < rn) acc[r] += v * __ldg(bc + r * cols);
  }
  std::int64_t row = w;
  if (store == tiled_gpu::mapped) {
    const std::int64_t dw = static_cast<std::int64_t>(dest[w]);
    if (dw < 0) {  // a segment: its partial slot (row-major slots × k)
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (r < rn) partial[(-dw - 1) * k + k0 + r] = acc[r];
      return;
    }
    row = dw;
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (r < rn) cuda::axpby_store(c + (k0 + r) * rows + row, alpha, acc[r], beta);
}

/// C[i][j] = alpha·Σ_{segments q of row i, in column order} partial[q][j] + beta·C[i][j].
template <class Value, class Index>
__global__ void tiled_reduce_kernel(std::int64_t rows, std::int64_t k,
                                    const std::int64_t* __restrict__ seg_ptr,
                                    const Index* __restrict__ seg_list,
                                    const Value* __restrict__ partial, Value* __restrict__ c,
                                    bool row_major, Value alpha, Value beta) {
  const std::int64_t total = rows * k;
  for (std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = t / k, j = t % k;
    Value s = 0;
    for (std::int64_t q = seg_ptr[i]; q < seg_ptr[i + 1]; ++q)
      s += partial[static_cast<std::int64_t>(seg_list[q]) * k + j];
    cuda::axpby_store(row_major ? &c[i * k + j] : &c[j * rows + i], alpha, s, beta);
  }
}

namespace tiled_gpu {
/// Split rows of at most this many slots are summed by one warp (tiled_long_reduce_kernel's
/// warp path), longer ones by the whole block. A block for a row of a few slots left most of
/// its 256 threads idle and cost a block launch and a barrier for a handful of loads: the
/// graphs' and FEM matrices' many rows of 2–10 segments. A block sums its longer rows one
/// after another, so where such rows come together (Maragal_6: runs of eight rows of 17–93
/// slots) they queue behind each other, while its warps sum their rows at once: 128 slots are
/// four rounds of eight loads a lane in fp32, eight in fp64. On an H200 at K = 128, a warp up
/// to 128 slots against 16: Maragal_6 0.90× -> 0.98× (fp32) and 0.93× -> 0.98× (fp64) of the
/// fastest cuSPARSE (bench/results/2026-11-29-h200/tiled-split-row-sums).
constexpr std::int64_t kWarpReduceMaxSlots = 128;

/// C[i][j0 .. j0+V) = alpha·sum + beta·C (beta == 0 never reads C): vector store for row-major
/// packs, element stores otherwise.
template <int V, class Value>
__device__ __forceinline__ void store_row_sum(Value* __restrict__ c, std::int64_t i, std::int64_t j0,
                                              std::int64_t k, std::int64_t rows, bool row_major,
                                              Value alpha, const Value (&sum)[V], Value beta) {
  if (row_major && V > 1) {
    blend_store<V>(c + i * k + j0, sum, alpha, beta, false);
    return;
  }
#pragma unroll
  for (int e = 0; e < V; ++e) {
    if (j0 + e >= k) break;
    Value* out = row_major ? c + i * k + j0 + e : c + (j0 + e) * rows + i;
    cuda::axpby_store(out, alpha, sum[e], beta);
  }
}

/// acc += the slots s, s + step, ... < s1 of `partial` at column j0 (packs of V), loaded eight
/// at a time and added in slot order.
template <int V, class Value>
__device__ __forceinline__ void add_slots(const Value* __restrict__ partial, std::int64_t k, std::int64_t j0,
                                          std::int64_t s, std::int64_t s1, std::int64_t step,
                                          Value (&acc)[V]) {
  constexpr int U = 8;
  for (; s + (U - 1) * step < s1; s += U * step) {
    Value x[U][V];
#pragma unroll
    for (int u = 0; u < U; ++u) load_plain<V>(partial + (s + u * step) * k + j0, x[u]);
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] += x[u][e];
  }
  for (; s < s1; s += step) {
    Value x[V];
    load_plain<V>(partial + s * k + j0, x);
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] += x[e];
  }
}
}  // namespace tiled_gpu

/// kernel=rows: the split rows' sums. Block (g, y) owns the split rows 8g .. 8g+7 (long_row[r]
/// owns slots [long_ptr[r], long_ptr[r+1])) over the columns col0 + y·32 .. +31; L = 32/V lanes
/// cover them, one pack of V columns each.
///   - A row of at most kWarpReduceMaxSlots slots: warp r − 8g alone. Its 32/L stripes of L lanes
///     sum the slots s ≡ stripe (mod 32/L) in slot order, then a fixed xor tree adds the stripes.
///   - A longer row: the whole block, one such row after another. Its S = 256/L stripes sum
///     the slots s ≡ stripe (mod S) in slot order (eight loads in flight), then stripe 0 adds the
///     S stripe sums in stripe order: a row of 10^6 nonzeros in segments of 256 is 3907 slots,
///     123 loads per thread (fp32, S = 32).
/// The order depends only on the layout: deterministic.
template <int V, class Value, class Index>
__global__ void __launch_bounds__(256)
    tiled_long_reduce_kernel(std::int64_t long_rows, std::int64_t rows, std::int64_t k, std::int64_t col0,
                             const Index* __restrict__ long_row,
                             const std::int64_t* __restrict__ long_ptr,
                             const Value* __restrict__ partial, Value* __restrict__ c,
                             bool row_major, Value alpha, Value beta) {
  constexpr int L = 32 / V, S = 256 / L;
  constexpr std::int64_t kRowsPerBlock = 8, kMax = tiled_gpu::kWarpReduceMaxSlots;
  __shared__ Value sh[S][32];
  __shared__ std::int64_t s_long[kRowsPerBlock][3];  // the block's longer rows: slots, C row
  const int t = static_cast<int>(threadIdx.x), lane = t % L, stripe = t / L;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock;
  const std::int64_t j0 = col0 + static_cast<std::int64_t>(blockIdx.y) * 32 + lane * V;
  const bool ok = j0 < k;  // V > 1 only when k % V == 0: the whole pack is in range
  // The warp's row and its slots are the build's: read while the product's last blocks run.
  const std::int64_t wr = r0 + t / 32;
  std::int64_t w0 = 0, w1 = 0, w_out = 0;
  if (wr < long_rows) {
    w0 = long_ptr[wr];
    w1 = long_ptr[wr + 1];
    w_out = static_cast<std::int64_t>(long_row[wr]);
  }
  // The rows longer than a warp's share go to the block path below through shared memory, so
  // that it reads no bounds from memory again (eight dependent loads a block were most of the
  // time of this kernel); a block without such a row skips it.
  const bool block_path = wr < long_rows && w1 - w0 > kMax;
  if (t % 32 == 0) {
    s_long[t / 32][0] = block_path ? w0 : 0;
    s_long[t / 32][1] = block_path ? w1 : 0;
    s_long[t / 32][2] = w_out;
  }
  const bool any_block_path = __syncthreads_or(block_path) != 0;
  cuda::wait_for_prior_grid();  // launched as the product's kernel began its last blocks
  if (wr < long_rows) {  // warp-uniform
    if (w1 - w0 <= kMax) {
      constexpr int W = 32 / L;  // stripes of a warp
      Value acc[V];
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] = Value(0);
      if (ok) tiled_gpu::add_slots<V>(partial, k, j0, w0 + stripe % W, w1, W, acc);
#pragma unroll
      for (int o = L; o < 32; o *= 2)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[e] += __shfl_xor_sync(cuda::kFullMask, acc[e], o);
      if (stripe % W == 0 && ok)
        tiled_gpu::store_row_sum<V>(c, w_out, j0, k, rows, row_major, alpha, acc, beta);
    }
  }
  if (!any_block_path) return;
  for (int i = 0; i < kRowsPerBlock; ++i) {  // block-uniform
    const std::int64_t s0 = s_long[i][0], s1 = s_long[i][1];
    if (s1 == s0) continue;  // summed by its warp above (or past the last split row)
    Value acc[V];
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = Value(0);
    if (ok) tiled_gpu::add_slots<V>(partial, k, j0, s0 + stripe, s1, S, acc);
#pragma unroll
    for (int e = 0; e < V; ++e) sh[stripe][lane * V + e] = acc[e];
    __syncthreads();
    if (stripe == 0 && ok) {
      Value sum[V];
#pragma unroll
      for (int e = 0; e < V; ++e) sum[e] = sh[0][lane * V + e];
      for (int q = 1; q < S; ++q)
#pragma unroll
        for (int e = 0; e < V; ++e) sum[e] += sh[q][lane * V + e];
      tiled_gpu::store_row_sum<V>(c, s_long[i][2], j0, k, rows, row_major, alpha, sum, beta);
    }
    __syncthreads();  // sh is refilled by the next long row
  }
}

template <class Value, class Index>
void launch_long_reduce(const TiledDevice<Value, Index>& d, Value* c, std::int64_t k, bool row_major,
                        Value alpha, Value beta) {
  if (d.long_rows == 0) return;
  constexpr int V = 16 / sizeof(Value);
  const bool vec = row_major && k % V == 0 && reinterpret_cast<std::uintptr_t>(c) % 16 == 0;
  const std::int64_t tiles = (k + 31) / 32, groups = (d.long_rows + 7) / 8;
  constexpr std::int64_t kMaxGridY = 65535;
  for (std::int64_t t0 = 0; t0 < tiles; t0 += kMaxGridY) {
    const dim3 grid(static_cast<unsigned>(groups), static_cast<unsigned>(std::min(kMaxGridY, tiles - t0)));
    auto kernel = vec ? tiled_long_reduce_kernel<V, Value, Index> : tiled_long_reduce_kernel<1, Value, Index>;
    cuda::launch_after_prior("tiled_long_reduce_kernel", kernel, grid, 256, d.long_rows, d.rows, k, t0 * 32,
                             d.long_row.data(), d.long_ptr.data(), d.partial.data(), c, row_major, alpha, beta);
  }
}

template <int R, class Value, class Index>
void launch_tiled(const TiledDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k,
                  bool row_major, int store, Value alpha, Value beta) {
  const std::size_t smem = static_cast<std::size_t>(d.stage_cap) * R * sizeof(Value);
  if (smem > 48 * 1024)
    SPMAT_CUDA_CHECK(cudaFuncSetAttribute(tiled_spmm_kernel<R, Value, Index>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem)));
  const std::int64_t tiles = (k + R - 1) / R;
  constexpr std::int64_t kMaxGridY = 65535;
  for (std::int64_t t0 = 0; t0 < tiles; t0 += kMaxGridY) {
    const dim3 grid(static_cast<unsigned>(d.panels), static_cast<unsigned>(std::min(kMaxGridY, tiles - t0)));
    tiled_spmm_kernel<R, Value, Index><<<grid, static_cast<unsigned>(d.panel_rows), smem,
        cuda::stream()>>>(d.work_rows, d.rows, d.cols, k, t0, d.stage_cap,
        static_cast<int>(d.panel_rows / 32), d.panel_stage_ptr.data(), d.stage_map_ptr.data(),
        d.map.data(), d.slab_ptr.data(), d.ell_idx.data(), d.ell_val.data(), d.out_row.data(), b, c,
        row_major, store, d.partial.data(), alpha, beta);
    SPMAT_CUDA_CHECK_LAUNCH("tiled_spmm_kernel");
  }
}


// ---------------------------------------------------------------------------------------------
// kernel=panel
// ---------------------------------------------------------------------------------------------

// Kernel contract (tiled_panel_kernel, the fp32 panel kernel): row-major B (cols×k) and C
// (rows×k), caller-allocated;
// pn_col_ptr/pn_val_ptr panels+1, pn_col/pn_mask Σ_p D_p, pn_val nnz (device copies of
// TiledStorage); dest/partial as for tiled_rows_kernel (store mapped) or unused (direct). A group
// of G lanes (G = 8, 16, 32) owns one panel of R work rows and the columns k0 + sub·V .. +V of
// the grid.y tile (tile = G·V columns; V = 4 with 16-byte loads when k % 4 == 0 and B, C are
// aligned, else V = 1). The group walks the panel's distinct columns G at a time:
// lane j loads column j's id and row mask (coalesced), a scan of the masks' popcounts gives its
// offset in pn_val, and it loads that column's values into registers (zero for rows not in the
// mask). Then, U columns at a time (U = 4 or 8, all loads in flight), the group broadcasts id,
// mask and values by shuffles, loads each B row slice once and adds v·B to the accumulator of
// every row of the mask (group-uniform: no divergence). The next G columns' ids and masks are
// loaded before this chunk's products, so the walk waits on one round trip per chunk, not on
// a chain per column. acc is R×V registers per lane. Rows past work_rows (the last partial
// panel) are not stored; empty rows give alpha·0 + beta·C; beta == 0 never reads C; explicit
// zeros are multiplied; entries not in the mask are never multiplied. Deterministic (each
// row's sum in column order, no atomics). Bytes per tile: the panel arrays + Σ_p D_p B slices
// (from L2) + C.
template <int R, int G, int V, int U, class Value, class Index>
__global__ void __launch_bounds__(tiled_gpu::kRowsBlock)
    tiled_panel_kernel(std::int64_t panels, std::int64_t work_rows, std::int64_t k, std::int64_t tile0,
                       const Index* __restrict__ col_ptr, const Index* __restrict__ val_ptr,
                       const Index* __restrict__ pcol, const std::uint32_t* __restrict__ pmask,
                       const Value* __restrict__ pval, const Index* __restrict__ dest,
                       const Value* __restrict__ b, Value* __restrict__ c, int store,
                       Value* __restrict__ partial, Value alpha, Value beta) {
  static_assert(U == 4 || U == 8, "columns in flight: 4 or 8");
  constexpr int kPanelsPerWarp = 32 / G;
  constexpr int kBatch = G < U ? G : U;  // divides G
  // Panels of up to kMaxHeld rows hold each column's values in registers (loaded with the
  // chunk, broadcast by shuffles); larger ones read them where used (their accumulators fill
  // the registers).
  constexpr int kMaxHeld = 8;
  constexpr int kHeld = R <= kMaxHeld ? R : 1;
  const int lane = static_cast<int>(threadIdx.x & 31u), sub = lane % G, grp = lane / G;
  const std::int64_t warp_id = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t p = warp_id * kPanelsPerWarp + grp;
  cuda::allow_dependent_launch();  // the split rows' sums: launched once the last blocks run
  if (p >= panels) return;  // the whole group leaves together
  const unsigned gmask = cuda::subwarp_mask<G>();
  const std::int64_t k0 = (tile0 + blockIdx.y) * static_cast<std::int64_t>(G * V);
  const std::int64_t cv = k0 + static_cast<std::int64_t>(sub) * V;
  const bool ok = cv < k;  // with V > 1, k % V == 0: the whole pack is in range
  Value acc[R][V];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int e = 0; e < V; ++e) acc[r][e] = Value(0);

  const std::int64_t d1 = static_cast<std::int64_t>(col_ptr[p + 1]);
  std::int64_t base = static_cast<std::int64_t>(col_ptr[p]);
  std::int64_t q = static_cast<std::int64_t>(val_ptr[p]);  // pn_val offset of the chunk
  Index next_col = 0;
  std::uint32_t next_mask = 0;
  if (base + sub < d1) {
    next_col = __ldg(pcol + base + sub);
    next_mask = __ldg(pmask + base + sub);
  }
  for (; base < d1; base += G) {  // uniform over the group
    const Index cj = next_col;
    const std::uint32_t mj = next_mask;
    if (base + G + sub < d1) {  // the next chunk's ids and masks, in flight during this one
      next_col = __ldg(pcol + base + G + sub);
      next_mask = __ldg(pmask + base + G + sub);
    }
    // Offset of column j's values in the chunk: exclusive scan of the masks' popcounts.
    const int count = __popc(mj);
    int incl = count;
#pragma unroll
    for (int o = 1; o < G; o *= 2) {
      const int t = __shfl_up_sync(gmask, incl, o, G);
      if (sub >= o) incl += t;
    }
    const Value* pv = pval + q + (incl - count);  // column j's values, one per mask bit
    Value vj[kHeld];  // R <= kMaxHeld: column j's value for each row (0 where not in the mask)
    if constexpr (R <= kMaxHeld) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const bool in = (mj >> r) & 1u;
        vj[r] = in ? __ldg(pv + __popc(mj & ((1u << r) - 1u))) : Value(0);
      }
    }
    q += __shfl_sync(gmask, incl, G - 1, G);
    const int n = static_cast<int>(min(static_cast<std::int64_t>(G), d1 - base));
    for (int t = 0; t < n; t += kBatch) {
      std::uint32_t m[kBatch];
      Value x[kBatch][V];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const Index cc = __shfl_sync(gmask, cj, t + u, G);
        m[u] = t + u < n ? __shfl_sync(gmask, mj, t + u, G) : 0u;
        if (m[u] != 0u && ok) {
          tiled_gpu::load_pack<V>(b + static_cast<std::int64_t>(cc) * k + cv, x[u]);
        } else {
#pragma unroll
          for (int e = 0; e < V; ++e) x[u][e] = Value(0);
        }
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const Value* pu = nullptr;  // R > kMaxHeld: column t + u's values, read where used
        if constexpr (R > kMaxHeld) pu = reinterpret_cast<const Value*>(__shfl_sync(
            gmask, reinterpret_cast<std::uintptr_t>(pv), t + u, G));
#pragma unroll
        for (int r = 0; r < R; ++r) {
          Value v;
          if constexpr (R > kMaxHeld) {
            v = (m[u] >> r) & 1u ? __ldg(pu + __popc(m[u] & ((1u << r) - 1u))) : Value(0);
          } else {
            v = __shfl_sync(gmask, vj[r], t + u, G);
          }
          if ((m[u] >> r) & 1u) {  // group-uniform; a row not in the mask is never multiplied
#pragma unroll
            for (int e = 0; e < V; ++e) acc[r][e] += v * x[u][e];
          }
        }
      }
    }
  }
  if (ok) tiled_gpu::store_panel_rows<R, V>(p, work_rows, k, cv, acc, dest, store, partial, c, alpha, beta);
}

// Kernel contract (tiled_panel_seq_kernel, the fp64 panel kernel): row-major B (cols×k) and C (rows×k), caller-allocated;
// pn_col_ptr/pn_val_ptr panels+1, pn_col/pn_mask Σ_p D_p, pn_val nnz (device copies of
// TiledStorage); dest/partial as for tiled_rows_kernel (store mapped) or unused (direct). A group
// of G lanes (G = 8, 16, 32) owns one panel of R work rows and the columns k0 + sub·V .. +V of
// the grid.y tile (tile = G·V columns; V = 4 fp32 / 2 fp64 with 16-byte loads when k % V == 0
// and B, C are aligned, else V = 1). For each distinct column of the panel, in order, the group
// loads the B row slice once (coalesced, 4 columns in flight) and adds v·B to the accumulator of
// every row of the column's mask (the mask is group-uniform: no divergence). acc is R×V
// registers per lane. Rows past work_rows (the last partial panel) are not stored; empty rows
// give alpha·0 + beta·C; beta == 0 never reads C; explicit zeros are multiplied; entries not in
// the mask are never multiplied. Deterministic (each row's sum in column order, no atomics).
// Bytes per tile: the panel arrays + Σ_p D_p B slices (from L2) + C. Each value is read where it
// is used, one broadcast load per mask bit: in fp64 that beats tiled_panel_kernel's values in
// registers, which take two shuffles each (H100, K = 128 against the fastest cuSPARSE, this
// kernel / held values: banded 1.83× / 1.96×, G3_circuit 1.28× / 1.23×, lap2d:1000 1.33× /
// 1.19×, lap3d:100 1.17× / 1.02×, ct2010 1.13× / 1.06×; K = 64 lap3d:100 1.16× / 0.87×).
template <int R, int G, int V, class Value, class Index>
__global__ void __launch_bounds__(tiled_gpu::kRowsBlock)
    tiled_panel_seq_kernel(std::int64_t panels, std::int64_t work_rows, std::int64_t k, std::int64_t tile0,
                       const Index* __restrict__ col_ptr, const Index* __restrict__ val_ptr,
                       const Index* __restrict__ pcol, const std::uint32_t* __restrict__ pmask,
                       const Value* __restrict__ pval, const Index* __restrict__ dest,
                       const Value* __restrict__ b, Value* __restrict__ c, int store,
                       Value* __restrict__ partial, Value alpha, Value beta) {
  constexpr int kPanelsPerWarp = 32 / G;
  constexpr int U = 4;  // distinct columns (B slices) in flight
  const int lane = static_cast<int>(threadIdx.x & 31u), sub = lane % G, grp = lane / G;
  const std::int64_t warp_id = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t p = warp_id * kPanelsPerWarp + grp;
  cuda::allow_dependent_launch();  // the split rows' sums: launched once the last blocks run
  if (p >= panels) return;  // the whole group leaves together
  const std::int64_t k0 = (tile0 + blockIdx.y) * static_cast<std::int64_t>(G * V);
  const std::int64_t cv = k0 + static_cast<std::int64_t>(sub) * V;
  const bool ok = cv < k;  // with V > 1, k % V == 0: the whole pack is in range
  Value acc[R][V];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int e = 0; e < V; ++e) acc[r][e] = Value(0);

  const std::int64_t d1 = static_cast<std::int64_t>(col_ptr[p + 1]);
  std::int64_t d = static_cast<std::int64_t>(col_ptr[p]);
  std::int64_t q = static_cast<std::int64_t>(val_ptr[p]);
  for (; d < d1; d += U) {  // uniform over the group
    std::uint32_t m[U];
    Value x[U][V];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool in = d + u < d1;
      m[u] = in ? __ldg(pmask + d + u) : 0u;
      if (in && ok) {
        const std::int64_t j = static_cast<std::int64_t>(__ldg(pcol + d + u));
        tiled_gpu::load_pack<V>(b + j * k + cv, x[u]);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) x[u][e] = Value(0);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if ((m[u] >> r) & 1u) {
          const Value v = __ldg(pval + q);
          ++q;
#pragma unroll
          for (int e = 0; e < V; ++e) acc[r][e] += v * x[u][e];
        }
      }
    }
  }
  if (ok) tiled_gpu::store_panel_rows<R, V>(p, work_rows, k, cv, acc, dest, store, partial, c, alpha, beta);
}

/// One launch of a panel kernel (tiled_panel_kernel or tiled_panel_seq_kernel: the same
/// arguments) over the panels, `block` threads a block, grid.y over the K-tiles of G·V columns.
template <int G, int V, class Kernel, class Value, class Index>
void launch_panel_grid(Kernel kernel, const char* what, int block, const TiledDevice<Value, Index>& d,
                       const Value* b, Value* c, std::int64_t k, int store, Value alpha, Value beta) {
  const std::int64_t panels_per_block = (block / 32) * (32 / G);
  const std::int64_t blocks = (d.pn_panels + panels_per_block - 1) / panels_per_block;
  const std::int64_t tiles = (k + G * V - 1) / (G * V);
  constexpr std::int64_t kMaxGridY = 65535;
  for (std::int64_t t0 = 0; t0 < tiles; t0 += kMaxGridY) {
    const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(std::min(kMaxGridY, tiles - t0)));
    kernel<<<grid, block, 0, cuda::stream()>>>(d.pn_panels, d.work_rows, k, t0, d.pn_col_ptr.data(),
                                               d.pn_val_ptr.data(), d.pn_col.data(), d.pn_mask.data(),
                                               d.pn_val.data(), d.dest.data(), b, c, store, d.partial.data(),
                                               alpha, beta);
    cuda::check(cudaGetLastError(), what, __FILE__, __LINE__);
  }
}

/// fp64 runs tiled_panel_seq_kernel (see there why) in blocks of kRowsBlock threads; fp32 runs
/// tiled_panel_kernel in blocks of kPanelBlock with U columns in flight per group: the batch
/// option, auto 4. Measured on an H100, fp32 K = 128, R = 4, against the fastest cuSPARSE, 8 ->
/// 4 columns: G3_circuit 1.11× -> 1.35×, banded 1.62× -> 2.14×, lap2d:1000 1.06× -> 1.35×,
/// delaunay_n16 1.08× -> 1.35×; 8 costs 97 registers a thread against 72, and the occupancy
/// buys more than the deeper batch
/// (bench/results/2026-11-28-h100/tiled-panel-kernel/variants/fp32_k128_batch8_batch4.json). Panels of more than 8 rows always take 4 (their R×V
/// accumulators leave no registers for more).
template <int R, int G, int V, class Value, class Index>
void launch_panel(const TiledDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k, int store,
                  Value alpha, Value beta) {
  if constexpr (sizeof(Value) == 8) {
    launch_panel_grid<G, V>(tiled_panel_seq_kernel<R, G, V, Value, Index>, "launch of tiled_panel_seq_kernel",
                            tiled_gpu::kRowsBlock, d, b, c, k, store, alpha, beta);
  } else {
    if constexpr (R <= 8) {
      if (!d.batch_auto && d.batch == 8)
        return launch_panel_grid<G, V>(tiled_panel_kernel<R, G, V, 8, Value, Index>, "launch of tiled_panel_kernel",
                                       tiled_gpu::kPanelBlock, d, b, c, k, store, alpha, beta);
    }
    launch_panel_grid<G, V>(tiled_panel_kernel<R, G, V, 4, Value, Index>, "launch of tiled_panel_kernel",
                            tiled_gpu::kPanelBlock, d, b, c, k, store, alpha, beta);
  }
}

/// Row-major panel dispatch: vector packs when k % V == 0 and the pointers are 16-byte aligned,
/// G = the power of two in [8, 32] covering k / V (so K = 64 fp32 puts two panels on a warp);
/// scalar otherwise (G = 32, tiles of 32 columns).
template <int R, class Value, class Index>
void dispatch_panel_r(const TiledDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k, int store,
                      Value alpha, Value beta) {
  constexpr int V = 16 / sizeof(Value);
  auto aligned = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  const bool vec = k % V == 0 && aligned(b) && aligned(c) && (store != tiled_gpu::mapped || aligned(d.partial.data()));
  if (!vec) return launch_panel<R, 32, 1>(d, b, c, k, store, alpha, beta);
  const std::int64_t packs = k / V;
  if (packs <= 8) return launch_panel<R, 8, V>(d, b, c, k, store, alpha, beta);
  if (packs <= 16) return launch_panel<R, 16, V>(d, b, c, k, store, alpha, beta);
  return launch_panel<R, 32, V>(d, b, c, k, store, alpha, beta);
}

template <class Value, class Index>
void spmm_panel(const TiledDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k, int store,
                Value alpha, Value beta) {
  switch (d.panel_r) {
    case 4: return dispatch_panel_r<4>(d, b, c, k, store, alpha, beta);
    case 8: return dispatch_panel_r<8>(d, b, c, k, store, alpha, beta);
    case 16: return dispatch_panel_r<16>(d, b, c, k, store, alpha, beta);
    case 32: return dispatch_panel_r<32>(d, b, c, k, store, alpha, beta);
    default: break;
  }
  throw Error("tiled: internal error: no panel kernel for panel_rows=" + std::to_string(d.panel_r));
}


/// L2 bytes of the current device (queried once per device; 50 MiB if it reports none).
inline double device_l2_bytes() {
  return cuda::device_attribute<cudaDevAttrL2CacheSize>(50 * 1024 * 1024);
}

namespace tiled_gpu {
/// Blocks an SM the row kernel is compiled for (__launch_bounds__' second argument; 0: as ptxas
/// likes). The fp32 kernels with one float4 a lane gather B rows from L2 and the warps in flight
/// set their pace, so they trade a few bytes of spills for more resident warps (sm_90, int32
/// indices): a warp a row, batch 4: 58 -> 48 registers, 8 bytes spilled, 32 -> 40 warps; 8 or
/// 16 lanes a row, batch 4: 56 -> 48, 8 bytes, 32 -> 40 warps; batch 8: 74 -> 64, 20 bytes,
/// 24 -> 32 warps. Measured on an H200, same binary, SpMM row-major against the fastest cuSPARSE
/// over 25 matrices: fp32 K = 128 (a warp a row) 1.08× -> 1.20× for the row kernel everywhere;
/// fp32 K = 32 (8 lanes) 1.92× -> 2.04× (20 matrices faster, 5 slower by at most 4%: the small
/// FEM matrices, s3rmq4m1 2.24× -> 2.14×); fp32 K = 64 (16 lanes) 1.51× -> 1.53×, and 1.48× ->
/// 1.54× for the row kernel everywhere (bench/results/2026-11-28-h200/tiled-register-caps;
/// the warp-a-row figures: tiled-rows-occupancy, where a cap of 40 registers, 12 blocks, spilled
/// 68 bytes and ran 0.99×). fp64 builds would spill 72–188 bytes at any cap that gains a block,
/// and keep their registers.
template <int G, int NV, int V, int B, class Value>
constexpr int rows_min_blocks() {
  if constexpr (sizeof(Value) == 4 && V == 4 && NV == 1) {
    if constexpr (G == 32 && B == 4) return 10;
    if constexpr ((G == 16 || G == 8) && B == 4) return 5;
    if constexpr ((G == 16 || G == 8) && B == 8) return 4;
  }
  return 0;
}
/// Blocks an SM the strided row kernel is compiled for (tiled_rows_stride_kernel, 128 threads):
/// 8, 64 registers and no spills. The prefetched row's registers do not fit the grid kernel's
/// cap (10 blocks, 48 registers: 72 bytes spilled); at 9 blocks (56 registers, 8 bytes spilled)
/// it ran slower than at 8 on an H200 (fp32 K = 128 against the fastest cuSPARSE:
/// gen:lap3d:100 1.00× against 1.17×, gen:random_k:200000:16 1.01× against 1.44×).
inline constexpr int kStrideMinBlocks = 8;
}  // namespace tiled_gpu

template <int G, int NV, int V, int B, class Value, class Index>
void launch_rows(const TiledDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k,
                 std::int64_t kt, int store, Value alpha, Value beta, bool stream) {
  constexpr int rb = tiled_gpu::rows_block(G);
  constexpr std::int64_t rows_per_block = (rb / 32) * (32 / G);
  const std::int64_t blocks = (d.work_rows + rows_per_block - 1) / rows_per_block;
  const std::int64_t tiles = (k + kt - 1) / kt;
  constexpr std::int64_t kMaxGridY = 65535;
  auto run = [&](auto kernel, std::int64_t grid_x) {
    for (std::int64_t t0 = 0; t0 < tiles; t0 += kMaxGridY) {
      const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(std::min(kMaxGridY, tiles - t0)));
      kernel<<<grid, rb, 0, cuda::stream()>>>(d.work_rows, k, t0, kt, d.wr_begin.data(), d.wr_end.data(),
          d.col_idx.data(), d.values.data(), d.dest.data(), b, c, store, d.partial.data(), alpha,
          beta, stream, static_cast<std::uint32_t>(k * static_cast<std::int64_t>(sizeof(Value))));
      SPMAT_CUDA_CHECK_LAUNCH("tiled_rows_kernel");
    }
  };
  constexpr int min_blocks = tiled_gpu::rows_min_blocks<G, NV, V, B, Value>();
  if constexpr (G == 32 && NV == 1 && V == 4 && sizeof(Value) == 4) {
    if (d.rows_stride(kt, cuda::sm_count())) {
      // Batch 4 (auto's at a warp a row): kStrideMinBlocks; a forced batch of 8 keeps its
      // registers (capped at 8 blocks it would spill 104 bytes).
      constexpr int mb = B == 4 ? tiled_gpu::kStrideMinBlocks : 1;
      auto kernel = tiled_rows_stride_kernel<G, NV, V, B, mb, Value, Index>;
      static const int per_sm = [&] {
        int n = 0;
        SPMAT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, rb, 0));
        return std::max(n, 1);
      }();
      run(kernel, std::min(blocks, static_cast<std::int64_t>(per_sm) * cuda::sm_count()));
      return;
    }
  }
  if constexpr (min_blocks > 0) {
    run(tiled_rows_capped_kernel<G, NV, V, B, min_blocks, Value, Index>, blocks);
  } else {
    run(tiled_rows_kernel<G, NV, V, B, Value, Index>, blocks);
  }
}

template <int R, class Value, class Index>
void launch_rows_col(const TiledDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k,
                     int store, Value alpha, Value beta) {
  const std::int64_t blocks = (d.work_rows + tiled_gpu::kRowsBlock - 1) / tiled_gpu::kRowsBlock;
  const std::int64_t tiles = (k + R - 1) / R;
  constexpr std::int64_t kMaxGridY = 65535;
  for (std::int64_t t0 = 0; t0 < tiles; t0 += kMaxGridY) {
    const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(std::min(kMaxGridY, tiles - t0)));
    tiled_rows_col_kernel<R, Value, Index><<<grid, tiled_gpu::kRowsBlock, 0, cuda::stream()>>>(
        d.work_rows, d.rows, d.cols, k, t0, d.wr_begin.data(), d.wr_end.data(), d.col_idx.data(),
        d.values.data(), d.dest.data(), b, c, store, d.partial.data(), alpha, beta);
    SPMAT_CUDA_CHECK_LAUNCH("tiled_rows_col_kernel");
  }
}

/// Row-major dispatch: kt (power of two) → G lanes per row and NV packs per lane.
template <int V, class Value, class Index>
void dispatch_rows(const TiledDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k,
                   std::int64_t kt, int store, Value alpha, Value beta) {
  const std::int64_t lanes = std::max<std::int64_t>(1, kt / V);  // packs per row per tile
  const int lane_count = static_cast<int>(std::min<std::int64_t>(lanes, 32));  // G below
  const bool stream = d.rows_stream(lane_count);
#define SPMAT_TILED_ROWS(g, nv)                                                                  \
  return d.rows_batch(lane_count) == 4 ? launch_rows<g, nv, V, 4>(d, b, c, k, kt, store, alpha, beta, stream) \
                                       : launch_rows<g, nv, V, 8>(d, b, c, k, kt, store, alpha, beta, stream)
  switch (lanes) {
    case 1: SPMAT_TILED_ROWS(1, 1);
    case 2: SPMAT_TILED_ROWS(2, 1);
    case 4: SPMAT_TILED_ROWS(4, 1);
    case 8: SPMAT_TILED_ROWS(8, 1);
    case 16: SPMAT_TILED_ROWS(16, 1);
    case 32: SPMAT_TILED_ROWS(32, 1);
    case 64: SPMAT_TILED_ROWS(32, 2);
    default: break;
  }
  if constexpr (V == 1) {
    if (lanes == 128) SPMAT_TILED_ROWS(32, 4);
  }
#undef SPMAT_TILED_ROWS
  throw Error("tiled: internal error: no row-wise kernel for a K-tile of " + std::to_string(kt));
}

/// The K-tile of the row-major row kernel for k columns with 16-byte packs: the option kt, or
/// the model's choice for this device, within [V, 64·V] and at most the power of two >= k.
template <class Value, class Index>
std::int64_t rows_k_tile(const TiledDevice<Value, Index>& d, std::int64_t k) {
  constexpr std::int64_t V = 16 / sizeof(Value);
  std::int64_t pk = 1;  // power of two >= k
  while (pk < k) pk *= 2;
  const std::int64_t kt = d.kt > 0 ? d.kt
                                   : model::choose_k_tile(d.reuse, k, sizeof(Value), sizeof(Index), d.segmented, [&] {
                                       auto m = model::device_by_name(d.device);
                                       m.l2_bytes = device_l2_bytes();
                                       m.sm_count = cuda::sm_count();
                                       return m;
                                     }());
  return std::clamp<std::int64_t>(std::min(kt, pk), V, 64 * V);
}

template <class Value, class Index>
void spmm_rows(const TiledDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k,
               bool row_major, int store, Value alpha, Value beta) {
  if (!row_major) {
    std::int64_t r = 1;
    while (r < k && r < 16) r *= 2;
    switch (r) {
      case 1: return launch_rows_col<1>(d, b, c, k, store, alpha, beta);
      case 2: return launch_rows_col<2>(d, b, c, k, store, alpha, beta);
      case 4: return launch_rows_col<4>(d, b, c, k, store, alpha, beta);
      case 8: return launch_rows_col<8>(d, b, c, k, store, alpha, beta);
      default: return launch_rows_col<16>(d, b, c, k, store, alpha, beta);
    }
  }
  // The row kernel's 32-bit B row offsets (row_offset) need B of fewer than 2^32 rows and rows
  // of fewer than 2^32 bytes: a B past either limit holds at least 4 Gi rows or 4 GiB rows, and
  // its product is refused with the limit named.
  if (d.cols >= (std::int64_t{1} << 32) || k * static_cast<std::int64_t>(sizeof(Value)) >= (std::int64_t{1} << 32))
    throw UnsupportedError("tiled: the row-major GPU kernel addresses B rows with 32-bit offsets: B has " +
                           std::to_string(d.cols) + " rows of " + std::to_string(k) +
                           " values; it needs fewer than 2^32 rows and 2^32 bytes per row");
  constexpr std::int64_t V = 16 / sizeof(Value);
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const bool vec = k % V == 0 && aligned(b) && aligned(c) && (store != tiled_gpu::mapped || aligned(d.partial.data()));
  std::int64_t pk = 1;  // power of two >= k
  while (pk < k) pk *= 2;
  if (vec) return dispatch_rows<static_cast<int>(V)>(d, b, c, k, rows_k_tile(d, k), store, alpha, beta);
  // Scalar path (k not a multiple of the pack, or unaligned pointers): up to 128 columns a pass.
  const std::int64_t kt = std::min<std::int64_t>(d.kt > 0 ? std::min(d.kt, pk) : pk, 128);
  return dispatch_rows<1>(d, b, c, k, kt, store, alpha, beta);
}

/// The partial sums a product of k dense columns needs: grown (never shrunk) to that size. The
/// only allocation of a product, so prepare makes it ahead of time.
template <class Value, class Index>
void reserve_partial(const TiledDevice<Value, Index>& d, std::int64_t k) {
  const std::int64_t rows = d.sell ? (d.segmented ? d.work_rows : 0) : d.long_slots;
  const std::size_t need = static_cast<std::size_t>(rows) * static_cast<std::size_t>(k);
  if (d.partial.size() < need) d.partial = cuda::DeviceBuffer<Value>(need, "tiled partial sums");
}

/// Whether spmm with k columns in `layout` runs the panel kernel (row-major only): always with
/// kernel=panel; with kernel=auto (arrays built, reuse >= panel_reuse) as model::auto_runs_panel
/// says for this device's SM count, unless the row kernel would run the strided schedule: on
/// the short balanced rows where it does, it beat the panel kernel (H200, fp32 K = 128, of the
/// fastest cuSPARSE: fe_body 1.54× / 1.17×, gen:lap2d:1000 1.27× / 1.21×, vt2010 1.34× /
/// 0.98×; G3_circuit, the one exception, 1.05× / 1.22×).
template <class Value, class Index>
bool uses_panel_kernel(const TiledDevice<Value, Index>& d, std::int64_t k, DenseLayout layout) {
  if (d.sell || layout != DenseLayout::row_major || d.panel_r <= 0) return false;
  if (d.panel_forced) return true;
  return model::auto_runs_panel(k, sizeof(Value), d.pn_panels, d.panel_per_sm, cuda::sm_count()) &&
         !(k % static_cast<std::int64_t>(16 / sizeof(Value)) == 0 && d.rows_stride(rows_k_tile(d, k), cuda::sm_count()));
}

/// Matrix::prepare: the partial sums of spmv (k = 1) or of spmm with k columns, and the panel
/// arrays where that spmm runs the panel kernel.
template <class Value, class Index>
void prepare(const TiledDevice<Value, Index>& d, Op op, std::int64_t k, DenseLayout layout) {
  if (op == Op::spmv) reserve_partial(d, 1);
  if (op == Op::spmm) reserve_partial(d, k);
  if (op == Op::spmm && uses_panel_kernel(d, k, layout)) ensure_panels(d);
}

/// C = alpha·A·B + beta·C. The register tile is min(r, the power of two >= k), so small k (spmv)
/// does not stage 16 columns of which one is used. Deterministic.
template <class Value, class Index>
void spmm(const TiledDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k,
          DenseLayout layout, Value alpha, Value beta) {
  if (d.rows == 0 || k == 0 || d.work_rows == 0) return;
  const bool row_major = layout == DenseLayout::row_major;
  reserve_partial(d, k);  // nothing to do once prepared for k (or more)
  if (!d.sell) {
    // Whole rows straight to C (through dest when the order is not the identity); segments of
    // split rows to their partial slots, then one block per split row sums them.
    const int store = d.mapped ? tiled_gpu::mapped : tiled_gpu::direct;
    if (uses_panel_kernel(d, k, layout)) {
      ensure_panels(d);  // their first use
      spmm_panel(d, b, c, k, store, alpha, beta);
    } else {
      spmm_rows(d, b, c, k, row_major, store, alpha, beta);
    }
    launch_long_reduce(d, c, k, row_major, alpha, beta);
    return;
  }
  int store = d.permuted ? tiled_gpu::permuted : tiled_gpu::direct;
  if (d.segmented) store = tiled_gpu::partial;
  {
  int re = 1;
  while (re < d.r && re < k) re *= 2;
  switch (re) {
    case 1: launch_tiled<1>(d, b, c, k, row_major, store, alpha, beta); break;
    case 2: launch_tiled<2>(d, b, c, k, row_major, store, alpha, beta); break;
    case 4: launch_tiled<4>(d, b, c, k, row_major, store, alpha, beta); break;
    case 8: launch_tiled<8>(d, b, c, k, row_major, store, alpha, beta); break;
    case 16: launch_tiled<16>(d, b, c, k, row_major, store, alpha, beta); break;
    default: launch_tiled<32>(d, b, c, k, row_major, store, alpha, beta); break;
  }
  }
  if (d.segmented) {
    tiled_reduce_kernel<<<cuda::grid_for(d.rows * k, 256), 256, 0, cuda::stream()>>>(d.rows, k,
        d.seg_ptr.data(), d.seg_list.data(), d.partial.data(), c, row_major, alpha, beta);
    SPMAT_CUDA_CHECK_LAUNCH("tiled_reduce_kernel");
  }
}

template <class Value, class Index>
void spmv(const TiledDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  spmm(d, x, y, 1, DenseLayout::row_major, alpha, beta);
}

SPMAT_DEFINE_CUDA_IMPL(TiledStorage, TiledDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(TiledStorage, TiledDevice)

}  // namespace spmat
