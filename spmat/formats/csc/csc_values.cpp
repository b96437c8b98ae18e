// spmat/formats/csc/csc_values.cpp — value updates of the host CSC storage.
// SPDX-License-Identifier: MIT
#include <vector>

#include "spmat/formats/csc/csc.hpp"

namespace spmat {

// Walking the columns in order visits each row's entries in ascending column order, i.e. in
// CSR order: a cursor per row (starting at the row's CSR offset) gives each CSC entry its CSR
// position. O(nnz + rows) time and rows indices of memory; nothing is kept between updates.
template <class Value, class Index>
void update_values(CscStorage<Value, Index>& s, const Value* values) {
  const auto& a = s.a;
  std::vector<std::int64_t> cursor(static_cast<std::size_t>(a.rows) + 1, 0);
  for (const Index r : a.row_idx) ++cursor[static_cast<std::size_t>(r) + 1];
  for (std::size_t r = 0; r < static_cast<std::size_t>(a.rows); ++r) cursor[r + 1] += cursor[r];
  for (std::size_t p = 0; p < a.row_idx.size(); ++p)
    s.a.values[p] = values[cursor[static_cast<std::size_t>(a.row_idx[p])]++];
}

#define SPMAT_INSTANTIATE(V, I) template void update_values(CscStorage<V, I>&, const V*);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
