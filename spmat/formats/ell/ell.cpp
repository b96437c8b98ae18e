// spmat/formats/ell/ell.cpp — ELLPACK: build from CSR, back to CSR, fill check, traffic, registry entry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/ell/ell.hpp"

#include <algorithm>

#include "spmat/core/typed_options.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
Ell<Value, Index> Ell<Value, Index>::build_width(const Csr<Value, Index>& a, Index width) {
  Ell s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.width = width;
  s.pitch = ell_pitch(a.rows);
  const std::size_t slots = static_cast<std::size_t>(s.pitch) * static_cast<std::size_t>(width);
  s.col_idx.assign(slots, static_cast<Index>(kEllPadding));
  s.values.assign(slots, Value(0));
  std::int64_t stored = 0;
#pragma omp parallel for schedule(static) reduction(+ : stored)
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t begin = a.row_ptr[r];
    const std::int64_t len = std::min<std::int64_t>(a.row_ptr[r + 1] - begin, width);
    for (std::int64_t j = 0; j < len; ++j) {
      const std::size_t off = static_cast<std::size_t>(j * s.pitch + r);
      s.col_idx[off] = a.col_idx[begin + j];
      s.values[off] = a.values[begin + j];
    }
    stored += len;
  }
  s.nnz = static_cast<Index>(stored);
  return s;
}

const OptionTable<EllOptions>& EllOptions::fields() {
  static const OptionTable<EllOptions> t{max_fill_option(&EllOptions::max_fill, "rows x longest row")};
  return t;
}

template <class Value, class Index>
Ell<Value, Index> Ell<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  Index width = 0;
  for (Index r = 0; r < a.rows; ++r) width = std::max<Index>(width, a.row_ptr[r + 1] - a.row_ptr[r]);
  check_padding("ell", static_cast<double>(a.rows) * static_cast<double>(width), a.nnz(), a.rows,
                parse_options<EllOptions>(o).max_fill, "hyb or csr");
  return build_width(a, width);
}

template <class Value, class Index>
Csr<Value, Index> Ell<Value, Index>::to_csr() const {
  Csr<Value, Index> a;
  a.rows = this->rows;
  a.cols = this->cols;
  a.row_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    std::int64_t len = 0;
    while (len < width && col_idx[static_cast<std::size_t>(len * pitch + r)] != kEllPadding) ++len;
    a.row_ptr[r + 1] = a.row_ptr[r] + static_cast<Index>(len);
  }
  a.col_idx.resize(static_cast<std::size_t>(a.row_ptr[a.rows]));
  a.values.resize(a.col_idx.size());
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const std::size_t off = static_cast<std::size_t>((k - a.row_ptr[r]) * pitch + r);
      a.col_idx[k] = col_idx[off];
      a.values[k] = values[off];
    }
  return a;
}

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(Ell)

}  // namespace spmat
