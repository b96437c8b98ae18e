// spmat/formats/tiled/tiled_device_build.cu — `tiled` (kernel = auto, rows, panel) built on the
// GPU from a device CSR, and its value updates.
// SPDX-License-Identifier: MIT
//
// The host builder (tiled.cpp) decides the layout with tiled_rows_layout from the reuse profiles
// (model::reuse_profile) of up to four work-row orders; this builder calls the same function
// with the same profiles computed on the device, so the same rule sees the same numbers. Every
// profile field is an integer count (the doubles hold sums of ones or of integers, exact below
// 2^53), so the device counts give the host's doubles bit for bit. Steps, each a device pass:
//   0. the structure, once: the longest row, and, where no row is longer than kShortRow,
//      whether the pattern is symmetric (a binary search of row c for each entry (r, c));
//   1. work rows of a segment size (one that cuts no row, no row being longer, gives the whole
//      rows): per-row segment counts, a CUB scan (wptr; the count, one scalar, downloaded), one
//      thread per work row (its row by a binary search of wptr);
//   2. reordering (model::sort_by_pattern: stable, lexicographic on the column sequence, the end
//      of a row above every column): one CUB radix sort of the work rows by their first column
//      (`cols` for an empty row), then one CUB stable merge sort of the rows still tied (same
//      first column, not ended) by (tie group, the rest of their columns), comparing columns
//      until they differ (the next kKeptColumns beside each row, the rest read from the CSR).
//      Stable sorts keep equal rows in their original order, as std::stable_sort does;
//   3. the reuse profile over panels of P work rows: each entry's key (column, panel of its work
//      row), written in the order of the work rows (at its place when the rows are laid out in
//      the order: a scan of their lengths), so that the keys come in panel order and a stable
//      radix sort of their column bits alone leaves them in (column, panel) order (an order that
//      moves no row reuses the unreordered profile); a (column, panel) pair is a distinct
//      touch, its distance to the previous pair of the column binned as in the host loop. On a
//      symmetric pattern in whole rows of at most kShortRow entries no sort is needed: the rows
//      touching column c are the columns of row c, whose panels one thread per column sorts in
//      registers. warp_nnz, the longest work row and the split rows from per-row and
//      per-32-position passes. One download of 64 counters;
//   4. the stored arrays: col_idx/values copied, wr_begin/wr_end gathered in the order, the
//      output map (out_row, seg_ptr = wptr, seg_list = the inverse order) and the row kernels'
//      dest / long_row / long_ptr (two CUB scans over the rows);
//   5. the panel layout (kernel=panel, and kernel=auto when the reuse passes panel_reuse):
//      whether each entry's column is new to its panel (binary searches of the panel's earlier
//      work rows) and a CUB scan of those flags, whose total, Σ_p D_p, is downloaded for the
//      reuse test. The arrays themselves wait for the first product that runs the panel kernel
//      (ensure_panels): the same pass again over the stored rows, then each entry's places in
//      pn_col and pn_val counted by binary searches of every work row of its panel, pn_mask by
//      atomicOr of its row bit, and the panel offsets by CUB scans of per-panel sums.
// No nnz-sized array leaves the device, and every temporary is scratch memory freed in stream
// order: the host waits only for the scalars it reads (the structure, the work-row count of a
// segment size, the tied count, the counters per profile, the order check, the panel columns).
// kernel=sell (the staged S-ELL plan and the paper model's pattern statistics) is built on the
// host from a downloaded CSR and uploaded, as is a matrix whose sort keys would not fit 64 bits
// or whose work rows would not fit Index (the host builder then gives its own answer, an
// IndexOverflowError where it throws one).
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <bit>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "spmat/core/typed_options.hpp"
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/tiled/tiled_device.hpp"

namespace spmat {

namespace {

constexpr int kBlock = 256;
using Counter = unsigned long long;  // atomicAdd / atomicMax operand

/// Raised where the device builder cannot reproduce the host builder: the build goes to the host.
struct NeedsHost {};

/// Bits that hold every value 0..v.
int bits_for(std::uint64_t v) { return v == 0 ? 0 : 64 - std::countl_zero(v); }

/// Counters of one reuse profile (download order).
enum : int {
  kCold = 0,        // first touches of a column
  kHist = 1,        // 48 bins of re-touch distances
  kMaxRow = 49,     // longest work row
  kWarpNnz = 50,    // 6 entries, g = 0..5
  kSplitRows = 56,  // rows cut into several work rows
  kSplitWork = 57,  // their work rows
  kSumSq = 58,      // Σ work-row length²
  kCounters = 64
};

struct MaxOp {
  template <class T>
  __host__ __device__ T operator()(const T& x, const T& y) const { return x < y ? y : x; }
};

/// cuda::run_cub with one temporary storage kept across calls (grown when a call needs more):
/// a build runs a dozen or more CUB algorithms (sorts, scans, selects), and an allocation each
/// would cost more than the small ones among them. Scratch memory: a storage outgrown is freed
/// in stream order, after the queued work that reads it, so growing needs no wait.
class Workspace {
 public:
  template <class Call>
  void run(const char* what, Call&& call) {
    std::size_t bytes = 0;
    SPMAT_CUDA_CHECK(call(nullptr, bytes));
    if (bytes > buf_.size() || buf_.size() == 0)  // never null: that would only size again
      buf_ = cuda::ScratchBuffer<std::byte>(std::max<std::size_t>(bytes, 1), what);
    bytes = buf_.size();
    SPMAT_CUDA_CHECK(call(buf_.data(), bytes));
  }

 private:
  cuda::ScratchBuffer<std::byte> buf_;
};

// ---- kernels -------------------------------------------------------------------------------

/// nseg[r]: work rows of row r (model::segment_rows): 1, or ceil(len/seg) for a longer row.
template <class Index>
__global__ void work_count_kernel(const Index* __restrict__ row_ptr, std::int64_t rows, std::int64_t seg,
                                  std::int64_t* __restrict__ nseg) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count()) {
    const std::int64_t len = static_cast<std::int64_t>(row_ptr[r + 1]) - static_cast<std::int64_t>(row_ptr[r]);
    nseg[r] = seg > 0 && len > seg ? (len + seg - 1) / seg : 1;
  }
}

/// Work row j (row order): its row and its range of A's entries.
template <class Index>
__global__ void work_fill_kernel(const Index* __restrict__ row_ptr, std::int64_t rows, std::int64_t seg,
                                 const std::int64_t* __restrict__ wptr, std::int64_t n,
                                 Index* __restrict__ begin, Index* __restrict__ end, Index* __restrict__ row) {
  for (std::int64_t j = cuda::global_thread_id(); j < n; j += cuda::grid_thread_count()) {
    const std::int64_t r = n == rows ? j : cuda::segment_of(wptr, rows, j);  // no row cut: row j
    std::int64_t b = row_ptr[r], e = row_ptr[r + 1];
    if (seg > 0 && e - b > seg) {
      b += (j - wptr[r]) * seg;
      e = min(e, b + seg);
    }
    begin[j] = static_cast<Index>(b);
    end[j] = static_cast<Index>(e);
    row[j] = static_cast<Index>(r);
  }
}

template <class Index>
__global__ void iota_kernel(std::int64_t n, Index* __restrict__ a, Index* __restrict__ b, Index* __restrict__ z) {
  for (std::int64_t i = cuda::global_thread_id(); i < n; i += cuda::grid_thread_count()) {
    a[i] = static_cast<Index>(i);
    if (b) b[i] = static_cast<Index>(i);
    if (z) z[i] = 0;
  }
}

/// The pattern sort's keys at column position t (the build uses t = 0, every row in group 0):
/// key (tie group, column t of the work row, `cols` past its end) of each position, with the
/// work row it holds.
template <class Index>
__global__ void pattern_keys_kernel(std::int64_t n, const Index* __restrict__ pos, const Index* __restrict__ gid,
                                    const Index* __restrict__ perm, const Index* __restrict__ begin,
                                    const Index* __restrict__ end, const Index* __restrict__ col,
                                    std::int64_t t, int cbits, std::int64_t cols,
                                    std::uint64_t* __restrict__ key, Index* __restrict__ val) {
  for (std::int64_t i = cuda::global_thread_id(); i < n; i += cuda::grid_thread_count()) {
    const Index j = perm[pos[i]];
    const std::int64_t q = static_cast<std::int64_t>(begin[j]) + t;
    const std::int64_t c = q < static_cast<std::int64_t>(end[j]) ? static_cast<std::int64_t>(col[q]) : cols;
    key[i] = (static_cast<std::uint64_t>(gid[i]) << cbits) | static_cast<std::uint64_t>(c);
    val[i] = j;
  }
}

/// After the sort: the work rows back onto the positions of their groups; each sorted item's
/// run head (for the scan that names the new groups) and whether it stays tied: its run has
/// another item and has not ended (`cols`: every row of the run ended, so they are equal).
template <class Index>
__global__ void pattern_split_kernel(std::int64_t n, const Index* __restrict__ pos, const std::uint64_t* __restrict__ key,
                                     const Index* __restrict__ val, std::uint64_t cmask, std::int64_t cols,
                                     Index* __restrict__ perm, Index* __restrict__ head, char* __restrict__ tied) {
  for (std::int64_t i = cuda::global_thread_id(); i < n; i += cuda::grid_thread_count()) {
    perm[pos[i]] = val[i];
    const std::uint64_t k = key[i];
    const bool first = i == 0 || key[i - 1] != k;
    head[i] = first ? static_cast<Index>(i) : Index(0);
    const bool pair = !first || (i + 1 < n && key[i + 1] == k);
    tied[i] = pair && (k & cmask) != static_cast<std::uint64_t>(cols);
  }
}

/// Columns of a tied row kept beside it for the merge sort's comparisons, which then read the
/// rows' columns only past them: most tied rows differ within a few columns.
constexpr int kKeptColumns = 2;

/// A work row still tied after the sort by first column: its group (the sorted position where the
/// group starts), the row, and its columns at positions 1 .. kKeptColumns (`cols` past its end).
template <class Index>
struct TiedRow {
  Index group, row;
  Index next[kKeptColumns];
};

/// The pattern order past column position 0 (model::sort_by_pattern: lexicographic on the
/// columns, the end of a row above every column), groups first.
template <class Index>
struct PatternLess {
  const Index* begin;
  const Index* end;
  const Index* col;
  __device__ bool operator()(const TiedRow<Index>& x, const TiedRow<Index>& y) const {
    if (x.group != y.group) return x.group < y.group;
    for (int i = 0; i < kKeptColumns; ++i)
      if (x.next[i] != y.next[i]) return x.next[i] < y.next[i];
    const std::int64_t ex = end[x.row], ey = end[y.row];
    for (std::int64_t qx = begin[x.row] + 1 + kKeptColumns, qy = begin[y.row] + 1 + kKeptColumns;; ++qx, ++qy) {
      const bool x_ended = qx >= ex, y_ended = qy >= ey;
      if (x_ended || y_ended) return !x_ended;  // a column is below an end; two ends are equal
      const Index cx = col[qx], cy = col[qy];
      if (cx != cy) return cx < cy;
    }
  }
};

template <class Index>
__global__ void tied_rows_kernel(std::int64_t n, const Index* __restrict__ pos, const Index* __restrict__ gid,
                                 const Index* __restrict__ perm, const Index* __restrict__ begin,
                                 const Index* __restrict__ end, const Index* __restrict__ col, std::int64_t cols,
                                 TiedRow<Index>* __restrict__ out) {
  for (std::int64_t i = cuda::global_thread_id(); i < n; i += cuda::grid_thread_count()) {
    TiedRow<Index> t;
    t.group = gid[i];
    t.row = perm[pos[i]];
    const std::int64_t b = begin[t.row], e = end[t.row];
    for (int k = 0; k < kKeptColumns; ++k) t.next[k] = static_cast<Index>(b + 1 + k < e ? col[b + 1 + k] : cols);
    out[i] = t;
  }
}

/// The sorted tied rows back onto their groups' positions (ascending, as the groups).
template <class Index>
__global__ void tied_place_kernel(std::int64_t n, const Index* __restrict__ pos, const TiedRow<Index>* __restrict__ rows,
                                  Index* __restrict__ perm) {
  for (std::int64_t i = cuda::global_thread_id(); i < n; i += cuda::grid_thread_count()) perm[pos[i]] = rows[i].row;
}

template <class Index>
__global__ void __launch_bounds__(kBlock)
    moved_count_kernel(std::int64_t n, const Index* __restrict__ perm, Counter* __restrict__ moved) {
  Counter c = 0;
  for (std::int64_t w = cuda::global_thread_id(); w < n; w += cuda::grid_thread_count())
    c += static_cast<std::int64_t>(perm[w]) != w;
  c = cuda::subwarp_sum<32>(c);
  if (cuda::lane_id() == 0 && c) atomicAdd(moved, c);
}

/// wpos[q]: the position (in the order) of the work row holding entry q.
template <class Index>
__global__ void entry_position_kernel(std::int64_t nnz, const Index* __restrict__ row_of,
                                      const Index* __restrict__ row_ptr, const std::int64_t* __restrict__ wptr,
                                      std::int64_t seg, const Index* __restrict__ inv, Index* __restrict__ wpos) {
  for (std::int64_t q = cuda::global_thread_id(); q < nnz; q += cuda::grid_thread_count()) {
    const std::int64_t r = row_of[q], b = row_ptr[r], len = static_cast<std::int64_t>(row_ptr[r + 1]) - b;
    const std::int64_t j = wptr[r] + (seg > 0 && len > seg ? (q - b) / seg : 0);
    wpos[q] = inv ? inv[j] : static_cast<Index>(j);
  }
}

/// wpos[q] from stored work rows (the value map of a device-built matrix).
template <class Index>
__global__ void entry_position_from_ranges_kernel(std::int64_t n, const Index* __restrict__ wr_begin,
                                                  const Index* __restrict__ wr_end, Index* __restrict__ wpos) {
  for (std::int64_t w = cuda::global_thread_id(); w < n; w += cuda::grid_thread_count())
    for (std::int64_t q = wr_begin[w]; q < static_cast<std::int64_t>(wr_end[w]); ++q) wpos[q] = static_cast<Index>(w);
}

/// Each entry's key (column, panel of its work row). Written at q, or, with an order (perm,
/// `start`: the entries before each position, in position order), at the entry's place when the
/// work rows are laid out in the order: the keys then come in panel order as without one.
template <class Key, class Index>
__global__ void reuse_keys_kernel(std::int64_t nnz, const Index* __restrict__ col, const Index* __restrict__ wpos,
                                  const Index* __restrict__ perm, const Index* __restrict__ start,
                                  const Index* __restrict__ begin, std::int64_t panel_rows, int pbits,
                                  Key* __restrict__ key) {
  for (std::int64_t q = cuda::global_thread_id(); q < nnz; q += cuda::grid_thread_count()) {
    const std::int64_t w = wpos[q];
    const std::int64_t at = perm ? static_cast<std::int64_t>(start[w]) + q - static_cast<std::int64_t>(begin[perm[w]]) : q;
    key[at] = static_cast<Key>((static_cast<std::uint64_t>(col[q]) << pbits) | static_cast<std::uint64_t>(w / panel_rows));
  }
}

/// The length of the work row at each position of an order.
template <class Index>
__global__ void ordered_lengths_kernel(std::int64_t n, const Index* __restrict__ perm, const Index* __restrict__ begin,
                                       const Index* __restrict__ end, Index* __restrict__ len) {
  for (std::int64_t w = cuda::global_thread_id(); w < n; w += cuda::grid_thread_count())
    len[w] = static_cast<Index>(static_cast<std::int64_t>(end[perm[w]]) - static_cast<std::int64_t>(begin[perm[w]]));
}

/// The block's partial counters `mine` (valid in lane 0 of each warp; is_max[i]: a maximum, else a sum)
/// added to out[slot[i]] with one atomic per counter and block, not one per warp or item: the
/// counters are a handful of addresses that every block would otherwise queue on.
template <int N>
__device__ void add_block_counters(Counter (&mine)[N], const int (&slot)[N], const bool (&is_max)[N],
                                   Counter* __restrict__ out) {
  __shared__ Counter part[kBlock / 32][N];
  const int lane = cuda::lane_id(), warp = static_cast<int>(threadIdx.x) / 32;
  if (lane == 0)
    for (int i = 0; i < N; ++i) part[warp][i] = mine[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < static_cast<int>(blockDim.x) / 32; ++w)
      for (int i = 0; i < N; ++i) mine[i] = is_max[i] ? max(mine[i], part[w][i]) : mine[i] + part[w][i];
    for (int i = 0; i < N; ++i) {
      if (mine[i] == 0) continue;
      if (is_max[i]) atomicMax(&out[slot[i]], mine[i]);
      else atomicAdd(&out[slot[i]], mine[i]);
    }
  }
}

/// model::reuse_profile's touches from the (column, panel) keys in order: a new column is a cold
/// touch; a new panel of the same column a re-touch at distance d, binned at min(floor(log2 d), 47).
/// Warp-uniform loop: the cold touches are counted in registers, each distance bin once per warp
/// and step for the lanes that share it (__match_any_sync), as most touches of a regular matrix
/// fall in one or two bins.
template <class Key>
__global__ void __launch_bounds__(kBlock)
    reuse_count_kernel(std::int64_t n, const Key* __restrict__ key, int pbits, Counter* __restrict__ out) {
  __shared__ Counter cnt[kHist + 48];
  for (int t = static_cast<int>(threadIdx.x); t < kHist + 48; t += static_cast<int>(blockDim.x)) cnt[t] = 0;
  __syncthreads();
  const std::uint64_t pmask = pbits == 0 ? 0 : (~std::uint64_t{0} >> (64 - pbits));
  const int lane = cuda::lane_id();
  Counter cold = 0;
  for (std::int64_t base = cuda::global_thread_id() - lane; base < n; base += cuda::grid_thread_count()) {
    const std::int64_t i = base + lane;
    int bin = -1;  // no new touch
    if (i < n) {
      const std::uint64_t k = key[i], before = i == 0 ? 0 : key[i - 1];
      if (i == 0 || (before >> pbits) != (k >> pbits)) {
        ++cold;
      } else {
        const std::uint64_t prev = before & pmask, p = k & pmask;
        if (prev != p) bin = min(63 - __clzll(static_cast<long long>(p - prev)), 47);
      }
    }
    const unsigned same = __match_any_sync(cuda::kFullMask, bin);
    if (bin >= 0 && lane == __ffs(same) - 1) atomicAdd(&cnt[kHist + bin], static_cast<Counter>(__popc(same)));
  }
  cold = cuda::subwarp_sum<32>(cold);
  if (lane == 0 && cold) atomicAdd(&cnt[kCold], cold);
  __syncthreads();
  for (int t = static_cast<int>(threadIdx.x); t < kHist + 48; t += static_cast<int>(blockDim.x))
    if (cnt[t]) atomicAdd(&out[t], cnt[t]);
}

/// kAsymmetric: entries (r, c) among the first `nnz` of a square matrix without an entry (c, r)
/// (a binary search of row c each); kLongest: the longest of the first `rows` rows.
enum : int { kAsymmetric = 0, kLongest = 1 };
template <class Index>
__global__ void __launch_bounds__(kBlock)
    structure_kernel(std::int64_t rows, std::int64_t nnz, const Index* __restrict__ row_ptr,
                     const Index* __restrict__ col, const Index* __restrict__ row_of, Counter* __restrict__ out) {
  Counter c[2] = {};
  for (std::int64_t i = cuda::global_thread_id(); i < max(rows, nnz); i += cuda::grid_thread_count()) {
    if (i < rows) c[kLongest] = max(c[kLongest], static_cast<Counter>(row_ptr[i + 1] - row_ptr[i]));
    if (i < nnz) {
      const std::int64_t r = row_of[i], k = col[i], e = row_ptr[k + 1];
      const std::int64_t l = cuda::lower_bound(col, row_ptr[k], e, r);
      if (!(l < e && static_cast<std::int64_t>(col[l]) == r)) ++c[kAsymmetric];
    }
  }
  c[kAsymmetric] = cuda::subwarp_sum<32>(c[kAsymmetric]);
  for (int o = 16; o > 0; o /= 2) c[kLongest] = max(c[kLongest], __shfl_xor_sync(cuda::kFullMask, c[kLongest], o));
  const int slot[2] = {kAsymmetric, kLongest};
  const bool is_max[2] = {false, true};
  add_block_counters(c, slot, is_max, out);
}

/// Rows up to this long are sorted in registers by symmetric_touch_kernel.
constexpr int kShortRow = 32;

/// reuse_count_kernel's counters for a structurally symmetric matrix in whole rows (work row i
/// = row i, at position inv[i], or i without an order), rows of at most kShortRow entries: the
/// rows that touch column c are the columns of row c, so column c's (column, panel) pairs are
/// the panels of row c's columns, sorted here per row instead of by a radix sort of every entry.
/// Touches are binned in registers while they fall in one bin (one or two on a regular matrix).
template <class Index>
__global__ void __launch_bounds__(kBlock)
    symmetric_touch_kernel(std::int64_t rows, const Index* __restrict__ row_ptr, const Index* __restrict__ col,
                           const Index* __restrict__ inv, std::int64_t panel_rows, Counter* __restrict__ out) {
  __shared__ Counter cnt[kHist + 48];
  for (int t = static_cast<int>(threadIdx.x); t < kHist + 48; t += static_cast<int>(blockDim.x)) cnt[t] = 0;
  __syncthreads();
  Counter cold = 0, run = 0;
  int run_bin = 0;
  for (std::int64_t c = cuda::global_thread_id(); c < rows; c += cuda::grid_thread_count()) {
    const std::int64_t b = row_ptr[c], len = static_cast<std::int64_t>(row_ptr[c + 1]) - b;
    if (len == 0) continue;  // column c untouched
    std::int64_t p[kShortRow];
    for (std::int64_t i = 0; i < len; ++i) {
      const std::int64_t x = col[b + i];
      p[i] = (inv ? static_cast<std::int64_t>(inv[x]) : x) / panel_rows;
    }
    if (inv)
      for (std::int64_t i = 1; i < len; ++i)
        for (std::int64_t j = i; j > 0 && p[j - 1] > p[j]; --j) {
          const std::int64_t t = p[j];
          p[j] = p[j - 1];
          p[j - 1] = t;
        }
    ++cold;
    for (std::int64_t i = 1; i < len; ++i) {
      if (p[i] == p[i - 1]) continue;
      const int bin = min(63 - __clzll(static_cast<long long>(p[i] - p[i - 1])), 47);
      if (bin != run_bin) {
        if (run) atomicAdd(&cnt[kHist + run_bin], run);
        run_bin = bin;
        run = 0;
      }
      ++run;
    }
  }
  if (run) atomicAdd(&cnt[kHist + run_bin], run);
  cold = cuda::subwarp_sum<32>(cold);
  if (cuda::lane_id() == 0 && cold) atomicAdd(&cnt[kCold], cold);
  __syncthreads();
  for (int t = static_cast<int>(threadIdx.x); t < kHist + 48; t += static_cast<int>(blockDim.x))
    if (cnt[t]) atomicAdd(&out[t], cnt[t]);
}

/// Per 32 positions of the order: the longest work row, and Σ (32/2^g)·(longest of each group of
/// 32/2^g positions) for g = 0..5 (model::ReuseProfile::warp_nnz). One warp per 32 positions,
/// lane i reading position i (coalesced); the group maxima by butterfly steps, each step doubling
/// the group; the sums in registers until one atomic per counter and block.
template <class Index>
__global__ void __launch_bounds__(kBlock)
    warp_slots_kernel(std::int64_t n, const Index* __restrict__ perm, const Index* __restrict__ begin,
                      const Index* __restrict__ end, Counter* __restrict__ out) {
  const int lane = cuda::lane_id();
  const std::int64_t groups = (n + 31) / 32;
  const std::int64_t warp = cuda::global_thread_id() / 32, warps = cuda::grid_thread_count() / 32;
  Counter c[8] = {};  // c[g] = warp_nnz[g] for g < 6, c[6] = the longest, c[7] = Σ length²
  for (std::int64_t b = warp; b < groups; b += warps) {
    const std::int64_t w = b * 32 + lane;
    std::int64_t m = 0;  // positions past n count as empty rows
    if (w < n) {
      const std::int64_t j = perm ? static_cast<std::int64_t>(perm[w]) : w;
      m = static_cast<std::int64_t>(end[j]) - static_cast<std::int64_t>(begin[j]);
    }
    c[5] += static_cast<Counter>(m);  // groups of one position
    c[7] += static_cast<Counter>(m) * static_cast<Counter>(m);
    for (int o = 1, g = 4; o < 32; o *= 2, --g) {
      m = max(m, __shfl_xor_sync(cuda::kFullMask, m, o));  // the longest of the 2·o lanes' group
      if ((lane & (2 * o - 1)) == 0) c[g] += static_cast<Counter>(2 * o) * static_cast<Counter>(m);
    }
    c[6] = max(c[6], static_cast<Counter>(m));
  }
  for (int g = 0; g < 6; ++g) c[g] = cuda::subwarp_sum<32>(c[g]);
  c[7] = cuda::subwarp_sum<32>(c[7]);
  const int slot[8] = {kWarpNnz, kWarpNnz + 1, kWarpNnz + 2, kWarpNnz + 3, kWarpNnz + 4, kWarpNnz + 5, kMaxRow, kSumSq};
  const bool is_max[8] = {false, false, false, false, false, false, true, false};
  add_block_counters(c, slot, is_max, out);
}

__global__ void __launch_bounds__(kBlock)
    split_count_kernel(std::int64_t rows, const std::int64_t* __restrict__ wptr, Counter* __restrict__ out,
                       std::int64_t* __restrict__ is_split, std::int64_t* __restrict__ split_slots) {
  Counter c[2] = {};  // split rows, their work rows
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count()) {
    const std::int64_t n = wptr[r + 1] - wptr[r];
    if (is_split) is_split[r] = n > 1;
    if (split_slots) split_slots[r] = n > 1 ? n : 0;
    if (n > 1) {
      c[0] += 1;
      c[1] += static_cast<Counter>(n);
    }
  }
  if (!out) return;  // uniform over the grid: no thread of the block is left at the barrier
  for (int i = 0; i < 2; ++i) c[i] = cuda::subwarp_sum<32>(c[i]);
  const int slot[2] = {kSplitRows, kSplitWork};
  const bool is_max[2] = {false, false};
  add_block_counters(c, slot, is_max, out);
}

/// wr_begin/wr_end/out_row in the order; `mismatch` counts positions whose work row is not row w.
template <class Index>
__global__ void order_fill_kernel(std::int64_t n, const Index* __restrict__ perm, const Index* __restrict__ begin,
                                  const Index* __restrict__ end, const Index* __restrict__ row,
                                  Index* __restrict__ wr_begin, Index* __restrict__ wr_end,
                                  Index* __restrict__ out_row, Counter* __restrict__ mismatch) {
  for (std::int64_t w = cuda::global_thread_id(); w < n; w += cuda::grid_thread_count()) {
    const std::int64_t j = perm ? static_cast<std::int64_t>(perm[w]) : w;
    wr_begin[w] = begin[j];
    wr_end[w] = end[j];
    if (out_row) out_row[w] = row[j];
    if (mismatch && static_cast<std::int64_t>(row[j]) != w) atomicAdd(mismatch, Counter{1});
  }
}

/// The row kernels' output map (TiledDevice::upload): a whole row's work row goes to its C row;
/// the t-th segment of a split row to partial slot (slots before the row) + t.
template <class Index>
__global__ void dest_kernel(std::int64_t rows, const std::int64_t* __restrict__ wptr, const Index* __restrict__ inv,
                            const std::int64_t* __restrict__ split_before, const std::int64_t* __restrict__ slots_before,
                            Index* __restrict__ dest, Index* __restrict__ long_row, std::int64_t* __restrict__ long_ptr) {
  for (std::int64_t i = cuda::global_thread_id(); i < rows; i += cuda::grid_thread_count()) {
    const std::int64_t j0 = wptr[i], n = wptr[i + 1] - j0;
    auto at = [&](std::int64_t j) { return inv ? static_cast<std::int64_t>(inv[j]) : j; };
    if (n == 1) {
      dest[at(j0)] = static_cast<Index>(i);
      continue;
    }
    const std::int64_t s = slots_before[i], l = split_before[i];
    for (std::int64_t t = 0; t < n; ++t) dest[at(j0 + t)] = static_cast<Index>(-(s + t) - 1);
    long_row[l] = static_cast<Index>(i);
    long_ptr[l + 1] = s + n;
  }
}

/// Panel arrays, step 1: first[q] = 1 where entry q's column is in no earlier work row of its
/// panel (R work rows per panel, in the order), else 0: one binary search per earlier work row,
/// so that a long row costs its entries a search each, not a walk.
template <class Index>
__global__ void panel_first_kernel(std::int64_t nnz, const Index* __restrict__ col, const Index* __restrict__ wpos,
                                   const Index* __restrict__ wr_begin, const Index* __restrict__ wr_end,
                                   std::int64_t R, Index* __restrict__ first) {
  for (std::int64_t q = cuda::global_thread_id(); q < nnz; q += cuda::grid_thread_count()) {
    const std::int64_t w = wpos[q], c = col[q];
    bool f = true;
    for (std::int64_t v = w - w % R; v < w && f; ++v) {
      const std::int64_t e = wr_end[v], l = cuda::lower_bound(col, wr_begin[v], e, c);
      f = !(l < e && static_cast<std::int64_t>(col[l]) == c);
    }
    first[q] = f ? Index(1) : Index(0);
  }
}

/// Step 2, per panel p (p = np closes the offsets with 0): its distinct columns (the first
/// occurrences in its work rows, from F, the exclusive scan of `first`) and its nonzeros.
template <class Index>
__global__ void panel_sizes_kernel(std::int64_t np, std::int64_t W, std::int64_t R, const Index* __restrict__ wr_begin,
                                   const Index* __restrict__ wr_end, const Index* __restrict__ F,
                                   Index* __restrict__ distinct, Index* __restrict__ entries) {
  for (std::int64_t p = cuda::global_thread_id(); p <= np; p += cuda::grid_thread_count()) {
    std::int64_t d = 0, n = 0;
    for (std::int64_t v = p * R; p < np && v < min(W, (p + 1) * R); ++v) {
      const std::int64_t b = wr_begin[v], e = wr_end[v];
      d += static_cast<std::int64_t>(F[e]) - static_cast<std::int64_t>(F[b]);
      n += e - b;
    }
    distinct[p] = static_cast<Index>(d);
    entries[p] = static_cast<Index>(n);
  }
}

/// Step 3, per entry q of work row w (row r = w % R of panel p): the panel's distinct columns
/// below its column c (rank: the first occurrences below c in each work row, from F), its
/// entries below c (less) and those of column c in earlier work rows (before). The entry is
/// pn_val[pn_val_ptr[p] + less + before] (the host's (column, row) order); its column is
/// pn_col[pn_col_ptr[p] + rank], written by its first occurrence, with bit r of pn_mask.
/// `map` (update_values) takes each entry's place in pn_val; pn_col == nullptr: only that.
template <class Value, class Index>
__global__ void panel_fill_kernel(std::int64_t nnz, std::int64_t W, std::int64_t R, const Index* __restrict__ col,
                                  const Value* __restrict__ values, const Index* __restrict__ wpos,
                                  const Index* __restrict__ wr_begin, const Index* __restrict__ wr_end,
                                  const Index* __restrict__ F, const Index* __restrict__ pn_col_ptr,
                                  const Index* __restrict__ pn_val_ptr, Index* __restrict__ pn_col,
                                  std::uint32_t* __restrict__ pn_mask, Value* __restrict__ pn_val,
                                  Index* __restrict__ map) {
  for (std::int64_t q = cuda::global_thread_id(); q < nnz; q += cuda::grid_thread_count()) {
    const std::int64_t w = wpos[q], c = col[q], r = w % R, p = w / R;
    std::int64_t less = 0, rank = 0, before = 0;
    for (std::int64_t v = w - r; v < min(W, w - r + R); ++v) {
      const std::int64_t b = wr_begin[v], e = wr_end[v];
      const std::int64_t l = v == w ? q : cuda::lower_bound(col, b, e, c);
      less += l - b;
      rank += static_cast<std::int64_t>(F[l]) - static_cast<std::int64_t>(F[b]);
      if (v < w && l < e && static_cast<std::int64_t>(col[l]) == c) ++before;
    }
    const std::int64_t slot = static_cast<std::int64_t>(pn_val_ptr[p]) + less + before;
    if (map) map[q] = static_cast<Index>(slot);
    if (!pn_col) continue;
    const std::int64_t d = static_cast<std::int64_t>(pn_col_ptr[p]) + rank;
    if (before == 0) pn_col[d] = static_cast<Index>(c);
    atomicOr(&pn_mask[d], 1u << r);
    pn_val[slot] = values[q];
  }
}

// ---- host side ------------------------------------------------------------------------------

/// An array the matrix keeps.
template <class T>
cuda::DeviceBuffer<T> buffer(std::int64_t n, const char* what) {
  return cuda::DeviceBuffer<T>(static_cast<std::size_t>(n), what);
}
/// A temporary of the build (or of a value map): freed in stream order, after the kernels queued
/// before its release, so no wait precedes it.
template <class T>
cuda::ScratchBuffer<T> scratch(std::int64_t n, const char* what) {
  return cuda::ScratchBuffer<T>(static_cast<std::size_t>(n), what);
}

/// Σ_i len_i² of the row lengths into *out (zeroed by the caller).
template <class Index>
__global__ void row_square_sum_kernel(const Index* __restrict__ row_ptr, std::int64_t rows, Counter* out) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  Counter s = 0;
  if (i < rows) {
    const auto len = static_cast<Counter>(static_cast<std::int64_t>(row_ptr[i + 1]) - static_cast<std::int64_t>(row_ptr[i]));
    s = len * len;
  }
#pragma unroll
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31u) == 0 && s != 0) atomicAdd(out, s);
}

/// model::row_length_cv of the device CSR, with the host's integer sums.
template <class Value, class Index>
double device_row_length_cv(const DeviceCsrView<Value, Index>& a) {
  if (a.rows == 0 || a.nnz == 0) return 0;
  auto sum = scratch<Counter>(1, "tiled build: row length squares");
  sum.fill_bytes(0);
  cuda::launch_grid_for("row_square_sum_kernel", row_square_sum_kernel<Index>, a.rows, kBlock, a.row_ptr, a.rows,
                        sum.data());
  Counter h = 0;
  cuda::copy_to_host(&h, sum.data(), 1);
  return model::row_length_cv(a.rows, a.nnz, static_cast<std::uint64_t>(h));
}

/// F, the exclusive scan of panel_first_kernel's flags over the entries: nnz + 1 values, F[nnz]
/// = Σ_p D_p (the panels' distinct columns).
template <class Index>
cuda::ScratchBuffer<Index> panel_first_scan(const Index* col, const Index* wpos, const Index* wr_begin,
                                            const Index* wr_end, std::int64_t nnz, std::int64_t R, Workspace& ws) {
  auto first = scratch<Index>(nnz + 1, "tiled build: panel first occurrences");
  auto F = scratch<Index>(nnz + 1, "tiled build: panel column ranks");
  cuda::fill_bytes_async(first.data() + nnz, 0, sizeof(Index));
  if (nnz > 0)
    cuda::launch_grid_for("panel_first_kernel", panel_first_kernel<Index>, nnz, kBlock, nnz, col, wpos, wr_begin,
                          wr_end, R, first.data());
  ws.run("tiled build: scan workspace", [&](void* t, std::size_t& b) {
    return cub::DeviceScan::ExclusiveSum(t, b, first.data(), F.data(), nnz + 1, cuda::stream());
  });
  return F;
}

/// Builds what the host builder builds from a device CSR, step by step (see the file comment).
template <class Value, class Index>
class Builder {
 public:
  explicit Builder(const DeviceCsrView<Value, Index>& a) : a_(a) {}

  /// Work rows cut at `seg` (0: whole rows), in row order.
  struct Ranges {
    std::int64_t count = 0;
    cuda::ScratchBuffer<std::int64_t> wptr;
    cuda::ScratchBuffer<Index> begin, end, row;
  };
  /// The pattern order of the ranges of a segment size: perm (position → work row), inv.
  struct Order {
    cuda::ScratchBuffer<Index> perm, inv;
    bool identity = false;  ///< every work row keeps its position
  };

  const Ranges& ranges(std::int64_t seg) {
    seg = effective(seg);
    auto it = ranges_.find(seg);
    if (it != ranges_.end()) return it->second;
    Ranges g;
    const std::int64_t rows = a_.rows;
    g.wptr = scratch<std::int64_t>(rows + 1, "tiled build: work-row offsets");
    if (seg == 0) {  // whole rows: work row i is row i
      g.count = rows;
      cuda::launch_grid_for("iota_kernel", iota_kernel<std::int64_t>, rows + 1, kBlock, rows + 1, g.wptr.data(),
                            static_cast<std::int64_t*>(nullptr), static_cast<std::int64_t*>(nullptr));
    } else {
      cuda::fill_bytes_async(g.wptr.data(), 0, sizeof(std::int64_t));
      auto nseg = scratch<std::int64_t>(rows, "tiled build: work rows per row");
      cuda::launch_grid_for("work_count_kernel", work_count_kernel<Index>, rows, kBlock, a_.row_ptr, rows, seg,
                            nseg.data());
      ws_.run("tiled build: scan workspace", [&](void* t, std::size_t& b) {
        return cub::DeviceScan::InclusiveSum(t, b, nseg.data(), g.wptr.data() + 1, rows, cuda::stream());
      });
      cuda::copy_to_host(&g.count, g.wptr.data() + rows, 1);  // the work rows: sizes below
    }
    // The host builder refuses more work rows than Index holds (and the predictions of a
    // variant would count them in 64 bits): its own path gives its own answer.
    if (g.count > index_max<Index>()) throw NeedsHost{};
    g.begin = scratch<Index>(g.count, "tiled build: work-row begins");
    g.end = scratch<Index>(g.count, "tiled build: work-row ends");
    g.row = scratch<Index>(g.count, "tiled build: work-row rows");
    if (g.count > 0)
      cuda::launch_grid_for("work_fill_kernel", work_fill_kernel<Index>, g.count, kBlock, a_.row_ptr, rows, seg,
                            g.wptr.data(), g.count, g.begin.data(), g.end.data(), g.row.data());
    return ranges_.emplace(seg, std::move(g)).first->second;
  }

  /// `seg`, or 0 where it cuts no row (no row longer): the same work rows, so the same order
  /// and profiles.
  std::int64_t effective(std::int64_t seg) { return seg > 0 && structure().longest > seg ? seg : 0; }

  /// Whether the matrix is structurally symmetric, and its longest row (one pass, kept).
  struct Structure {
    bool symmetric = false;
    std::int64_t longest = 0;
  };
  const Structure& structure() {
    if (structure_) return *structure_;
    Structure st;
    if (a_.rows > 0) {
      auto counters = scratch<Counter>(2, "tiled build: structure counters");
      counters.fill_bytes(0);
      cuda::launch_grid_for("structure_kernel", structure_kernel<Index>, a_.rows, kBlock, a_.rows, std::int64_t{0},
                            a_.row_ptr, a_.col_idx, static_cast<const Index*>(nullptr), counters.data());
      st.longest = static_cast<std::int64_t>(counters.download()[kLongest]);
      // Symmetry matters only to short rows (profile()), and its searches would be long in long rows.
      if (a_.rows == a_.cols && st.longest <= kShortRow) {
        cuda::launch_grid_for("structure_kernel", structure_kernel<Index>, a_.nnz, kBlock, std::int64_t{0}, a_.nnz,
                              a_.row_ptr, a_.col_idx, row_of(), counters.data());
        st.symmetric = counters.download()[kAsymmetric] == 0;
      }
    }
    structure_ = st;
    return *structure_;
  }

  /// model::sort_by_pattern of the work rows of `seg` (see the file comment, step 2).
  const Order& order(std::int64_t seg) {
    seg = effective(seg);
    auto it = orders_.find(seg);
    if (it != orders_.end()) return it->second;
    const Ranges& g = ranges(seg);
    const std::int64_t n0 = g.count;
    Order o;
    o.perm = scratch<Index>(n0, "tiled build: work-row order");
    o.inv = scratch<Index>(n0, "tiled build: work-row positions");
    if (n0 > 0) {
      const int cbits = bits_for(static_cast<std::uint64_t>(a_.cols));  // columns and the end mark
      const std::uint64_t cmask = cbits == 0 ? 0 : (~std::uint64_t{0} >> (64 - cbits));
      auto pos = scratch<Index>(n0, "tiled build: tied positions"), pos2 = scratch<Index>(n0, "tiled build: tied positions");
      auto gid = scratch<Index>(n0, "tiled build: tie groups"), gid2 = scratch<Index>(n0, "tiled build: tie groups");
      auto key = scratch<std::uint64_t>(n0, "tiled build: pattern keys");
      auto key2 = scratch<std::uint64_t>(n0, "tiled build: sorted pattern keys");
      auto val = scratch<Index>(n0, "tiled build: pattern rows"), val2 = scratch<Index>(n0, "tiled build: sorted pattern rows");
      auto head = scratch<Index>(n0, "tiled build: run heads");
      auto tied = scratch<char>(n0, "tiled build: tied flags");
      auto count = scratch<std::int64_t>(1, "tiled build: tied count");
      cuda::launch_grid_for("iota_kernel", iota_kernel<Index>, n0, kBlock, n0, pos.data(), o.perm.data(), gid.data());
      // Every work row by its first column (one group: the key is the column alone).
      cuda::launch_grid_for("pattern_keys_kernel", pattern_keys_kernel<Index>, n0, kBlock, n0, pos.data(), gid.data(),
                            o.perm.data(), g.begin.data(), g.end.data(), a_.col_idx, std::int64_t{0}, cbits, a_.cols,
                            key.data(), val.data());
      ws_.run("tiled build: radix sort workspace", [&](void* tmp, std::size_t& b) {
        return cub::DeviceRadixSort::SortPairs(tmp, b, key.data(), key2.data(), val.data(), val2.data(), n0, 0,
                                               std::max(1, cbits), cuda::stream());
      });
      cuda::launch_grid_for("pattern_split_kernel", pattern_split_kernel<Index>, n0, kBlock, n0, pos.data(),
                            key2.data(), val2.data(), cmask, a_.cols, o.perm.data(), head.data(), tied.data());
      ws_.run("tiled build: scan workspace", [&](void* tmp, std::size_t& b) {
        return cub::DeviceScan::InclusiveScan(tmp, b, head.data(), gid2.data(), MaxOp{}, n0, cuda::stream());
      });
      ws_.run("tiled build: select workspace", [&](void* tmp, std::size_t& b) {
        return cub::DeviceSelect::Flagged(tmp, b, pos.data(), tied.data(), pos2.data(), count.data(), n0,
                                          cuda::stream());
      });
      ws_.run("tiled build: select workspace", [&](void* tmp, std::size_t& b) {
        return cub::DeviceSelect::Flagged(tmp, b, gid2.data(), tied.data(), gid.data(), count.data(), n0,
                                          cuda::stream());
      });
      std::int64_t n = 0;
      cuda::copy_to_host(&n, count.data(), 1);
      if (n > 1) {
        // The rows still tied (same first column, not ended), each group's positions in
        // ascending order: one stable merge sort of (group, row) with the comparison of the
        // rest of the rows' columns. A radix sort per column position would cost a launch
        // sequence and a wait each, as many as the longest shared prefix (~80 on R-MAT).
        auto tied_rows = scratch<TiedRow<Index>>(n, "tiled build: tied rows");
        cuda::launch_grid_for("tied_rows_kernel", tied_rows_kernel<Index>, n, kBlock, n, pos2.data(), gid.data(),
                              o.perm.data(), g.begin.data(), g.end.data(), a_.col_idx, a_.cols, tied_rows.data());
        const PatternLess<Index> less{g.begin.data(), g.end.data(), a_.col_idx};
        ws_.run("tiled build: merge sort workspace", [&](void* tmp, std::size_t& b) {
          return cub::DeviceMergeSort::StableSortKeys(tmp, b, tied_rows.data(), n, less, cuda::stream());
        });
        cuda::launch_grid_for("tied_place_kernel", tied_place_kernel<Index>, n, kBlock, n, pos2.data(),
                              tied_rows.data(), o.perm.data());
      }
      cuda::invert_permutation(o.perm.data(), n0, o.inv.data());
      // Rows already in pattern order (each row's column sequence at or above the previous
      // row's): the reordered profiles are the unreordered ones, and profile() reuses them.
      auto moved = scratch<Counter>(1, "tiled build: moved rows");
      moved.fill_bytes(0);
      cuda::launch_grid_for("moved_count_kernel", moved_count_kernel<Index>, n0, kBlock, n0, o.perm.data(),
                            moved.data());
      Counter m = 0;
      cuda::copy_to_host(&m, moved.data(), 1);
      o.identity = m == 0;
    } else {
      o.identity = true;
    }
    return orders_.emplace(seg, std::move(o)).first->second;
  }

  /// Each entry's work-row position in the order of (seg, reorder).
  cuda::ScratchBuffer<Index> positions(std::int64_t seg, bool reorder) {
    const Ranges& g = ranges(seg);
    const Index* inv = reorder ? order(seg).inv.data() : nullptr;
    auto wpos = scratch<Index>(a_.nnz, "tiled build: entry positions");
    if (a_.nnz > 0)
      cuda::launch_grid_for("entry_position_kernel", entry_position_kernel<Index>, a_.nnz, kBlock, a_.nnz,
                            row_of(), a_.row_ptr, g.wptr.data(), seg, inv, wpos.data());
    return wpos;
  }

  /// model::reuse_profile(a, work rows of (seg, reorder), panel_rows), every field the host's.
  model::ReuseProfile profile(std::int64_t seg, bool reorder, std::int64_t panel_rows) {
    seg = effective(seg);
    const auto id = std::tuple{seg, reorder, panel_rows};
    if (auto it = profiles_.find(id); it != profiles_.end()) return it->second;
    if (reorder && order(seg).identity) return profiles_.emplace(id, profile(seg, false, panel_rows)).first->second;
    const Ranges& g = ranges(seg);
    model::ReuseProfile p;
    p.rows = a_.rows;
    p.cols = a_.cols;
    p.nnz = a_.nnz;
    p.work_rows = g.count;
    p.panel_rows = std::max<std::int64_t>(1, panel_rows);
    p.panels = (p.work_rows + p.panel_rows - 1) / p.panel_rows;
    auto counters = scratch<Counter>(kCounters, "tiled build: profile counters");
    counters.fill_bytes(0);
    if (a_.nnz > 0) {
      const int cbits = bits_for(static_cast<std::uint64_t>(a_.cols - 1));
      const int pbits = bits_for(static_cast<std::uint64_t>(p.panels - 1));
      if (cbits + pbits > 64) throw NeedsHost{};
      const Structure& st = structure();
      if (seg == 0 && st.symmetric && st.longest <= kShortRow) {
        cuda::launch_grid_for("symmetric_touch_kernel", symmetric_touch_kernel<Index>, a_.rows, kBlock, a_.rows,
                              a_.row_ptr, a_.col_idx, reorder ? order(0).inv.data() : nullptr, p.panel_rows,
                              counters.data());
      } else if (auto wpos = positions(seg, reorder); cbits + pbits <= 32) {
        // 32-bit keys where they fit: half the bytes per radix pass.
        count_touches<std::uint32_t>(wpos.data(), g, reorder ? &order(seg) : nullptr, p.panel_rows, cbits, pbits,
                                     counters.data());
      } else {
        count_touches<std::uint64_t>(wpos.data(), g, reorder ? &order(seg) : nullptr, p.panel_rows, cbits, pbits,
                                     counters.data());
      }
    }
    if (g.count > 0) {
      const Index* perm = reorder ? order(seg).perm.data() : nullptr;
      cuda::launch_grid_for("warp_slots_kernel", warp_slots_kernel<Index>, (g.count + 31) / 32 * 32, kBlock, g.count,
                            perm, g.begin.data(), g.end.data(), counters.data());
      cuda::launch_grid_for("split_count_kernel", split_count_kernel, a_.rows, kBlock, a_.rows, g.wptr.data(),
                            counters.data(), static_cast<std::int64_t*>(nullptr),
                            static_cast<std::int64_t*>(nullptr));
    }
    const std::vector<Counter> c = counters.download();
    p.cold = static_cast<double>(c[kCold]);
    p.n_touched = p.cold;
    p.sum_d = p.cold;
    for (int b = 0; b < 48; ++b) {
      p.hist[static_cast<std::size_t>(b)] = static_cast<double>(c[kHist + b]);
      p.sum_d += static_cast<double>(c[kHist + b]);
    }
    p.max_work_row = static_cast<std::int64_t>(c[kMaxRow]);
    for (int w = 0; w < 6; ++w) p.warp_nnz[static_cast<std::size_t>(w)] = static_cast<double>(c[kWarpNnz + w]);
    p.sum_sq = static_cast<double>(c[kSumSq]);
    p.split_rows = static_cast<std::int64_t>(c[kSplitRows]);
    p.split_work_rows = static_cast<std::int64_t>(c[kSplitWork]);
    profiles_.emplace(id, p);
    return p;
  }

  Workspace& workspace() { return ws_; }

 private:
  /// The touch counters of model::reuse_profile from the (column, panel) keys of the entries,
  /// written in position order (through `start` where an order moves rows), so that they come in
  /// panel order and a stable sort of their column bits alone leaves them in (column, panel)
  /// order: cbits instead of cbits + pbits.
  template <class Key>
  void count_touches(const Index* wpos, const Ranges& g, const Order* o, std::int64_t panel_rows, int cbits,
                     int pbits, Counter* counters) {
    auto key = scratch<Key>(a_.nnz, "tiled build: reuse keys");
    auto key2 = scratch<Key>(a_.nnz, "tiled build: sorted reuse keys");
    cuda::ScratchBuffer<Index> start;
    if (o) {
      auto len = scratch<Index>(g.count, "tiled build: ordered work-row lengths");
      start = scratch<Index>(g.count, "tiled build: ordered work-row starts");
      cuda::launch_grid_for("ordered_lengths_kernel", ordered_lengths_kernel<Index>, g.count, kBlock, g.count,
                            o->perm.data(), g.begin.data(), g.end.data(), len.data());
      ws_.run("tiled build: scan workspace", [&](void* t, std::size_t& b) {
        return cub::DeviceScan::ExclusiveSum(t, b, len.data(), start.data(), g.count, cuda::stream());
      });
    }
    cuda::launch_grid_for("reuse_keys_kernel", reuse_keys_kernel<Key, Index>, a_.nnz, kBlock, a_.nnz, a_.col_idx,
                          wpos, o ? o->perm.data() : nullptr, start.data(), g.begin.data(), panel_rows, pbits,
                          key.data());
    // With no column bits (one column) the begin bit's sort is a stable no-op: every key is below it.
    const int end_bit = std::max(pbits + 1, cbits + pbits);
    ws_.run("tiled build: radix sort workspace", [&](void* t, std::size_t& b) {
      return cub::DeviceRadixSort::SortKeys(t, b, key.data(), key2.data(), a_.nnz, pbits, end_bit, cuda::stream());
    });
    cuda::launch_grid_for("reuse_count_kernel", reuse_count_kernel<Key>, a_.nnz, kBlock, a_.nnz, key2.data(), pbits,
                          counters);
  }

  const Index* row_of() {
    if (row_of_.size() == 0 && a_.nnz > 0) {
      row_of_ = scratch<Index>(a_.nnz, "tiled build: entry rows");
      cuda::expand_rows(a_.row_ptr, a_.rows, a_.nnz, row_of_.data());
    }
    return row_of_.data();
  }

  const DeviceCsrView<Value, Index>& a_;
  Workspace ws_;
  cuda::ScratchBuffer<Index> row_of_;
  std::optional<Structure> structure_;
  std::map<std::int64_t, Ranges> ranges_;
  std::map<std::int64_t, Order> orders_;
  std::map<std::tuple<std::int64_t, bool, std::int64_t>, model::ReuseProfile> profiles_;
};

/// The panel layout (tiled.cpp, build_panels) over d's work rows (wr_begin / wr_end, already in
/// the order), R per panel: Σ_p D_p from the first-occurrence pass, the reuse test (none when
/// min_reuse > 0 and nnz / Σ_p D_p < min_reuse), and the host's overflow check. The arrays
/// themselves wait for their first use (ensure_panels).
template <class Value, class Index, class Positions>
void plan_panels(TiledDevice<Value, Index>& d, const DeviceCsrView<Value, Index>& a, Positions&& positions,
                 std::int64_t R, double min_reuse, Workspace& ws) {
  const std::int64_t nnz = a.nnz, W = d.work_rows, np = (W + R - 1) / R;
  std::int64_t total_d = 0;
  if (nnz > 0) {
    const cuda::ScratchBuffer<Index> wpos = positions();
    const auto F = panel_first_scan(a.col_idx, wpos.data(), d.wr_begin.data(), d.wr_end.data(), nnz, R, ws);
    Index t = 0;
    cuda::copy_to_host(&t, F.data() + nnz, 1);  // the reuse test and the sizes
    total_d = static_cast<std::int64_t>(t);
  }
  const double reuse = total_d > 0 ? static_cast<double>(nnz) / static_cast<double>(total_d) : 0.0;
  if (min_reuse > 0 && reuse < min_reuse) return;
  const std::int64_t lim = index_max<Index>();
  if (total_d > lim || nnz > lim || np + 1 > lim)
    throw IndexOverflowError("tiled: kernel=panel: " + std::to_string(total_d) + " panel-distinct columns and " +
                             std::to_string(nnz) + " nonzeros do not fit the " +
                             std::string(index_name<Index>()) + " offsets; use int64 indices");
  d.panel_r = static_cast<int>(R);
  d.panel_reuse = reuse;
  d.pn_panels = np;
  d.pn_distinct = total_d;
  d.panels_pending = true;
}

/// The arrays of upload(TiledStorage::build(csr)) built on the GPU (kernel = auto, rows, panel);
/// `shell`: the options as the host builder parsed them. Throws NeedsHost where it cannot.
template <class Value, class Index>
TiledDevice<Value, Index> build_on_device(const DeviceCsrView<Value, Index>& a, const FormatOptions& o,
                                          const TiledStorage<Value, Index>& shell) {
  const auto opt = parse_options<TiledOptions>(o);
  Builder<Value, Index> b(a);
  const TiledRowsLayout layout = tiled_rows_layout(
      opt, a.rows, sizeof(Value), sizeof(Index),
      [&](std::int64_t seg, bool sorted, std::int64_t pr) { return b.profile(seg, sorted, pr); });
  const std::int64_t seg = layout.segsize;
  const bool reorder = layout.reorder;

  TiledDevice<Value, Index> d;
  cuda::copy_shape(d, a);
  d.set_options(shell);  // sell = false: the caller takes kernel=sell to the host
  d.segsize = seg;
  d.reordered = reorder;
  d.reuse = b.profile(seg, reorder, shell.panel_rows);
  const auto& g = b.ranges(seg);
  const std::int64_t W = g.count, rows = a.rows, nnz = a.nnz;
  d.work_rows = W;
  d.panels = 0;
  d.segmented = W != rows;
  d.set_batch(shell.batch, shell.cstore);

  d.col_idx = buffer<Index>(nnz, "tiled col_idx");
  d.values = buffer<Value>(nnz, "tiled values");
  cuda::copy_device(d.col_idx.data(), a.col_idx, static_cast<std::size_t>(nnz));
  cuda::copy_device(d.values.data(), a.values, static_cast<std::size_t>(nnz));
  const Index* perm = reorder ? b.order(seg).perm.data() : nullptr;
  const Index* inv = reorder ? b.order(seg).inv.data() : nullptr;
  d.wr_begin = buffer<Index>(W, "tiled wr_begin");
  d.wr_end = buffer<Index>(W, "tiled wr_end");
  // The identity order (whole rows, each at its own position) keeps no output map.
  auto mismatch = scratch<Counter>(1, "tiled build: order check");
  mismatch.fill_bytes(0);
  if (W > 0)
    cuda::launch_grid_for("order_fill_kernel", order_fill_kernel<Index>, W, kBlock, W, perm, g.begin.data(),
                          g.end.data(), g.row.data(), d.wr_begin.data(), d.wr_end.data(),
                          static_cast<Index*>(nullptr), mismatch.data());
  Counter moved = 0;
  cuda::copy_to_host(&moved, mismatch.data(), 1);
  const bool identity = W == rows && moved == 0;
  if (!identity) {
    d.permuted = true;
    d.out_row = buffer<Index>(W, "tiled out_row");
    d.seg_list = buffer<Index>(W, "tiled seg_list");
    d.seg_ptr = buffer<std::int64_t>(rows + 1, "tiled seg_ptr");
    cuda::copy_device(d.seg_ptr.data(), g.wptr.data(), static_cast<std::size_t>(rows + 1));
    // seg_list: each row's work rows in column order = row order j, at their positions.
    if (inv) {
      cuda::copy_device(d.seg_list.data(), inv, static_cast<std::size_t>(W));
    } else {
      cuda::launch_grid_for("iota_kernel", iota_kernel<Index>, W, kBlock, W, d.seg_list.data(),
                            static_cast<Index*>(nullptr), static_cast<Index*>(nullptr));
    }
    cuda::launch_grid_for("order_fill_kernel", order_fill_kernel<Index>, W, kBlock, W, perm, g.begin.data(),
                          g.end.data(), g.row.data(), d.wr_begin.data(), d.wr_end.data(), d.out_row.data(),
                          static_cast<Counter*>(nullptr));
    // The row kernels' output map (TiledDevice::upload's, from seg_ptr and seg_list).
    d.mapped = true;
    d.long_rows = d.reuse.split_rows;
    d.long_slots = d.reuse.split_work_rows;
    d.dest = buffer<Index>(W, "tiled dest");
    d.long_row = buffer<Index>(d.long_rows, "tiled long_row");
    d.long_ptr = buffer<std::int64_t>(d.long_rows + 1, "tiled long_ptr");
    d.long_ptr.fill_bytes(0);
    if (rows > 0) {
      auto is_split = scratch<std::int64_t>(rows, "tiled build: split rows");
      auto slots = scratch<std::int64_t>(rows, "tiled build: split slots");
      auto split_before = scratch<std::int64_t>(rows, "tiled build: split rows before");
      auto slots_before = scratch<std::int64_t>(rows, "tiled build: split slots before");
      cuda::launch_grid_for("split_count_kernel", split_count_kernel, rows, kBlock, rows, g.wptr.data(),
                            static_cast<Counter*>(nullptr), is_split.data(), slots.data());
      auto& ws = b.workspace();
      ws.run("tiled build: scan workspace", [&](void* t, std::size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(t, bytes, is_split.data(), split_before.data(), rows, cuda::stream());
      });
      ws.run("tiled build: scan workspace", [&](void* t, std::size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(t, bytes, slots.data(), slots_before.data(), rows, cuda::stream());
      });
      cuda::launch_grid_for("dest_kernel", dest_kernel<Index>, rows, kBlock, rows, g.wptr.data(), inv,
                            split_before.data(), slots_before.data(), d.dest.data(), d.long_row.data(),
                            d.long_ptr.data());
    }
  }
  // kernel=panel: panel_rows is R; kernel=auto: R = 4 when the rows are balanced (σ/μ <= cv_max)
  // and the reuse passes panel_reuse (tiled.cpp).
  if (opt.kernel == "panel" || (opt.kernel == "auto" && device_row_length_cv(a) <= opt.cv_max)) {
    const std::int64_t R = opt.kernel == "panel" ? opt.panel_rows.value_or(4) : 4;
    const double min_reuse = opt.kernel == "panel" ? 0.0 : opt.panel_reuse;
    plan_panels(d, a, [&] { return b.positions(seg, reorder); }, R, min_reuse, b.workspace());
  }
  d.panel_forced = opt.kernel == "panel";
  return d;  // the builder's temporaries (scratch) are freed after the queued kernels
}

}  // namespace

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(std::type_identity<TiledStorage<Value, Index>>,
                                                          const DeviceCsr<Value, Index>& a, const FormatOptions& o) {
  // The options as the host builder parses and checks them (its messages).
  const auto shell = cuda::parsed_options<TiledStorage<Value, Index>>(o);
  if (!shell.sell) {
    try {
      return make_cuda_impl(build_on_device<Value, Index>(a.view(), o, shell));
    } catch (const NeedsHost&) {
      // Sort keys past 64 bits or work rows past Index: the host builder decides.
    }
  }
  // kernel=sell: its staged S-ELL plan (model::plan_tiles) and the paper model's pattern
  // statistics are host code; it is built from a downloaded CSR and uploaded.
  return make_cuda_impl(TiledStorage<Value, Index>::build(cuda::download(a.view()), o));
}

/// The panel arrays (tiled.cpp, build_panels) from the stored rows, in three passes over the
/// entries (file comment, step 5) instead of a sort: the host sorts each panel's (column, row)
/// pairs, and a pair's place in that order is what the searches count. map == nullptr: the
/// arrays, pn_val from `values` (the entries' values in CSR order); else `map` alone (each
/// entry's place in pn_val).
template <class Value, class Index>
void panel_passes(const TiledDevice<Value, Index>& d, const Value* values, Index* map) {
  const std::int64_t nnz = d.nnz, W = d.work_rows, R = d.panel_r, np = d.pn_panels;
  Workspace ws;
  auto wpos = scratch<Index>(nnz, "tiled build: entry positions");
  if (W > 0)
    cuda::launch_grid_for("entry_position_from_ranges_kernel", entry_position_from_ranges_kernel<Index>, W, kBlock,
                          W, d.wr_begin.data(), d.wr_end.data(), wpos.data());
  const auto F = panel_first_scan(d.col_idx.data(), wpos.data(), d.wr_begin.data(), d.wr_end.data(), nnz, R, ws);
  const bool arrays = map == nullptr;
  if (arrays) {  // the offsets, from per-panel sums
    auto distinct = scratch<Index>(np + 1, "tiled build: panel columns");
    auto entries = scratch<Index>(np + 1, "tiled build: panel entries");
    cuda::launch_grid_for("panel_sizes_kernel", panel_sizes_kernel<Index>, np + 1, kBlock, np, W, R,
                          d.wr_begin.data(), d.wr_end.data(), F.data(), distinct.data(), entries.data());
    ws.run("tiled build: scan workspace", [&](void* t, std::size_t& b) {
      return cub::DeviceScan::ExclusiveSum(t, b, distinct.data(), d.pn_col_ptr.data(), np + 1, cuda::stream());
    });
    ws.run("tiled build: scan workspace", [&](void* t, std::size_t& b) {
      return cub::DeviceScan::ExclusiveSum(t, b, entries.data(), d.pn_val_ptr.data(), np + 1, cuda::stream());
    });
    d.pn_mask.fill_bytes(0);
  }
  if (nnz > 0)
    cuda::launch_grid_for("panel_fill_kernel", panel_fill_kernel<Value, Index>, nnz, kBlock, nnz, W, R,
                          d.col_idx.data(), values, wpos.data(), d.wr_begin.data(), d.wr_end.data(), F.data(),
                          d.pn_col_ptr.data(), d.pn_val_ptr.data(), arrays ? d.pn_col.data() : nullptr,
                          arrays ? d.pn_mask.data() : nullptr, arrays ? d.pn_val.data() : nullptr, map);
}

template <class Value, class Index>
void ensure_panels(const TiledDevice<Value, Index>& d) {
  if (!d.panels_pending) return;
  d.pn_col_ptr = buffer<Index>(d.pn_panels + 1, "tiled pn_col_ptr");
  d.pn_val_ptr = buffer<Index>(d.pn_panels + 1, "tiled pn_val_ptr");
  d.pn_col = buffer<Index>(d.pn_distinct, "tiled pn_col");
  d.pn_mask = buffer<std::uint32_t>(d.pn_distinct, "tiled pn_mask");
  d.pn_val = buffer<Value>(d.nnz, "tiled pn_val");
  panel_passes(d, d.values.data(), static_cast<Index*>(nullptr));
  d.panels_pending = false;
}

template <class Value, class Index>
void update_values(TiledDevice<Value, Index>& d, const Value* values, Memory where) {
  if (d.nnz == 0) return;
  if (d.sell) throw Error("tiled: internal error: a device-built storage holds no S-ELL slots");
  cuda::DeviceBuffer<Value> staging;
  const Value* src = cuda::device_values(values, static_cast<std::size_t>(d.nnz), where, staging);
  cuda::copy_device(d.values.data(), src, static_cast<std::size_t>(d.nnz));
  if (d.pn_val.size() > 0) {
    if (d.value_map.size() == 0) {
      // The place of each entry in pn_val, by the build's searches again over the stored rows.
      auto map = buffer<Index>(d.nnz, "tiled value map");
      panel_passes(d, static_cast<const Value*>(nullptr), map.data());
      cuda::synchronize_stream();  // the map complete on return, as the other value maps
      d.value_map = std::move(map);
    }
    cuda::scatter_values(d.pn_val.data(), d.value_map.data(), src, d.nnz);
  }
  if (staging.size()) cuda::synchronize_stream();  // staging is freed on return
}

#define SPMAT_INSTANTIATE(V, I)                                        \
  SPMAT_INSTANTIATE_DEVICE_BUILDER(TiledStorage, TiledDevice, V, I)     \
  template void ensure_panels(const TiledDevice<V, I>&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
