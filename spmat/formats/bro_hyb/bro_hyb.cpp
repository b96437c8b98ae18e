// spmat/formats/bro_hyb/bro_hyb.cpp — BRO-HYB: the split rule, build, to_csr, registry entries.
// SPDX-License-Identifier: MIT
#include "spmat/formats/bro_hyb/bro_hyb.hpp"

#include <algorithm>
#include <string>

#include "spmat/format_adapter.hpp"
#include "spmat/formats/bar/bar.hpp"
#include "spmat/formats/ell/row_limits.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Index>
std::int64_t bro_hyb_ell_width(std::span<const Index> row_ptr, double relative_speed,
                               std::int64_t breakeven) {
  const std::int64_t rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  if (rows <= 0) return 0;
  std::int64_t maxlen = 0;
  for (std::int64_t r = 0; r < rows; ++r) maxlen = std::max<std::int64_t>(maxlen, row_ptr[r + 1] - row_ptr[r]);
  std::vector<std::int64_t> hist(static_cast<std::size_t>(maxlen) + 1, 0);
  for (std::int64_t r = 0; r < rows; ++r) ++hist[row_ptr[r + 1] - row_ptr[r]];
  std::int64_t longer = rows;  // R(i) = rows longer than i
  for (std::int64_t i = 0; i < maxlen; ++i) {
    longer -= hist[i];
    if (relative_speed * static_cast<double>(longer) < static_cast<double>(rows) || longer < breakeven)
      return i;
  }
  return maxlen;
}

template <class Index>
std::int64_t bro_hyb_ell_width_bytes(std::span<const Index> row_ptr, int h, int value_bytes,
                                     int index_bytes, double coo_penalty) {
  const std::int64_t rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  if (rows <= 0 || h <= 0) return 0;
  std::int64_t maxlen = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    maxlen = std::max<std::int64_t>(maxlen, row_ptr[r + 1] - row_ptr[r]);
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
  const double ell_slot = static_cast<double>(value_bytes + 1);
  const double coo_entry = coo_penalty * static_cast<double>(value_bytes + index_bytes + 1);
  // Going from K = i to i + 1 adds h slots to every slice with L_s > i and removes one COO
  // entry from every row with len > i.
  std::int64_t slices_longer = 0, rows_longer = 0;
  for (std::int64_t i = 0; i <= maxlen; ++i) {
    slices_longer += slice_hist[static_cast<std::size_t>(i)];
    rows_longer += row_hist[static_cast<std::size_t>(i)];
  }
  double cost = 0, best_cost = 0;
  std::int64_t best = 0;
  for (std::int64_t i = 0; i < maxlen; ++i) {
    slices_longer -= slice_hist[static_cast<std::size_t>(i)];  // now: L_s > i
    rows_longer -= row_hist[static_cast<std::size_t>(i)];      // now: len > i
    cost += static_cast<double>(h) * static_cast<double>(slices_longer) * ell_slot -
            static_cast<double>(rows_longer) * coo_entry;
    if (cost <= best_cost) {
      best_cost = cost;
      best = i + 1;
    }
  }
  return best;
}

template <class Value, class Index>
BroHyb<Value, Index> BroHyb<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  const int h = bro_option_h(o), sym_len = bro_option_sym_len(o);
  const std::int64_t interval = bro_option_interval(o);
  std::int64_t k = o.get_int("ell_width", -1);
  if (k < -1) throw ParseError("bro-hyb: ell_width=" + std::to_string(k) + " must be >= 0 or -1 (rule)");
  const std::string split = o.get_string("split", "bytes");
  if (split != "bytes" && split != "cusp")
    throw ParseError("bro-hyb: split=" + split + " is not 'bytes' (sliced-ELL byte cost) or "
                     "'cusp' (CUSP's HYB rule, the paper's)");
  const bool forced = k >= 0;
  if (k < 0)
    k = split == "cusp" ? bro_hyb_ell_width<Index>(a.row_ptr)
                        : bro_hyb_ell_width_bytes<Index>(a.row_ptr, h, static_cast<int>(sizeof(Value)),
                                                         static_cast<int>(sizeof(Index)));
  const std::int64_t bar = o.get_int("bar", 0);
  if (bar != 0 && bar != 1) throw ParseError("bro-hyb: bar=" + std::to_string(bar) + " is not 0 or 1");
  std::vector<std::int64_t> order;
  if (bar == 1) order = bar::order_for(a, o, h, sym_len, k);
  // Both split rules keep the BRO-ELL part's padding small; a forced width may not.
  if (forced)
    check_padding(bar == 1 ? "bro-hyb-bar (forced ell_width)" : "bro-hyb (forced ell_width)",
                  static_cast<double>(bro_ell_slots(a, h, order, k)), a.nnz(), a.rows,
                  row_limit_option("bro-hyb", o, "max_fill", kDefaultMaxFill),
                  "bro-hyb with ell_width=-1, hyb or csr");
  BroHyb m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.nnz = a.nnz();
  m.ell_width = k;
  m.ell = BroEll<Value, Index>::encode(a, h, sym_len, order, k, bro_option_first_slice(o));
  bro_apply_kernel_options(m.ell, o);
  std::vector<Index> ri, ci;
  std::vector<Value> vv;
  for (Index r = 0; r < a.rows; ++r)
    for (std::int64_t p = a.row_ptr[r] + k; p < a.row_ptr[r + 1]; ++p) {
      ri.push_back(r);
      ci.push_back(a.col_idx[p]);
      vv.push_back(a.values[p]);
    }
  m.coo = BroCoo<Value, Index>::encode(a.rows, a.cols, ri, std::move(ci), std::move(vv), sym_len,
                                       interval);
  return m;
}

template <class Value, class Index>
Csr<Value, Index> BroHyb<Value, Index>::to_csr() const {
  const Csr<Value, Index> e = ell.to_csr(), c = coo.to_csr();
  Csr<Value, Index> out;
  out.rows = rows;
  out.cols = cols;
  out.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  out.col_idx.reserve(static_cast<std::size_t>(nnz));
  out.values.reserve(static_cast<std::size_t>(nnz));
  for (Index r = 0; r < rows; ++r) {  // ELL part holds each row's first K columns: append COO after
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
  s.original = static_cast<std::size_t>(rows) * static_cast<std::size_t>(ell_width) * sizeof(Index);
  s += coo.index_savings();
  return s;
}

#define SPMAT_INSTANTIATE(V, I) template struct BroHyb<V, I>;
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE
template std::int64_t bro_hyb_ell_width(std::span<const std::int32_t>, double, std::int64_t);
template std::int64_t bro_hyb_ell_width(std::span<const std::int64_t>, double, std::int64_t);
template std::int64_t bro_hyb_ell_width_bytes(std::span<const std::int32_t>, int, int, int, double);
template std::int64_t bro_hyb_ell_width_bytes(std::span<const std::int64_t>, int, int, int, double);

std::vector<FormatEntry> bro_hyb_entries() {
  const BackendCaps cpu{.available = true, .spmv = true, .spmv_t = true, .spmm = false,
                        .add = false, .deterministic_spmv = true, .deterministic_spmv_t = true};
  // CUDA: the BRO-COO part adds into y with atomicAdd, so neither operation is deterministic.
  const BackendCaps gpu{.available = kCudaCompiled, .spmv = true, .spmv_t = true, .spmm = false,
                        .add = false, .deterministic_spmv = false, .deterministic_spmv_t = false};
  const std::vector<ParamInfo> params{
      {"h", "32", "slice height of the BRO-ELL part: a multiple of 32 in 32..1024 (paper: 256)"},
      {"sym_len", "32", "symbol length in bits: 32 or 64"},
      {"first", "slice", "first-column coding of the BRO-ELL part: slice or abs (paper)"},
      {"kernel", "fit", "CUDA spmv kernel of the BRO-ELL part: fit, batched or classic"},
      {"unroll", "8", "U of the batched CUDA kernel: 4 or 8"},
      {"fit_bits", "128", "longest row stream of the fit kernel: 128 (up to 4 symbols of 32 bits, 128-bit shift decode) or 64 (one 64-bit word per row; longer rows run the batched kernel)"},
      {"interval", "1024", "entries per warp interval of the BRO-COO part (multiple of 32)"},
      {"ell_width", "-1", "entries per row in the BRO-ELL part (-1 = the split rule)"},
      max_fill_param("slots of the BRO-ELL part", "forced ell_width only: "),
      {"split", "bytes", "split rule: bytes (sliced-ELL byte cost, COO at 3x) or cusp (CUSP's HYB rule, the paper's)"},
      {"bar", "0", "1 = BAR row reordering of the BRO-ELL part (y in original order)"},
      {"bar_algo", "auto", "BAR algorithm: greedy, fast, auto"},
      {"bar_window", "4", "fast BAR: candidate clusters on either side of the home cluster"}};
  std::vector<FormatEntry> v;
  v.push_back(make_entry<BroHyb>({.name = "bro-hyb",
                                  .summary = "BRO-HYB: HYB split into BRO-ELL + BRO-COO (SC'13)",
                                  .caps = {cpu, gpu}, .params = params}));
  v.push_back(make_entry<BroHyb>({.name = "bro-hyb-bar",
                                  .summary = "BRO-HYB with BAR row reordering (y in original order)",
                                  .caps = {cpu, gpu}, .params = params},
                                 FormatOptions().set("bar", "1")));
  return v;
}

}  // namespace spmat
