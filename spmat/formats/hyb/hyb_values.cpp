// spmat/formats/hyb/hyb_values.cpp — value updates of the host HYB storage.
// SPDX-License-Identifier: MIT
#include "spmat/formats/hyb/hyb.hpp"

namespace spmat {

// Row by row in CSR order: the row's ELL slots (up to the first padding), then its COO tail
// entries (sorted by row, so a single cursor walks them).
template <class Value, class Index>
void update_values(Hyb<Value, Index>& s, const Value* values) {
  const auto& e = s.ell;
  std::size_t k = 0, q = 0;
  for (std::int64_t r = 0; r < e.rows; ++r) {
    for (std::int64_t j = 0; j < e.width; ++j) {
      const auto off = static_cast<std::size_t>(j * e.pitch + r);
      if (e.col_idx[off] == static_cast<Index>(kEllPadding)) break;
      s.ell.values[off] = values[k++];
    }
    for (; q < s.coo_row.size() && static_cast<std::int64_t>(s.coo_row[q]) == r; ++q)
      s.coo_val[q] = values[k++];
  }
}

#define SPMAT_INSTANTIATE(V, I) template void update_values(Hyb<V, I>&, const V*);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
