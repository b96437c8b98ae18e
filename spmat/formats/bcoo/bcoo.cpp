// spmat/formats/bcoo/bcoo.cpp — BCOO: build, to_csr, traffic model, registry entry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/bcoo/bcoo.hpp"

#include "spmat/core/typed_options.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

const OptionTable<BcooOptions>& BcooOptions::fields() {
  static const OptionTable<BcooOptions> t{chunk_option(&BcooOptions::chunk)};
  return t;
}

template <class Value, class Index>
Bcoo<Value, Index> Bcoo<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  Bcoo s;
  s.chunk = parse_options<BcooOptions>(o).chunk;
  s.a = to_coo(a);
  return s;
}

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(Bcoo)

}  // namespace spmat
