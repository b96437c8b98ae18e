// spmat/formats/csc/csc.cpp — CSC format: build, traffic model, registry entry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/csc/csc.hpp"

#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
CscStorage<Value, Index> CscStorage<Value, Index>::build(const Csr<Value, Index>& a,
                                                         const FormatOptions&) {
  CscStorage s;
  s.a = to_csc(a);
  return s;
}

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(CscStorage)

}  // namespace spmat
