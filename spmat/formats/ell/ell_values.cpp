// spmat/formats/ell/ell_values.cpp — value updates of the host ELLPACK storage.
// SPDX-License-Identifier: MIT
#include "spmat/formats/ell/ell.hpp"

namespace spmat {

// A row's entries fill its first slots in CSR order, up to its first padding slot: walking the
// rows in order hands out the new values in CSR order. Padding stays 0.
template <class Value, class Index>
void update_values(Ell<Value, Index>& s, const Value* values) {
  std::size_t k = 0;
  for (std::int64_t r = 0; r < s.rows; ++r)
    for (std::int64_t j = 0; j < s.width; ++j) {
      const auto off = static_cast<std::size_t>(j * s.pitch + r);
      if (s.col_idx[off] == static_cast<Index>(kEllPadding)) break;
      s.values[off] = values[k++];
    }
}

#define SPMAT_INSTANTIATE(V, I) template void update_values(Ell<V, I>&, const V*);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
