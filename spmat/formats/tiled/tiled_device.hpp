// spmat/formats/tiled/tiled_device.hpp — the CUDA storage of `tiled`, made by upload (from the
// host storage) or on the GPU from a device CSR (tiled_device_build.cu): the same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <bit>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/formats/tiled/tiled.hpp"

namespace spmat {

namespace tiled_gpu {
/// The stored arrays of a TiledDevice and the host vectors they mirror, in one order.
template <class D>
auto device_arrays(D& d) {
  return std::tuple{cuda::Field{"panel_stage_ptr", d.panel_stage_ptr}, cuda::Field{"stage_map_ptr", d.stage_map_ptr},
                    cuda::Field{"slab_ptr", d.slab_ptr}, cuda::Field{"seg_ptr", d.seg_ptr},
                    cuda::Field{"map", d.map}, cuda::Field{"out_row", d.out_row},
                    cuda::Field{"seg_list", d.seg_list}, cuda::Field{"ell_idx", d.ell_idx},
                    cuda::Field{"ell_val", d.ell_val}, cuda::Field{"wr_begin", d.wr_begin},
                    cuda::Field{"wr_end", d.wr_end}, cuda::Field{"col_idx", d.col_idx},
                    cuda::Field{"values", d.values}, cuda::Field{"pn_col_ptr", d.pn_col_ptr},
                    cuda::Field{"pn_val_ptr", d.pn_val_ptr}, cuda::Field{"pn_col", d.pn_col},
                    cuda::Field{"pn_mask", d.pn_mask}, cuda::Field{"pn_val", d.pn_val}};
}
template <class S>
auto host_arrays(S& s) {
  return std::tie(s.panel_stage_ptr, s.stage_map_ptr, s.slab_ptr, s.seg_ptr, s.map, s.out_row, s.seg_list,
                  s.ell_idx, s.ell_val, s.wr_begin, s.wr_end, s.col_idx, s.values, s.pn_col_ptr,
                  s.pn_val_ptr, s.pn_col, s.pn_mask, s.pn_val);
}
inline std::int64_t bits_of(double x) { return std::bit_cast<std::int64_t>(x); }
/// The arrays of device_arrays / host_arrays without the panel arrays (the last five).
template <class Tuple>
auto without_panels(Tuple&& t) {
  using T = std::remove_cvref_t<Tuple>;
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::tuple<std::tuple_element_t<I, T>...>(std::get<I>(t)...);
  }(std::make_index_sequence<std::tuple_size_v<T> - 5>{});
}
}  // namespace tiled_gpu

template <class Value, class Index>
struct TiledDevice {
  using value_type = Value;
  std::int64_t rows = 0, cols = 0, nnz = 0, work_rows = 0, panels = 0, panel_rows = 256, stage_cap = 1;
  std::int64_t smem_bytes = 48 * 1024;
  int r = 16;
  bool segmented = false, permuted = false;
  cuda::DeviceBuffer<std::int64_t> panel_stage_ptr, stage_map_ptr, slab_ptr, seg_ptr;
  cuda::DeviceBuffer<Index> map, out_row, seg_list;
  cuda::DeviceBuffer<std::uint16_t> ell_idx;
  cuda::DeviceBuffer<Value> ell_val;
  // kernel=rows
  bool sell = false;
  std::int64_t kt = 0;
  int batch = 8;        ///< B-row loads per batch of the rows kernel (4 + dependent tail, 8: predicated)
  bool stream = true;   ///< C stores st.global.cs
  bool batch_auto = true;   ///< batch from the option's auto: half a warp or more a row takes 4 (rows_batch)
  bool cstore_auto = true;  ///< stream from the option's auto: batch 8 or groups of >= 16 lanes (rows_stream)
  int schedule = 0;  ///< TiledStorage::schedule: 0 auto, 1 grid, 2 stride
  std::string device = "h200";
  model::ReuseProfile reuse;
  cuda::DeviceBuffer<Index> wr_begin, wr_end, col_idx;
  cuda::DeviceBuffer<Value> values;
  /// Partial sums of split rows: long_slots·k (kernel=rows) or work_rows·k (sell, segmented).
  /// Sized for k by prepare (reserve_partial), else grown by the first product that needs more.
  mutable cuda::DeviceBuffer<Value> partial;
  // kernel=rows output map (empty for the identity order): dest[w] >= 0 is the C row of work row
  // w (a whole row); dest[w] < 0 is partial slot -(dest[w]+1) (one segment of a split row). The
  // split rows long_row[r] own slots [long_ptr[r], long_ptr[r+1]), their segments in column order.
  bool mapped = false;
  std::int64_t long_rows = 0, long_slots = 0;
  cuda::DeviceBuffer<Index> dest, long_row;
  cuda::DeviceBuffer<std::int64_t> long_ptr;
  // kernel=panel / auto (arrays built): see TiledStorage. On the GPU the arrays wait for the
  // first product that runs the panel kernel (or prepare for one): only spmm at
  // large k reads them, and they took half of the build of short-row matrices (a 5-diagonal
  // band of 3 M rows, fp32: 0.9 of 1.8 ms of kernels, H100). ensure_panels builds them from the
  // stored rows; panel_r, pn_panels and panel_reuse hold the layout from the start.
  int panel_r = 0;
  bool panel_forced = false;
  std::int64_t panel_per_sm = 60;  ///< kernel=auto: fewest panels per SM for the panel kernel
  std::int64_t pn_panels = 0;
  mutable bool panels_pending = false;
  std::int64_t pn_distinct = 0;  ///< Σ_p D_p: the size of pn_col and pn_mask
  mutable cuda::DeviceBuffer<Index> pn_col_ptr, pn_val_ptr, pn_col;
  mutable cuda::DeviceBuffer<std::uint32_t> pn_mask;
  mutable cuda::DeviceBuffer<Value> pn_val;
  double panel_reuse = 0;
  // What the host storage records of its layout choice (download gives it back).
  std::int64_t segsize = 0;
  bool reordered = false;
  /// update_values of a device-built kernel=auto/panel storage: the place of each CSR entry in
  /// pn_val, made by the first update and kept. Not a stored array; storage_bytes counts it.
  cuda::DeviceBuffer<Index> value_map;

  Shape shape() const { return {rows, cols, nnz}; }
  /// Panels of the panel kernel (0 without its layout), whether or not their arrays wait.
  std::int64_t panel_count() const { return pn_panels; }
  /// The host storage (to_csr of a device-built matrix; plan_reason is not kept).
  TiledStorage<Value, Index> download() const;

  /// Every device byte held, the partial sums at their current size included
  /// (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return panel_stage_ptr.bytes() + stage_map_ptr.bytes() + slab_ptr.bytes() + seg_ptr.bytes() +
           map.bytes() + out_row.bytes() + seg_list.bytes() + ell_idx.bytes() + ell_val.bytes() +
           wr_begin.bytes() + wr_end.bytes() + col_idx.bytes() + values.bytes() + partial.bytes() +
           dest.bytes() + long_row.bytes() + long_ptr.bytes() + pn_col_ptr.bytes() +
           pn_val_ptr.bytes() + pn_col.bytes() + pn_mask.bytes() + pn_val.bytes() + value_map.bytes();
  }

  /// The option-given scalars of the host storage `h` (its built layout aside).
  void set_options(const TiledStorage<Value, Index>& h) {
    panel_rows = h.panel_rows;
    stage_cap = h.stage_cap;
    smem_bytes = h.smem_bytes;
    r = h.r;
    sell = h.sell;
    kt = h.kt;
    panel_per_sm = h.panel_per_sm;
    device = h.device;
    schedule = h.schedule;
  }

  /// batch and stream from the options batch and cstore (0 = auto) and the mean work row.
  void set_batch(int batch_option, int cstore_option) {
    // Short work rows (lap2d, G3_circuit: ~5 nonzeros) ran ~20 % slower on the H100 with the
    // predicated batch of 8 + streaming C stores than with batches of 4 + a dependent tail and
    // plain stores; long rows (random_k: 16) ran 25 % faster. Auto follows that.
    const double mean_row = work_rows > 0 ? static_cast<double>(nnz) / static_cast<double>(work_rows) : 0.0;
    batch = batch_option != 0 ? batch_option : (mean_row < 8.0 ? 4 : 8);
    stream = cstore_option != 0 ? cstore_option == 2 : batch == 8;
    batch_auto = batch_option == 0;
    cstore_auto = cstore_option == 0;
  }

  /// The batch of a product whose row groups have `lanes` lanes (G of the rows kernel), and
  /// whether its C stores stream. A group of half a warp or more (fp32 K-tiles of 64 columns
  /// or more, fp64 of 32) loads 256 bytes or more per B row: four rows in flight are enough,
  /// and eight cost the registers of the warps that would hide the gathers' latency. Measured
  /// on an H100, SpMM row-major against the fastest cuSPARSE, batch 8 -> 4 (and plain C
  /// stores), same run: fp32 K = 128 EAT_RS 0.73× -> 0.87×, email-Enron 0.74× -> 0.85×,
  /// Maragal_6 0.74× -> 0.82×, bcsstk29 0.97× -> 0.93×, the others level; fp64 K = 128
  /// loc-Brightkite 0.66× -> 0.92× (bench/results/2026-11-27-h100/tiled-warp-batch). On an
  /// H200 at fp64 K = 32 (16 lanes): ca-HepPh 0.90× -> 1.10×, EAT_RS 0.77× -> 1.06×,
  /// email-Enron 0.83× -> 1.14×, Maragal_6 0.90× -> 1.11×, bcsstk17 1.21× -> 1.42×, the
  /// short-row matrices (batch 4 already) level (bench/results/2026-11-28-h200/tiled-half-warp-batch).
  int rows_batch(int lanes) const { return batch_auto && lanes >= 16 ? 4 : batch; }
  /// Streaming C stores under cstore=auto: with the batch of 8, and for groups of half a warp or
  /// more, whose C rows (256 bytes or more each) would otherwise push gathered B rows out of L2.
  /// Measured on an H200, same run, auto against plain stores for these groups, SpMM row-major
  /// against the fastest cuSPARSE over 25 matrices: fp32 K = 128 1.180× -> 1.194× (email-Enron
  /// 0.87× -> 1.00×, rgg_n_2_15_s0 1.20× -> 1.37×), fp32 K = 64 1.509× -> 1.514×, fp64 K = 32
  /// 1.538× -> 1.543×, fp64 K = 128 1.258× -> 1.269×; no matrix more than 1% slower
  /// (bench/results/2026-11-28-h200/tiled-rows-occupancy).
  bool rows_stream(int lanes) const { return cstore_auto ? rows_batch(lanes) == 8 || lanes >= 16 : stream; }

  /// Whether the row kernel at K-tile kt runs the strided schedule (tiled_rows_stride).
  bool rows_stride(std::int64_t kt, std::int64_t sms) const { return tiled_rows_stride<Value>(*this, kt, sms); }

  static TiledDevice upload(const TiledStorage<Value, Index>& h) {
    TiledDevice d;
    cuda::copy_shape(d, h);
    d.set_options(h);
    d.segsize = h.segsize;
    d.reordered = h.reordered;
    d.panel_reuse = h.panel_reuse;
    d.work_rows = h.work_rows();
    d.panels = h.panels();
    d.segmented = h.segmented();
    d.permuted = !h.out_row.empty();
    // Every array but the panel arrays (the last five), which wait for their first use as in
    // a device-built matrix: both then hold the same bytes.
    cuda::upload_arrays("tiled", tiled_gpu::without_panels(tiled_gpu::device_arrays(d)),
                        tiled_gpu::without_panels(tiled_gpu::host_arrays(h)));
    d.set_batch(h.batch, h.cstore);
    d.reuse = h.reuse;
    d.panel_r = h.panel_r;
    d.panel_forced = h.panel_forced;
    d.pn_panels = h.panel_count();
    d.pn_distinct = static_cast<std::int64_t>(h.pn_col.size());
    d.panels_pending = !h.pn_col_ptr.empty();
    if (!h.sell && !h.out_row.empty()) {
      // dest / long rows from seg_ptr, seg_list (segments of a row are listed in column order).
      std::vector<Index> dest(static_cast<std::size_t>(d.work_rows)), long_row;
      std::vector<std::int64_t> long_ptr{0};
      for (std::int64_t i = 0; i < d.rows; ++i) {
        const std::int64_t q0 = h.seg_ptr[i], q1 = h.seg_ptr[i + 1];
        if (q1 - q0 == 1) {
          dest[static_cast<std::size_t>(h.seg_list[q0])] = static_cast<Index>(i);
          continue;
        }
        for (std::int64_t q = q0; q < q1; ++q)
          dest[static_cast<std::size_t>(h.seg_list[q])] = static_cast<Index>(-(long_ptr.back() + (q - q0)) - 1);
        long_row.push_back(static_cast<Index>(i));
        long_ptr.push_back(long_ptr.back() + (q1 - q0));
      }
      d.mapped = true;
      d.long_rows = static_cast<std::int64_t>(long_row.size());
      d.long_slots = long_ptr.back();
      d.dest = cuda::DeviceBuffer<Index>(dest, "tiled dest");
      d.long_row = cuda::DeviceBuffer<Index>(long_row, "tiled long_row");
      d.long_ptr = cuda::DeviceBuffer<std::int64_t>(long_ptr, "tiled long_ptr");
    }
    return d;
  }
};

/// Builds the panel arrays of `d` where they wait (panels_pending) from its stored rows, queued
/// on the current stream without a wait (tiled_device_build.cu); nothing otherwise.
template <class Value, class Index>
void ensure_panels(const TiledDevice<Value, Index>& d);

/// The host storage's traffic model (tiled_traffic) over the device arrays: a device-built
/// matrix reports what the host-built one does.
template <class Value, class Index>
std::size_t traffic_bytes(const TiledDevice<Value, Index>& d, Op op, std::int64_t k) {
  if (op == Op::spmm) ensure_panels(d);  // the panel kernel's bytes count its arrays
  return tiled_traffic<Value, Index>(d, cuda::storage_bytes(tiled_gpu::device_arrays(d)), d.segmented,
                                     d.work_rows, op, k);
}

/// The device arrays downloaded by name, then the scalars (the model's reuse profile included,
/// doubles by their bits): what the device builder must reproduce (tiled_cuda.cu).
template <class Value, class Index>
std::vector<StoredArray> stored_arrays(const TiledDevice<Value, Index>& d);
/// The device values refreshed from the host copy after its update_values (tiled_cuda.cu).
template <class Value, class Index>
void upload_values(TiledDevice<Value, Index>& d, const TiledStorage<Value, Index>& h);

// Value updates of a device-built storage (tiled_device_build.cu) and the device-only matrix
// over a TiledDevice (tiled_cuda.cu, where the kernels are).
SPMAT_DECLARE_DEVICE_BUILT_STORAGE(TiledDevice)

}  // namespace spmat
