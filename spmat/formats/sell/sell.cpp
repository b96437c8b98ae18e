// spmat/formats/sell/sell.cpp — SELL-C-σ: build (sort, chunk, pad), back to CSR, traffic, registry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/sell/sell.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

const OptionTable<SellOptions>& SellOptions::fields() {
  static const OptionTable<SellOptions> t{
      int_option("C", &SellOptions::C, 1, 1024, "rows per chunk (32 = one warp), 1..1024"),
      int_option("sigma", &SellOptions::sigma, 1, std::numeric_limits<std::int64_t>::max(),
                 "sorting window in rows: 1 (no sorting) or a multiple of C "
                 "(auto: 256 rounded up to a multiple of C)"),
      max_skew_option(&SellOptions::max_skew, "its thread"),
      max_fill_option(&SellOptions::max_fill, "stored slots")};
  return t;
}

template <class Value, class Index>
Sell<Value, Index> Sell<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  Sell s;
  const auto opt = parse_options<SellOptions>(o);
  s.chunk = opt.C;
  s.sigma = opt.sigma.value_or((256 + s.chunk - 1) / s.chunk * s.chunk);
  if (s.sigma != 1 && s.sigma % s.chunk != 0)
    throw ParseError("sell: sigma=" + std::to_string(s.sigma) +
                     " must be 1 (no sorting) or a positive multiple of C=" +
                     std::to_string(s.chunk));
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz();
  const std::int64_t rows = a.rows, C = s.chunk;
  const std::vector<Index> len = row_lengths(a);

  s.perm.resize(static_cast<std::size_t>(rows));
  std::iota(s.perm.begin(), s.perm.end(), Index(0));
  if (s.sigma > 1)
    for (std::int64_t w = 0; w < rows; w += s.sigma)
      std::stable_sort(s.perm.begin() + w, s.perm.begin() + std::min(rows, w + s.sigma),
                       [&](Index p, Index q) { return len[p] > len[q]; });

  const std::int64_t n_chunks = (rows + C - 1) / C;
  s.chunk_len.assign(static_cast<std::size_t>(n_chunks), 0);
  s.chunk_ptr.assign(static_cast<std::size_t>(n_chunks) + 1, 0);
  std::int64_t longest = 0, row_slots = 0;
  for (std::int64_t c = 0; c < n_chunks; ++c) {
    const std::int64_t p1 = std::min(rows, (c + 1) * C);
    Index w = 0;
    for (std::int64_t p = c * C; p < p1; ++p) w = std::max(w, len[s.perm[p]]);
    s.chunk_len[c] = w;
    s.chunk_ptr[c + 1] = s.chunk_ptr[c] + C * static_cast<std::int64_t>(w);
    longest = std::max<std::int64_t>(longest, w);
    row_slots += (p1 - c * C) * static_cast<std::int64_t>(w);
  }
  // Before the slots are allocated: sorting keeps the padding small even on skewed matrices,
  // but one thread still walks each row, so a long row stalls every call. The padding counts
  // the slots of real rows only (the last chunk's lanes past the last row are ELL's pitch).
  check_row_skew("sell", longest, s.nnz, rows, 1,
                 opt.max_skew, "hyb or csr");
  check_padding("sell", static_cast<double>(row_slots), s.nnz, rows,
                opt.max_fill, "hyb or csr");
  const auto slots = static_cast<std::size_t>(s.chunk_ptr.back());
  s.col_idx.assign(slots, static_cast<Index>(kEllPadding));
  s.values.assign(slots, Value(0));
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < rows; ++p) {
    const std::int64_t r = s.perm[p], base = s.chunk_ptr[p / C] + p % C;
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const auto off = static_cast<std::size_t>(base + (k - a.row_ptr[r]) * C);
      s.col_idx[off] = a.col_idx[k];
      s.values[off] = a.values[k];
    }
  }
  return s;
}

template <class Value, class Index>
Csr<Value, Index> Sell<Value, Index>::to_csr() const {
  const std::int64_t C = chunk;
  Csr<Value, Index> a;
  a.rows = this->rows;
  a.cols = this->cols;
  a.row_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
  auto slot = [&](std::int64_t p, std::int64_t j) {
    return static_cast<std::size_t>(chunk_ptr[p / C] + j * C + p % C);
  };
  auto length = [&](std::int64_t p) {
    std::int64_t n = 0;
    while (n < chunk_len[p / C] && col_idx[slot(p, n)] != kEllPadding) ++n;
    return n;
  };
  for (std::int64_t p = 0; p < a.rows; ++p) a.row_ptr[perm[p] + 1] = static_cast<Index>(length(p));
  for (std::int64_t r = 0; r < a.rows; ++r) a.row_ptr[r + 1] += a.row_ptr[r];
  a.col_idx.resize(static_cast<std::size_t>(a.row_ptr[a.rows]));
  a.values.resize(a.col_idx.size());
  for (std::int64_t p = 0; p < a.rows; ++p) {
    const Index r = perm[p];
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      a.col_idx[k] = col_idx[slot(p, k - a.row_ptr[r])];
      a.values[k] = values[slot(p, k - a.row_ptr[r])];
    }
  }
  return a;
}

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(Sell)

}  // namespace spmat
