// spmat/formats/bro_csr/bro_csr.cpp — BRO-CSR: encode, build, to_csr, bytes, registry entry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/bro_csr/bro_csr.hpp"

#include <algorithm>
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/formats/ell/row_limits.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

namespace {

/// Lanes per row from the mean row length: the largest power of two <= mean, in 1..32 (the csr
/// auto kernel's rule, spmat/formats/csr/csr_cuda.cu, but allowing one lane for rows of ~1).
int auto_tpr(std::int64_t rows, std::int64_t nnz) {
  const double mean = rows > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) : 0.0;
  int t = 1;
  while (t < 32 && 2.0 * t <= mean) t *= 2;
  return t;
}

}  // namespace

template <class Value, class Index>
BroCsr<Value, Index> BroCsr<Value, Index>::encode(const Csr<Value, Index>& a, int tpr, int sym_len) {
  if (tpr < 1 || tpr > 32 || (tpr & (tpr - 1)) != 0)
    throw ParseError("bro-csr: tpr=" + std::to_string(tpr) + " must be a power of two in 1..32");
  if (sym_len != 32 && sym_len != 64)
    throw ParseError("bro-csr: sym_len=" + std::to_string(sym_len) + " is not 32 or 64");
  if (static_cast<std::uint64_t>(a.cols) > bro::kMaxDelta)
    throw UnsupportedError("bro-csr: " + std::to_string(a.cols) +
                           " columns exceed the 32-bit field limit of the bit streams");
  BroCsr m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.tpr = tpr;
  m.sym_len = sym_len;
  m.row_ptr = a.row_ptr;
  m.values = a.values;
  const int w = tpr, rpg = 32 / tpr;
  const std::int64_t groups = (static_cast<std::int64_t>(a.rows) + rpg - 1) / rpg;
  m.base.resize(static_cast<std::size_t>(groups));
  m.width_off.reserve(static_cast<std::size_t>(groups) + 1);
  m.sym_off.reserve(static_cast<std::size_t>(groups) + 1);
  std::vector<std::uint64_t> symbols;  // all groups, sym_len bits each
  std::vector<std::uint32_t> fields;   // 32 lanes × steps of the current group
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int64_t r0 = g * rpg, r1 = std::min<std::int64_t>(a.rows, r0 + rpg);
    std::int64_t base = -1, steps = 0;
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t len = a.row_ptr[r + 1] - a.row_ptr[r];
      if (len == 0) continue;
      const std::int64_t c0 = a.col_idx[a.row_ptr[r]];
      base = base < 0 ? c0 : std::min(base, c0);
      steps = std::max(steps, (len + w - 1) / w);
    }
    if (base < 0) base = 0;
    m.base[g] = static_cast<Index>(base);
    fields.assign(static_cast<std::size_t>(32 * steps), 0u);
    std::vector<int> width(static_cast<std::size_t>(steps), 0);
    for (int t = 0; t < 32; ++t) {
      const std::int64_t r = r0 + t / w, i = t % w;
      if (r >= r1) break;
      const std::int64_t begin = a.row_ptr[r], end = a.row_ptr[r + 1];
      std::int64_t prev = base + i - w;  // so that f_0 = c − base − i and f_j = c − prev − W
      for (std::int64_t j = 0, e = begin + i; e < end; ++j, e += w) {
        const std::int64_t c = a.col_idx[e];
        const std::int64_t f = c - prev - w;
        if (f < 0)
          throw InvalidMatrixError("bro-csr: row " + std::to_string(r) +
                                   " is not sorted by column (canonical CSR required)");
        fields[static_cast<std::size_t>(j * 32 + t)] = static_cast<std::uint32_t>(f);
        width[j] = std::max(width[j], bro::gamma(static_cast<std::uint64_t>(f)));
        prev = c;
      }
    }
    std::int64_t bits = 0;
    for (std::int64_t j = 0; j < steps; ++j) {
      m.widths.push_back(static_cast<std::uint8_t>(width[j]));
      bits += width[j];
    }
    m.width_off.push_back(static_cast<std::int64_t>(m.widths.size()));
    const std::int64_t nsym = (bits + sym_len - 1) / sym_len;
    const std::size_t at = symbols.size();
    symbols.resize(at + static_cast<std::size_t>(32 * nsym), 0);
    if (nsym > 0) {
      for (int t = 0; t < 32; ++t) {
        bro::BitPacker p(sym_len);
        for (std::int64_t j = 0; j < steps; ++j) p.put(fields[j * 32 + t], width[j]);
        const std::vector<std::uint64_t> words = p.finish();
        for (std::size_t q = 0; q < words.size(); ++q) symbols[at + q * 32 + t] = words[q];
      }
    }
    m.sym_off.push_back(static_cast<std::int64_t>(symbols.size()));
  }
  bro::store_symbols(symbols, sym_len, m.sym32, m.sym64);
  return m;
}

const OptionTable<BroCsrOptions>& BroCsrOptions::fields() {
  using O = BroCsrOptions;
  static const OptionTable<O> t{
      int_choice_option("tpr", &O::tpr, {0, 1, 2, 4, 8, 16, 32},
                        "lanes per row, a power of two in 1..32 (0 = auto: largest power of two <= mean row length)"),
      bro::sym_len_option<O>(), max_skew_option(&O::max_skew, "its tpr lanes")};
  return t;
}

template <class Value, class Index>
BroCsr<Value, Index> BroCsr<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  const auto opt = parse_options<BroCsrOptions>(o);
  const std::int64_t tpr = opt.tpr == 0 ? auto_tpr(a.rows, a.nnz()) : opt.tpr;
  // tpr lanes walk each row and the whole warp waits for its group's longest row: refuse a
  // row that would stall every call before encoding anything.
  std::int64_t longest = 0;
  for (Index r = 0; r < a.rows; ++r)
    longest = std::max<std::int64_t>(longest, a.row_ptr[r + 1] - a.row_ptr[r]);
  check_row_skew("bro-csr", longest, a.nnz(), a.rows, tpr,
                 opt.max_skew,
                 "bro-hyb, hyb or csr");
  return encode(a, static_cast<int>(tpr), opt.sym_len);
}

template <class Value, class Index>
Csr<Value, Index> BroCsr<Value, Index>::to_csr() const {
  Csr<Value, Index> c;
  c.rows = this->rows;
  c.cols = this->cols;
  c.row_ptr = row_ptr;
  c.values = values;
  c.col_idx.resize(values.size());
  std::vector<std::int64_t> buf;
  const int rpg = rows_per_group();
  for (std::int64_t g = 0; g < groups(); ++g) {
    const std::int64_t r0 = g * rpg, r1 = std::min<std::int64_t>(this->rows, r0 + rpg);
    buf.assign(static_cast<std::size_t>(row_ptr[r1] - row_ptr[r0]), 0);
    bro_csr_decode(*this, g, buf.data());
    for (std::size_t k = 0; k < buf.size(); ++k)
      c.col_idx[static_cast<std::size_t>(row_ptr[r0]) + k] = static_cast<Index>(buf[k]);
  }
  return c;
}

template <class Value, class Index>
std::size_t BroCsr<Value, Index>::storage_bytes() const {
  return row_ptr.size() * sizeof(Index) + values.size() * sizeof(Value) +
         base.size() * sizeof(Index) + (width_off.size() + sym_off.size()) * sizeof(std::int64_t) +
         widths.size() + sym32.size() * sizeof(std::uint32_t) + sym64.size() * sizeof(std::uint64_t);
}

template <class Value, class Index>
bro::IndexSavings BroCsr<Value, Index>::index_savings() const {
  bro::IndexSavings s;
  s.original = values.size() * sizeof(Index);
  s.original_nnz = s.original;
  s.compressed = sym32.size() * sizeof(std::uint32_t) + sym64.size() * sizeof(std::uint64_t);
  s.metadata = base.size() * sizeof(Index) + widths.size() +
               (width_off.size() + sym_off.size()) * sizeof(std::int64_t);
  return s;
}

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(BroCsr)

}  // namespace spmat
