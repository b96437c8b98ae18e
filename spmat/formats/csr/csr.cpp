// spmat/formats/csr/csr.cpp — CSR format: build, traffic model, registry entries.
// SPDX-License-Identifier: MIT
#include "spmat/formats/csr/csr.hpp"

#include "spmat/format_adapter.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
CsrStorage<Value, Index> CsrStorage<Value, Index>::build(const Csr<Value, Index>& a,
                                                         const FormatOptions& o) {
  CsrStorage s;
  s.a = a;
  const std::string k = o.get_string("kernel", "auto");
  if (k == "auto") s.kernel = CsrKernel::automatic;
  else if (k == "scalar") s.kernel = CsrKernel::scalar;
  else if (k == "vector") s.kernel = CsrKernel::vector;
  else if (k == "merge") s.kernel = CsrKernel::merge;
  else throw ParseError("csr: kernel=" + k + " is not one of auto, scalar, vector, merge");
  const std::int64_t tpr = o.get_int("tpr", 0);
  if (tpr != 0 && tpr != 2 && tpr != 4 && tpr != 8 && tpr != 16 && tpr != 32)
    throw ParseError("csr: tpr=" + std::to_string(tpr) + " is not one of 0 (auto), 2, 4, 8, 16, 32");
  s.threads_per_row = static_cast<int>(tpr);
  const std::string b = o.get_string("bins", "auto");
  if (b == "auto") s.bins = CsrBins::automatic;
  else if (b == "on") s.bins = CsrBins::on;
  else if (b == "off") s.bins = CsrBins::off;
  else throw ParseError("csr: bins=" + b + " is not one of auto, on, off");
  return s;
}

#define SPMAT_INSTANTIATE(V, I) template struct CsrStorage<V, I>;
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

std::vector<FormatEntry> csr_entries() {
  const BackendCaps cpu{.available = true, .spmv = true, .spmv_t = true, .spmm = true,
                        .add = true, .deterministic_spmv = true, .deterministic_spmv_t = true};
  // CUDA: spmv is a per-row reduction (deterministic); spmv_t scatters with atomics.
  const BackendCaps gpu{.available = kCudaCompiled, .spmv = true, .spmv_t = true, .spmm = true,
                        .add = false, .deterministic_spmv = true, .deterministic_spmv_t = false};
  const BackendCaps none{};
  const std::vector<ParamInfo> params{
      {"kernel", "auto", "GPU kernel: auto, scalar, vector, merge"},
      {"tpr", "0", "GPU lanes per row of the auto kernel and of spmv_t: 2,4,8,16,32 (0 = from the mean row length)"},
      {"bins", "auto", "GPU auto kernel: row-length bins (medium rows a warp each) auto, on, off (auto = on skewed rows)"}};
  std::vector<FormatEntry> v;
  // Every entry adopts a device CSR without copying it (with_device_builder).
  v.push_back(with_device_builder<CsrStorage>(make_entry<CsrStorage>(
      {.name = "csr", .summary = "compressed sparse row (canonical); adaptive GPU kernel",
       .caps = {cpu, gpu}, .params = params})));
  const auto scalar = FormatOptions().set("kernel", "scalar");
  v.push_back(with_device_builder<CsrStorage>(
      make_entry<CsrStorage>({.name = "csr-scalar",
                              .summary = "CSR, one GPU thread per row (GCSB baseline)",
                              .caps = {none, gpu}},
                             scalar),
      scalar));
  const auto vector = FormatOptions().set("kernel", "vector");
  v.push_back(with_device_builder<CsrStorage>(
      make_entry<CsrStorage>(
          {.name = "csr-vector", .summary = "CSR, one GPU warp per row", .caps = {none, gpu}},
          vector),
      vector));
  const auto merge = FormatOptions().set("kernel", "merge");
  v.push_back(with_device_builder<CsrStorage>(
      make_entry<CsrStorage>({.name = "csr-merge",
                              .summary = "CSR, merge-path nnz-balanced GPU kernel",
                              .caps = {none, gpu}},
                             merge),
      merge));
  return v;
}

}  // namespace spmat
