// spmat/formats/coo/coo.cpp — COO format: build, to_csr, traffic model, registry entries.
// SPDX-License-Identifier: MIT
#include "spmat/formats/coo/coo.hpp"

#include "spmat/core/typed_options.hpp"
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

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(CooStorage)

}  // namespace spmat
