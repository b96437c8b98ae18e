// spmat/formats/ellr/ellr.cpp — ELLPACK-R: build, traffic, registry entry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/ellr/ellr.hpp"

#include <algorithm>

#include "spmat/core/typed_options.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

const OptionTable<EllrOptions>& EllrOptions::fields() {
  static const OptionTable<EllrOptions> t{max_fill_option(&EllrOptions::max_fill, "rows x longest row")};
  return t;
}

template <class Value, class Index>
Ellr<Value, Index> Ellr<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  Ellr s;
  s.row_len = row_lengths(a);
  Index width = 0;
  for (Index len : s.row_len) width = std::max(width, len);
  check_padding("ellr", static_cast<double>(a.rows) * static_cast<double>(width), a.nnz(), a.rows,
                parse_options<EllrOptions>(o).max_fill, "hyb or csr");
  s.ell = Ell<Value, Index>::build_width(a, width);
  return s;
}

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(Ellr)

}  // namespace spmat
