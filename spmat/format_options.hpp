// spmat/format_options.hpp — the build options of every format, as typed structs.
// SPDX-License-Identifier: MIT
//
// One struct per format (or family), its member initializers the defaults; the field table that
// parses, prints and documents it is in the format's .cpp (spmat/core/typed_options.hpp):
//
//   auto A = spmat::Matrix<double>::build(csr, spmat::SellOptions{.C = 32}, spmat::Backend::cuda);
//
// is the typed form of build(csr, "sell", Backend::cuda, FormatOptions::parse("C=32")); `spmat
// formats` lists every option with its default and help. The planner's auto and tune take
// PlanOptions (spmat/plan/plan_options.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/core/types.hpp"

namespace spmat {

/// Default of the max_fill option (padding ratio limit).
inline constexpr double kDefaultMaxFill = 8.0;
/// Default of the max_skew option (longest row / mean row limit).
inline constexpr double kDefaultMaxSkew = 8.0;

namespace hisparse {
inline constexpr std::int64_t kPlanItemCost = 8192;  ///< cost units per item (see plan_cost)
}  // namespace hisparse

namespace csb_detail {
/// Option empty=keep|drop|auto (default auto).
enum class EmptyBlocks { keep, drop, automatic };
}  // namespace csb_detail

enum class CsrKernel { automatic, scalar, vector, merge };
/// Row-length bins of the auto GPU kernel: automatic = when the row-length statistics say the
/// rows are skewed (csr_plan.hpp), on / off = always / never.
enum class CsrBins { automatic, on, off };
/// Column indices of the CUDA csr storage when the index type is 64-bit: automatic = 32-bit
/// when cols <= INT32_MAX, on = the same but an error when cols does not fit, off = index-wide.
/// 32-bit indices and the CPU backend are unaffected.
enum class CsrNarrowCols { automatic, on, off };

/// GPU spmv kernel of COO: `atomic` (thread per nonzero) or `segmented` (warp segmented sum).
enum class CooKernel { atomic, segmented };

/// GPU kernel choice (option kernel=):
///   thesis        Figs. 3.8/3.9: thread per sorted block, one atomic per entry;
///   atomic        thread per sorted block, β-entry window per thread, warp-reduced atomics
///                 (no plan, so the storage is exactly the thesis arrays);
///   fast          window kernel: each output window (β rows for spmv, β columns for spmv_t)
///                 is owned by a few lanes that walk its blocks from the plan; y written once,
///                 split windows through a work buffer (flush=partial) or atomics (flush=atomic);
///                 operations whose output fits 96 KB (dense=, default spmv_t only) run the
///                 dense-output kernel instead: natural-order reads, y copy in shared memory;
///   deterministic the same window kernel, split windows reduced by a second pass in item order
///                 (no floating-point atomics: bitwise reproducible).
enum class GcsbKernel { thesis, atomic, fast, deterministic };

/// CUDA SpMV kernel of bccoo-gpu (option `kernel`); the CPU kernels ignore it.
/// stream: persistent blocks, one chunk per block iteration, next chunk's header in registers and
/// its data prefetched into L2 (default); block: one block per chunk; atomic: warp segmented sum
/// + atomicAdd. stream and block share the per-chunk decode and are deterministic.
enum class BccooGpuKernel : std::uint8_t { stream, block, atomic };

/// Build options of csr (and of csr-scalar, csr-vector, csr-merge, which fix `kernel`).
struct CsrOptions {
  static constexpr const char* format = "csr";
  CsrKernel kernel = CsrKernel::automatic;
  int tpr = 0;  ///< adaptive GPU kernel and spmv_t: lanes per row; 0 = from the mean row length
  CsrBins bins = CsrBins::automatic;
  CsrNarrowCols narrow_cols = CsrNarrowCols::automatic;
  static const OptionTable<CsrOptions>& fields();
  bool operator==(const CsrOptions&) const = default;
};

/// Build options of coo (coo-seg fixes kernel).
struct CooOptions {
  static constexpr const char* format = "coo";
  CooKernel kernel = CooKernel::atomic;
  static const OptionTable<CooOptions>& fields();
  bool operator==(const CooOptions&) const = default;
};

/// Build options of ell.
struct EllOptions {
  static constexpr const char* format = "ell";
  double max_fill = kDefaultMaxFill;
  static const OptionTable<EllOptions>& fields();
  bool operator==(const EllOptions&) const = default;
};

/// Build options of ellr.
struct EllrOptions {
  static constexpr const char* format = "ellr";
  double max_fill = kDefaultMaxFill;
  static const OptionTable<EllrOptions>& fields();
  bool operator==(const EllrOptions&) const = default;
};

/// Build options of sell. sigma empty ("auto"): 256 rounded up to a multiple of C.
struct SellOptions {
  static constexpr const char* format = "sell";
  std::int64_t C = 32;
  std::optional<std::int64_t> sigma;
  double max_skew = kDefaultMaxSkew;
  double max_fill = kDefaultMaxFill;
  static const OptionTable<SellOptions>& fields();
  bool operator==(const SellOptions&) const = default;
};

/// Build options of hyb. K empty ("auto"): CUSP's rule (hyb_ell_width with breakeven).
struct HybOptions {
  static constexpr const char* format = "hyb";
  std::optional<std::int64_t> K;
  std::int64_t breakeven = 4096;
  double max_fill = kDefaultMaxFill;
  static const OptionTable<HybOptions>& fields();
  bool operator==(const HybOptions&) const = default;
};

/// Build options of csb.
struct CsbOptions {
  static constexpr const char* format = "csb";
  std::optional<std::int64_t> beta;
  std::int64_t l1_line_bytes = 128;
  csb_detail::EmptyBlocks empty = csb_detail::EmptyBlocks::automatic;
  static const OptionTable<CsbOptions>& fields();
  bool operator==(const CsbOptions&) const = default;
};

/// Build options of gcsb (gcsb-thesis, gcsb-det and gcsb-atomic fix kernel and take the first
/// fields only: see gcsb_entries). lanes, blocks_per_lane, beta, group_size empty: "auto".
struct GcsbOptions {
  static constexpr const char* format = "gcsb";
  std::optional<std::int64_t> beta;
  std::optional<std::int64_t> group_size;
  std::int64_t l1_line_bytes = 128;
  csb_detail::EmptyBlocks empty = csb_detail::EmptyBlocks::automatic;
  std::optional<int> lanes;
  std::optional<std::int64_t> blocks_per_lane;
  int block_lanes = 0;
  std::string plan_form = "auto";
  GcsbKernel kernel = GcsbKernel::fast;
  std::string dense = "auto";
  int dense_parts = 0;
  std::string flush = "partial";
  static const OptionTable<GcsbOptions>& fields();
  bool operator==(const GcsbOptions&) const = default;
};

// The members that bro-ell and bro-hyb share, declared once; their field tables are shared too
// (bro::slice_fields and bro::bar_fields). Flat members, not a base struct, so that both
// option structs take designated initializers ({.h = 32, .bar = true}).
// The BRO-ELL slices: h (rows per slice), sym_len (bits per symbol), first (how a slice's first
// column is coded), kernel, unroll and fit_bits (of the GPU kernels).
#define SPMAT_BRO_SLICE_MEMBERS     \
  int h = 32;                       \
  int sym_len = 32;                 \
  std::string first = "slice";      \
  std::string kernel = "fit";       \
  int unroll = 8;                   \
  int fit_bits = 128;
// The BAR row reordering: on or off, its algorithm and window.
#define SPMAT_BRO_BAR_MEMBERS       \
  bool bar = false;                 \
  std::string bar_algo = "auto";    \
  int bar_window = 4;

/// Build options of bro-ell and bro-ell-bar (which sets bar); the shared fields are in
/// bro_common.hpp. first: "slice" or "abs" (the paper's coding).
struct BroEllOptions {
  static constexpr const char* format = "bro-ell";
  SPMAT_BRO_SLICE_MEMBERS
  double max_fill = kDefaultMaxFill;
  double max_skew = kDefaultMaxSkew;
  SPMAT_BRO_BAR_MEMBERS
  static const OptionTable<BroEllOptions>& fields();
  bool operator==(const BroEllOptions&) const = default;
};

/// Build options of bro-coo (interval: entries per warp interval, a multiple of 32).
struct BroCooOptions {
  static constexpr const char* format = "bro-coo";
  int sym_len = 32;
  std::int64_t interval = 1024;
  static const OptionTable<BroCooOptions>& fields();
  bool operator==(const BroCooOptions&) const = default;
};

/// Build options of bro-csr (tpr 0 = auto: largest power of two <= mean row length).
struct BroCsrOptions {
  static constexpr const char* format = "bro-csr";
  int tpr = 0;
  int sym_len = 32;
  double max_skew = kDefaultMaxSkew;
  static const OptionTable<BroCsrOptions>& fields();
  bool operator==(const BroCsrOptions&) const = default;
};

/// Build options of bro-hyb and bro-hyb-bar (which sets bar): the BRO-ELL part's (bro_common.hpp),
/// interval of the BRO-COO part, ell_width (-1 = the split rule), split (bytes or cusp).
struct BroHybOptions {
  static constexpr const char* format = "bro-hyb";
  SPMAT_BRO_SLICE_MEMBERS
  std::int64_t interval = 1024;
  std::int64_t ell_width = -1;
  double max_fill = kDefaultMaxFill;
  std::string split = "bytes";
  SPMAT_BRO_BAR_MEMBERS
  static const OptionTable<BroHybOptions>& fields();
  bool operator==(const BroHybOptions&) const = default;
};

#undef SPMAT_BRO_SLICE_MEMBERS
#undef SPMAT_BRO_BAR_MEMBERS

/// Build options of bcoo.
struct BcooOptions {
  static constexpr const char* format = "bcoo";
  std::int64_t chunk = 1024;
  static const OptionTable<BcooOptions>& fields();
  bool operator==(const BcooOptions&) const = default;
};

/// Build options of bccoo (help texts: the field tables in bccoo.cpp).
struct BccooOptions {
  static constexpr const char* format = "bccoo";
  std::int64_t chunk = 1024;
  static const OptionTable<BccooOptions>& fields();
  bool operator==(const BccooOptions&) const = default;
};

/// Build options of bccoo-gpu; kernel empty = auto (bccoo::auto_kernel).
struct BccooGpuOptions {
  static constexpr const char* format = "bccoo-gpu";
  std::int64_t chunk = 1024;
  std::optional<BccooGpuKernel> kernel;
  std::int64_t blocks = 0;
  std::int64_t prefetch = 1;
  static const OptionTable<BccooGpuOptions>& fields();
  bool operator==(const BccooGpuOptions&) const = default;
};

/// Build options of hisparse (help texts: the field table in hisparse.cpp).
struct HiSparseOptions {
  static constexpr const char* format = "hisparse";
  int d = 128;
  std::string dense = "auto";
  std::string spmv = "plan_tl";
  std::string add = "merge_ct";
  std::int64_t item_cost = hisparse::kPlanItemCost;
  std::string build = "cpu";
  bool transposed = false;
  static const OptionTable<HiSparseOptions>& fields();
  bool operator==(const HiSparseOptions&) const = default;
};

/// Build options of tiled (help texts: the field table in tiled.cpp). panel_rows empty
/// ("auto"): 256, or 4 with kernel=panel. Cross-field limits (panel_rows against the kernel, smem
/// against r and the value size) are checked by the build.
struct TiledOptions {
  static constexpr const char* format = "tiled";
  std::string kernel = "auto";
  double panel_reuse = 1.2;
  std::int64_t panel_per_sm = 60;
  std::int64_t kt = 0;
  int batch = 0;
  std::string cstore = "auto";
  std::string schedule = "auto";
  std::string variant = "auto";
  std::int64_t segsize = 0;
  std::string reorder = "auto";
  int r = 16;
  std::optional<std::int64_t> panel_rows;
  std::int64_t smem = 48 * 1024;
  std::int64_t k = 32;
  DenseLayout layout = DenseLayout::row_major;
  std::string device = "h200";
  double u_min = 0.65;
  double cv_max = 1.0;
  static const OptionTable<TiledOptions>& fields();
  bool operator==(const TiledOptions&) const = default;
};

}  // namespace spmat
