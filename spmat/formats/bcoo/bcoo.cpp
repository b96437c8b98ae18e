// spmat/formats/bcoo/bcoo.cpp — BCOO: build, to_csr, traffic model, registry entry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/bcoo/bcoo.hpp"

#include "spmat/format_adapter.hpp"
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

template <class Value, class Index>
Csr<Value, Index> Bcoo<Value, Index>::to_csr() const {
  // The entries are already in canonical order: only row_ptr has to be rebuilt (O(nnz + rows)).
  return sorted_coo_to_csr(a);
}

#define SPMAT_INSTANTIATE(V, I) template struct Bcoo<V, I>;
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

std::vector<FormatEntry> bcoo_entries() {
  // Products derived (make_entry); no CUDA backend. The CPU kernels are deterministic.
  return {make_entry<Bcoo>(
      {.name = "bcoo",
       .summary = "balanced COO: chunks of b nonzeros over OpenMP threads (CPU)",
       .params = option_params<BcooOptions>()},
      {})};
}

}  // namespace spmat
