// spmat/formats/ellr/ellr_values.cpp — value updates of the host ELLPACK-R storage.
// SPDX-License-Identifier: MIT
#include "spmat/formats/ellr/ellr.hpp"

namespace spmat {

// row_len[r] entries in row r's first slots, in CSR order; padding stays 0.
template <class Value, class Index>
void update_values(Ellr<Value, Index>& s, const Value* values) {
  std::size_t k = 0;
  for (std::int64_t r = 0; r < s.ell.rows; ++r)
    for (std::int64_t j = 0; j < static_cast<std::int64_t>(s.row_len[static_cast<std::size_t>(r)]); ++j)
      s.ell.values[static_cast<std::size_t>(j * s.ell.pitch + r)] = values[k++];
}

#define SPMAT_INSTANTIATE(V, I) template void update_values(Ellr<V, I>&, const V*);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
