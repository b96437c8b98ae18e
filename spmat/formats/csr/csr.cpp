// spmat/formats/csr/csr.cpp — CSR format: build, traffic model, registry entries.
// SPDX-License-Identifier: MIT
#include "spmat/formats/csr/csr.hpp"

#include "spmat/format_adapter.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

const OptionTable<CsrOptions>& CsrOptions::fields() {
  static const OptionTable<CsrOptions> t{
      enum_option("kernel", &CsrOptions::kernel,
                  {{"auto", CsrKernel::automatic},
                   {"scalar", CsrKernel::scalar},
                   {"vector", CsrKernel::vector},
                   {"merge", CsrKernel::merge}},
                  "GPU kernel: auto, scalar, vector, merge"),
      int_choice_option("tpr", &CsrOptions::tpr, {0, 2, 4, 8, 16, 32},
                        "GPU lanes per row of the auto kernel and of spmv_t: 2,4,8,16,32 (0 = from the mean row length)"),
      enum_option("bins", &CsrOptions::bins,
                  {{"auto", CsrBins::automatic}, {"on", CsrBins::on}, {"off", CsrBins::off}},
                  "GPU auto kernel: row-length bins (medium rows a warp each) auto, on, off (auto = on skewed rows)")};
  return t;
}

template <class Value, class Index>
CsrStorage<Value, Index> CsrStorage<Value, Index>::build(const Csr<Value, Index>& a,
                                                         const FormatOptions& o) {
  CsrStorage s;
  s.a = a;
  const auto opt = parse_options<CsrOptions>(o);
  s.kernel = opt.kernel;
  s.threads_per_row = opt.tpr;
  s.bins = opt.bins;
  return s;
}

#define SPMAT_INSTANTIATE(V, I) template struct CsrStorage<V, I>;
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

std::vector<FormatEntry> csr_entries() {
  // Products derived (make_entry). CUDA: spmv is a per-row reduction (deterministic); spmv_t
  // scatters with atomics.
  const DeclaredCaps declared{.cuda = {.deterministic_spmv = true, .deterministic_spmv_t = false}};
  // The entries that fix a GPU kernel with their preset register no CPU backend (csr's).
  const DeclaredCaps gpu_kernel{.cpu = {.offered = false}, .cuda = declared.cuda};
  const std::vector<ParamInfo> params = option_params<CsrOptions>();
  std::vector<FormatEntry> v;
  // Every entry adopts a device CSR without copying it (with_device_builder).
  v.push_back(with_device_builder<CsrStorage>(make_entry<CsrStorage>(
      {.name = "csr", .summary = "compressed sparse row (canonical); adaptive GPU kernel",
       .params = params},
      declared)));
  const auto scalar = FormatOptions().set("kernel", "scalar");
  v.push_back(with_device_builder<CsrStorage>(
      make_entry<CsrStorage>({.name = "csr-scalar",
                              .summary = "CSR, one GPU thread per row (GCSB baseline)"},
                             gpu_kernel, scalar),
      scalar));
  const auto vector = FormatOptions().set("kernel", "vector");
  v.push_back(with_device_builder<CsrStorage>(
      make_entry<CsrStorage>({.name = "csr-vector", .summary = "CSR, one GPU warp per row"},
                             gpu_kernel, vector),
      vector));
  const auto merge = FormatOptions().set("kernel", "merge");
  v.push_back(with_device_builder<CsrStorage>(
      make_entry<CsrStorage>({.name = "csr-merge",
                              .summary = "CSR, merge-path nnz-balanced GPU kernel"},
                             gpu_kernel, merge),
      merge));
  return v;
}

}  // namespace spmat
