// spmat/formats/coo/coo.cpp — COO format: build, to_csr, traffic model, registry entries.
// SPDX-License-Identifier: MIT
#include "spmat/formats/coo/coo.hpp"

#include "spmat/format_adapter.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

const OptionTable<CooOptions>& CooOptions::fields() {
  static const OptionTable<CooOptions> t{
      enum_option("kernel", &CooOptions::kernel,
                  {{"atomic", CooKernel::atomic}, {"segmented", CooKernel::segmented}},
                  "GPU spmv kernel: atomic, segmented")};
  return t;
}

template <class Value, class Index>
CooStorage<Value, Index> CooStorage<Value, Index>::build(const Csr<Value, Index>& a,
                                                         const FormatOptions& o) {
  CooStorage s;
  s.a = to_coo(a);  // row-major, sorted: the canonical COO
  s.kernel = parse_options<CooOptions>(o).kernel;
  return s;
}

template <class Value, class Index>
Csr<Value, Index> CooStorage<Value, Index>::to_csr() const {
  // The entries are already in canonical order: only row_ptr has to be rebuilt (O(nnz + rows)).
  return sorted_coo_to_csr(a);
}

#define SPMAT_INSTANTIATE(V, I) template struct CooStorage<V, I>;
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

std::vector<FormatEntry> coo_entries() {
  // Products derived (make_entry). CUDA coo: spmv and spmv_t both accumulate with
  // floating-point atomicAdd.
  const DeclaredCaps atomic{.cuda = {.deterministic_spmv = false, .deterministic_spmv_t = false}};
  // coo-seg fixes the GPU kernel with its preset, so it registers no CPU backend (the CPU
  // kernel is coo's). CUDA: spmv is a warp segmented scan plus a fixed-order carry fix-up pass
  // (deterministic); spmv_t is the same atomic scatter as coo.
  const DeclaredCaps segmented_gpu{
      .cpu = {.offered = false},
      .cuda = {.deterministic_spmv = true, .deterministic_spmv_t = false}};
  std::vector<FormatEntry> v;
  v.push_back(with_device_builder<CooStorage>(make_entry<CooStorage>(
      {.name = "coo",
       .summary = "coordinate triplets, row-sorted; GPU: thread per nonzero with atomics",
       .params = option_params<CooOptions>()},
      atomic)));
  const auto segmented = FormatOptions().set("kernel", "segmented");
  v.push_back(with_device_builder<CooStorage>(
      make_entry<CooStorage>({.name = "coo-seg",
                              .summary = "COO, GPU warp segmented reduction (deterministic spmv)"},
                             segmented_gpu, segmented),
      segmented));
  return v;
}

}  // namespace spmat
