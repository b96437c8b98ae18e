// spmat/formats/ellr/ellr_cpu.cpp — OpenMP kernels of ELLPACK-R: spmv and spmv_t.
// SPDX-License-Identifier: MIT
#include <algorithm>

#include "spmat/core/parallel.hpp"
#include "spmat/formats/ellr/ellr.hpp"

namespace spmat {

// Contract: as ell (ell_cpu.cpp), except that row i reads exactly row_len[i] slots: a 32-row
// segment loops up to its longest row, no padding slot is read. Deterministic: each row is
// summed in slot order; spmv_t uses scatter_reduce over 32-row segments.

namespace {
template <class Value, class Index, class Body>
void for_segment_slots(const Ellr<Value, Index>& s, std::int64_t r0, std::int64_t r1, Body&& body) {
  const auto& e = s.ell;
  const Index* len = s.row_len.data() + r0;
  const std::int64_t n = r1 - r0;
  const std::int64_t longest = n > 0 ? *std::max_element(len, len + n) : 0;
  for (std::int64_t j = 0; j < longest; ++j) {
    const Index* col = e.col_idx.data() + j * e.pitch + r0;
    const Value* val = e.values.data() + j * e.pitch + r0;
    for (std::int64_t i = 0; i < n; ++i)
      if (j < len[i]) body(i, col[i], val[i]);
  }
}
}  // namespace

template <class Value, class Index>
void spmv(const Ellr<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const std::int64_t rows = s.ell.rows;
  const std::int64_t segments = (rows + kEllAlign - 1) / kEllAlign;
#pragma omp parallel for schedule(dynamic, 8)
  for (std::int64_t b = 0; b < segments; ++b) {
    const std::int64_t r0 = b * kEllAlign, r1 = std::min(rows, r0 + kEllAlign);
    Value sum[kEllAlign] = {};
    for_segment_slots(s, r0, r1, [&](std::int64_t i, Index c, Value v) { sum[i] += v * x[c]; });
    for (std::int64_t r = r0; r < r1; ++r) axpby_store(y[r], alpha, sum[r - r0], beta);
  }
}

template <class Value, class Index>
void spmv_t(const Ellr<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const std::int64_t rows = s.ell.rows;
  const std::int64_t segments = (rows + kEllAlign - 1) / kEllAlign;
  scatter_reduce<Value>(s.ell.cols, segments, y, alpha, beta, [&](std::int64_t b, Value* acc) {
    const std::int64_t r0 = b * kEllAlign;
    for_segment_slots(s, r0, std::min(rows, r0 + kEllAlign),
                      [&](std::int64_t i, Index c, Value v) { acc[c] += v * x[r0 + i]; });
  });
}

SPMAT_INSTANTIATE_CPU_KERNELS(Ellr)

}  // namespace spmat
