// spmat/formats/format_entries.cpp — the registry entries of the built-in formats, in the order
// of `spmat formats` and of benchmark tables.
// SPDX-License-Identifier: MIT
//
// One storage template may stand under several names, each with preset options (csr-scalar is
// csr with kernel=scalar): tables then name kernels the way papers do. Each entry states its
// name, summary, options and what its CUDA kernels promise about determinism; make_entry derives
// the rest (the products each backend has, the device builder where the format has one). An
// entry that fixes a GPU kernel with its preset registers no CPU backend: its CPU kernels are
// those of the format's main entry.
#include "spmat/format_adapter.hpp"
#include "spmat/formats/bccoo/bccoo.hpp"
#include "spmat/formats/bcoo/bcoo.hpp"
#include "spmat/formats/bro_coo/bro_coo.hpp"
#include "spmat/formats/bro_csr/bro_csr.hpp"
#include "spmat/formats/bro_ell/bro_ell.hpp"
#include "spmat/formats/bro_hyb/bro_hyb.hpp"
#include "spmat/formats/coo/coo.hpp"
#include "spmat/formats/csb/csb.hpp"
#include "spmat/formats/csc/csc.hpp"
#include "spmat/formats/csr/csr.hpp"
#include "spmat/formats/ell/ell.hpp"
#include "spmat/formats/ellr/ellr.hpp"
#include "spmat/formats/gcsb/gcsb.hpp"
#include "spmat/formats/hisparse/hisparse.hpp"
#include "spmat/formats/hyb/hyb.hpp"
#include "spmat/formats/sell/sell.hpp"
#include "spmat/formats/tiled/tiled.hpp"

namespace spmat {

std::vector<FormatEntry> format_entries() {
  const auto kernel = [](const char* name) { return FormatOptions().set("kernel", name); };
  const auto bar = FormatOptions().set("bar", "1");
  // gcsb-thesis and gcsb-atomic take gcsb's block fields only (beta .. empty), gcsb-det these
  // and the window plan's (lanes .. plan_form).
  const std::vector<ParamInfo> gcsb_params = option_params<GcsbOptions>();
  const std::vector<ParamInfo> gcsb_block_params(gcsb_params.begin(), gcsb_params.begin() + 4);
  const std::vector<ParamInfo> gcsb_plan_params(gcsb_params.begin(), gcsb_params.begin() + 8);
  // bro-ell and bro-hyb stand again with BAR row reordering preset: the same options, products
  // and promises, the name and summary of bar_twin.
  const FormatEntry bro_ell{.name = "bro-ell",
                            .summary = "BRO-ELL: sliced ELL, delta + bit-packed column indices (SC'13)",
                            .params = option_params<BroEllOptions>()};
  const FormatEntry bro_hyb{.name = "bro-hyb",
                            .summary = "BRO-HYB: HYB split into BRO-ELL + BRO-COO (SC'13)",
                            .params = option_params<BroHybOptions>()};
  const auto bar_twin = [](FormatEntry e) {
    e.summary = e.summary.substr(0, e.summary.find(':')) + " with BAR row reordering (y in original order)";
    e.name += "-bar";
    return e;
  };
  return {
      // CUDA: spmv is a per-row reduction (deterministic); spmv_t scatters with atomics.
      make_entry<CsrStorage>({.name = "csr",
                              .summary = "compressed sparse row (canonical); adaptive GPU kernel",
                              .params = option_params<CsrOptions>()},
                             cuda_determinism(true, false)),
      make_entry<CsrStorage>({.name = "csr-scalar",
                              .summary = "CSR, one GPU thread per row (GCSB baseline)"},
                             gpu_kernel_only(true, false), kernel("scalar")),
      make_entry<CsrStorage>({.name = "csr-vector", .summary = "CSR, one GPU warp per row"},
                             gpu_kernel_only(true, false), kernel("vector")),
      make_entry<CsrStorage>({.name = "csr-merge",
                              .summary = "CSR, merge-path nnz-balanced GPU kernel"},
                             gpu_kernel_only(true, false), kernel("merge")),
      // CUDA coo: spmv and spmv_t both accumulate with floating-point atomicAdd. coo-seg: spmv
      // is a warp segmented scan plus a fixed-order carry fix-up pass (deterministic); spmv_t
      // is the same atomic scatter as coo.
      make_entry<CooStorage>(
          {.name = "coo",
           .summary = "coordinate triplets, row-sorted; GPU: thread per nonzero with atomics",
           .params = option_params<CooOptions>()},
          cuda_determinism(false, false)),
      make_entry<CooStorage>(
          {.name = "coo-seg", .summary = "COO, GPU warp segmented reduction (deterministic spmv)"},
          gpu_kernel_only(true, false), kernel("segmented")),
      // CUDA: spmv_t gathers per column (fixed-order warp sum); spmv scatters with atomics.
      make_entry<CscStorage>(
          {.name = "csc",
           .summary = "compressed sparse column; gather for A^T x, atomic scatter for A x on GPU"},
          cuda_determinism(false, true)),
      // ell, ellr, sell on CUDA: spmv is one thread per row (deterministic); spmv_t scatters
      // with atomicAdd.
      make_entry<Ell>(
          {.name = "ell",
           .summary = "ELLPACK: column-major, padded to the longest row (pitch = rows rounded to 32)",
           .params = option_params<EllOptions>()},
          cuda_determinism(true, false)),
      make_entry<Ellr>({.name = "ellr",
                        .summary = "ELLPACK-R: ELLPACK plus row lengths (kernels skip the padding)",
                        .params = option_params<EllrOptions>()},
                       cuda_determinism(true, false)),
      make_entry<Sell>(
          {.name = "sell",
           .summary = "SELL-C-sigma: chunks of C rows sorted by length within sigma-row windows",
           .params = option_params<SellOptions>()},
          cuda_determinism(true, false)),
      // CUDA: the COO part ends each warp's row segments with atomicAdd into y (rows split
      // across warps are summed in run-dependent order): neither product is deterministic.
      make_entry<Hyb>({.name = "hyb",
                       .summary = "HYB: ELL part of width K (CUSP's rule) plus a row-sorted COO overflow",
                       .params = option_params<HybOptions>()},
                      cuda_determinism(false, false)),
      // CUDA: the thesis kernels (one thread per block, float atomics for both products).
      make_entry<Csb>(
          {.name = "csb",
           .summary = "CSB-baseline: beta x beta blocks, Morton order inside; GPU thread per block",
           .params = option_params<CsbOptions>()},
          cuda_determinism(false, false)),
      // CUDA: the fast, thesis and atomic kernels accumulate with float atomics (fast only
      // where a long window is split). gcsb-det reduces split windows in item order, with no
      // float atomics.
      make_entry<Gcsb>({.name = "gcsb",
                        .summary = "GCSB: nnz-sorted grouped blocks, one storage for A x and A^T x; "
                                   "window-plan GPU kernel",
                        .params = gcsb_params},
                       cuda_determinism(false, false)),
      make_entry<Gcsb>({.name = "gcsb-thesis",
                        .summary = "GCSB with the thesis GPU kernels (thread per block, one atomic "
                                   "per entry)",
                        .params = gcsb_block_params},
                       gpu_kernel_only(false, false), kernel("thesis")),
      make_entry<Gcsb>({.name = "gcsb-det",
                        .summary = "GCSB, deterministic: window plan, split windows reduced in item "
                                   "order, no float atomics",
                        .params = gcsb_plan_params},
                       cuda_determinism(true, true), kernel("deterministic")),
      make_entry<Gcsb>({.name = "gcsb-atomic",
                        .summary = "GCSB, no plan: thread per block, per-thread window, "
                                   "warp-reduced atomics",
                        .params = gcsb_block_params},
                       cuda_determinism(false, false), kernel("atomic")),
      // CUDA: spmv is one thread per row (deterministic); spmv_t scatters with atomicAdd.
      make_entry<BroEll>(bro_ell, cuda_determinism(true, false)),
      make_entry<BroEll>(bar_twin(bro_ell), cuda_determinism(true, false), bar),
      // CUDA: a warp per interval, segmented warp sums flushed with atomicAdd (rows span
      // intervals): neither product is deterministic.
      make_entry<BroCoo>(
          {.name = "bro-coo",
           .summary = "BRO-COO: COO with delta + bit-packed row indices per warp interval (SC'13)",
           .params = option_params<BroCooOptions>()},
          cuda_determinism(false, false)),
      // CUDA: the BRO-COO part adds into y with atomicAdd, so neither product is deterministic.
      make_entry<BroHyb>(bro_hyb, cuda_determinism(false, false)),
      make_entry<BroHyb>(bar_twin(bro_hyb), cuda_determinism(false, false), bar),
      // CUDA: spmv is a sub-warp per row with a fixed shuffle tree (deterministic); spmv_t
      // scatters with atomicAdd.
      make_entry<BroCsr>(
          {.name = "bro-csr",
           .summary = "BRO-CSR: CSR with delta + bit-packed column indices per warp group of rows",
           .params = option_params<BroCsrOptions>()},
          cuda_determinism(true, false)),
      // bccoo has no CUDA backend. bccoo-gpu on CUDA: spmv with the default kernel (auto: stream
      // or block) writes every row once in a fixed order of additions (deterministic;
      // kernel=atomic is not); spmv_t is an atomic scatter.
      make_entry<Bccoo>({.name = "bccoo",
                         .summary = "balanced compressed COO: delta-coded columns, 256-value "
                                    "table, byte stream (CPU)",
                         .params = option_params<BccooOptions>()},
                        {}),
      make_entry<BccooGpu>({.name = "bccoo-gpu",
                            .summary = "balanced compressed COO, per-chunk uniform encoding; 8 "
                                       "entries per thread, persistent or per-chunk blocks chosen "
                                       "per matrix (GPU)",
                            .params = option_params<BccooGpuOptions>()},
                           cuda_determinism(true, false)),
      // No CUDA backend.
      make_entry<Bcoo>({.name = "bcoo",
                        .summary = "balanced COO: chunks of b nonzeros over OpenMP threads (CPU)",
                        .params = option_params<BcooOptions>()},
                       {}),
      // add on both backends. CUDA: spmv/spmv_t from a leaf plan built at upload (one launch
      // per product; shared-memory float atomics, so not deterministic); spmv=levels keeps the
      // per-call level traversal. add: level-synchronous dual traversal and a device
      // serializer, whose pool is byte-identical to the CPU add's.
      make_entry<HiSparse>({.name = "hisparse",
                            .summary = "HiSparse (Derler 2016): tree of d x d dense/byte-COO "
                                       "nodes, transpose as state",
                            .params = option_params<HiSparseOptions>()},
                           cuda_determinism(false, false)),
      // The GPU has no spmv_t kernel. CUDA: spmv is spmm with k = 1; segmented rows are summed
      // from a partial buffer in a fixed order (deterministic).
      make_entry<TiledStorage>({.name = "tiled",
                                .summary = "tiled SpMM: row panels, staged B in shared memory, "
                                           "16-bit S-ELL, model-chosen load balancing/reordering",
                                .params = option_params<TiledOptions>()},
                               cuda_determinism(true, true)),
  };
}

}  // namespace spmat
