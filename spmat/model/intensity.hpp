// spmat/model/intensity.hpp — the arithmetic-intensity model of tiled SpMM (docs/formats/tiled-spmm.md).
// SPDX-License-Identifier: MIT
//
// Three layers:
//   1. the closed-form intensities (FLOP per DRAM byte): naive SpMM (Eq. 2), tiled SpMM (Eq. 3),
//      tiled SpMM on a segmented matrix (Eq. 6), and the roofline min(I·β, peak);
//   2. the tiling plan shared with the `tiled` format: work rows (row segments, §5.1), their
//      order (bit-pattern sort, §5.2), panels of `panel_rows` work rows, each panel's sorted
//      distinct columns cut into stages of at most `stage_cap` columns, and the per-warp S-ELL
//      slab lengths; `pattern_stats` derives every model input from it (μ, σ, ρ, Z, C_miss, L, U);
//   3. `evaluate`: predictions (algorithmic, all-miss, optimistic, point prediction) for the four
//      variants {baseline, segmented} × {in order, reordered} and the model-chosen variant.
//
// Worked example (spec §3.5 check): Z = 1.25, R = 16, ρ = 4, μ = 20, Γ = 2, δ = 136, fp32,
// B_I = 4, B_IS = 2, map term B_I/(ρμ): tiled_intensity(...) = 2 / 2.94375 = 0.6794 FLOP/B.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/types.hpp"

namespace spmat::model {

// ---- 1. closed forms ---------------------------------------------------------------------------

/// Eq. 2: I = 2μ / (μ(B_T+B_I) + μ·B_T + B_T + δ). 0 when μ == 0.
double naive_intensity(double mu, double bt, double bi, double delta);

/// How the staged-map indices are charged: the paper's B_I/(ρμ), or B_I/(ρR), which is what a
/// kernel that re-reads each map entry once per stage per R-column tile moves (spec open question
/// 5). spmat's kernel does the latter; both are offered.
enum class MapTerm { per_mu, per_r };

/// The inputs of Eqs. 3 and 6 (bytes and dimensionless factors).
struct TiledTerms {
  double z = 1;        ///< S-ELL padding overhead (padded entries / nnz), >= 1
  double r = 16;       ///< register tile (dense columns per thread)
  double rho = 1;      ///< SRAM reuse nnz / Σ_p D_p
  double mu = 1;       ///< nonzeros per work row (μ, or μ* after segmentation)
  double mu_orig = 1;  ///< nonzeros per original row (Eq. 6's last term)
  double gamma = 1;    ///< sparse-access cost Γ (1 = algorithmic)
  double bt = 4, bis = 2, bi = 4;
  double delta = 136;  ///< metadata + C bytes per thread and R-column tile
  MapTerm map_term = MapTerm::per_r;
};

/// Bytes per FMA of the tiled kernel (the denominator of Eq. 3, times 1/2 FLOP-per-FMA).
double tiled_bytes_per_fma(const TiledTerms& t);
/// Eq. 3: 2 / [(B_T+B_IS)Z/R + B_T·Γ/ρ + map term + δ/(Rμ)].
double tiled_intensity(const TiledTerms& t);
/// Eq. 6 (segmented): Eq. 3 with μ = μ* plus B_I/(Rμ*) (the segment's row id) and B_T/μ_orig (one
/// extra partial-result access per output). Γ plays the role of C_miss (same three modes).
double segmented_intensity(const TiledTerms& t);

/// Roofline rate in GFLOP/s: min(I·β, peak), β in GB/s.
double roofline_gflops(double intensity, double bandwidth_gbs, double peak_gflops);

// ---- device ----------------------------------------------------------------------------------

struct DeviceModel {
  std::string name = "H100-SXM";
  double bandwidth_gbs = 3350;    ///< DRAM bandwidth β
  double peak_gflops = 66900;     ///< fp32 peak (halve for fp64 where it applies)
  double l2_bytes = 50.0 * 1024 * 1024;
  int sm_count = 132;
  int line_bytes = 64;            ///< rule 7: 2 sectors of 32 B
  int warp = 32;
  static DeviceModel a100();      ///< the paper's A100-40GB: 1555 GB/s, 19500 GFLOP/s, 40 MB, 108
  static DeviceModel h100();      ///< H100 SXM: 3350 GB/s, 66900 GFLOP/s fp32, 50 MB, 132
  static DeviceModel h200();      ///< H200: 4800 GB/s, 66900 GFLOP/s fp32, 50 MB, 132
};

// ---- 2. tiling plan --------------------------------------------------------------------------

/// A work row: nonzeros [begin, end) of CSR row `row` (a whole row, or one segment of it).
struct WorkRow {
  std::int64_t row = 0, begin = 0, end = 0;
};

/// Work rows of `a` in row order; rows longer than `segsize` (> 0) are cut into segments of
/// at most segsize nonzeros. Every row, empty ones included, gets at least one work row.
template <class Value, class Index>
std::vector<WorkRow> segment_rows(const Csr<Value, Index>& a, std::int64_t segsize);

/// Stable sort of work rows on their sparsity bit-pattern: column 0 is the most significant bit,
/// so at the first column where two rows differ, the row holding it comes first. Rows with the
/// same pattern keep their order (deterministic).
template <class Value, class Index>
void sort_by_pattern(const Csr<Value, Index>& a, std::vector<WorkRow>& work);

/// The panel/stage/slab structure of the tiled kernel for one work-row order.
template <class Index>
struct TilePlan {
  std::int64_t panel_rows = 256;       ///< work rows per panel (= threads per block), multiple of 32
  std::int64_t stage_cap = 768;        ///< max columns of one stage (SRAM slots), <= 65535
  std::vector<std::int64_t> panel_stage_ptr{0};  ///< panels+1: stages of panel p
  std::vector<std::int64_t> stage_map_ptr{0};    ///< stages+1: map entries of stage s
  std::vector<Index> map;              ///< Σ D_p column ids: each panel's sorted distinct columns
  std::vector<std::int64_t> slab_len;  ///< stages × (panel_rows/32): S-ELL slab length L_w
  std::int64_t panels() const { return static_cast<std::int64_t>(panel_stage_ptr.size()) - 1; }
  std::int64_t stages() const { return static_cast<std::int64_t>(stage_map_ptr.size()) - 1; }
  std::int64_t warps_per_panel() const { return panel_rows / 32; }
};

template <class Value, class Index>
TilePlan<Index> plan_tiles(const Csr<Value, Index>& a, std::span<const WorkRow> work,
                           std::int64_t panel_rows, std::int64_t stage_cap);

/// SRAM slots of one stage: smem_bytes / (R·B_T), capped at 65535 (16-bit indices, 0xFFFF =
/// padding) and at least 1.
std::int64_t stage_capacity(std::int64_t smem_bytes, int r, std::size_t value_bytes);

/// Every model input, computed from the matrix and a plan (spec §3.5).
struct PatternStats {
  std::int64_t m = 0, n = 0, nnz = 0, work_rows = 0, panels = 0, stages = 0;
  double mu = 0, sigma = 0, cv = 0;  ///< per original row
  double mu_star = 0;                ///< nnz per work row
  double sum_d = 0;                  ///< Σ_p D_p (staged columns)
  double n_touched = 0;              ///< nonempty columns of A
  double rho = 1, z = 1, c_miss = 1, l = 1, u = 0;
  double padded = 0;                 ///< S-ELL entries incl. padding
  double max_block_bytes = 0;        ///< DRAM bytes of the heaviest block (all-miss), for latency
  double b_footprint = 0;            ///< bytes of B lines one R-column tile touches (L2 working set)
};

/// σ/μ of the row lengths from rows, nnz and Σ_i len_i² (exact integers, so that the host and
/// the device builders decide alike); 0 for an empty matrix.
inline double row_length_cv(std::int64_t rows, std::int64_t nnz, std::uint64_t sum_sq) {
  if (rows == 0 || nnz == 0) return 0;
  const double mu = static_cast<double>(nnz) / static_cast<double>(rows);
  const double var = static_cast<double>(sum_sq) / static_cast<double>(rows) - mu * mu;
  return std::sqrt(var > 0 ? var : 0.0) / mu;
}

template <class Value, class Index>
double row_length_cv(const Csr<Value, Index>& a) {
  std::uint64_t sum_sq = 0;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    const auto len = static_cast<std::uint64_t>(a.row_ptr[i + 1] - a.row_ptr[i]);
    sum_sq += len * len;
  }
  return row_length_cv(a.rows, a.nnz(), sum_sq);
}

template <class Value, class Index>
PatternStats pattern_stats(const Csr<Value, Index>& a, std::span<const WorkRow> work,
                           const TilePlan<Index>& plan, std::int64_t k, DenseLayout layout,
                           int r, std::size_t value_bytes, const DeviceModel& dev);

// ---- 3. predictions --------------------------------------------------------------------------

struct TileParams {
  int r = 16;                        ///< register tile R (paper: 16)
  std::int64_t panel_rows = 256;     ///< threads per block, one work row each
  std::int64_t smem_bytes = 48 * 1024;
};

/// Load-balancing decision thresholds (paper, Fig. 9 caption).
struct LbThresholds {
  double u_min = 0.65;   ///< underutilized when U < u_min: segment with ceil(U·μ)
  double cv_max = 1.0;   ///< imbalanced when σ/μ > cv_max: segment with ceil(μ)
};

struct Bound {
  double intensity = 0;  ///< FLOP/B
  double gflops = 0;
  double seconds = 0;    ///< 2·nnz·K / rate
};

struct VariantPrediction {
  std::string name;            ///< "baseline", "baseline+reorder", "segmented", "segmented+reorder"
  bool segmented = false;
  bool reordered = false;
  std::int64_t segsize = 0;
  PatternStats stats;
  Bound algorithmic, all_miss, optimistic;
  Bound predicted;             ///< Γ blended by L2 fit, time >= heaviest block at β/SMs
};

struct ModelReport {
  std::int64_t k = 0;
  DenseLayout layout = DenseLayout::row_major;
  std::size_t value_bytes = 4, index_bytes = 4;
  Bound naive;                 ///< Eq. 2 (δ = 8)
  std::vector<VariantPrediction> variants;
  int chosen = 0;              ///< index into variants
  std::string reason;          ///< why (thresholds hit, reorder gain)
};

/// The decision only (no predictions of the other variants): segment size (0 = none) and reorder.
struct Plan {
  std::int64_t segsize = 0;
  bool reorder = false;
  std::string reason;
};

/// Predicts all four variants of tiled SpMM C = A·B (K = k) and chooses one: load balancing by
/// the paper's decision flow (U < u_min → segsize ceil(U·μ); else σ/μ > cv_max → ceil(μ)); row
/// reordering kept iff it raises the predicted all-miss intensity (spec open question 13).
template <class Value, class Index>
ModelReport evaluate(const Csr<Value, Index>& a, std::int64_t k, DenseLayout layout,
                     const TileParams& tile, const DeviceModel& dev, const LbThresholds& lb = {});

/// One variant's prediction for a given segment size and order (used by evaluate and tests).
template <class Value, class Index>
VariantPrediction predict_variant(const Csr<Value, Index>& a, std::int64_t k, DenseLayout layout,
                                  const TileParams& tile, const DeviceModel& dev,
                                  std::int64_t segsize, bool reorder);

/// The load-balancing segment size of the decision flow (0 = baseline).
std::int64_t lb_segsize(const PatternStats& s, const LbThresholds& lb);

// ---- 4. the row-wise kernel (spmat's default GPU kernel of `tiled`, beyond the paper) ------------
//
// A warp group of G lanes owns one work row; each lane owns a contiguous slice of the K-tile
// (float4 / double2 loads along K). A is read once per K-tile, B rows are gathered through
// L1/L2, C is written once. This is Eq. 3 with ρ = 1 (no SRAM staging: reuse comes from the
// caches), Z = 1 (no padding), B_IS = B_I (global column ids) and R = kt (the K-tile), with Γ
// taken from a reuse-distance profile of B rows over panels of work rows instead of C_miss/L.

/// Reuse profile of the B rows a work-row order touches: for every (panel, distinct column) pair
/// the distance in panels to the previous panel that touched the column (cold if none).
struct ReuseProfile {
  std::int64_t rows = 0, cols = 0, nnz = 0, work_rows = 0, panel_rows = 256, panels = 0;
  std::int64_t max_work_row = 0;  ///< longest work row (nonzeros): the latency floor
  double n_touched = 0;           ///< nonempty columns
  double sum_d = 0;               ///< Σ_p D_p (panel-distinct columns)
  double cold = 0;                ///< first touches (= n_touched)
  std::array<double, 48> hist{};  ///< hist[b]: re-touches at distance d in [2^b, 2^(b+1)) panels
  std::int64_t split_rows = 0;       ///< rows cut into more than one work row
  std::int64_t split_work_rows = 0;  ///< their work rows (= partial slots of the GPU kernel)
  /// warp_nnz[g]: nonzero slots a warp walks when groups of 2^g lanes own one work row each
  /// (32 / 2^g consecutive work rows per warp, every group waits for the warp's longest row):
  /// Σ_warps (32/2^g) · max work-row length in the warp. = nnz for equal rows; g = log2(G).
  std::array<double, 6> warp_nnz{};
  double sum_sq = 0;  ///< Σ work-row length² (with nnz and work_rows: the spread of the lengths)
};

/// Lanes per work row of the row-wise kernel for K-tile kt: kt / (16 / value bytes), in [1, 32].
int rows_group_lanes(std::int64_t kt, std::size_t value_bytes);

template <class Value, class Index>
ReuseProfile reuse_profile(const Csr<Value, Index>& a, std::span<const WorkRow> work,
                           std::int64_t panel_rows = 256);

/// Machine constants of the row-wise model, calibrated on H100 runs of kernel=rows (fp32,
/// row-major): lap2d/G3_circuit move their DRAM bytes at 0.43-0.49 of β (K = 32 and 128). The
/// gather ceilings (l1_gbs, l2_gbs) and the capacity-aware hit share are fitted on an H100 run
/// of 7 matrices × K = 16..128 (docs/formats/tiled-spmm.md, "The model"). Refit with
/// bench/tiled_model_eval.py --fit-l2 after each kernel change.
struct RowsCalibration {
  double efficiency = 0.5;        ///< achieved fraction of β (H100: 0.45-0.50)
  double l2_fraction = 0.5;       ///< usable share of L2 for B reuse (H100/H200: two partitions)
  /// Two on-chip gather ceilings next to the DRAM term (time = max of the three):
  /// * l1_gbs: lane-slot gathers through L1 — every nonzero slot of a warp (warp_nnz: groups
  ///   wait for the warp's longest row) fetches its B piece of each tile. Bound case on the
  ///   H100: gen:banded:1000000:8 (17 nnz/row, B pieces shared by neighbouring
  ///   rows: L1 hits) gathers at 5.96-7.11 TB/s for K = 32..128.
  /// * l2_gbs: panel-distinct pieces (Σ_p D_p per tile) crossing L2 → SM. Bound case:
  ///   gen:random_k (no reuse inside a panel, one tile's B resident in L2) at 3.1-3.3 TB/s of
  ///   pieces, 2.7 TB/s once the powerlaw/rmat cases (skewed rows) are fitted too.
  /// Values: the joint grid fit over all 28 H100 cases (7 matrices × K = 16..128) of
  /// bench/tiled_model_eval.py --fit-l2 (max within-25 % + bracketed, then least log error);
  /// leave-one-matrix-out numbers in docs/formats/tiled-spmm.md, "The model".
  double l1_gbs = 5750;
  double l2_gbs = 2700;
  /// The optimistic bound uses the nonzero count (no warp padding) at the hardware's L1 and
  /// L2 rates (l1_peak_gbs, l2_peak_gbs); the all-miss bound the padded counts at rates / rate_spread, DRAM at
  /// efficiency / rate_spread, the walk's latency and the launches × rate_spread (every rate at
  /// the slow end).
  /// rate_spread = 1.25: the spread of the per-matrix rates around the fit in the H100 data.
  double rate_spread = 1.25;
  /// The optimistic bound's L1 ceiling is the hardware's L1 load bandwidth (128 B a clock per
  /// SM; 132 SMs at 1.98 GHz on the H100 and H200: 33 TB/s), not the fitted l1_gbs·rate_spread:
  /// matrices whose neighbouring rows share most of their columns gather faster than the fit.
  /// H100, row kernel, K = 64–128: bcsstk29, bcsstk33, crystk01 and s3rmq4m1 (28–68 nonzeros a
  /// row) at 10.3–11.4 TB/s of slots, against l1_gbs·rate_spread = 7.2 TB/s
  /// (bench/results/2026-11-27-h100/tiled-panel-rule/model_bounds.json).
  double l1_peak_gbs = 33000;
  /// The optimistic bound's L2 → SM ceiling, an estimate of the hardware's rate rather than
  /// the fitted l2_gbs·rate_spread: 5120 bytes a clock (NVIDIA's L2 read bandwidth of the A100;
  /// none is published for Hopper) at 1.98 GHz, 10.1 TB/s. The H200 moved panel-distinct pieces at up to 5.8 TB/s
  /// (gen:random_k:200000:16, fp32 K = 32) and 3.6–3.7 TB/s on EAT_RS and gen:lap2d:1000 at
  /// K = 128, past l2_gbs·rate_spread = 3.4 TB/s
  /// (bench/results/2026-11-29-h200/spmm-model-bounds/model_bounds.json).
  double l2_peak_gbs = 10100;
  /// The panel kernel (kernel=panel) streams B and C at a higher share of β than the row-wise
  /// kernel: 0.59-0.71 on the H100 at K = 128, R = 4 (banded, lap2d, lap3d, G3_circuit); 0.65
  /// is their middle.
  double panel_efficiency = 0.65;
  /// The panel kernel's loads of distinct B slices run at a lower rate than the row kernel's
  /// gathers (l1_gbs): each slice is followed by its mask's shuffles and the values of up to R
  /// rows. Where they bound its time on the H200 (fe_body, gen:banded:1000000:8 and
  /// gen:lap3d27:40 at fp32 K = 64–128 and fp64 K = 32–128) they ran at 3.9–4.2 TB/s
  /// (bench/results/2026-11-29-h200/spmm-model-bounds/model_bounds.json).
  double panel_l1_gbs = 4200;
  /// kernel=auto's rule, mirrored here so the model's decision names the kernel that runs: the
  /// panel kernel for row-major B/C when nnz / Σ_p D_p (R = 4) >= panel_reuse and a B row slice
  /// K·sizeof(value) >= panel_slice_bytes (tiled.cpp: option panel_reuse; tiled_cuda.cu: 256 B).
  double panel_reuse = 1.2;
  double panel_slice_bytes = 256;
  std::int64_t panel_per_sm = 60;  ///< tiled option panel_per_sm (auto_runs_panel)
  /// Bytes of the smallest unit a B piece costs (DRAM and L2): one 32 B sector on NVIDIA parts
  /// (64 B granules fit the H100 data no better: see tiled-spmm.md, Model).
  int granule_bytes = 32;
  double batch_latency_us = 0.8;  ///< one group's batch of nonzeros (dependent index → B load)
  double launch_us = 4.0;         ///< per kernel launch (split rows add the reduction kernel)
  double seg_latency_share = 0.05;  ///< row-wise segment size: longest segment's walk <= this
                                    ///< share of the bandwidth time of the whole-row variant
};

/// The least segment size rows_segsize gives.
inline constexpr std::int64_t kRowsMinSegsize = 64;
/// choose_rows_variant's segments for narrow row groups (at most kShortSegmentLanes lanes a
/// row) at the floor, where they cut at most half of the rows and the rows they cut hold a
/// tenth of the nonzeros or more.
inline constexpr std::int64_t kShortSegsize = 32;
inline constexpr int kShortSegmentLanes = 16;

/// Segment size of the row-wise kernel's segmented variant: the largest power of two S in
/// [64, 2^20] whose walk, ceil(S/4) batches of batch_latency, stays within seg_latency_share of
/// `bandwidth_seconds` (the whole-row variant's bytes / (β·eff)). Rows longer than S are split
/// and summed by the reduction kernel; shorter rows are written straight to C.
std::int64_t rows_segsize(double bandwidth_seconds, const RowsCalibration& cal = {});

enum class BMode { predicted, all_miss, optimistic };

struct RowsTraffic {
  std::int64_t kt = 0, tiles = 0;
  double a_bytes = 0, b_bytes = 0, c_bytes = 0, total = 0;  ///< DRAM bytes
  double l1_bytes = 0;  ///< lane-slot gather bytes (warp_nnz pieces; panel kernel: its loads)
  double l2_bytes = 0;  ///< L2 → SM bytes of B pieces (panel-distinct; panel kernel: per panel)
  double dram_seconds = 0, l1_seconds = 0, l2_seconds = 0, latency_seconds = 0;  ///< terms of the max
  double seconds = 0;  ///< max(bytes / (β·eff), latency floor) + launches (optimistic: bytes/β)
};

/// DRAM bytes and time of the row-wise kernel for K = k with K-tile kt. B pieces cost whole
/// granules (cal.granule_bytes). Predicted DRAM misses: cold touches, plus re-touches farther than
/// the L2 window (l2_fraction·L2 / bytes per panel) that also miss the capacity-aware share
/// 1 - min(1, l2_fraction·L2 / footprint), footprint = touched columns × one tile's piece. `segmented`: the
/// segments of split rows go through a split_work_rows×k partial buffer (written and read once)
/// before C is written; whole rows are written to C directly. Time (predicted, all-miss) =
/// max(DRAM bytes/(β·eff), L1 slots/l1_gbs, L2 pieces/l2_gbs, latency floor) + launches (all-miss:
/// every rate / cal.rate_spread, the latency floor and the launches × it), with
/// L1 slots = warp_nnz × K × value bytes and L2 pieces = Σ_p D_p × K × value bytes (granule-
/// rounded); optimistic = max(bytes/β, nnz·K·B_T/l1_peak_gbs, Σ_p D_p·K·B_T/l2_peak_gbs).
RowsTraffic rows_traffic(const ReuseProfile& p, std::int64_t k, std::int64_t kt,
                         std::size_t value_bytes, std::size_t index_bytes, bool segmented,
                         const DeviceModel& dev, BMode mode, const RowsCalibration& cal = {});

/// The K-tile the row-wise kernel uses for K = k (vector path: powers of two from 4 vectors
/// per row to min(pow2 >= k, 64 vectors)): the one with the least predicted time; ties → wider.
std::int64_t choose_k_tile(const ReuseProfile& p, std::int64_t k, std::size_t value_bytes,
                           std::size_t index_bytes, bool segmented, const DeviceModel& dev,
                           const RowsCalibration& cal = {});

// ---- 5. the panel kernel (kernel=panel): one warp per panel of R consecutive rows -------------
//
// The warp loads each DISTINCT column's B row piece of its panel once (from L2/DRAM), so its
// L1/L2 → SM gather traffic is Σ_panels D_R(panel) × K × value bytes instead of nnz × K × value
// bytes; DRAM traffic is the row-wise kernel's (same block order of rows, same reuse profile).

/// Distinct columns per panel of r consecutive CSR rows.
struct PanelColumns {
  std::int64_t panel_rows = 4, panels = 0;
  double sum_distinct = 0;             ///< Σ_panels distinct columns
  std::int64_t max_panel_distinct = 0; ///< the heaviest panel's distinct columns (latency floor)
};

template <class Value, class Index>
PanelColumns panel_columns(const Csr<Value, Index>& a, std::int64_t r);
/// The same over work rows (segmented and/or reordered, as the format builds them).
template <class Value, class Index>
PanelColumns panel_columns(const Csr<Value, Index>& a, std::span<const WorkRow> work, std::int64_t r);

/// Whether tiled's kernel=auto runs the panel kernel (its arrays built: reuse >= panel_reuse,
/// row lengths balanced, row-major B and C) for a product of k columns: a B row slice
/// k·value_bytes of at least 256 bytes, and at least panel_per_sm panels per SM (0: no minimum).
/// The panel kernel gives a group to each panel of 4 rows, the row kernel (at these K) to each
/// row: with few panels the row kernel's four times as many warps hide the L2 latency of the
/// gathers better than the panel's reuse saves bytes (and the L1 already shares B rows between
/// the neighbouring rows of a block). H100, fp32 K = 128, against the fastest cuSPARSE, row
/// kernel / panel kernel, same run: FEM matrices of 5–15 k rows (9–29 panels per SM) 0.98–1.42×
/// / 0.72–1.40×, vibrobox (23) 1.10× / 0.55×; fe_pwt and fe_body (69, 85) 1.27×, 1.10× / 1.36×,
/// 1.24×; ct2010, delaunay_n16, the 27-point stencil of 64 k rows and lap2d:300 (121–170)
/// 1.06–1.38× / 1.26–1.38×; every matrix of 10^6 rows and more 0.89–1.29× / 1.22–2.21×
/// (bench/results/2026-11-28-h100/tiled-panel-kernel/spmm_k128_fp32.json).
/// panel_per_sm counts panels whose group loads 512-byte slices (fp32 K >= 128, fp64 K >= 64); a
/// group of 256-byte slices keeps half the bytes in flight, so it takes twice the panels. H100,
/// fp32 K = 64 against the fastest cuSPARSE, row kernel / panel kernel: fe_pwt, fe_body and
/// rgg_n_2_15 (62–85 panels per SM) 2.08×, 1.58×, 1.54× / 1.48×, 1.26×, 1.12×; ct2010,
/// delaunay_n16 and lap2d:300 (124–170) 1.19–1.49× / 1.29–1.73×.
inline bool auto_runs_panel(std::int64_t k, std::size_t value_bytes, std::int64_t panels,
                            std::int64_t panel_per_sm, std::int64_t sms) {
  const std::int64_t slice = std::min<std::int64_t>(k * static_cast<std::int64_t>(value_bytes), 512);
  return slice >= 256 && panels * slice >= panel_per_sm * sms * 512;
}

/// Whether the fp32 row kernel at a warp a row (K-tiles of 128 columns: one float4 a lane) runs
/// the strided schedule: one resident grid whose warps walk work rows w, w + S, w + 2S, … (S =
/// warps of the grid), each loading the next row's first column ids and values and the bounds
/// of the row after while it gathers this row's B rows. A row's chain is then its gathers, not
/// bounds → ids → gathers; it pays where that chain is most of a row's time (short rows: mean
/// work row ≤ kStrideMaxMeanRow) and the fixed split of rows to warps stays balanced (σ/μ of the
/// work-row lengths ≤ kStrideMaxCv, at least kStrideMinRowsPerWarp rows a resident warp).
/// Measured on an H200, fp32 K = 128 against the fastest cuSPARSE, the row kernel strided /
/// a warp a row: fe_body 1.55× / 1.25×, fe_pwt 1.69× / 1.48×, delaunay_n16 1.49× / 1.17×,
/// gen:lap2d:1000 1.28× / 0.96×, t60k 1.43× / 1.13×; it lost on the skewed graphs (σ/μ of the
/// row lengths 1.2 or more: 3–30%) and on longer rows (vibrobox, 28 a row, 21%; FEM matrices
/// of 39–68 a row 1–17%) (bench/results/2026-11-29-h200/tiled-strided-rows).
inline constexpr double kStrideMaxMeanRow = 12.0;
inline constexpr double kStrideMaxCv = 0.7;
inline constexpr std::int64_t kStrideMinRowsPerWarp = 4;
/// Resident warps an SM of the strided kernel (64 registers a thread: 8 blocks of 128 threads).
inline constexpr std::int64_t kStrideWarpsPerSm = 32;
inline bool rows_stride_runs(const ReuseProfile& p, std::int64_t kt, std::size_t value_bytes, std::int64_t sms) {
  if (value_bytes != 4 || kt != 128 || p.work_rows <= 0 || p.nnz <= 0) return false;
  const double w = static_cast<double>(p.work_rows);
  const double mean = static_cast<double>(p.nnz) / w;
  const double var = std::max(0.0, p.sum_sq / w - mean * mean);
  return mean <= kStrideMaxMeanRow && std::sqrt(var) <= kStrideMaxCv * mean &&
         p.work_rows >= kStrideMinRowsPerWarp * kStrideWarpsPerSm * sms;
}

/// Time of the panel kernel: DRAM bytes as rows_traffic(p, ...) (whole rows in order) at
/// panel_efficiency, L1 loads = sum_distinct × K × value bytes (granule-rounded) at
/// panel_l1_gbs, L2 pieces = min(Σ_p D_p, sum_distinct) × the same, latency floor of the
/// heaviest panel.
RowsTraffic panel_traffic(const ReuseProfile& p, const PanelColumns& pc, std::int64_t k, std::int64_t kt,
                          std::size_t value_bytes, std::size_t index_bytes, const DeviceModel& dev,
                          BMode mode, const RowsCalibration& cal = {});

struct PanelPrediction {
  PanelColumns columns;
  RowsTraffic predicted, all_miss, optimistic;
};

struct RowsVariant {
  std::string name;
  std::int64_t segsize = 0;
  bool reordered = false;
  ReuseProfile profile;
  RowsTraffic predicted, all_miss, optimistic;
};

/// The four variants {in order, reordered} × {whole rows, paper-segmented} of the row-wise
/// kernel, predicted for K = k; `chosen` = least predicted time.
struct RowsDecision {
  std::vector<RowsVariant> variants;
  int chosen = 0;
  std::string reason;
  PanelPrediction panel;  ///< kernel=panel with R = panel.columns.panel_rows (whole rows, in order)
  /// "rows" or "panel": the kernel with the lesser predicted time (panel only for a > 3 % gain).
  /// The row-wise `chosen` variant is kept either way (what kernel=rows runs).
  std::string kernel = "rows";
  /// The row kernel runs the strided schedule (rows_stride_runs on the chosen variant's profile
  /// and K-tile, fp32 at a warp a row); kernel=auto then keeps the row kernel.
  bool stride = false;
};

/// The row-wise kernel's layout choice among the four variants {whole rows, segmented} ×
/// {in order, reordered} (index i: segmented for i >= 2, reordered for odd i): the segment size
/// of the segmented ones (the walk that is seg_latency_share of the in-order whole-row
/// variant's bandwidth time, rows_segsize; kShortSegsize at its floor when the K-tile gives a
/// row at most kShortSegmentLanes lanes, those segments cut at most half of the rows and the
/// rows they cut hold a tenth of the nonzeros or more),
/// each variant's model K-tile and predicted time, and
/// the chosen one (a later variant only for a > 3 % gain). `profile(segsize, reorder)` gives
/// the reuse profile of a layout; `base` is the one of (0, false). decide_rows and the tiled
/// format's builders (tiled_rows_layout) decide with it.
struct RowsChoice {
  std::int64_t segsize = 0;
  int chosen = 0;
  std::array<ReuseProfile, 4> profiles;
  std::array<std::int64_t, 4> kt{};
  std::array<double, 4> seconds{};
};
RowsChoice choose_rows_variant(const ReuseProfile& base, std::int64_t rows, std::int64_t k,
                               std::size_t value_bytes, std::size_t index_bytes,
                               const DeviceModel& dev, const RowsCalibration& cal,
                               const std::function<ReuseProfile(std::int64_t, bool)>& profile);

template <class Value, class Index>
RowsDecision decide_rows(const Csr<Value, Index>& a, std::int64_t k, const DeviceModel& dev,
                         const LbThresholds& lb = {}, const RowsCalibration& cal = {},
                         std::int64_t panel_rows = 256, std::int64_t panel_r = 4);

/// One row-wise configuration as it ran: segment size (0 = whole rows), order, and K-tile
/// (0 = the model's choose_k_tile). Used to compare predictions with measurements of a run.
template <class Value, class Index>
RowsVariant predict_rows(const Csr<Value, Index>& a, std::int64_t k, const DeviceModel& dev,
                         std::int64_t segsize, bool reorder, std::int64_t kt,
                         const RowsCalibration& cal = {}, std::int64_t panel_rows = 256);


/// Device numbers by name: h100, h200, a100 (ParseError otherwise).
DeviceModel device_by_name(const std::string& name);

}  // namespace spmat::model
