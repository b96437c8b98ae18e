// spmat/formats/hyb/hyb.cpp — HYB: split (CUSP's K rule), back to CSR, traffic, registry entry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/hyb/hyb.hpp"

#include <limits>
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

const OptionTable<HybOptions>& HybOptions::fields() {
  constexpr auto no_max = std::numeric_limits<std::int64_t>::max();
  static const OptionTable<HybOptions> t{
      int_option("K", &HybOptions::K, 0, no_max,
                 "ELL width: auto (CUSP's rule) or n >= 0 (min(n, max row length))"),
      int_option("breakeven", &HybOptions::breakeven, 0, no_max,
                 "auto K: stop once fewer rows than this are longer"),
      max_fill_option(&HybOptions::max_fill, "rows x K", "forced K only: ")};
  return t;
}

template <class Index>
std::int64_t hyb_width(const std::vector<Index>& len, std::int64_t nnz, const FormatOptions& o) {
  const auto rows = static_cast<std::int64_t>(len.size());
  std::int64_t width = 0;
  const auto opt = parse_options<HybOptions>(o);
  if (!opt.K) {
    width = hyb_ell_width(len, opt.breakeven);
  } else {
    width = *opt.K;
    std::int64_t maxlen = 0;
    for (Index l : len) maxlen = std::max<std::int64_t>(maxlen, l);
    width = std::min(width, maxlen);  // wider would only add padding columns
    check_padding("hyb (forced K)", static_cast<double>(rows) * static_cast<double>(width), nnz,
                  rows, opt.max_fill, "hyb with K=auto or csr");
  }
  return width;
}

template <class Value, class Index>
Hyb<Value, Index> Hyb<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  const std::vector<Index> len = row_lengths(a);
  const std::int64_t width = hyb_width(len, a.nnz(), o);
  Hyb s;
  s.ell = Ell<Value, Index>::build_width(a, static_cast<Index>(width));
  std::size_t overflow = 0;
  for (Index l : len) overflow += static_cast<std::size_t>(std::max<std::int64_t>(l - width, 0));
  s.coo_row.reserve(overflow);
  s.coo_col.reserve(overflow);
  s.coo_val.reserve(overflow);
  for (Index r = 0; r < a.rows; ++r)
    for (std::int64_t p = a.row_ptr[r] + width; p < a.row_ptr[r + 1]; ++p) {
      s.coo_row.push_back(r);
      s.coo_col.push_back(a.col_idx[p]);
      s.coo_val.push_back(a.values[p]);
    }
  return s;
}

template <class Value, class Index>
Csr<Value, Index> Hyb<Value, Index>::to_csr() const {
  Csr<Value, Index> e = ell.to_csr();  // first K entries of each row
  Csr<Value, Index> a;
  a.rows = e.rows;
  a.cols = e.cols;
  a.row_ptr.assign(e.row_ptr.size(), 0);
  for (std::size_t q = 0; q < coo_row.size(); ++q) ++a.row_ptr[coo_row[q] + 1];
  for (Index r = 0; r < a.rows; ++r)
    a.row_ptr[r + 1] += a.row_ptr[r] + (e.row_ptr[r + 1] - e.row_ptr[r]);
  a.col_idx.reserve(static_cast<std::size_t>(a.row_ptr[a.rows]));
  a.values.reserve(a.col_idx.capacity());
  std::size_t q = 0;
  for (Index r = 0; r < a.rows; ++r) {
    for (Index p = e.row_ptr[r]; p < e.row_ptr[r + 1]; ++p) {
      a.col_idx.push_back(e.col_idx[p]);
      a.values.push_back(e.values[p]);
    }
    for (; q < coo_row.size() && coo_row[q] == r; ++q) {
      a.col_idx.push_back(coo_col[q]);
      a.values.push_back(coo_val[q]);
    }
  }
  return a;
}

template std::int64_t hyb_width(const std::vector<std::int32_t>&, std::int64_t, const FormatOptions&);
template std::int64_t hyb_width(const std::vector<std::int64_t>&, std::int64_t, const FormatOptions&);

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(Hyb)

}  // namespace spmat
