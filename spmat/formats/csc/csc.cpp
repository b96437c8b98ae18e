// spmat/formats/csc/csc.cpp — CSC format: build, traffic model, registry entry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/csc/csc.hpp"

#include "spmat/format_adapter.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
CscStorage<Value, Index> CscStorage<Value, Index>::build(const Csr<Value, Index>& a,
                                                         const FormatOptions&) {
  return {to_csc(a)};
}

#define SPMAT_INSTANTIATE(V, I) template struct CscStorage<V, I>;
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

std::vector<FormatEntry> csc_entries() {
  // Products derived (make_entry). CUDA: spmv_t gathers per column (fixed-order warp sum);
  // spmv scatters with atomics.
  const DeclaredCaps declared{.cuda = {.deterministic_spmv = false, .deterministic_spmv_t = true}};
  std::vector<FormatEntry> v;
  v.push_back(with_device_builder<CscStorage>(make_entry<CscStorage>(
      {.name = "csc",
       .summary = "compressed sparse column; gather for A^T x, atomic scatter for A x on GPU"},
      declared)));
  return v;
}

}  // namespace spmat
