// spmat/plan/model.cpp — candidates and predicted times.
// SPDX-License-Identifier: MIT
#include "spmat/plan/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "spmat/config.hpp"
#include "spmat/formats/csr/csr_plan.hpp"
#include "spmat/formats/ell/row_limits.hpp"
#include "spmat/registry.hpp"
#if SPMAT_WITH_CUDA
#include <cuda_runtime_api.h>
#endif
#include <omp.h>

namespace spmat::plan_model {

namespace {

/// How one format's kernel for one operation performs, per structural class (stencil,
/// regular, irregular, skewed; see classify): a fixed cost per call while the matrix stays in
/// L2 (launches, synchronisation, the tail of a short grid), and the share of the DRAM
/// bandwidth it reaches in CSR-floor bytes on matrices well past L2, and that share on even
/// rows of kLongRowMean nonzeros or more past L2 whatever their columns (long_eff; 0: the
/// class's stands). An efficiency of 0 means "not a candidate for this class".
struct Kernel {
  const char* format;
  Op op;
  double launch_us[4];
  double eff[4];
  double long_eff;
  enum Padding { none, ell, sliced } padding = none;
};

// GPU kernels, fitted by bench/planner_fit.py (defaults) to the sweeps on an H100 committed
// under bench/results/2026-11-25-h100/planner/ (calibration_formats.json, then
// calibration_formats_real.json and calibration_planner_csr.json, whose timings of a sample as
// back-to-back calls take precedence): fixed costs are the 75th percentile over the matrices of
// a class that fit in L2, efficiencies the median over those of over 25 MB; a class without
// large matrices takes the smaller of the stencil and irregular efficiencies. ELL-family formats
// are no candidates for skewed rows (efficiency 0). csr's SpMV on skewed matrices past L2 is
// set to cuSPARSE CSR's: on six such matrices (R-MAT and power-law rows, 2-36 M nonzeros, fp64
// and fp32) the medians of their efficiencies were 0.304 (csr) and 0.300 (CSR_ALG1) on an H200;
// csr ran 0.74-0.90x of the fastest cuSPARSE on the two whose rows are 75-80% empty, where
// CSR_ALG1 ran 0.48-0.70x, and 0.93-0.98x on the other four, where it ran 0.93-1.00x
// (bench/results/2026-11-29-h200/csr-shapes/summary.json). The long-row efficiencies are the
// medians over nine matrices of 73-2,000 nonzeros a row past L2 (bands of 73-201 a row and
// uniform random columns, 4-16 M nonzeros; fp64 and fp32) on an H200, in its nominal bandwidth
// (bench/results/2026-11-29-h200/long-rows/summary.json, fitted by bench/planner_fit.py): csr
// reaches 0.57, cuSPARSE's CSR kernel 0.47; the kernels that give each row one thread (ELL,
// sliced ELL, HYB) fall to 0.1-0.2 where rows are long and few.
constexpr Kernel kGpu[] = {
    // format     op     launch us: stencil regular irregular skewed | efficiency | long rows
    {"csr", Op::spmv, {4.7, 4.7, 5.0, 6.9}, {0.73, 0.39, 0.39, 0.41}, 0.57},
    {"csr-vector", Op::spmv, {5.8, 5.8, 9.8, 10.7}, {0.15, 0.15, 0.34, 0.06}, 0.53},
    {"bro-csr", Op::spmv, {5.1, 5.1, 5.3, 0}, {0.41, 0.41, 0, 0}, 0.49},
    {"ellr", Op::spmv, {16.7, 16.7, 14.1, 0}, {0.81, 0.42, 0.42, 0}, 0.16, Kernel::ell},
    {"sell", Op::spmv, {33.8, 33.8, 20.0, 0}, {0.64, 0.40, 0.40, 0}, 0.09, Kernel::sliced},
    {"hyb", Op::spmv, {20.8, 20.8, 15.4, 10.2}, {0.68, 0.41, 0.41, 0.27}, 0.12},
    {"bccoo-gpu", Op::spmv, {10.1, 10.1, 10.2, 12.6}, {1.02, 0.40, 0.40, 0.37}, 0.30},
    {"bro-hyb", Op::spmv, {25.6, 25.6, 28.6, 27.4}, {0.87, 0.43, 0.43, 0.25}, 0.33},
    {"bro-coo", Op::spmv, {22.2, 22.2, 23.2, 23.8}, {0.42, 0.39, 0.39, 0.33}, 0.30},
    {"cusparse-csr", Op::spmv, {9.0, 9.0, 8.8, 8.9}, {0.66, 0.41, 0.41, 0.41}, 0.47},
    {"cusparse-csr-alg2", Op::spmv, {13.4, 13.4, 13.4, 13.5}, {0.58, 0.40, 0.40, 0.38}, 0.32},
    {"cusparse-coo", Op::spmv, {9.0, 9.0, 8.6, 8.9}, {0.58, 0.39, 0.39, 0.38}, 0.44},
    // Aᵀx from the one storage (scatter, or the column walk of csc)
    {"csc", Op::spmv_t, {5.7, 5.7, 5.8, 48.4}, {0.41, 0.35, 0.35, 0.25}, 0.36},
    {"csr", Op::spmv_t, {9.6, 9.6, 12.8, 23.1}, {0.50, 0.29, 0.29, 0.21}, 0.17},
    {"bccoo-gpu", Op::spmv_t, {10.3, 10.3, 10.7, 17.8}, {0.55, 0.29, 0.29, 0.25}, 0.21},
    {"coo", Op::spmv_t, {10.1, 10.1, 11.0, 14.1}, {0.42, 0.28, 0.28, 0.24}, 0.21},
    {"hyb", Op::spmv_t, {26.4, 26.4, 19.4, 20.1}, {0.56, 0.29, 0.29, 0.24}, 0.10},
    {"ellr", Op::spmv_t, {22.2, 22.2, 16.4, 0}, {0.61, 0.29, 0.29, 0}, 0.12, Kernel::ell},
    // Not in the sweeps: the figures of gcsb's atomic kernel on the same matrices stand in (the
    // deterministic walk is no faster), its smallest for long rows, so it is chosen only where
    // determinism rules out the rest.
    {"gcsb-det", Op::spmv_t, {76.7, 76.7, 30.4, 36.5}, {0.36, 0.05, 0.05, 0.08}, 0.05},
    {"cusparse-csr", Op::spmv_t, {10.3, 10.3, 10.6, 17.4}, {0.52, 0.29, 0.29, 0.26}, 0.22},
    {"cusparse-csr-alg2", Op::spmv_t, {10.3, 10.3, 10.6, 17.4}, {0.52, 0.29, 0.29, 0.26}, 0.22},
    {"cusparse-coo", Op::spmv_t, {9.3, 9.3, 9.8, 15.9}, {0.47, 0.28, 0.28, 0.24}, 0.21},
};

// CPU kernels (OpenMP): CSR's row loop, and its scatter for Aᵀx (per-thread partial sums);
// a stored transpose runs the row loop on Aᵀ.
constexpr Kernel kCpu[] = {
    {"csr", Op::spmv, {2, 2, 2, 2}, {0.70, 0.60, 0.45, 0.40}, 0},
    {"csr", Op::spmv_t, {4, 4, 4, 4}, {0.35, 0.30, 0.25, 0.20}, 0},
};

/// How many calibration matrices the figures of each class rest on: while the matrix stays in
/// L2, and past it (stencil, regular, irregular, skewed). A format other than cuSPARSE must be
/// predicted faster by a margin that grows as this evidence shrinks (see margin()): a class
/// seen on one or two matrices says little about the next one, and cuSPARSE is the safe choice.
constexpr int kEvidenceInL2[4] = {0, 16, 9, 6};
constexpr int kEvidencePastL2[4] = {4, 0, 1, 6};
constexpr int kEvidenceLongRows = 9;

/// Mean row length from which a matrix past L2 whose rows are not skewed takes the kernels'
/// long-row efficiencies (Kernel::long_eff): from 64 nonzeros a row csr gives each row a warp
/// (csr_plan::threads_per_row) and every row-parallel kernel amortizes its per-row work, while
/// the classes' figures come from rows of 3-30.
constexpr double kLongRowMean = 64.0;
double margin(int n) { return n >= 3 ? 0.0 : (n == 2 ? 0.15 : 0.3); }

/// The rate (GB/s) at which cuSPARSE's CSR_ALG1 SpMV streams its longest row.
constexpr double kLongRowGbs = 600.0;

/// Below this many CSR-floor bytes per L2 byte a matrix stays in L2 between calls.
constexpr double kL2Resident = 0.5;
constexpr double kL2Speedup = 2.5;

/// cuSPARSE's SpMM time against tiled's predicted one: tiled's measured lead over cuSPARSE as a
/// geometric mean at fp32 K = 128 (1.18x on an H200; at K = 32 it is 1.9x).
constexpr double kVendorSpmmSlowdown = 1.2;

double csr_floor_bytes(const MatrixStats& s, Op op, int vb, int ib) {
  const double rows = static_cast<double>(op == Op::spmv_t ? s.cols : s.rows);
  const double cols = static_cast<double>(op == Op::spmv_t ? s.rows : s.cols);
  return static_cast<double>(s.nnz) * (vb + ib) + (static_cast<double>(s.rows) + 1) * ib +
         cols * vb + rows * vb;
}

double padding_factor(const Kernel& k, const MatrixStats& s) {
  switch (k.padding) {
    case Kernel::ell: return std::max(s.ell_fill, 1e-3);
    case Kernel::sliced: return std::max(s.slice_fill, 1e-3);
    case Kernel::none: return 1.0;
  }
  return 1.0;
}

/// Whether the format's build would refuse the matrix at its default limits (row_limits.hpp):
/// ELL pads every row to the longest, SELL walks each row on one thread. The build checks the
/// same again; a candidate refused there gives way to the next one, but the plan should not
/// name a format it cannot build.
bool refused_by_row_limits(const Kernel& k, const MatrixStats& s) {
  switch (k.padding) {
    case Kernel::ell:
      return exceeds_padding(static_cast<double>(s.rows) * static_cast<double>(s.max_row), s.nnz,
                             s.rows, kDefaultMaxFill);
    case Kernel::sliced: return exceeds_row_skew(s.max_row, s.nnz, s.rows, 1, kDefaultMaxSkew);
    case Kernel::none: return false;
  }
  return false;
}

bool registered(const char* format, Backend b) {
  for (const auto& e : registry())
    if (e.name == format) return e.caps.on(b).available;
  return false;
}

const BackendCaps& caps_of(const char* format, Backend b) {
  return find_format(format).caps.on(b);
}

}  // namespace

StructureClass classify(const MatrixStats& s) {
  if (s.heavy_share >= 0.1 || s.long_share > 0.0) return StructureClass::skewed;
  if (s.shifted_rows >= 0.5) return StructureClass::stencil;
  if (s.col_spread >= 0.05 && s.sectors_per_nnz > 0.5) return StructureClass::irregular;
  return StructureClass::regular;
}

const char* shape_name(StructureClass c) {
  switch (c) {
    case StructureClass::stencil: return "stencil (rows repeat their neighbour's pattern shifted)";
    case StructureClass::regular: return "regular (even rows, local columns)";
    case StructureClass::irregular: return "irregular (even rows, scattered columns)";
    case StructureClass::skewed: return "skewed (a few rows hold much of the work)";
  }
  return "?";
}

Device device_for(Backend backend) {
  Device d;
#if SPMAT_WITH_CUDA
  if (backend == Backend::cuda) {
    int dev = 0;
    cudaDeviceProp p{};
    if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&p, dev) == cudaSuccess) {
      d.name = p.name;
      d.l2_bytes = static_cast<double>(p.l2CacheSize);
      int khz = 0, bus = 0;
      if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) == cudaSuccess &&
          cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev) == cudaSuccess &&
          khz > 0 && bus > 0)
        d.bandwidth_gbs = 2.0 * khz * 1e3 * (bus / 8.0) / 1e9;
    }
    cudaGetLastError();
    if (d.name.empty()) d.name = "an assumed H100 (no GPU present)";
    if (d.bandwidth_gbs <= 0) d.bandwidth_gbs = 3350;  // H100 SXM
    if (d.l2_bytes <= 0) d.l2_bytes = 50e6;
    return d;
  }
#endif
  (void)backend;
  d.name = "cpu (" + std::to_string(omp_get_max_threads()) + " threads)";
  // Roughly what a socket's memory system gives a streaming loop; the CPU plan has one
  // candidate per strategy, so only the ratio between them matters.
  d.bandwidth_gbs = 10.0 * std::min(omp_get_max_threads(), 16);
  d.l2_bytes = 32e6;
  return d;
}

std::vector<Candidate> candidates(const MatrixStats& s, const PlanRequest& r, const Device& d,
                                  Op op, int vb, int ib) {
  std::vector<Candidate> out;
  const bool gpu = r.backend == Backend::cuda;
  if (op == Op::spmm || op == Op::add) {
    // SpMM's own model lives with the tiled format (it picks its variant from the intensity
    // model); add is a merge whose cost is the bytes of both operands.
    const char* fmt = op == Op::spmm ? (gpu ? "tiled" : "csr") : (gpu ? "cusparse-csr" : "csr");
    if (gpu && op == Op::add && !registered(fmt, r.backend)) fmt = "hisparse";
    if (!registered(fmt, r.backend) || !caps_of(fmt, r.backend).supports(op)) return out;
    Candidate c;
    c.op = op;
    c.format = fmt;
    // tiled's model picks its work-row layout for one K and dense layout (its options k and
    // layout, K = 32 row-major unless given): the plan builds it for the product's.
    if (op == Op::spmm && c.format == "tiled")
      c.format += ":k=" + std::to_string(r.k) + ",layout=" + std::string(to_string(r.layout));
    const double bytes = csr_floor_bytes(s, Op::spmv, vb, ib) +
                         (op == Op::spmm ? static_cast<double>(r.k - 1) * (s.rows + s.cols) * vb : 0.0);
    c.predicted_ms = bytes / (d.bandwidth_gbs * 0.5 * 1e6);
    c.bytes = static_cast<std::size_t>(static_cast<double>(s.nnz) * (vb + ib) + (s.rows + 1.0) * ib);
    c.note = op == Op::add ? "sparse addition"
             : gpu         ? "SpMM: the tiled format's intensity model picks its variant"
                           : "SpMM: csr's row loop over the dense columns";
    out.push_back(c);
    // cuSPARSE's SpMM beside tiled, predicted slower, so that auto keeps tiled and tune, which
    // times the vendor's candidate in any case, keeps cuSPARSE where it is faster: on small
    // skewed graphs at large K, tiled runs 0.84-0.99x of cuSPARSE's COO kernel (its fastest SpMM
    // there, ahead of its CSR ones by 11-39%). COO's default algorithm adds with atomics; a
    // deterministic plan gets cuSPARSE's CSR kernel, bitwise reproducible for A (not Aᵀ).
    const char* vendor = r.deterministic ? "cusparse-csr" : "cusparse-coo";
    if (op == Op::spmm && gpu && registered(vendor, r.backend) && caps_of(vendor, r.backend).supports(op)) {
      Candidate v = c;
      v.format = vendor;
      v.predicted_ms = c.predicted_ms * kVendorSpmmSlowdown;
      if (!r.deterministic)  // a row index for each entry instead of the row pointers
        v.bytes = static_cast<std::size_t>(static_cast<double>(s.nnz) * (vb + 2.0 * ib));
      v.note = std::string("SpMM: cuSPARSE's ") + (r.deterministic ? "CSR" : "COO") +
               " kernel, timed beside tiled by tune";
      out.push_back(v);
    }
    return out;
  }
  const MatrixStats t = s.transposed();
  const double csr_bytes = static_cast<double>(s.nnz) * (vb + ib) + (s.rows + 1.0) * ib;
  auto add_kernel = [&](const Kernel& k, bool on_transpose) {
    if (!registered(k.format, r.backend)) return;
    const BackendCaps& caps = caps_of(k.format, r.backend);
    const Op run_op = on_transpose ? Op::spmv : k.op;
    if (!caps.supports(run_op)) return;
    const bool det = run_op == Op::spmv ? caps.deterministic_spmv : caps.deterministic_spmv_t;
    if (r.deterministic && !det) return;
    const MatrixStats& m = on_transpose ? t : s;
    const StructureClass cls = classify(m);
    const int ci = static_cast<int>(cls);
    if (k.eff[ci] <= 0) return;  // e.g. ELL padding on skewed rows: never a candidate
    if (refused_by_row_limits(k, m)) return;
    const double bytes = csr_floor_bytes(m, Op::spmv, vb, ib);
    const double padded = bytes / padding_factor(k, m);
    const bool resident = bytes < kL2Resident * d.l2_bytes;
    // csr's SpMV on a tall matrix whose x stays in L1 gathers as on a stencil, whatever its
    // columns (its plan treats them as local): on five such matrices (H200) csr ran 1.29-1.51x
    // of the fastest cuSPARSE, CSR_ALG1 0.83-1.00x
    // (bench/results/2026-11-29-h200/csr-shapes/summary.json).
    const bool l1_gathers = std::string_view(k.format) == "csr" && run_op == Op::spmv &&
                            csr_plan::x_stays_in_l1(m.rows, m.cols, vb);
    const bool long_rows = !resident && cls != StructureClass::skewed && m.mean_row >= kLongRowMean &&
                           k.long_eff > 0;
    const double eff = l1_gathers ? k.eff[static_cast<int>(StructureClass::stencil)]
                       : long_rows ? k.long_eff
                                   : k.eff[ci];
    Candidate c;
    c.op = op;
    c.format = k.format;
    c.transposed = on_transpose;
    c.predicted_ms = (resident ? k.launch_us[ci] * 1e-3 : 0.0) +
                     padded / (d.bandwidth_gbs * (resident ? kL2Speedup : 1.0) * eff * 1e6);
    // cuSPARSE's CSR_ALG1 falls behind on a row of millions of entries: on an H100, a row of
    // 2 M entries (5.5% of the nonzeros) made it 2-5% slower than CSR_ALG2, which is 4-60%
    // slower on every other matrix measured. Modelled as the longest row's bytes streamed at
    // a rate of a few SMs; negligible below some 10⁵ entries.
    if (std::string_view(k.format) == "cusparse-csr" && run_op == Op::spmv)
      c.predicted_ms += static_cast<double>(m.max_row) * (vb + ib) / (kLongRowGbs * 1e6);
    if (std::string_view(k.format).rfind("cusparse", 0) != 0)
      c.predicted_ms *= 1.0 + margin(resident    ? kEvidenceInL2[ci]
                                     : long_rows ? kEvidenceLongRows
                                                 : kEvidencePastL2[ci]);
    double stored = csr_bytes;
    if (k.padding != Kernel::none) stored /= padding_factor(k, m);
    c.bytes = static_cast<std::size_t>(stored);
    c.note = std::string(on_transpose ? "spmv on a stored transpose; " : "") + shape_name(cls) +
             (long_rows ? ", rows of 64 or more" : "") + (resident ? ", fits L2" : "");
    out.push_back(c);
  };
  const auto& table = gpu ? std::span<const Kernel>(kGpu) : std::span<const Kernel>(kCpu);
  for (const Kernel& k : table)
    if (k.op == op && (op != Op::spmv_t || r.transpose != "store")) add_kernel(k, false);
  if (op == Op::spmv_t && r.transpose != "native") {
    // A stored transpose: every spmv kernel on Aᵀ, when both copies fit the budget.
    const double both = 2.0 * csr_bytes;
    if (r.memory_budget == 0 || both <= static_cast<double>(r.memory_budget))
      for (const Kernel& k : table)
        if (k.op == Op::spmv) add_kernel(k, true);
  }
  for (auto& c : out) {
    c.setup_ms = estimated_build_ms(c);
    // Few calls: the build is weighed, spread over the calls.
    if (r.calls > 0) c.predicted_ms += c.setup_ms / static_cast<double>(r.calls);
  }
  return out;
}

double estimated_build_ms(const Candidate& c) {
  // Host rates (GB/s of stored bytes): an upload of the CSR arrays for cuSPARSE, a copy and an
  // upload for csr, a conversion first for the others; a stored transpose is built from Aᵀ,
  // one more pass. Measured builds run from 0.5 to 2.5x these on a 16-core host.
  const double gbs = c.format.rfind("cusparse", 0) == 0 ? 3.0 : c.format == "csr" ? 1.0 : 0.4;
  return static_cast<double>(c.bytes) / (gbs * 1e6) * (c.transposed ? 2.0 : 1.0);
}

double estimated_device_build_ms(const Candidate& c) {
  // Device GB/s of stored bytes, well under the memory bandwidth: copies (csr adopts the
  // arrays, cuSPARSE copies them) at about a third of it, the others' sorts, scans and
  // scatters at a few dozen passes over the bytes (measured builds: 1 to 20 SpMVs), plus the
  // allocations and launches of a build.
  const bool copies = c.format.rfind("cusparse", 0) == 0 || c.format.rfind("csr", 0) == 0;
  const double gbs = copies ? 1000.0 : 100.0;
  return 0.2 + static_cast<double>(c.bytes) / (gbs * 1e6);
}

double estimated_upload_ms(std::size_t bytes) {
  return 0.1 + static_cast<double>(bytes) / (10.0 * 1e6);  // 10 GB/s from pageable memory
}

double estimated_device_transpose_ms(std::size_t bytes) {
  return 0.2 + static_cast<double>(bytes) / (100.0 * 1e6);
}

double estimated_transpose_ms(std::int64_t nnz, std::int64_t rows) {
  // Two scattered passes over the entries (count, place) and one over the rows: about 10 ns
  // an entry on one core, the rate of a sort whose scatter misses the cache.
  return (static_cast<double>(nnz) * 10.0 + static_cast<double>(rows) * 2.0) * 1e-6;
}

std::string reason(const MatrixStats& s, const FormatPlan& p, const Device& d) {
  std::string out = std::string(shape_name(classify(s))) + " on " + d.name;
  for (const auto& c : p.choices) {
    out += "; " + std::string(to_string(c.op)) + ": " + c.format;
    if (c.transposed) out += " on a stored transpose";
    // The runner-up tells how close the decision was.
    const Candidate* second = nullptr;
    for (const auto& cand : p.candidates)
      if (cand.op == c.op && !(cand.format == c.format && cand.transposed == c.transposed)) {
        second = &cand;
        break;
      }
    if (second && second->predicted_ms > 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " (%.2fx ahead of %s%s)", second->predicted_ms / c.predicted_ms,
                    second->format.c_str(), second->transposed ? " on A^T" : "");
      out += buf;
    }
  }
  return out;
}

}  // namespace spmat::plan_model
