// spmat/formats/csr/csr_values.cpp — value updates of the host CSR storage.
// SPDX-License-Identifier: MIT
#include <algorithm>

#include "spmat/formats/csr/csr.hpp"

namespace spmat {

template <class Value, class Index>
void update_values(CsrStorage<Value, Index>& s, const Value* values) {
  std::copy(values, values + s.a.values.size(), s.a.values.begin());
}

#define SPMAT_INSTANTIATE(V, I) template void update_values(CsrStorage<V, I>&, const V*);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
