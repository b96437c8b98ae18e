// spmat/formats/csr/csr_plan.hpp — host-side planning of the CUDA CSR kernels: which rows each
// SpMV kernel of the auto path owns (row-length bins), and the tiles of the merge-path kernel.
// SPDX-License-Identifier: MIT
//
// Plain C++ (no CUDA) so that the CPU tests check the decisions and the partitions on machines
// without a GPU; csr_cuda.cu uploads what these functions return. Everything here runs once per
// matrix, in setup.
#pragma once
#include <cstdint>
#include <optional>
#include <limits>
#include <vector>

#include "spmat/formats/csr/csr.hpp"

namespace spmat::csr_plan {

constexpr int kBlock = 256;            ///< threads per block of the row kernels
/// Nonzeros per block on the long-row path: kChunk when the long rows hold enough work to fill
/// the GPU several times over, else smaller, down to kMinChunk, so that the chunks still make
/// about kTargetChunks blocks. Measured on an H100 (fp64 SpMV): Maragal_6 (55 chunks of 4096)
/// 10.2 µs with 4096, 7.8 µs with 2048; rmat:21:16 (about 2,200 chunks) 353 µs with 4096,
/// 409 µs with 2048.
constexpr std::int64_t kChunk = 4096;
constexpr std::int64_t kMinChunk = 1024;
constexpr std::int64_t kTargetChunks = 2048;
constexpr std::int64_t kNoLongRows = std::numeric_limits<std::int64_t>::max();
/// Threads past which the sub-warp kernel has rows to spare: about two full waves of an H100
/// (132 SMs × 2,048 threads); the matrices below it are the ones that fit in L2.
constexpr std::int64_t kManyThreads = std::int64_t(1) << 19;
/// Threads up to which the auto kernel gives every row a warp (about half of one wave of an
/// H100): such a matrix is bound by its longest row's latency, not by idle lanes.
constexpr std::int64_t kFewThreads = std::int64_t(1) << 17;
/// rows × 32 <= kFewThreads.
bool few_rows(std::int64_t rows);
/// threads_per_row: 8 lanes become 4 when that lowers the idle share of a mean row's lane
/// slots by at least this much.
constexpr double kIdleShareGain = 0.1;

/// Longest row of the medium bin (binned auto kernel): a warp finishes it in 16 strided steps,
/// the depth of one kChunk chunk over a kBlock-thread block.
constexpr std::int64_t kWarpRowMax = 32 * (kChunk / kBlock);

/// The bins engage (bins=auto) when the longest row exceeds kSkewMaxOverMean × the mean and the
/// rows they move out of the sub-warp kernel hold at least 1/kMovedShareDen of the nonzeros.
/// A row of length L in a W-lane group holds its whole warp for L/W steps; with a share f of the
/// nonzeros in such rows the sub-warp kernel does up to about 32·f/W more warp steps than a
/// balanced one (one such row per warp), i.e. 12–50 % at f = 1/16 for W = 16..4, while the bins
/// cost one or two more launches. An estimate to tune on the GPU, not a measurement.
constexpr double kSkewMaxOverMean = 4.0;
constexpr std::int64_t kMovedShareDen = 16;

/// Large skewed matrices (bins=auto engaged, at least this many nonzeros) run their spmv on the
/// merge-path tiles instead of the binned kernel. Measured on an H200
/// (bench/results/2026-11-26-h200/ab-refactor/ab_new.json), against the fastest cuSPARSE:
/// powerlaw:2000000:16 (36 M nnz) merge 0.94–0.95×, binned 0.83–0.86×; rmat:21:16 (33 M) both
/// 0.87–0.89×. Below a few million nonzeros the merge path's two or three launches cost more
/// than the binned kernel's one (the skewed real graphs of 0.3–1 M nonzeros: 9 µs against
/// 5–7 µs), so the binned kernel stays there.
constexpr std::int64_t kMergeSpmvMinNnz = std::int64_t(1) << 23;

/// Merge-path tiles: kMergeBlock threads × kMergeIpt items (row ends + nonzeros) per block.
/// An odd item count keeps the per-thread offsets into the staged tile on distinct shared-memory
/// banks when rows are long (stride 7 words in fp32, 14 words per half-warp in fp64).
constexpr int kMergeBlock = 128;
constexpr int kMergeIpt = 7;
constexpr int kMergeTile = kMergeBlock * kMergeIpt;
constexpr int kMaxShortFix = 8;  ///< merge fix-ups summing more tile carries go to a warp each

/// Lanes per row for the sub-warp kernel: 32 for few rows (few_rows); else the largest power
/// of two <= mean row length, clamped to [2, 32]; from 8 lanes up, halved when rows × the halved lanes reach kManyThreads, and a
/// resulting 8 halved once more when 4 lanes idle far fewer lanes per row (kIdleShareGain, the
/// mean row's last strided step). Rounding down keeps more
/// rows per warp (fewer shuffle steps per row, more loads in flight); for the 5-point Laplacian
/// (mean 5) it gives 4 lanes, so one row takes two strided steps of which the second uses one
/// lane. Override with the `tpr` option when tuning on a new device.
int threads_per_row(std::int64_t rows, std::int64_t nnz);

/// Rows longer than this bypass the sub-warp kernel and are split into chunks (RowPlan::chunk),
/// one block each, with a deterministic second reduction. 32× the mean and at least 1024:
/// below that a warp (32 lanes × 32 steps) finishes the row no slower than its neighbours.
/// (The binned path lowers it to kWarpRowMax.)
std::int64_t long_row_threshold(std::int64_t rows, std::int64_t nnz);

/// Which kernel owns which rows of an SpMV (and of every SpMVᵀ but merge's).
/// Unbinned: the sub-warp kernel owns rows of length <= short_max (= long_threshold), the chunk
/// path the longer ones. Binned: sub-warp rows <= short_max, a warp per row for the medium rows
/// (short_max, long_threshold], chunks above. Every row is owned by exactly one kernel.
struct RowPlan {
  CsrKernel kernel = CsrKernel::automatic;  ///< automatic may become scalar (short, even rows)
  int tpr = 2;                              ///< lanes per row of the sub-warp kernels
  bool binned = false;
  std::int64_t max_len = 0;
  std::int64_t short_max = kNoLongRows;       ///< the sub-warp kernels skip longer rows
  std::int64_t long_threshold = kNoLongRows;  ///< rows longer than this go to chunks
  std::vector<std::int64_t> medium_rows;      ///< binned: ids of the medium rows, ascending
  std::vector<std::int64_t> long_rows;        ///< ids of the long rows, ascending
  std::vector<std::int64_t> long_chunk_ptr{0};  ///< long_rows.size()+1: chunks of long row l
  std::vector<std::int64_t> chunk_row;          ///< row of each chunk
  std::vector<std::int64_t> chunk_begin;        ///< first nonzero of each chunk
  std::int64_t chunk = kChunk;                  ///< nonzeros per chunk (the last of a row: fewer)
  /// automatic kernel, binned by bins=auto, nnz >= kMergeSpmvMinNnz: spmv by the merge-path
  /// tiles (which set_plan then plans too); spmv_t keeps the binned lists
  bool merge_spmv = false;
};

/// The plan for `kernel` (as built: automatic, scalar, vector or merge) on the matrix with
/// `rows` rows and row offsets `row_ptr` (rows+1 entries). `forced_tpr` 0 = from the mean.
/// Binning applies to the automatic kernel only: `bins` on forces it (and skips the scalar
/// choice), off forbids it, automatic decides from the row-length statistics.
template <class Index>
RowPlan plan_rows(std::int64_t rows, const Index* row_ptr, CsrKernel kernel, int forced_tpr,
                  CsrBins bins);

/// plan_rows when the longest row (`max_len`) shows that the plan holds no row lists (no medium
/// rows to bin, no long rows to chunk): decided from rows, nnz and max_len alone, so a build
/// from device arrays needs one reduction instead of row_ptr on the host. nullopt where the
/// plan needs the row lengths (plan_rows then). plan_rows returns this plan where it exists.
std::optional<RowPlan> plan_rows_without_lists(std::int64_t rows, std::int64_t nnz,
                                               std::int64_t max_len, CsrKernel kernel,
                                               int forced_tpr, CsrBins bins);

/// The longest row the sub-warp kernel keeps when the rows are binned, for `tpr` lanes per row:
/// rows up to 2·tpr (mean-length rows take 1–2 strided steps there, tpr <= mean < 2·tpr); with
/// tpr = 32 the sub-warp kernel already is a warp per row and keeps every row up to kWarpRowMax.
std::int64_t binned_short_max(int tpr);

/// The row-length statistics that plan_rows decides from, besides rows and nnz: each over the
/// lengths len of the rows, against thresholds fixed by rows, nnz and the lanes per row
/// (`tpr`: binned_short_max, long_row_threshold). plan_rows sums them on the host in one
/// pass; a build from device arrays sums them on the device (csr_device_build.cu).
struct RowStats {
  std::int64_t max_len = 0;
  std::int64_t moved = 0;              ///< Σ len, binned_short_max(tpr) < len <= long_row_threshold
  std::int64_t long_nnz_binned = 0;    ///< Σ len, len > kWarpRowMax
  std::int64_t long_nnz_unbinned = 0;  ///< Σ len, len > long_row_threshold
};

/// plan_rows' plan from the statistics, without its row lists (medium_rows, long_rows and the
/// chunks empty): kernel, tpr, binned, max_len, short_max, long_threshold and chunk. The lists
/// plan_rows adds hold, ascending, the medium rows (binned only: short_max < len <=
/// long_threshold) and the long rows (len > long_threshold), each cut into ceil(len / chunk)
/// chunks; where neither exists, the plan is complete (plan_rows_without_lists' case among
/// others).
RowPlan plan_from_stats(std::int64_t rows, std::int64_t nnz, const RowStats& stats,
                        CsrKernel kernel, int forced_tpr, CsrBins bins);

/// Merge-path search on the host, with the rule of cuda::merge_path_search (row end i is
/// consumed before nonzero j iff row_end[i] <= j): the kernel searches inside a tile with the
/// device version, and the two must cut the path at the same points.
template <class Index>
std::int64_t merge_path_row(std::int64_t diag, const Index* row_end, std::int64_t rows,
                            std::int64_t nnz);

/// Tiles of kMergeTile merge items: tile b covers diagonals [b·T, min((b+1)·T, rows+nnz)) and
/// starts at row tile_row[b] (tile_row has n_tiles+1 entries, the last one = rows). A tile that
/// finishes the row it started in, begun by earlier tiles, needs a fix-up: those summing more
/// than kMaxShortFix carries are listed (fix_tile, fix_first = first contributing tile).
/// `skewed`: the longest row is more than kSkewMaxOverMean times the mean. The tile kernel then
/// issues a tile's row ends together with its nonzeros (more loads in flight per thread, fewer
/// blocks per SM): the random gathers of skewed graphs gain more from the loads in flight than
/// regular rows lose from the blocks. Measured on an H100 against the other variant in the
/// same run: R-MAT 4–5% faster, power-law 3% in fp64 (level in fp32); banded and Laplacians,
/// 17–56 M nonzeros, 4–10% slower (bench/results/2026-11-27-h100/csr-merge-skewed/variants.json).
struct MergePlan {
  std::int64_t n_tiles = 0;
  std::vector<std::int64_t> tile_row;
  std::vector<std::int64_t> fix_tile, fix_first;
  bool skewed = false;
};

template <class Index>
MergePlan plan_merge(std::int64_t rows, std::int64_t nnz, const Index* row_ptr);

}  // namespace spmat::csr_plan
