// spmat/formats/sell/sell_values.cpp — value updates of the host SELL-C-σ storage.
// SPDX-License-Identifier: MIT
#include <vector>

#include "spmat/formats/sell/sell.hpp"

namespace spmat {

// Row r sits at position p (perm[p] = r) in chunk p / C; its entries fill slots
// chunk_ptr[p/C] + j*C + p%C for j = 0.. up to the first padding. The CSR offset of each row
// comes from those stored lengths, then every row is written independently.
template <class Value, class Index>
void update_values(Sell<Value, Index>& s, const Value* values) {
  const std::int64_t C = s.chunk, rows = s.rows;
  auto slot = [&](std::int64_t p, std::int64_t j) {
    return static_cast<std::size_t>(s.chunk_ptr[static_cast<std::size_t>(p / C)] + j * C + p % C);
  };
  std::vector<std::int64_t> offset(static_cast<std::size_t>(rows) + 1, 0);
  for (std::int64_t p = 0; p < rows; ++p) {
    std::int64_t n = 0;
    const std::int64_t w = s.chunk_len[static_cast<std::size_t>(p / C)];
    while (n < w && s.col_idx[slot(p, n)] != static_cast<Index>(kEllPadding)) ++n;
    offset[static_cast<std::size_t>(s.perm[static_cast<std::size_t>(p)]) + 1] = n;
  }
  for (std::int64_t r = 0; r < rows; ++r) offset[r + 1] += offset[r];
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < rows; ++p) {
    const auto r = static_cast<std::size_t>(s.perm[static_cast<std::size_t>(p)]);
    for (std::int64_t k = offset[r]; k < offset[r + 1]; ++k) s.values[slot(p, k - offset[r])] = values[k];
  }
}

#define SPMAT_INSTANTIATE(V, I) template void update_values(Sell<V, I>&, const V*);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
