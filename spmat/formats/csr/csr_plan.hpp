// spmat/formats/csr/csr_plan.hpp — host-side planning of the CUDA CSR kernels: which rows each
// SpMV kernel of the auto path owns (row-length bins), and the tiles of the merge-path kernel.
// SPDX-License-Identifier: MIT
//
// Plain C++ (no CUDA) so that the CPU tests check the decisions and the partitions on machines
// without a GPU; csr_cuda.cu uploads what these functions return. Everything here runs once per
// matrix, in setup.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
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
/// Smallest chunk of a matrix of few rows (few_rows), which is bound by its longest row's
/// latency: a row of up to 2048 nonzeros is one block's (8 steps a thread, 2 rounds of 4
/// loads) instead of two blocks' and the chain of fence, counter and second sum that joins
/// them. Measured on an H200 (SpMV, µs, csr against the fastest cuSPARSE): ego-Facebook (a row
/// of 1,045) fp64 5.95 (0.88×) -> 5.00 (1.07×), fp32 1.02× -> 1.11×; adder_dcop_05 (1,310)
/// 0.93× -> 1.10–1.13×; hangGlider_2 (1,463) 0.94–0.96× -> 1.11×; their SpMVᵀ, whose chunk
/// kernel then has one block a row, 1–8% slower
/// (bench/results/2026-11-28-h200/csr-few-rows/chunk_variants).
constexpr std::int64_t kFewRowsMinChunk = 2 * kMinChunk;
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

/// Merge-path tiles: kMergeBlock threads × kMergeIpt items (row ends + nonzeros) per block, or
/// kMergeWideIpt (merge_items_per_thread). An odd item count keeps the per-thread offsets into
/// the staged tile on distinct shared-memory banks when rows are long (stride 7 words in fp32,
/// 14 words per half-warp in fp64).
constexpr int kMergeBlock = 128;
constexpr int kMergeIpt = 7;
constexpr int kMergeTile = kMergeBlock * kMergeIpt;
constexpr int kMergeWideIpt = 15;
/// Nonzeros from which a matrix of local columns, rows not skewed, gets the wide tiles.
constexpr std::int64_t kMergeWideMinNnz = std::int64_t(1) << 22;
/// The most shared memory a wide tile's products may take: fp32 (7.5 KiB) gets the wide tiles,
/// fp64 (15 KiB) keeps the narrow ones (merge_items_per_thread).
constexpr std::int64_t kMergeWideMaxTileBytes = 8192;
constexpr int kMaxShortFix = 8;  ///< merge fix-ups summing more tile carries go to a warp each

/// Owner completion of the merge-path rows (MergePlan::owner): each row is summed by the tile
/// that holds its first merge item (its first nonzero, or the end of an empty row). A tile
/// drops the partial of a first row that began in an earlier tile, and reads its last row on
/// past its own end when it began that row. One launch then completes every row: no carries,
/// no fix-up kernel, whose launch is most of the time of a product of a few microseconds. The
/// reads past the end cost the tile up to the longest row: kMergeOwnerMaxRow / kMergeBlock
/// loads a thread, in rounds of four; a matrix with a longer row keeps the carries and
/// fix-ups, which split a long row over as many tiles as it spans. So does a matrix of more
/// than kMergeOwnerMaxItems merge items, where the fix-up launch overlaps the tile kernel's
/// end and costs less than the ownership words and the block sum of every tile.
/// Measured on an H200 (SpMV, csr-merge against the fastest cuSPARSE in the same run, owner
/// completion against carries, both without the one-wave prefetch of csr_cuda.cu): the real
/// matrices of 0.2–0.6 M nonzeros 0.72–0.85× -> 0.84–1.04× in fp32, 0.61–0.91× -> 0.75–1.08× in
/// fp64; rows of 1,100–1,400 nonzeros (email-Enron, loc-Brightkite) gain as much; a row of
/// 5,941 (Maragal_6), 46 loads a thread in 12 rounds, 0.75× -> 0.39× in fp64; lap2d:2000,
/// lap3d:200 and the band 1–5% slower. Above kMergeOwnerMaxItems on an H100: lap3d27:100 and
/// random_k:3000000:12 1–7% slower, banded:2000000:4 2–4% faster, G3_circuit level
/// (bench/results/2026-11-27-h200/csr-merge-owner, bench/results/2026-11-27-h100/csr-merge-owner).
constexpr std::int64_t kMergeOwnerMaxRow = 2048;
/// Rows of more than kMergeOwnerMaxMean nonzeros on average keep the carries too: the tile
/// that begins a row reads it to its end, and the tiles after it still stage the products of
/// that row, which they drop, so a matrix of long rows reads each nonzero about
/// 1 + mean / (2·kMergeTile) times, twice once rows outgrow a tile. Measured on an H200,
/// carries against owner completion (same run, against the fastest cuSPARSE): 2,000 × 200,000
/// of 2,048 a row 0.59× -> 0.93×, 20,000 × 10⁶ of 400 0.80× -> 0.95×, 2,000² dense 0.71–0.80× ->
/// 0.82–0.93×; bands of 73–121 a row -2% to +4%, 53 a row and random rows of 40 level
/// (bench/results/2026-11-29-h200/csr-merge-split/tried/owner_and_loads.json).
constexpr std::int64_t kMergeOwnerMaxMean = 64;
constexpr std::int64_t kMergeOwnerMaxItems = std::int64_t(1) << 23;

/// Tile b's ownership word under owner completion (MergePlan::tile_own): kTileSkipsFirstRow
/// when its first row began in an earlier tile; kTileCompletesLastRow when it began its last
/// row (the one not ended inside it), with that row's nonzeros past the tile's end in the bits
/// from kTilePastEndShift up. The tile covers nonzeros [nz0, nz1); its first row begins at
/// first_begin; its last row, if any (has_last: not past the last row), spans
/// [last_begin, last_end). Host and device (constexpr functions are device functions here).
constexpr std::int32_t kTileSkipsFirstRow = 1;
constexpr std::int32_t kTileCompletesLastRow = 2;
constexpr int kTilePastEndShift = 2;
constexpr std::int32_t tile_ownership(std::int64_t nz0, std::int64_t nz1, std::int64_t first_begin,
                                      bool has_last, std::int64_t last_begin,
                                      std::int64_t last_end) {
  std::int32_t w = first_begin < nz0 ? kTileSkipsFirstRow : 0;
  if (has_last && last_begin >= nz0 && last_begin < nz1)
    w |= kTileCompletesLastRow | static_cast<std::int32_t>((last_end - nz1) << kTilePastEndShift);
  return w;
}

/// Column locality, from a sample of the rows: of the sampled nonzeros (r, c), those whose row's
/// predecessor r−1 holds a column within kNearColumns of c. Rows with that property gather x
/// entries their neighbours gathered a moment before (bands, stencils, finite elements in a
/// good order: served from L1); rows without it (random columns, graphs in arbitrary order)
/// gather x from L2 or DRAM, one sector per nonzero, and are bound by load latency. Sampled:
/// up to kLocalityRows rows r >= 1 spread evenly (locality_row), up to kLocalityRowNnz nonzeros
/// of each. The same integers from host arrays (column_locality) and device arrays
/// (csr_device_build.cu), so host and device builds plan alike.
constexpr std::int64_t kLocalityRows = 4096;
constexpr std::int64_t kLocalityRowNnz = 64;
constexpr std::int64_t kNearColumns = 8;
struct ColumnLocality {
  std::int64_t near = 0, sampled = 0;
  /// At least half the sampled nonzeros near (a matrix with no sample counts as local).
  bool local() const { return 2 * near >= sampled; }
};
/// The number of sampled rows of a `rows`-row matrix.
constexpr std::int64_t locality_samples(std::int64_t rows) {
  return rows < 2 ? 0 : (rows - 1 < kLocalityRows ? rows - 1 : kLocalityRows);
}
/// Sampled row i < locality_samples(rows).
constexpr std::int64_t locality_row(std::int64_t i, std::int64_t rows) {
  return 1 + i * (rows - 1) / locality_samples(rows);
}
/// Whether the ascending columns [first, last) hold one in [c − kNearColumns, c + kNearColumns]
/// (host and device: constexpr functions are device functions in this build).
template <class Col>
constexpr bool has_near_column(const Col* first, const Col* last, std::int64_t c) {
  std::int64_t lo = 0, hi = last - first;
  while (lo < hi) {  // first column >= c − kNearColumns
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (static_cast<std::int64_t>(first[mid]) < c - kNearColumns)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < last - first && static_cast<std::int64_t>(first[lo]) <= c + kNearColumns;
}
/// ColumnLocality from host arrays.
template <class Index>
ColumnLocality column_locality(std::int64_t rows, const Index* row_ptr, const Index* col_idx);

/// Lanes per row for the sub-warp kernel: 32 for few rows (few_rows); else the largest power
/// of two <= mean row length, clamped to [2, 32]; from 8 lanes up, halved when rows × the halved lanes reach kManyThreads, and a
/// resulting 8 halved once more when 4 lanes idle far fewer lanes per row (kIdleShareGain, the
/// mean row's last strided step). Rounding down keeps more
/// rows per warp (fewer shuffle steps per row, more loads in flight); for the 5-point Laplacian
/// (mean 5) it gives 4 lanes, so one row takes two strided steps of which the second uses one
/// lane. Override with the `tpr` option when tuning on a new device.
int threads_per_row(std::int64_t rows, std::int64_t nnz);

/// Rows longer than this bypass the sub-warp kernel and are split into chunks (RowPlan::chunk),
/// one block each, with a deterministic second reduction: warp_row_threshold, or kWarpRowMax
/// for a matrix of few rows (few_rows: a warp a row, under one wave). Such a matrix is bound by
/// its longest row's strided steps alone: no warp walks more than 16, and a block finishes a
/// chunk (kFewRowsMinChunk) in 8, unrolled by 4. The bound does not scale with the mean: a
/// matrix whose few rows are all long (1 row of 3·10⁵, 64 rows of 8,000) would otherwise keep
/// them on one warp each, 6–250× slower than cuSPARSE. Measured on an H200 (SpMV, µs, csr
/// against the fastest cuSPARSE, chunks of 1024 then): ego-Facebook (4,039 rows, mean 44, rows
/// of up to 1,045) fp64 8.10 (0.63×) -> 6.11 (0.89×), fp32 6.43 (0.80×) -> 5.16 (1.02×).
/// Moving the rows of 128-512 too (3-31 rows of G51, bcsstk08, mbeacxc) ran from 6% slower to
/// 19% faster, fp32 and fp64 disagreeing, so the threshold stays at 16 steps
/// (bench/results/2026-11-28-h200/csr-few-rows). (The binned path lowers it to kWarpRowMax.)
std::int64_t long_row_threshold(std::int64_t rows, std::int64_t nnz);
/// 32× the mean and at least 1024: below that a warp (32 lanes × 32 steps) finishes the row no
/// slower than its neighbours.
std::int64_t warp_row_threshold(std::int64_t rows, std::int64_t nnz);
/// Longest row that spmv_t of a few-row matrix still scatters with one warp
/// (RowPlan::t_whole_rows): warp_row_threshold, at most kFewRowsMinChunk (64 strided steps).
std::int64_t t_whole_row_max(std::int64_t rows, std::int64_t nnz);

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
  /// The sub-warp kernel issues a row's strided steps kBatchSteps at a time (may_batch_steps,
  /// may_batch_warp_rows).
  bool batched = false;
  /// spmv_t runs every row in the sub-warp kernel (no chunks): the long rows are chunked for
  /// the few-row spmv rule alone (long_row_threshold) and are at most t_whole_row_max long.
  /// A warp scatters such a row as fast as its own launch would take the chunks.
  bool t_whole_rows = false;
};

/// Strided steps of a row whose loads the batched sub-warp kernel issues together.
constexpr int kBatchSteps = 4;
/// Whether plan `p` of a `rows`-row matrix may batch its steps, before the columns are looked
/// at: the unbinned auto kernel without long rows (the plain sub-warp kernel runs it), fewer
/// lanes than a warp, rows enough to fill the GPU (rows × tpr >= kManyThreads). It then
/// batches them where the columns are not local (ColumnLocality): a random x gather waits on
/// L2 or DRAM, and a row of three or more steps would wait once per step (the kernel's
/// unroll by two covers two); with local columns the gathers hit L1 and the batch's registers
/// cost more blocks than the latency they hide. Measured on an H200 against the unbatched
/// kernel in the same run, SpMV fp64 / fp32: random_k:3000000:12 (4 lanes, 3 steps)
/// 0.388 -> 0.316 ms / 0.300 -> 0.277 ms; random_k:2000000:16 (8 lanes, 2 steps) level; the
/// band (1 M rows × 17, 4 lanes) 0.070 -> 0.081 ms in fp64, small finite-element matrices up
/// to 30% slower (bench/results/2026-11-27-h200/csr-locality/variants, A against E).
bool may_batch_steps(const RowPlan& p, std::int64_t rows);

/// Mean row length from which a warp a row batches its steps (may_batch_warp_rows).
constexpr std::int64_t kBatchWarpRowMean = 1024;
/// Whether plan `p` of a `rows` × `cols` matrix of `nnz` nonzeros and `value_bytes`-byte values
/// may batch the steps of its warps, before the columns are looked at: the unbinned auto kernel
/// without long rows at a warp a row (too few rows to halve the lanes, rows × 16 < kManyThreads),
/// rows of kBatchWarpRowMean nonzeros or more on average (32 strided steps and more), x larger
/// than kL1ResidentX. It then batches them where the columns are not local: a warp walking a
/// long row waits on one x gather from L2 or DRAM per step pair, and with rows too few to fill
/// the GPU twice over nothing else hides that wait. Measured on an H200 against the unbatched
/// kernel in the same run (SpMV, fastest cuSPARSE / time, fp64 / fp32): random 10,000 × 500,000
/// (1,500 a row) 0.87 / 1.06 -> 1.03 / 1.16, 4,284 × 10⁶ (2,600) 0.93 / 1.05 -> 1.00 / 1.03; but
/// 20,000 × 10⁶ (400 a row) 1.02 / 1.01 -> 0.93 / 0.98, 29,000 × 29,000 (150) 1.30 / 1.44 ->
/// 1.11 / 1.13 and 6,000 × 6,000 (1,000, x in L1) 1.10 / 1.31 -> 1.10 / 1.04, hence the bounds
/// (bench/results/2026-11-29-h200/long-rows/summary.json).
bool may_batch_warp_rows(const RowPlan& p, std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                         std::int64_t value_bytes);

/// Lanes per row once the steps are batched, for lanes `tpr` chosen from the mean row length:
/// doubled (up to 16) until a mean row takes at most kBatchSteps strided steps, one round of
/// loads. threads_per_row halves 8 lanes to 4 where that idles fewer lanes, which a row of more
/// than kBatchSteps steps pays with a second dependent round. Measured on an H100, SpMV fp32
/// against the fastest cuSPARSE, random_k:2000000:20 (mean 20): 4 lanes 0.83×, 8 lanes 0.95×;
/// random_k:3000000:12 (mean 12) keeps 4 lanes, 0.98–1.0× (8 lanes: 0.94–0.96×); fp64
/// random_k:2500000:18 0.54× -> 0.94×. Their SpMVᵀ (same lanes) is level or faster
/// (bench/results/2026-11-27-h100/csr-stream-lanes).
int batched_lanes(int tpr, std::int64_t rows, std::int64_t nnz);

/// Items per thread of the merge-path tiles: kMergeWideIpt for a matrix of at least
/// kMergeWideMinNnz nonzeros whose rows are not skewed and whose columns are local, with values
/// of `value_bytes` whose wide tile takes at most kMergeWideMaxTileBytes; else kMergeIpt.
/// Wider tiles halve the per-tile work (search, scan, carries) per item, but a tile of twice
/// the shared memory halves the blocks per SM: where x gathers miss L1 those blocks are what
/// hides their latency. Measured on an H200 (one binary per width, same run), 15 against 7
/// items, SpMV fp32 against the fastest cuSPARSE: the band 1 M × 17 0.70× -> 0.92×,
/// lap2d:2000 0.74× -> 0.93×, lap3d:200 0.72× -> 0.82×, G3_circuit 0.72× -> 0.77×; but
/// random_k:2000000:16 0.94× -> 0.59× and R-MAT 0.93× -> 0.88×. In fp64 the wide tile's
/// shared memory also takes the L1 that x needs: narrow against wide tiles (one binary, same
/// run, H200), G3_circuit 1.03× -> 1.14×, random 10,000² of 500 a row 0.72× -> 0.90×, bands of
/// 26–121 a row 1–8% faster, no matrix slower by more than 1%; in fp32 the wide tiles stay
/// ahead (a band of 121 a row 1.19× against 1.03×, random 6,000² of 1,000 0.82× against 0.77×)
/// (bench/results/2026-11-29-h200/csr-merge-fp64-tiles).
int merge_items_per_thread(std::int64_t nnz, bool skewed, bool local_columns, std::size_t value_bytes);

/// The plan for `kernel` (as built: automatic, scalar, vector or merge) on the matrix with
/// `rows` rows and row offsets `row_ptr` (rows+1 entries). `forced_tpr` 0 = from the mean.
/// Binning applies to the automatic kernel only: `bins` on forces it (and skips the scalar
/// choice), off forbids it, automatic decides from the row-length statistics.
/// `scalar_allowed` false: the automatic kernel does not become the scalar one (the caller
/// found the columns not local: scalar_suits_columns).
template <class Index>
RowPlan plan_rows(std::int64_t rows, const Index* row_ptr, CsrKernel kernel, int forced_tpr,
                  CsrBins bins, bool scalar_allowed = true);

/// Whether the scalar kernel the automatic one became for short, even rows suits columns of
/// this locality: only local ones. One thread walking its row issues its x gathers one after
/// another, which L1 serves where the columns are local (lap2d, lap3d, G3_circuit: the scalar
/// kernel 1.0–1.4× of cuSPARSE, 4 lanes 0.8–1.0×); random columns wait on L2 or DRAM each
/// time, where the batched sub-warp kernel issues them together. Measured on an H100, SpMV
/// against the fastest cuSPARSE, scalar -> sub-warp (auto lanes, batched): random_k
/// 6 M × 6 0.76× -> 1.01× in fp32, 0.70× -> 0.94× in fp64; 4 M × 7 0.56× -> 0.95× in fp64;
/// random_p 3 M rows (mean 6) 0.55× -> 0.97× in fp64
/// (bench/results/2026-11-27-h100/csr-stream-lanes/short-rows).
constexpr bool scalar_suits_columns(bool local_columns) { return local_columns; }

/// Largest x (bytes) whose gathers count as local whatever the column pattern: it stays in L1.
constexpr std::int64_t kL1ResidentX = std::int64_t(128) << 10;
/// Whether the x gathers of a `rows` × `cols` matrix hit L1 whatever its column pattern: x of
/// at most kL1ResidentX bytes, and rows enough to fill the GPU (rows >= kManyThreads), where
/// it was measured. Such columns count as local (plan_for_columns: the scalar kernel for short
/// rows, no batched steps). Measured on an H200 (SpMV, fastest cuSPARSE / time, fp64 / fp32), 4 batched lanes
/// or 2 lanes -> the scalar kernel: random_k 4 M × 1,000 (4 a row) 0.64 / 0.73 -> 1.47 / 1.41;
/// 2 M × 64 (2) 0.80 / 0.71 -> 1.30 / 1.42; 8 M × 200 (3) 0.98 / 0.96 -> 1.45 / 1.51;
/// 3 M × 8,000 (6) 1.04 / 0.94 -> 1.42 / 1.30. With x past L1 it lost: 2 M × 30,000 (5, x of
/// 240 KB) fp64 1.33 -> 1.19 (bench/results/2026-11-29-h200/csr-shapes/tall_narrow.json).
constexpr bool x_stays_in_l1(std::int64_t rows, std::int64_t cols, std::int64_t value_bytes) {
  return rows >= kManyThreads && cols * value_bytes <= kL1ResidentX;
}

/// The row plan of a `rows` × `cols` matrix of `nnz` nonzeros and `value_bytes`-byte values
/// whose columns may matter: `plan(scalar_allowed)` plans its rows (plan_rows from host offsets,
/// plan_from_stats from device statistics), `sample_columns()` tells whether its sampled columns
/// are local (column_locality, on the host or the device) and is called at most once, only where
/// a choice depends on it and x does not stay in L1 (x_stays_in_l1: local whatever the sample).
/// The automatic kernel keeps the scalar kernel only for local columns (scalar_suits_columns);
/// rows that may batch their steps batch them for columns that are not local (may_batch_steps,
/// with lanes widened for one round of steps where `forced_tpr` is 0: batched_lanes;
/// may_batch_warp_rows). Host and device builds both plan through here, so they plan alike.
RowPlan plan_for_columns(const std::function<RowPlan(bool scalar_allowed)>& plan,
                         const std::function<bool()>& sample_columns, CsrKernel kernel,
                         int forced_tpr, std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                         std::int64_t value_bytes);

/// plan_rows when the longest row (`max_len`) shows that the plan holds no row lists (no medium
/// rows to bin, no long rows to chunk): decided from rows, nnz and max_len alone, so a build
/// from device arrays needs one reduction instead of row_ptr on the host. nullopt where the
/// plan needs the row lengths (plan_rows then). plan_rows returns this plan where it exists.
std::optional<RowPlan> plan_rows_without_lists(std::int64_t rows, std::int64_t nnz,
                                               std::int64_t max_len, CsrKernel kernel,
                                               int forced_tpr, CsrBins bins,
                                               bool scalar_allowed = true);

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
                        CsrKernel kernel, int forced_tpr, CsrBins bins,
                        bool scalar_allowed = true);

/// Merge-path search on the host, with the rule of cuda::merge_path_search (row end i is
/// consumed before nonzero j iff row_end[i] <= j): the kernel searches inside a tile with the
/// device version, and the two must cut the path at the same points.
template <class Index>
std::int64_t merge_path_row(std::int64_t diag, const Index* row_end, std::int64_t rows,
                            std::int64_t nnz);

/// Tiles of T = kMergeBlock·ipt merge items: tile b covers diagonals [b·T, min((b+1)·T, rows+nnz)) and
/// starts at row tile_row[b] (tile_row has n_tiles+1 entries, the last one = rows). Rows are
/// completed by their owner tiles (kMergeOwnerMaxRow) or by carries: then a tile that finishes
/// the row it started in, begun by earlier tiles, needs a fix-up, and those summing more than
/// kMaxShortFix carries are listed (fix_tile, fix_first = first contributing tile).
/// `skewed`: the longest row is more than kSkewMaxOverMean times the mean. The tile kernel then
/// issues a tile's row ends together with its nonzeros (more loads in flight per thread, fewer
/// blocks per SM): the random gathers of skewed graphs gain more from the loads in flight than
/// regular rows lose from the blocks. Measured on an H100 against the other variant in the
/// same run: R-MAT 4–5% faster, power-law 3% in fp64 (level in fp32); banded and Laplacians,
/// 17–56 M nonzeros, 4–10% slower (bench/results/2026-11-27-h100/csr-merge-skewed/variants.json).
struct MergePlan {
  int ipt = kMergeIpt;  ///< items per thread (merge_items_per_thread); tiles of kMergeBlock·ipt
  std::int64_t n_tiles = 0;
  std::vector<std::int64_t> tile_row;
  std::vector<std::int64_t> fix_tile, fix_first;  ///< carries only
  bool skewed = false;
  /// Owner completion (no row longer than kMergeOwnerMaxRow, at most kMergeOwnerMaxItems
  /// merge items; merge_owner_completes): tile_own holds each tile's
  /// ownership word (tile_ownership) and there are no fix-ups; else tile_own is empty and the
  /// tiles pass carries to the fix-up kernels.
  bool owner = false;
  std::vector<std::int32_t> tile_own;
};

/// Whether the merge-path rows of a matrix of `rows` rows, `nnz` nonzeros and longest row
/// `max_len` are completed by their owner tiles (kMergeOwnerMaxRow, kMergeOwnerMaxMean,
/// kMergeOwnerMaxItems).
constexpr bool merge_owner_completes(std::int64_t rows, std::int64_t nnz, std::int64_t max_len) {
  return max_len <= kMergeOwnerMaxRow && rows + nnz <= kMergeOwnerMaxItems &&
         nnz <= kMergeOwnerMaxMean * rows;
}

/// `col_idx`: the columns, for the tile width (column_locality, sampled only where
/// merge_items_per_thread depends on it); nullptr plans the narrow tiles. `value_bytes`: the
/// size of a value (merge_items_per_thread).
template <class Index>
MergePlan plan_merge(std::int64_t rows, std::int64_t nnz, const Index* row_ptr, const Index* col_idx,
                     std::size_t value_bytes);

}  // namespace spmat::csr_plan
