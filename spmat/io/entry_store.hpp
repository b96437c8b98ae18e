// spmat/io/entry_store.hpp — the entries a Matrix Market reader has read, in file order over
// several pieces, and their conversion to canonical CSR on all threads. Internal to the readers
// (and their tests): the public entry point is read_matrix_market.
// SPDX-License-Identifier: MIT
#pragma once
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmat/core/csr.hpp"

namespace spmat::io::detail {

/// Entries as the file lists them, 0-based; a symmetric file's entries are not mirrored yet.
template <class Value, class Index>
struct EntryPiece {
  std::vector<Index> row, col;
  std::vector<Value> val;
  std::size_t size() const { return row.size(); }
  std::size_t capacity() const { return row.capacity(); }
  void reserve(std::size_t n) {
    row.reserve(n);
    col.reserve(n);
    val.reserve(n);
  }
  void push(Index i, Index j, Value v) {
    row.push_back(i);
    col.push_back(j);
    val.push_back(v);
  }
};

/// The pieces in file order: the entries of piece p come after those of pieces 0..p-1.
template <class Value, class Index>
using EntryPieces = std::vector<EntryPiece<Value, Index>>;

/// How a stored entry (i, j, v), i != j, also gives (j, i): not at all (general), with v
/// (symmetric, hermitian) or with -v (skew-symmetric).
enum class Mirror { none, same, negated };

namespace impl {

// Below this many entries one thread converts: starting a team would cost more than it saves.
constexpr std::size_t kParallelEntries = std::size_t(1) << 15;

inline int threads_for(std::size_t entries, int threads = 0) {
  if (entries < kParallelEntries) return 1;
  return threads > 0 ? threads : std::max(1, omp_get_max_threads());
}

// Rows [first, last) of thread t of nt, splitting the rows so that each thread gets about the
// same number of entries (row_ptr: rows + 1 non-decreasing offsets).
template <class Index>
std::pair<Index, Index> balanced_rows(const Index* row_ptr, Index rows, int t, int nt) {
  const auto bound = [&](int u) -> Index {
    if (u <= 0) return 0;
    if (u >= nt) return rows;
    const Index target = static_cast<Index>(static_cast<double>(row_ptr[rows]) * u / nt);
    return static_cast<Index>(std::lower_bound(row_ptr, row_ptr + rows + 1, target) - row_ptr);
  };
  return {bound(t), bound(t + 1)};
}

// Sizes a vector to n elements, asking the kernel for huge pages first when it is large: the
// zeroing then faults in 2 MiB pages instead of 4 KiB ones, which is most of the cost of a
// fresh array of hundreds of MB (a hint; without transparent huge pages nothing changes).
template <class T>
void resize_fresh(std::vector<T>& v, std::size_t n) {
  constexpr std::size_t kHuge = std::size_t(2) << 20;
  if (n * sizeof(T) >= 4 * kHuge && v.capacity() < n) {
    v.reserve(n);
    const auto at = reinterpret_cast<std::uintptr_t>(v.data());
    const std::uintptr_t first = (at + kHuge - 1) & ~(kHuge - 1);
    const std::uintptr_t last = (at + n * sizeof(T)) & ~(kHuge - 1);
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
  v.resize(n);
}

}  // namespace impl

/// Entries after mirroring: the stored ones plus, when mirrored, those off the diagonal again.
template <class Value, class Index>
std::size_t expanded_count(const EntryPieces<Value, Index>& pieces, Mirror m) {
  std::size_t stored = 0;
  for (const auto& p : pieces) stored += p.size();
  if (m == Mirror::none) return stored;
  std::size_t off = 0;
  const std::int64_t np = static_cast<std::int64_t>(pieces.size());
#pragma omp parallel for schedule(dynamic) reduction(+ : off) num_threads(impl::threads_for(stored))
  for (std::int64_t q = 0; q < np; ++q) {
    const auto& p = pieces[static_cast<std::size_t>(q)];
    std::size_t o = 0;
    for (std::size_t k = 0; k < p.size(); ++k) o += p.row[k] != p.col[k];
    off += o;
  }
  return stored + off;
}

/// Canonical CSR of the entries with `m` applied. Each thread owns a range of rows and places
/// the entries of its rows in file order, so a row's duplicates are summed in file order, as
/// spmat::to_csr sums those of the COO that lists every entry and its mirror image in file
/// order: the result is bit-identical to that, whatever the number of threads (`threads`, 0:
/// OpenMP's). Memory: the CSR arrays, one index per row, and a second copy of the arrays only
/// when duplicates were summed.
template <class Value, class Index>
Csr<Value, Index> pieces_to_csr(const EntryPieces<Value, Index>& pieces, Index rows, Index cols, Mirror m,
                                int threads = 0) {
  const bool mirror = m != Mirror::none;
  const bool negate = m == Mirror::negated;
  std::size_t stored = 0;
  for (const auto& p : pieces) stored += p.size();
  threads = impl::threads_for(stored, threads);
  Csr<Value, Index> c;
  c.rows = rows;
  c.cols = cols;
  c.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  Index* const rp = c.row_ptr.data();

  // The rows each piece gives entries to: a thread skips the pieces that give none to its rows
  // (in a file sorted by rows or columns, most of them).
  const std::int64_t np = static_cast<std::int64_t>(pieces.size());
  std::vector<std::pair<Index, Index>> reach(pieces.size());
#pragma omp parallel for schedule(dynamic) num_threads(threads)
  for (std::int64_t q = 0; q < np; ++q) {
    const auto& p = pieces[static_cast<std::size_t>(q)];
    Index lo = rows, hi = -1;
    for (std::size_t k = 0; k < p.size(); ++k) {
      lo = std::min(lo, p.row[k]);
      hi = std::max(hi, p.row[k]);
      if (mirror) {
        lo = std::min(lo, p.col[k]);
        hi = std::max(hi, p.col[k]);
      }
    }
    reach[static_cast<std::size_t>(q)] = {lo, hi};
  }
  // Calls f(row, col, value) for each entry landing in rows [r0, r1), mirror images included,
  // in file order.
  const auto visit = [&](Index r0, Index r1, auto&& f) {
    using U = std::make_unsigned_t<Index>;
    const U span = static_cast<U>(r1 - r0);
    for (std::size_t q = 0; q < pieces.size(); ++q) {
      if (reach[q].first >= r1 || reach[q].second < r0) continue;
      const auto& p = pieces[q];
      const Index* ri = p.row.data();
      const Index* ci = p.col.data();
      const Value* vi = p.val.data();
      for (std::size_t k = 0, e = p.size(); k < e; ++k) {
        const Index i = ri[k], j = ci[k];
        if (static_cast<U>(i - r0) < span) f(i, j, vi[k]);
        if (mirror && i != j && static_cast<U>(j - r0) < span) f(j, i, negate ? -vi[k] : vi[k]);
      }
    }
  };

  // Row counts: each thread counts the entries of its rows (no atomics and no per-thread array
  // of rows).
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const Index r0 = static_cast<Index>(static_cast<std::int64_t>(rows) * t / nt);
    const Index r1 = static_cast<Index>(static_cast<std::int64_t>(rows) * (t + 1) / nt);
    visit(r0, r1, [&](Index i, Index, Value) { ++rp[i + 1]; });
  }
  for (Index r = 0; r < rows; ++r) rp[r + 1] += rp[r];
  const std::size_t n = static_cast<std::size_t>(rp[rows]);
  impl::resize_fresh(c.col_idx, n);
  impl::resize_fresh(c.values, n);
  Index* const col = c.col_idx.data();
  Value* const val = c.values.data();

  // Scatter: rp[r] is row r's cursor (it ends at the start of row r + 1); each thread owns rows
  // balanced by their entries and places them in file order.
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const auto [r0, r1] = impl::balanced_rows(rp, rows, t, nt);
#pragma omp barrier
    visit(r0, r1, [&](Index i, Index j, Value v) {
      const Index at = rp[i]++;
      col[at] = j;
      val[at] = v;
    });
  }
  if (rows > 0) std::memmove(rp + 1, rp, static_cast<std::size_t>(rows) * sizeof(Index));
  rp[0] = 0;

  // Columns sorted within each row (stably: duplicates stay in file order), duplicates summed
  // to the first of them; kept[r]: the entries of row r left.
  std::vector<Index> kept(static_cast<std::size_t>(rows));
  bool summed = false;
#pragma omp parallel num_threads(threads) reduction(|| : summed)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const auto [r0, r1] = impl::balanced_rows(rp, rows, t, nt);
    std::vector<std::pair<Index, Value>> buf;
    for (Index r = r0; r < r1; ++r) {
      const Index a = rp[r], b = rp[r + 1];
      if (b - a <= 32) {
        // Short rows, the common case: insertion sort, stable and allocation-free.
        for (Index k = a + 1; k < b; ++k) {
          const Index key = col[k];
          const Value v = val[k];
          Index q = k;
          for (; q > a && col[q - 1] > key; --q) {
            col[q] = col[q - 1];
            val[q] = val[q - 1];
          }
          col[q] = key;
          val[q] = v;
        }
      } else if (!std::is_sorted(col + a, col + b)) {
        buf.resize(static_cast<std::size_t>(b - a));
        for (Index k = a; k < b; ++k) buf[static_cast<std::size_t>(k - a)] = {col[k], val[k]};
        std::stable_sort(buf.begin(), buf.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        for (Index k = a; k < b; ++k) {
          col[k] = buf[static_cast<std::size_t>(k - a)].first;
          val[k] = buf[static_cast<std::size_t>(k - a)].second;
        }
      }
      Index w = a;
      for (Index k = a; k < b; ++k) {
        if (w > a && col[w - 1] == col[k]) {
          val[w - 1] += val[k];  // a duplicate: summed (explicit zeros stay stored)
        } else {
          col[w] = col[k];
          val[w] = val[k];
          ++w;
        }
      }
      kept[static_cast<std::size_t>(r)] = w - a;
      summed = summed || w != b;
    }
  }
  if (!summed) return c;

  // Duplicates were summed: the rows move together into arrays of the entries left.
  std::vector<Index> ptr(static_cast<std::size_t>(rows) + 1, 0);
  for (Index r = 0; r < rows; ++r) ptr[r + 1] = ptr[r] + kept[static_cast<std::size_t>(r)];
  std::vector<Index> col2;
  std::vector<Value> val2;
  impl::resize_fresh(col2, static_cast<std::size_t>(ptr[rows]));
  impl::resize_fresh(val2, static_cast<std::size_t>(ptr[rows]));
  const std::int64_t nrows = rows;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t r = 0; r < nrows; ++r) {
    std::copy_n(col + rp[r], kept[static_cast<std::size_t>(r)], col2.data() + ptr[r]);
    std::copy_n(val + rp[r], kept[static_cast<std::size_t>(r)], val2.data() + ptr[r]);
  }
  c.row_ptr = std::move(ptr);
  c.col_idx = std::move(col2);
  c.values = std::move(val2);
  return c;
}

/// Replaces the pieces by one piece that holds each position once, duplicates summed in file
/// order, in row-major order. When mirrored, an entry above the diagonal first moves to its
/// mirror image below it (negated for Mirror::negated): mirrored again by pieces_to_csr it
/// gives the same two entries, and its sums are those of the mirrored file (negation is exact),
/// so compacting any prefix of the entries leaves the final matrix bit-identical. One thread:
/// compaction comes between stretches of serial reading, where a team's threads would only
/// wait (spinning) for the next compaction.
template <class Value, class Index>
void compact(EntryPieces<Value, Index>& pieces, Index rows, Index cols, Mirror m) {
  if (m != Mirror::none)
    for (auto& p : pieces)
      for (std::size_t k = 0; k < p.size(); ++k)
        if (p.row[k] < p.col[k]) {
          std::swap(p.row[k], p.col[k]);
          if (m == Mirror::negated) p.val[k] = -p.val[k];
        }
  Csr<Value, Index> c = pieces_to_csr(pieces, rows, cols, Mirror::none, 1);
  pieces.clear();
  pieces.shrink_to_fit();
  EntryPiece<Value, Index> one;
  one.row.resize(c.col_idx.size());
  for (Index r = 0; r < rows; ++r)
    std::fill(one.row.begin() + c.row_ptr[r], one.row.begin() + c.row_ptr[r + 1], r);
  one.col = std::move(c.col_idx);
  one.val = std::move(c.values);
  pieces.push_back(std::move(one));
}

}  // namespace spmat::io::detail
