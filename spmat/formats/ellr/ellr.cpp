// spmat/formats/ellr/ellr.cpp — ELLPACK-R: build, traffic, registry entry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/ellr/ellr.hpp"

#include <algorithm>

#include "spmat/format_adapter.hpp"
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

#define SPMAT_INSTANTIATE(V, I) template struct Ellr<V, I>;
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

std::vector<FormatEntry> ellr_entries() {
  // Products derived (make_entry). CUDA: spmv is one thread per row (deterministic); spmv_t
  // scatters with atomicAdd.
  const DeclaredCaps declared{.cuda = {.deterministic_spmv = true, .deterministic_spmv_t = false}};
  std::vector<FormatEntry> v;
  v.push_back(with_device_builder<Ellr>(make_entry<Ellr>(
      {.name = "ellr",
       .summary = "ELLPACK-R: ELLPACK plus row lengths (kernels skip the padding)",
       .params = option_params<EllrOptions>()},
      declared)));
  return v;
}

}  // namespace spmat
