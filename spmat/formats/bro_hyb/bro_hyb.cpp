// spmat/formats/bro_hyb/bro_hyb.cpp — BRO-HYB: the split rule, build, to_csr, registry entries.
// SPDX-License-Identifier: MIT
#include "spmat/formats/bro_hyb/bro_hyb.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <limits>
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/formats/bar/bar.hpp"
#include "spmat/formats/ell/row_limits.hpp"
#include "spmat/formats/hyb/hyb.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

namespace {

/// Row lengths of row_ptr (rows+1 entries) and the longest.
template <class Index>
std::int64_t longest_row(std::span<const Index> row_ptr) {
  std::int64_t maxlen = 0;
  for (std::size_t r = 0; r + 1 < row_ptr.size(); ++r)
    maxlen = std::max<std::int64_t>(maxlen, row_ptr[r + 1] - row_ptr[r]);
  return maxlen;
}

}  // namespace

std::int64_t bro_hyb_ell_width_hist(std::span<const std::int64_t> hist, double relative_speed,
                                    std::int64_t breakeven) {
  return cusp_ell_width(hist, static_cast<std::int64_t>(hist.size()) - 1, relative_speed, breakeven);
}

template <class Index>
std::int64_t bro_hyb_ell_width(std::span<const Index> row_ptr, double relative_speed,
                               std::int64_t breakeven) {
  const std::int64_t rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  if (rows <= 0) return 0;
  std::vector<std::int64_t> hist(static_cast<std::size_t>(longest_row(row_ptr)) + 1, 0);
  for (std::int64_t r = 0; r < rows; ++r) ++hist[static_cast<std::size_t>(row_ptr[r + 1] - row_ptr[r])];
  return bro_hyb_ell_width_hist(hist, relative_speed, breakeven);
}

namespace {

/// The byte-cost rule's walk over K = 0..upto: the best K (ties to the larger) and its cost, and
/// the cost at upto, costs relative to K = 0. Going from K = i to i + 1 adds h slots to every
/// slice with L_s > i and removes one COO entry from every row with len > i. Reads row_hist[i]
/// and slice_hist[i] for i < upto only (and the totals of both).
struct BytesWalk {
  std::int64_t best = 0;
  double best_cost = 0, cost = 0;
};
BytesWalk bytes_walk(std::span<const std::int64_t> row_hist,
                     std::span<const std::int64_t> slice_hist, std::int64_t upto, int h,
                     double ell_slot, double coo_entry) {
  auto slices_of = [&](std::int64_t i) {
    return i < static_cast<std::int64_t>(slice_hist.size()) ? slice_hist[static_cast<std::size_t>(i)]
                                                             : std::int64_t{0};
  };
  std::int64_t slices_longer = 0, rows_longer = 0;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(row_hist.size()); ++i) {
    slices_longer += slices_of(i);
    rows_longer += row_hist[static_cast<std::size_t>(i)];
  }
  BytesWalk w;
  for (std::int64_t i = 0; i < upto; ++i) {
    slices_longer -= slices_of(i);                              // now: L_s > i
    rows_longer -= row_hist[static_cast<std::size_t>(i)];      // now: len > i
    w.cost += static_cast<double>(h) * static_cast<double>(slices_longer) * ell_slot -
              static_cast<double>(rows_longer) * coo_entry;
    if (w.cost <= w.best_cost) {
      w.best_cost = w.cost;
      w.best = i + 1;
    }
  }
  return w;
}

}  // namespace

std::int64_t bro_hyb_ell_width_bytes_hist(std::span<const std::int64_t> row_hist,
                                          std::span<const std::int64_t> slice_hist, int h,
                                          int value_bytes, int index_bytes, double coo_penalty) {
  std::int64_t rows = 0;
  for (const std::int64_t n : row_hist) rows += n;
  if (rows <= 0 || h <= 0) return 0;
  const std::int64_t maxlen = static_cast<std::int64_t>(row_hist.size()) - 1;
  return bytes_walk(row_hist, slice_hist, maxlen, h, static_cast<double>(value_bytes + 1),
                    coo_penalty * static_cast<double>(value_bytes + index_bytes + 1))
      .best;
}

std::optional<std::int64_t> bro_hyb_ell_width_bytes_bounded(
    std::span<const std::int64_t> row_hist, std::span<const std::int64_t> slice_hist,
    std::int64_t max_len, std::int64_t nnz, std::int64_t row_excess, int h, int value_bytes,
    int index_bytes, double coo_penalty) {
  std::int64_t rows = 0, slices = 0;
  for (const std::int64_t n : row_hist) rows += n;
  for (const std::int64_t n : slice_hist) slices += n;
  if (rows <= 0 || h <= 0) return 0;
  const auto bound = static_cast<std::int64_t>(row_hist.size()) - 1;
  const double ell_slot = static_cast<double>(value_bytes + 1);
  const double coo_entry = coo_penalty * static_cast<double>(value_bytes + index_bytes + 1);
  // Up to the bound the walk is the full rule's, step for step (its bins below B are exact).
  const BytesWalk w = bytes_walk(row_hist, slice_hist, std::min(max_len, bound), h, ell_slot,
                                 coo_entry);
  if (max_len <= bound) return w.best;  // the full rule stops at max_len <= B as well
  // Past B, with A(K) = Σ_s min(L_s, K) and N(K) = Σ_r min(len_r, K), cost(K) = h·e·A(K) −
  // c·N(K) (e = ell_slot, c = coo_entry). For K > B: each slice's min(L_s, K) − min(L_s, B) is
  // the largest of its (at most h) rows' min(len, K) − min(len, B), so h·(A(K) − A(B)) >=
  // N(K) − N(B), and N(K) − N(B) <= Σ_r max(0, len_r − B) = row_excess. Hence
  //   cost(K) − cost(B) >= (e − c)·(N(K) − N(B)) >= −max(0, c − e)·row_excess,
  // and when cost(B) − max(0, c − e)·row_excess > best cost over K <= B, no K > B reaches or ties
  // the best: the full rule's answer is w.best. The host's doubles are these integers exactly
  // while every partial sum stays below 2^53 (e and c integers: the default coo_penalty); else,
  // or when the bound does not decide, the caller runs the full rule.
  const double magnitude = static_cast<double>(h) * ell_slot * static_cast<double>(slices) *
                               static_cast<double>(max_len) +
                           coo_entry * static_cast<double>(nnz);
  if (coo_entry != std::floor(coo_entry) || magnitude >= 0x1p52) return std::nullopt;
  const double lowest_past = w.cost - std::max(0.0, coo_entry - ell_slot) * static_cast<double>(row_excess);
  if (lowest_past > w.best_cost) return w.best;
  return std::nullopt;
}

template <class Index>
std::int64_t bro_hyb_ell_width_bytes(std::span<const Index> row_ptr, int h, int value_bytes,
                                     int index_bytes, double coo_penalty) {
  const std::int64_t rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  if (rows <= 0 || h <= 0) return 0;
  const std::int64_t maxlen = longest_row(row_ptr);
  // row_hist[i] = rows of length i; slice_hist[i] = slices whose longest row has length i.
  std::vector<std::int64_t> row_hist(static_cast<std::size_t>(maxlen) + 1, 0);
  std::vector<std::int64_t> slice_hist(static_cast<std::size_t>(maxlen) + 1, 0);
  for (std::int64_t s0 = 0; s0 < rows; s0 += h) {
    std::int64_t l = 0;
    for (std::int64_t r = s0; r < std::min<std::int64_t>(rows, s0 + h); ++r) {
      const std::int64_t len = row_ptr[r + 1] - row_ptr[r];
      ++row_hist[static_cast<std::size_t>(len)];
      l = std::max(l, len);
    }
    ++slice_hist[static_cast<std::size_t>(l)];
  }
  return bro_hyb_ell_width_bytes_hist(row_hist, slice_hist, h, value_bytes, index_bytes,
                                      coo_penalty);
}

const OptionTable<BroHybOptions>& BroHybOptions::fields() {
  using O = BroHybOptions;
  static const OptionTable<O> t = [] {
    OptionTable<O> v = bro::slice_fields<O>(true);
    v.push_back(bro::interval_option<O>("entries per warp interval of the BRO-COO part (multiple of 32)"));
    v.push_back(int_option("ell_width", &O::ell_width, -1, std::numeric_limits<std::int64_t>::max(),
                           "entries per row in the BRO-ELL part (-1 = the split rule)"));
    v.push_back(max_fill_option(&O::max_fill, "slots of the BRO-ELL part", "forced ell_width only: "));
    v.push_back(choice_option("split", &O::split, {"bytes", "cusp"},
                              "split rule: bytes (sliced-ELL byte cost, COO at 3x) or cusp (CUSP's HYB rule, the paper's)"));
    for (auto& f : bro::bar_fields<O>(true)) v.push_back(std::move(f));
    return v;
  }();
  return t;
}

template <class Value, class Index>
BroHyb<Value, Index> BroHyb<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  const auto opt = parse_options<BroHybOptions>(o);
  const int h = opt.h, sym_len = opt.sym_len;
  std::int64_t k = opt.ell_width;
  const std::string& split = opt.split;
  const bool forced = k >= 0;
  if (k < 0)
    k = split == "cusp" ? bro_hyb_ell_width<Index>(a.row_ptr)
                        : bro_hyb_ell_width_bytes<Index>(a.row_ptr, h, static_cast<int>(sizeof(Value)),
                                                         static_cast<int>(sizeof(Index)));
  const int bar = opt.bar ? 1 : 0;
  std::vector<std::int64_t> order;
  if (bar == 1) order = bar::order_for(a, opt.bar_algo, opt.bar_window, h, sym_len, k);
  // Both split rules keep the BRO-ELL part's padding small; a forced width may not.
  if (forced)
    check_padding(bar == 1 ? "bro-hyb-bar (forced ell_width)" : "bro-hyb (forced ell_width)",
                  static_cast<double>(bro_ell_slots(a, h, order, k)), a.nnz(), a.rows,
                  opt.max_fill,
                  "bro-hyb with ell_width=-1, hyb or csr");
  BroHyb m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.nnz = a.nnz();
  m.ell_width = k;
  m.ell = BroEll<Value, Index>::encode(a, h, sym_len, order, k, opt.first == "slice");
  bro_apply_kernel_options(m.ell, opt.kernel, opt.unroll, opt.fit_bits);
  std::vector<Index> ri, ci;
  std::vector<Value> vv;
  for (Index r = 0; r < a.rows; ++r)
    for (std::int64_t p = a.row_ptr[r] + k; p < a.row_ptr[r + 1]; ++p) {
      ri.push_back(r);
      ci.push_back(a.col_idx[p]);
      vv.push_back(a.values[p]);
    }
  m.coo = BroCoo<Value, Index>::encode(a.rows, a.cols, ri, std::move(ci), std::move(vv), sym_len,
                                       opt.interval);
  return m;
}

template <class Value, class Index>
Csr<Value, Index> BroHyb<Value, Index>::to_csr() const {
  const Csr<Value, Index> e = ell.to_csr(), c = coo.to_csr();
  Csr<Value, Index> out;
  out.rows = this->rows;
  out.cols = this->cols;
  out.row_ptr.assign(static_cast<std::size_t>(out.rows) + 1, 0);
  out.col_idx.reserve(static_cast<std::size_t>(nnz));
  out.values.reserve(static_cast<std::size_t>(nnz));
  // The ELL part holds each row's first K columns: the COO part's are appended after them.
  for (Index r = 0; r < out.rows; ++r) {
    for (Index p = e.row_ptr[r]; p < e.row_ptr[r + 1]; ++p) {
      out.col_idx.push_back(e.col_idx[p]);
      out.values.push_back(e.values[p]);
    }
    for (Index p = c.row_ptr[r]; p < c.row_ptr[r + 1]; ++p) {
      out.col_idx.push_back(c.col_idx[p]);
      out.values.push_back(c.values[p]);
    }
    out.row_ptr[r + 1] = static_cast<Index>(out.col_idx.size());
  }
  return out;
}

template <class Value, class Index>
bro::IndexSavings BroHyb<Value, Index>::index_savings() const {
  bro::IndexSavings s = ell.index_savings();
  s.original =
      static_cast<std::size_t>(this->rows) * static_cast<std::size_t>(ell_width) * sizeof(Index);
  s += coo.index_savings();
  return s;
}

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(BroHyb)
template std::int64_t bro_hyb_ell_width(std::span<const std::int32_t>, double, std::int64_t);
template std::int64_t bro_hyb_ell_width(std::span<const std::int64_t>, double, std::int64_t);
template std::int64_t bro_hyb_ell_width_bytes(std::span<const std::int32_t>, int, int, int, double);
template std::int64_t bro_hyb_ell_width_bytes(std::span<const std::int64_t>, int, int, int, double);

}  // namespace spmat
