// spmat/formats/bro_ell/bro_ell.cpp — BRO-ELL: build (encode + BAR), to_csr, bytes, registry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/bro_ell/bro_ell.hpp"

#include <algorithm>
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/formats/bar/bar.hpp"
#include "spmat/formats/ell/row_limits.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

const OptionTable<BroEllOptions>& BroEllOptions::fields() {
  using O = BroEllOptions;
  static const OptionTable<O> t = [] {
    OptionTable<O> v = bro::slice_fields<O>(false);
    v.push_back(max_fill_option(&O::max_fill, "stored slots"));
    v.push_back(max_skew_option(&O::max_skew, "its thread"));
    for (auto& f : bro::bar_fields<O>(false)) v.push_back(std::move(f));
    return v;
  }();
  return t;
}

template <class Value, class Index>
void bro_apply_kernel_options(BroEll<Value, Index>& e, const std::string& kernel, int unroll,
                              int fit_bits) {
  e.kernel = kernel == "fit" ? 2 : (kernel == "batched" ? 1 : 0);
  e.unroll = unroll;
  e.fit_max_words = fit_bits / 64;
}

template <class Value, class Index>
std::int64_t bro_ell_slots(const Csr<Value, Index>& a, int h, const std::vector<std::int64_t>& order,
                           std::int64_t max_len) {
  std::int64_t slots = 0;
  for (std::int64_t s0 = 0; s0 < a.rows; s0 += h) {
    const std::int64_t s1 = std::min<std::int64_t>(a.rows, s0 + h);
    std::int64_t l = 0;
    for (std::int64_t p = s0; p < s1; ++p) {
      const std::int64_t r = order.empty() ? p : order[p];
      l = std::max<std::int64_t>(l, a.row_ptr[r + 1] - a.row_ptr[r]);
    }
    if (max_len >= 0) l = std::min(l, max_len);
    slots += l * (s1 - s0);
  }
  return slots;
}

template <class Value, class Index>
BroEll<Value, Index> BroEll<Value, Index>::encode(const Csr<Value, Index>& a, int h, int sym_len,
                                                  const std::vector<std::int64_t>& order,
                                                  std::int64_t max_len, bool first_slice) {
  if (static_cast<std::uint64_t>(a.cols) > bro::kMaxDelta)
    throw UnsupportedError("BRO: " + std::to_string(a.cols) +
                           " columns exceed the 32-bit delta limit of the bit streams");
  const std::int64_t m = a.rows;
  auto orig = [&](std::int64_t p) { return order.empty() ? p : order[p]; };
  auto len_of = [&](std::int64_t r) {
    const std::int64_t l = a.row_ptr[r + 1] - a.row_ptr[r];
    return max_len >= 0 ? std::min(l, max_len) : l;
  };
  std::vector<std::int64_t> ptr(static_cast<std::size_t>(m) + 1, 0);
  for (std::int64_t p = 0; p < m; ++p) ptr[p + 1] = ptr[p] + len_of(orig(p));
  std::vector<std::uint32_t> deltas(static_cast<std::size_t>(ptr[m]));
  // First-column base per slice: the smallest first column of its non-empty rows (0 if none),
  // so the first delta of a row is column − base + 1 >= 1 (0 stays the padding marker).
  const std::int64_t slices = (m + h - 1) / h;
  std::vector<Index> base;
  if (first_slice) {
    base.assign(static_cast<std::size_t>(slices), Index(0));
    for (std::int64_t s = 0; s < slices; ++s) {
      std::int64_t lo = -1;
      for (std::int64_t p = s * h; p < std::min(m, (s + 1) * h); ++p)
        if (ptr[p + 1] > ptr[p]) {
          const std::int64_t c = a.col_idx[a.row_ptr[orig(p)]];
          lo = lo < 0 ? c : std::min(lo, c);
        }
      base[s] = static_cast<Index>(lo < 0 ? 0 : lo);
    }
  }
  for (std::int64_t p = 0; p < m; ++p) {
    const std::int64_t r = orig(p);
    // first delta = column − base + 1 (base 0: the paper's column + 1, spec §9.1)
    std::int64_t prev = (first_slice ? static_cast<std::int64_t>(base[p / h]) : 0) - 1;
    for (std::int64_t j = 0; j < ptr[p + 1] - ptr[p]; ++j) {
      const std::int64_t c = a.col_idx[a.row_ptr[r] + j];
      deltas[ptr[p] + j] = static_cast<std::uint32_t>(c - prev);
      prev = c;
    }
  }
  bro::SliceCode code = bro::encode_slices(ptr, deltas, h, sym_len);
  BroEll e;
  e.rows = a.rows;
  e.cols = a.cols;
  e.nnz = ptr[m];
  e.h = h;
  e.sym_len = sym_len;
  e.first_slice = first_slice;
  e.col_base = std::move(base);
  for (std::int64_t p = 0; p < m; ++p) e.max_row = std::max(e.max_row, ptr[p + 1] - ptr[p]);
  e.width_off = std::move(code.width_off);
  e.sym_off = std::move(code.sym_off);
  e.widths = std::move(code.widths);
  if (sym_len == 32 || sym_len == 64)
    bro::store_symbols(code.symbols, sym_len, e.sym32, e.sym64);
  else  // host-only codes (the paper's sym_len = 4 example): keep the symbols as 64-bit words
    e.sym64 = std::move(code.symbols);
  e.values.assign(static_cast<std::size_t>(e.width_off.back() * h), Value(0));
  for (std::int64_t p = 0; p < m; ++p) {
    const std::int64_t s = p / h, t = p % h, r = orig(p);
    Value* v = e.values.data() + e.width_off[s] * h + t;
    for (std::int64_t j = 0; j < ptr[p + 1] - ptr[p]; ++j) v[j * h] = a.values[a.row_ptr[r] + j];
  }
  if (!order.empty()) {
    e.row_id.resize(static_cast<std::size_t>(m));
    for (std::int64_t p = 0; p < m; ++p) e.row_id[p] = static_cast<Index>(order[p]);
  }
  return e;
}

template <class Value, class Index>
BroEll<Value, Index> BroEll<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  const auto opt = parse_options<BroEllOptions>(o);
  const int h = opt.h, sym_len = opt.sym_len;
  const int bar = opt.bar ? 1 : 0;
  const char* name = bar == 1 ? "bro-ell-bar" : "bro-ell";
  // Refuse before reordering and encoding: one thread walks each row, so a long row stalls
  // every call; then the slices are padded to their longest row.
  std::int64_t longest = 0;
  for (Index r = 0; r < a.rows; ++r)
    longest = std::max<std::int64_t>(longest, a.row_ptr[r + 1] - a.row_ptr[r]);
  check_row_skew(name, longest, a.nnz(), a.rows, 1, opt.max_skew, "bro-hyb, hyb or csr");
  std::vector<std::int64_t> order;
  if (bar == 1) order = bar::order_for(a, opt.bar_algo, opt.bar_window, h, sym_len, -1);
  check_padding(name, static_cast<double>(bro_ell_slots(a, h, order, -1)), a.nnz(), a.rows,
                opt.max_fill, "bro-hyb, hyb or csr");
  BroEll e = encode(a, h, sym_len, order, -1, opt.first == "slice");
  bro_apply_kernel_options(e, opt.kernel, opt.unroll, opt.fit_bits);
  return e;
}

template <class Value, class Index>
Csr<Value, Index> BroEll<Value, Index>::to_csr() const {
  Coo<Value, Index> c = reserved_coo<Value, Index>(this->rows, this->cols, nnz);
  for (std::int64_t p = 0; p < c.rows; ++p) {
    const Index r = static_cast<Index>(original_row(p));
    auto f = [&](std::int64_t col, Value v) {
      c.row_idx.push_back(r);
      c.col_idx.push_back(static_cast<Index>(col));
      c.values.push_back(v);
    };
    if (sym_len == 32 || sym_len == 64) {
      bro_ell_for_row(*this, p / h, p % h, f);
    } else {  // host-only odd sym_len (tests): generic reader
      const std::int64_t s = p / h, wo = width_off[s];
      bro::HostReader rd(sym64.data() + sym_off[s] + p % h, h, sym_len);
      std::int64_t col = start_col(s);
      for (std::int64_t j = 0; j < width_off[s + 1] - wo; ++j) {
        const std::uint64_t d = rd.next(widths[wo + j]);
        if (d) {
          col += static_cast<std::int64_t>(d);
          f(col, values[wo * h + j * h + p % h]);
        }
      }
    }
  }
  return spmat::to_csr(c);
}

template <class Value, class Index>
std::size_t BroEll<Value, Index>::storage_bytes() const {
  return width_off.size() * sizeof(std::int64_t) + sym_off.size() * sizeof(std::int64_t) +
         widths.size() + sym32.size() * sizeof(std::uint32_t) +
         sym64.size() * sizeof(std::uint64_t) + values.size() * sizeof(Value) +
         row_id.size() * sizeof(Index) + col_base.size() * sizeof(Index);
}

template <class Value, class Index>
bro::IndexSavings BroEll<Value, Index>::index_savings() const {
  bro::IndexSavings s;
  s.original =
      static_cast<std::size_t>(this->rows) * static_cast<std::size_t>(max_row) * sizeof(Index);
  s.original_nnz = static_cast<std::size_t>(nnz) * sizeof(Index);
  s.compressed = sym32.size() * sizeof(std::uint32_t) + sym64.size() * sizeof(std::uint64_t);
  s.metadata = widths.size() + (width_off.size() + sym_off.size()) * sizeof(std::int64_t) +
               col_base.size() * sizeof(Index);
  s.permutation = row_id.size() * sizeof(Index);
  return s;
}

#define SPMAT_INSTANTIATE(V, I)                                                             \
  template struct BroEll<V, I>;                                                             \
  template void bro_apply_kernel_options(BroEll<V, I>&, const std::string&, int, int);      \
  template std::int64_t bro_ell_slots(const Csr<V, I>&, int, const std::vector<std::int64_t>&, \
                                      std::int64_t);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
