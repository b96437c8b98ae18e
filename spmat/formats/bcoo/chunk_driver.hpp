// spmat/formats/bcoo/chunk_driver.hpp — the nonzero-balanced chunk loop shared by the CPU kernels
// of bcoo, bccoo and bccoo-gpu (spec bccoo.md §3): chunks of b nonzeros, rows cut anywhere.
// SPDX-License-Identifier: MIT
//
// A format supplies only a chunk visitor `visit(h, f)` that calls f(row, col, value) for the
// entries of chunk h in storage (row-major) order. The driver does the rest:
//   * spmv: chunks run under `omp parallel for schedule(static)` (the paper's schedule). Rows
//     wholly inside a chunk are written directly, y[r] = alpha*s + beta*y[r]. The partial sum of
//     a chunk's FIRST row goes to head[h] and the open partial of its LAST row (continued in
//     chunk h+1) to tail[h]; a second parallel pass adds them per row in chunk order. The paper
//     uses `omp atomic` on exactly these two rows; the stored partials cost the same (two per
//     chunk) and make the result deterministic and independent of the thread count.
//   * spmv_t: scatter_reduce over the chunks (per-thread buffers, summed in thread order):
//     deterministic for a fixed thread count.
// Empty rows (interior, leading, trailing) get y = beta*y (0 when beta == 0; y never read then).
#pragma once
#include <cstdint>
#include <vector>

#include "spmat/core/parallel.hpp"

namespace spmat::chunked {

/// y (rows) = alpha*A*x + beta*y. `chunk_row(h)` returns the row of chunk h's first entry, `last_row`
/// the row of the last entry (ignored when nb == 0). `visit(h, f)` calls f(r, c, v) per entry.
template <class Value, class RowOf, class Visit>
void spmv(std::int64_t rows, std::int64_t nb, RowOf&& chunk_row, std::int64_t last_row,
          const Value* x, Value* y, Value alpha, Value beta, Visit&& visit) {
  if (nb == 0) {
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) axpby_store(y[r], alpha, Value(0), beta);
    return;
  }
  std::vector<Value> head(static_cast<std::size_t>(nb)), tail(static_cast<std::size_t>(nb));
  // bit 0: the chunk completed its first row; bit 1: tail[h] holds an open last row.
  std::vector<std::uint8_t> flags(static_cast<std::size_t>(nb), 0);
#pragma omp parallel for schedule(static)
  for (std::int64_t h = 0; h < nb; ++h) {
    const std::int64_t next_row = h + 1 < nb ? static_cast<std::int64_t>(chunk_row(h + 1)) : -1;
    bool first = true;
    auto done = [&](std::int64_t r, Value s) {
      if (first) {
        head[h] = s;
        first = false;
      } else {
        axpby_store(y[r], alpha, s, beta);
      }
    };
    std::int64_t r = chunk_row(h);
    Value s = 0;
    visit(h, [&](std::int64_t re, std::int64_t c, Value v) {
      if (re != r) {
        done(r, s);
        for (std::int64_t k = r + 1; k < re; ++k) done(k, Value(0));  // empty rows inside
        r = re;
        s = 0;
      }
      s += v * x[c];
    });
    if (r == next_row) {  // the row continues in chunk h+1
      if (first) head[h] = s;
      else tail[h] = s, flags[h] |= 2;
    } else {
      done(r, s);
      // Empty rows up to the next chunk's first row belong to this chunk.
      for (std::int64_t k = r + 1; k < next_row; ++k) done(k, Value(0));
    }
    if (!first) flags[h] |= 1;
  }
  // Boundary rows: a group of chunks h0..h1 shares row chunk_row[h0] (chunks before h1 close no
  // row); its sum is tail[h0-1] + head[h0] + ... + head[h1], in chunk order.
#pragma omp parallel for schedule(static)
  for (std::int64_t h0 = 0; h0 < nb; ++h0) {
    if (h0 > 0 && !(flags[h0 - 1] & 1)) continue;  // not the first chunk of its group
    Value s = h0 > 0 && (flags[h0 - 1] & 2) ? tail[h0 - 1] : Value(0);
    for (std::int64_t h = h0; h < nb; ++h) {
      s += head[h];
      if (flags[h] & 1) break;
    }
    axpby_store(y[chunk_row(h0)], alpha, s, beta);
  }
  const std::int64_t first_row = chunk_row(0);
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r)
    if (r < first_row || r > last_row) axpby_store(y[r], alpha, Value(0), beta);
}

/// y (cols) = alpha*Aᵀ*x + beta*y over the same chunk visitor (scatter_reduce over chunks).
template <class Value, class Visit>
void spmv_t(std::int64_t cols, std::int64_t nb, const Value* x, Value* y, Value alpha, Value beta,
            Visit&& visit) {
  scatter_reduce<Value>(cols, nb, y, alpha, beta, [&](std::int64_t h, Value* acc) {
    visit(h, [&](std::int64_t r, std::int64_t c, Value v) { acc[c] += v * x[r]; });
  });
}

}  // namespace spmat::chunked
