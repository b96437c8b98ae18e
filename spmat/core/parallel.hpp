// spmat/core/parallel.hpp — small OpenMP building blocks shared by the CPU kernels of all formats.
// SPDX-License-Identifier: MIT
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace spmat {

/// The BLAS epilogue y = alpha*s + beta*y, where beta == 0 never reads y (so NaN poison in y
/// does not leak into the result).
template <class Value>
inline void axpby_store(Value& y, Value alpha, Value s, Value beta) {
  y = beta == Value(0) ? alpha * s : alpha * s + beta * y;
}

/// y = beta*y over n entries in parallel (beta == 0 writes zeros without reading y).
template <class Value>
void scale_vector(Value* y, std::int64_t n, Value beta) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) y[i] = beta == Value(0) ? Value(0) : beta * y[i];
}

/// Deterministic parallel scatter for transpose products (y = alpha*Σ scatter + beta*y).
/// Work items [0, n_work) are split statically over the threads; each thread scatters its items
/// into a private zeroed buffer of n_out values with `body(item, acc)`, then the buffers are
/// summed in thread order. Same thread count ⇒ bitwise-identical result. Memory: threads×n_out.
/// Each thread zeroes its own buffer (a zero-filled allocation would write all of them on one);
/// buffers start 128 bytes apart at least, so that threads of a short y (a few columns) do not
/// share cache lines.
template <class Value, class Body>
void scatter_reduce(std::int64_t n_out, std::int64_t n_work, Value* y, Value alpha, Value beta,
                    Body&& body) {
  const int threads = std::max(1, std::min<int>(omp_get_max_threads(),
                                                static_cast<int>(std::max<std::int64_t>(1, n_work))));
  constexpr std::size_t line = std::max<std::size_t>(1, 128 / sizeof(Value));
  const std::size_t stride = (static_cast<std::size_t>(n_out) + line - 1) / line * line;
  const std::unique_ptr<Value[]> acc(new Value[static_cast<std::size_t>(threads) * stride]);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    Value* mine = acc.get() + static_cast<std::size_t>(t) * stride;
    std::fill(mine, mine + n_out, Value(0));
    const std::int64_t begin = n_work * t / nt, end = n_work * (t + 1) / nt;
    for (std::int64_t i = begin; i < end; ++i) body(i, mine);
#pragma omp barrier
#pragma omp for schedule(static)
    for (std::int64_t j = 0; j < n_out; ++j) {
      Value s = 0;
      for (int u = 0; u < nt; ++u) s += acc[static_cast<std::size_t>(u) * stride + static_cast<std::size_t>(j)];
      axpby_store(y[j], alpha, s, beta);
    }
  }
}

}  // namespace spmat
