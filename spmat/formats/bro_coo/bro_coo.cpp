// spmat/formats/bro_coo/bro_coo.cpp — BRO-COO: interval encoder, to_csr, bytes, registry entry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/bro_coo/bro_coo.hpp"

#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

const OptionTable<BroCooOptions>& BroCooOptions::fields() {
  static const OptionTable<BroCooOptions> t{
      bro::sym_len_option<BroCooOptions>(),
      bro::interval_option<BroCooOptions>(
          "entries per warp interval (multiple of 32); one row width per interval")};
  return t;
}

template <class Value, class Index>
BroCoo<Value, Index> BroCoo<Value, Index>::encode(Index rows, Index cols,
                                                  const std::vector<Index>& row_idx,
                                                  std::vector<Index> col_idx,
                                                  std::vector<Value> values, int sym_len,
                                                  std::int64_t interval) {
  if (rows > 0 && static_cast<std::uint64_t>(rows - 1) > bro::kMaxDelta)
    throw UnsupportedError("BRO-COO: " + std::to_string(rows) +
                           " rows exceed the 32-bit delta limit of the bit streams");
  BroCoo c;
  c.rows = rows;
  c.cols = cols;
  c.nnz = static_cast<std::int64_t>(row_idx.size());
  c.sym_len = sym_len;
  c.interval = interval;
  const std::int64_t nint = (c.nnz + interval - 1) / interval;
  c.base_row.resize(static_cast<std::size_t>(nint));
  c.widths.resize(static_cast<std::size_t>(nint));
  c.sym_off.assign(static_cast<std::size_t>(nint) + 1, 0);
  std::vector<std::uint64_t> symbols;
  std::vector<std::vector<std::uint64_t>> lane(32);
  for (std::int64_t q = 0; q < nint; ++q) {
    const std::int64_t begin = q * interval, end = std::min(c.nnz, begin + interval);
    const std::int64_t steps = (end - begin + 31) / 32;
    c.base_row[q] = row_idx[begin];
    int b = 0;
    for (std::int64_t e = begin; e < end; ++e) {
      const std::int64_t prev = e - 32 >= begin ? row_idx[e - 32] : row_idx[begin];
      b = std::max(b, bro::gamma(static_cast<std::uint64_t>(row_idx[e] - prev)));
    }
    c.widths[q] = static_cast<std::uint8_t>(b);
    std::int64_t nsym = 0;
    for (std::int64_t t = 0; t < 32; ++t) {
      bro::BitPacker pk(sym_len);
      std::int64_t prev = row_idx[begin];
      for (std::int64_t j = 0; j < steps; ++j) {
        const std::int64_t e = begin + 32 * j + t;
        std::uint64_t d = 0;  // past the end: pad with 0
        if (e < end) {
          d = static_cast<std::uint64_t>(row_idx[e] - prev);
          prev = row_idx[e];
        }
        pk.put(d, b);
      }
      lane[t] = pk.finish();
      nsym = static_cast<std::int64_t>(lane[t].size());  // same for every lane: steps·b bits
    }
    c.sym_off[q + 1] = c.sym_off[q] + 32 * nsym;
    symbols.resize(static_cast<std::size_t>(c.sym_off[q + 1]), 0);
    for (std::int64_t t = 0; t < 32; ++t)
      for (std::int64_t p = 0; p < nsym; ++p) symbols[c.sym_off[q] + 32 * p + t] = lane[t][p];
  }
  bro::store_symbols(symbols, sym_len, c.sym32, c.sym64);
  c.col_idx = std::move(col_idx);
  c.values = std::move(values);
  return c;
}

template <class Value, class Index>
BroCoo<Value, Index> BroCoo<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  const auto opt = parse_options<BroCooOptions>(o);
  const Coo<Value, Index> coo = to_coo(a);
  return encode(a.rows, a.cols, coo.row_idx, coo.col_idx, coo.values, opt.sym_len, opt.interval);
}

template <class Value, class Index>
Csr<Value, Index> BroCoo<Value, Index>::to_csr() const {
  Coo<Value, Index> c;
  c.rows = this->rows;
  c.cols = this->cols;
  c.row_idx.resize(static_cast<std::size_t>(nnz));
  c.col_idx = col_idx;
  c.values = values;
  for (std::int64_t q = 0; q < intervals(); ++q)
    bro_coo_for_interval(*this, q, [&](std::int64_t e, std::int64_t row) {
      c.row_idx[e] = static_cast<Index>(row);
    });
  return spmat::to_csr(c);
}

template <class Value, class Index>
std::size_t BroCoo<Value, Index>::storage_bytes() const {
  return base_row.size() * sizeof(Index) + widths.size() + sym_off.size() * sizeof(std::int64_t) +
         sym32.size() * sizeof(std::uint32_t) + sym64.size() * sizeof(std::uint64_t) +
         col_idx.size() * sizeof(Index) + values.size() * sizeof(Value);
}

template <class Value, class Index>
bro::IndexSavings BroCoo<Value, Index>::index_savings() const {
  bro::IndexSavings s;
  s.original = 2 * static_cast<std::size_t>(nnz) * sizeof(Index);
  s.original_nnz = s.original;
  s.compressed = sym32.size() * sizeof(std::uint32_t) + sym64.size() * sizeof(std::uint64_t) +
                 col_idx.size() * sizeof(Index);
  s.metadata = base_row.size() * sizeof(Index) + widths.size() + sym_off.size() * sizeof(std::int64_t);
  return s;
}

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(BroCoo)

}  // namespace spmat
