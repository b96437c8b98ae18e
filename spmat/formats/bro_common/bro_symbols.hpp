// spmat/formats/bro_common/bro_symbols.hpp — the choice of the symbol array of a BRO storage
// (bro-ell, bro-coo, bro-csr; host vectors or device buffers): each keeps sym32 and sym64 and
// fills the one its sym_len names, so each decode or launch site is instantiated for both
// symbol types.
// SPDX-License-Identifier: MIT
#pragma once

namespace spmat::bro {

/// f(s.sym32.data()) when s.sym_len == 32, else f(s.sym64.data()); `f` takes the symbols as
/// `const auto*` so the decoder or kernel it calls is deduced for that symbol type.
template <class Storage, class F>
void with_symbols(const Storage& s, F&& f) {
  if (s.sym_len == 32)
    f(s.sym32.data());
  else
    f(s.sym64.data());
}

}  // namespace spmat::bro
