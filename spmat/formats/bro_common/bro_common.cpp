// spmat/formats/bro_common/bro_common.cpp — the BRO-ELL slice encoder and its host decoder.
// SPDX-License-Identifier: MIT
#include "spmat/formats/bro_common/bro_common.hpp"

#include <algorithm>
#include <string>

#include "spmat/core/error.hpp"

namespace spmat::bro {

SliceCode encode_slices(const std::vector<std::int64_t>& ptr,
                        const std::vector<std::uint32_t>& deltas, int h, int sym_len) {
  if (h < 1) throw ParseError("BRO: slice height h must be >= 1");
  if (sym_len < 1 || sym_len > 64) throw ParseError("BRO: sym_len must be in 1..64");
  const std::int64_t rows = static_cast<std::int64_t>(ptr.size()) - 1;
  const std::int64_t slices = (rows + h - 1) / h;
  SliceCode code;
  code.h = h;
  code.sym_len = sym_len;
  code.width_off.assign(static_cast<std::size_t>(slices) + 1, 0);
  code.sym_off.assign(static_cast<std::size_t>(slices) + 1, 0);
  // Pass 1: per-slice widths and stream lengths.
  for (std::int64_t s = 0; s < slices; ++s) {
    const std::int64_t r0 = s * h, r1 = std::min(rows, r0 + h);
    std::int64_t l = 0;
    for (std::int64_t r = r0; r < r1; ++r) l = std::max(l, ptr[r + 1] - ptr[r]);
    std::vector<std::uint8_t> w(static_cast<std::size_t>(l), 0);
    for (std::int64_t r = r0; r < r1; ++r)
      for (std::int64_t j = 0; j < ptr[r + 1] - ptr[r]; ++j) {
        const std::uint32_t d = deltas[ptr[r] + j];
        if (d == 0)
          throw InvalidMatrixError("BRO: delta 0 at row " + std::to_string(r) + ", position " +
                                   std::to_string(j) + " (0 is the padding marker)");
        w[j] = static_cast<std::uint8_t>(std::max(static_cast<int>(w[j]), gamma(d)));
      }
    std::int64_t bits = 0;
    for (auto b : w) bits += b;
    const std::int64_t nsym = (bits + sym_len - 1) / sym_len;
    code.widths.insert(code.widths.end(), w.begin(), w.end());
    code.width_off[s + 1] = code.width_off[s] + l;
    code.sym_off[s + 1] = code.sym_off[s] + nsym * h;
  }
  code.symbols.assign(static_cast<std::size_t>(code.sym_off[slices]), 0);
  // Pass 2: pack each row's stream and multiplex it.
  for (std::int64_t s = 0; s < slices; ++s) {
    const std::int64_t l = code.width_off[s + 1] - code.width_off[s];
    const std::uint8_t* w = code.widths.data() + code.width_off[s];
    for (std::int64_t t = 0; t < h; ++t) {
      const std::int64_t r = s * h + t;
      const std::int64_t len = r < rows ? ptr[r + 1] - ptr[r] : 0;
      BitPacker pk(sym_len);
      for (std::int64_t j = 0; j < l; ++j) pk.put(j < len ? deltas[ptr[r] + j] : 0u, w[j]);
      const auto sym = pk.finish();
      for (std::size_t q = 0; q < sym.size(); ++q)
        code.symbols[code.sym_off[s] + static_cast<std::int64_t>(q) * h + t] = sym[q];
    }
  }
  return code;
}

std::vector<std::uint32_t> decode_slice_row(const SliceCode& code, std::int64_t s, int t) {
  const std::int64_t l = code.width_off[s + 1] - code.width_off[s];
  HostReader rd(code.symbols.data() + code.sym_off[s] + t, code.h, code.sym_len);
  std::vector<std::uint32_t> out(static_cast<std::size_t>(l));
  for (std::int64_t j = 0; j < l; ++j)
    out[j] = static_cast<std::uint32_t>(rd.next(code.widths[code.width_off[s] + j]));
  return out;
}

void store_symbols(const std::vector<std::uint64_t>& symbols, int sym_len,
                   std::vector<std::uint32_t>& sym32, std::vector<std::uint64_t>& sym64) {
  sym32.clear();
  sym64.clear();
  if (sym_len == 32)
    sym32.assign(symbols.begin(), symbols.end());
  else if (sym_len == 64)
    sym64 = symbols;
  else
    throw ParseError("BRO: sym_len=" + std::to_string(sym_len) + " is not 32 or 64");
}

}  // namespace spmat::bro
