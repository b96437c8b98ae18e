// spmat/formats/gcsb/gcsb_cpu.cpp — OpenMP kernels of GCSB: spmv and spmv_t (scatter_reduce, or the deterministic plan).
// SPDX-License-Identifier: MIT
#include <algorithm>
#include <vector>

#include "spmat/core/parallel.hpp"
#include "spmat/core/transposed_kernels.hpp"
#include "spmat/formats/gcsb/gcsb.hpp"

namespace spmat {

namespace {

/// Adds the products of the block at sorted position i into acc (a window of β outputs, indexed
/// by the in-block column when Transposed, else the in-block row). Stops at the lane's first pad.
template <bool Transposed, class Value, class Index>
void block_products(const Gcsb<Value, Index>& s, std::int64_t i, const Value* x, Value* acc) {
  const int d = s.beta_log2;
  const std::int32_t mask = (1 << d) - 1;
  const std::int64_t gs = s.group_size, g = i / gs;
  const Value* xb = x + ((Transposed ? s.block_row_at(i) : s.block_col_at(i)) << d);
  const std::int64_t end = s.group_offset[g + 1];
  for (std::int64_t k = s.group_offset[g] + i % gs; k < end; k += gs) {
    const std::int32_t c = s.comb[k];
    if (c & csb_detail::kPad) break;
    const std::int32_t r = (c >> d) & mask, cc = c & mask;
    if constexpr (Transposed)
      acc[cc] += s.values[k] * xb[r];
    else
      acc[r] += s.values[k] * xb[cc];
  }
}

template <bool Transposed, class Value, class Index>
void apply(const Gcsb<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const int d = s.beta_log2;
  const std::int64_t bsz = std::int64_t{1} << d;
  const std::int64_t n_out = Transposed ? s.cols : s.rows;
  if (!s.has_plan(Transposed ? Op::spmv_t : Op::spmv)) {  // thesis, atomic, or fast's dense ops
    scatter_reduce<Value>(n_out, s.n_sorted(), y, alpha, beta, [&](std::int64_t i, Value* acc) {
      block_products<Transposed>(s, i, x,
                                 acc + ((Transposed ? s.block_col_at(i) : s.block_row_at(i)) << d));
    });
    return;
  }
  // Deterministic plan: partial sums per item (blocks in list order, entries in slot order),
  // then each output sums its window's items in item order. Independent of the thread count.
  const auto& plan = Transposed ? s.col_plan : s.row_plan;
  const std::int64_t n_items = plan.n_items();
  std::vector<Value> part(static_cast<std::size_t>(n_items * bsz), Value(0));
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t it = 0; it < n_items; ++it) {
    if (!plan.runs()) {
      for (std::int64_t e = plan.item_ptr[it]; e < plan.item_ptr[it + 1]; ++e)
        block_products<Transposed>(s, plan.list[e], x, part.data() + it * bsz);
      continue;
    }
    std::int64_t j = plan.item_run[it];  // runs form: walk the runs from the item's first one
    for (std::int64_t e = plan.item_ptr[it]; e < plan.item_ptr[it + 1]; ++e) {
      while (e >= std::int64_t{plan.run_ptr[j + 1]}) ++j;
      block_products<Transposed>(s, std::int64_t{plan.run_start[j]} + (e - plan.run_ptr[j]), x,
                                 part.data() + it * bsz);
    }
  }
  const std::int64_t n_windows = plan.n_windows();
#pragma omp parallel for schedule(static)
  for (std::int64_t w = 0; w < n_windows; ++w) {
    const std::int64_t o0 = w << d, o1 = std::min(n_out, o0 + bsz);
    const std::int64_t it0 = plan.window_item_begin(w), it1 = plan.window_item_begin(w + 1);
    for (std::int64_t o = o0; o < o1; ++o) {
      Value sum = 0;
      for (std::int64_t it = it0; it < it1; ++it)
        sum += part[it * bsz + (o - o0)];
      axpby_store(y[o], alpha, sum, beta);
    }
  }
}

}  // namespace

SPMAT_DEFINE_KERNELS_BY_DIRECTION(Gcsb, apply)

SPMAT_INSTANTIATE_CPU_KERNELS(Gcsb)

}  // namespace spmat
