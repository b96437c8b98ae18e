// spmat/formats/coo/coo_values.cpp — value updates of the host COO storage.
// SPDX-License-Identifier: MIT
#include <algorithm>

#include "spmat/formats/coo/coo.hpp"

namespace spmat {

// The storage is to_coo(csr): entries in CSR order, so the new values are copied as they are.
template <class Value, class Index>
void update_values(CooStorage<Value, Index>& s, const Value* values) {
  std::copy(values, values + s.a.values.size(), s.a.values.begin());
}

#define SPMAT_INSTANTIATE(V, I) template void update_values(CooStorage<V, I>&, const V*);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
