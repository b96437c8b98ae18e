// spmat/formats/bro_common/bro_device_symbols.hpp — the choice, at launch, of the device symbol
// array of a BRO storage (bro-ell, bro-coo, bro-csr): each keeps sym32 and sym64 and fills the
// one its sym_len names, so each launch site instantiates its kernel for both symbol types.
// SPDX-License-Identifier: MIT
#pragma once

namespace spmat::bro {

/// f(d.sym32.data()) when d.sym_len == 32, else f(d.sym64.data()); `f` takes the symbols as
/// `const auto*` so the kernel it launches is deduced for that symbol type.
template <class Device, class F>
void with_symbols(const Device& d, F&& f) {
  if (d.sym_len == 32)
    f(d.sym32.data());
  else
    f(d.sym64.data());
}

}  // namespace spmat::bro
