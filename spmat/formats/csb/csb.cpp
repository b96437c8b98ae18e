// spmat/formats/csb/csb.cpp — CSB-baseline: parameter rules, blocking from CSR, to_csr, traffic, registry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/csb/csb.hpp"

#include <algorithm>
#include <new>
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

BlockParams block_params(std::optional<std::int64_t> beta, std::optional<std::int64_t> group_size,
                         std::int64_t l1_line_bytes, std::size_t value_size) {
  const std::int64_t line = l1_line_bytes;
  if (line < static_cast<std::int64_t>(value_size))
    throw ParseError("l1_line_bytes=" + std::to_string(line) + " must be between the value size (" +
                     std::to_string(value_size) + ") and 1048576");
  const std::int64_t per_line = line / static_cast<std::int64_t>(value_size);
  BlockParams p;
  // Eq. 3.3: β ≤ line / sizeof(value); β must be a power of two for the comb packing (the
  // field accepts powers of two up to 2^kMaxBetaLog2 only).
  int d = 0;
  while (d < csb_detail::kMaxBetaLog2 && (std::int64_t{2} << d) <= per_line) ++d;
  p.beta_log2 = d;
  if (beta) {
    p.beta_log2 = 0;
    while ((std::int64_t{1} << p.beta_log2) < *beta) ++p.beta_log2;
  }
  // Eq. 3.4: group_size = line / sizeof(value).
  p.group_size = static_cast<int>(group_size.value_or(std::min<std::int64_t>(per_line, 1024)));
  return p;
}

const OptionTable<CsbOptions>& CsbOptions::fields() {
  static const OptionTable<CsbOptions> t = block_fields<CsbOptions>(
      false, "keep: full block grid (thesis); drop: only non-empty blocks; auto: the smaller");
  return t;
}

namespace csb_detail {

void check_block_count(std::int64_t n_blocks, std::int64_t index_limit, std::size_t index_size,
                       const char* format, int beta) {
  if (n_blocks < 0 || n_blocks > index_limit)
    throw IndexOverflowError(std::string(format) + ": " +
                             (n_blocks < 0 ? std::string("more than 2^63") : std::to_string(n_blocks)) +
                             " blocks of " + std::to_string(beta) + "x" + std::to_string(beta) +
                             " do not fit the " + (index_size == 4 ? "int32" : "int64") +
                             " index type with empty=keep; use empty=drop (stores only the "
                             "non-empty blocks), a larger beta= or int64 indices");
  if (static_cast<double>(n_blocks) * static_cast<double>(index_size) > 64.0 * (1ull << 30))
    throw OutOfMemoryError(std::string(format) + ": " + std::to_string(n_blocks) + " blocks of " +
                           std::to_string(beta) + "x" + std::to_string(beta) +
                           " need more than 64 GiB of block metadata; use a larger beta=");
}

std::int64_t grid_blocks(std::int64_t n_block_rows, std::int64_t n_block_cols) {
  std::int64_t n = 0;
  return __builtin_mul_overflow(n_block_rows, n_block_cols, &n) ? -1 : n;
}

// The entries of block row br are rows [br·β, (br+1)·β), i.e. the CSR range
// [row_ptr[br·β], row_ptr[(br+1)·β]): sorting that range by (block column, Morton key) in place
// gives the final order, so the blocks are found without any n_blocks-sized array.
template <class Value, class Index>
Blocked<Value, Index> block_csr(const Csr<Value, Index>& a, int d) {
  struct Slot {
    std::int64_t bc;
    std::uint32_t key;
    std::int32_t comb;
    std::int64_t src;
  };
  Blocked<Value, Index> b;
  const std::int64_t beta = std::int64_t{1} << d, mask = beta - 1;
  const std::int64_t rows = a.rows, cols = a.cols, nnz = a.nnz();
  b.n_block_rows = (rows + beta - 1) / beta;
  b.n_block_cols = (cols + beta - 1) / beta;
  const std::int64_t nbr = b.n_block_rows;
  auto range = [&](std::int64_t br) {
    return std::pair<std::int64_t, std::int64_t>{a.row_ptr[br * beta],
                                                 a.row_ptr[std::min(rows, (br + 1) * beta)]};
  };
  // Pass 1: per block row, slots sorted by (block column, Morton key); count distinct columns.
  std::vector<Slot> slots(static_cast<std::size_t>(nnz));
  b.block_row_ptr.assign(static_cast<std::size_t>(nbr + 1), 0);
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t br = 0; br < nbr; ++br) {
    const auto [k0, k1] = range(br);
    for (std::int64_t r = br * beta; r < std::min(rows, (br + 1) * beta); ++r)
      for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
        const std::int64_t c = a.col_idx[k];
        const auto ri = static_cast<std::int32_t>(r & mask), ci = static_cast<std::int32_t>(c & mask);
        slots[k] = {c >> d, morton_key(ri, ci, d), pack(ri, ci, d), k};
      }
    std::sort(slots.begin() + k0, slots.begin() + k1, [](const Slot& x, const Slot& y) {
      return x.bc != y.bc ? x.bc < y.bc : x.key < y.key;
    });
    std::int64_t distinct = 0;
    for (std::int64_t k = k0; k < k1; ++k) distinct += (k == k0 || slots[k].bc != slots[k - 1].bc);
    b.block_row_ptr[br + 1] = distinct;
  }
  for (std::int64_t br = 0; br < nbr; ++br) b.block_row_ptr[br + 1] += b.block_row_ptr[br];
  // Pass 2: block columns and offsets of the stored blocks; values and comb in slot order.
  const std::int64_t n_stored = b.block_row_ptr[nbr];
  b.block_col.resize(static_cast<std::size_t>(n_stored));
  b.block_offset.resize(static_cast<std::size_t>(n_stored + 1));
  b.block_offset[n_stored] = nnz;
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t br = 0; br < nbr; ++br) {
    const auto [k0, k1] = range(br);
    std::int64_t j = b.block_row_ptr[br];
    for (std::int64_t k = k0; k < k1; ++k)
      if (k == k0 || slots[k].bc != slots[k - 1].bc) {
        b.block_col[j] = slots[k].bc;
        b.block_offset[j++] = k;
      }
  }
  b.values.resize(static_cast<std::size_t>(nnz));
  b.comb.resize(static_cast<std::size_t>(nnz));
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < nnz; ++p) {
    b.values[p] = a.values[slots[p].src];
    b.comb[p] = slots[p].comb;
  }
  return b;
}

}  // namespace csb_detail

template <class Value, class Index>
Csb<Value, Index> Csb<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  const auto opt = parse_options<CsbOptions>(o);
  const BlockParams p = block_params(opt, sizeof(Value));
  using csb_detail::EmptyBlocks;
  const auto empty = opt.empty;
  Csb s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.beta_log2 = p.beta_log2;
  const std::int64_t beta = p.beta();
  const std::int64_t nbr = (std::int64_t{a.rows} + beta - 1) / beta;
  const std::int64_t nbc = (std::int64_t{a.cols} + beta - 1) / beta;
  const std::int64_t n_blocks = csb_detail::grid_blocks(nbr, nbc);
  if (empty == EmptyBlocks::keep)
    csb_detail::check_block_count(n_blocks, index_max<Index>() - 1, sizeof(Index), "csb", p.beta());
  s.n_block_rows = static_cast<Index>(nbr);
  s.n_block_cols = static_cast<Index>(nbc);
  try {
    auto b = csb_detail::block_csr(a, p.beta_log2);
    const std::int64_t n_stored = b.n_stored();
    // auto: the smaller layout; the full grid only when its offsets fit Index.
    const bool full_fits = n_blocks >= 0 && n_blocks < index_max<Index>();
    s.sparse_grid = empty == EmptyBlocks::drop ||
                    (empty == EmptyBlocks::automatic &&
                     (!full_fits || nbr + 2 + 2 * n_stored < n_blocks + 1));
    s.values = std::move(b.values);
    s.comb = std::move(b.comb);
    if (s.sparse_grid) {
      s.block_row_ptr.assign(b.block_row_ptr.begin(), b.block_row_ptr.end());
      s.block_col.assign(b.block_col.begin(), b.block_col.end());
      s.block_offset.assign(b.block_offset.begin(), b.block_offset.end());
    } else {  // expand to the full grid: empty blocks repeat the next block's offset
      s.block_offset.assign(static_cast<std::size_t>(n_blocks + 1), 0);
      for (std::int64_t br = 0; br < nbr; ++br) {
        std::int64_t next = br * nbc;
        for (std::int64_t j = b.block_row_ptr[br]; j < b.block_row_ptr[br + 1]; ++j) {
          for (; next <= br * nbc + b.block_col[j]; ++next)
            s.block_offset[next] = static_cast<Index>(b.block_offset[j]);
        }
        for (; next < (br + 1) * nbc; ++next)
          s.block_offset[next] = static_cast<Index>(b.block_offset[b.block_row_ptr[br + 1]]);
      }
      s.block_offset[n_blocks] = static_cast<Index>(b.block_offset[n_stored]);
    }
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError("csb: out of host memory building the blocks of beta=" +
                           std::to_string(beta) + " (try empty=drop or a larger beta=)");
  }
  return s;
}

template <class Value, class Index>
Csr<Value, Index> Csb<Value, Index>::to_csr() const {
  Coo<Value, Index> c;
  c.rows = this->rows;
  c.cols = this->cols;
  c.row_idx.reserve(values.size());
  c.col_idx.reserve(values.size());
  c.values = values;
  const int d = beta_log2;
  const std::int32_t mask = (1 << d) - 1;
  for (std::int64_t br = 0; br < n_block_rows; ++br)
    for (std::int64_t j = row_begin(br); j < row_end(br); ++j) {
      const std::int64_t bc = col_of(j);
      for (Index k = block_offset[j]; k < block_offset[j + 1]; ++k) {
        c.row_idx.push_back(static_cast<Index>((br << d) + ((comb[k] >> d) & mask)));
        c.col_idx.push_back(static_cast<Index>((bc << d) + (comb[k] & mask)));
      }
    }
  return spmat::to_csr(c);
}

#define SPMAT_INSTANTIATE(V, I)                                                         \
  template struct Csb<V, I>;                                                            \
  template csb_detail::Blocked<V, I> csb_detail::block_csr(const Csr<V, I>&, int);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
