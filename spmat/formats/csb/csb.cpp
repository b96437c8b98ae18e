// spmat/formats/csb/csb.cpp — CSB-baseline: parameter rules, blocking from CSR, to_csr, traffic, registry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/csb/csb.hpp"

#include <algorithm>
#include <new>
#include <string>

#include "spmat/format_adapter.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

BlockParams block_params_from_options(const FormatOptions& o, std::size_t value_size,
                                      bool with_group_size) {
  const std::int64_t line = o.get_int("l1_line_bytes", 128);
  if (line < static_cast<std::int64_t>(value_size) || line > (1 << 20))
    throw ParseError("l1_line_bytes=" + std::to_string(line) + " must be between the value size (" +
                     std::to_string(value_size) + ") and 1048576");
  const std::int64_t per_line = line / static_cast<std::int64_t>(value_size);
  BlockParams p;
  // Eq. 3.3: β ≤ line / sizeof(value); β must be a power of two for the comb packing.
  int d = 0;
  while (d < csb_detail::kMaxBetaLog2 && (std::int64_t{2} << d) <= per_line) ++d;
  p.beta_log2 = d;
  if (o.has("beta")) {
    const std::int64_t b = o.get_int("beta", 0);
    if (b < 1 || b > (1 << csb_detail::kMaxBetaLog2) || (b & (b - 1)) != 0)
      throw ParseError("beta=" + std::to_string(b) +
                       " must be a power of two between 1 and 32768 (the in-block row and column "
                       "are packed into one int32)");
    p.beta_log2 = 0;
    while ((std::int64_t{1} << p.beta_log2) < b) ++p.beta_log2;
  }
  // Eq. 3.4: group_size = line / sizeof(value).
  p.group_size = static_cast<int>(std::min<std::int64_t>(per_line, 1024));
  if (with_group_size && o.has("group_size")) {
    const std::int64_t g = o.get_int("group_size", 0);
    if (g < 1 || g > 1024)
      throw ParseError("group_size=" + std::to_string(g) + " must be between 1 and 1024");
    p.group_size = static_cast<int>(g);
  }
  return p;
}

namespace csb_detail {

void check_block_count(std::int64_t n_blocks, std::int64_t index_limit, std::size_t index_size,
                       const char* format, int beta) {
  if (n_blocks > index_limit)
    throw IndexOverflowError(std::string(format) + ": " + std::to_string(n_blocks) +
                             " blocks of " + std::to_string(beta) + "x" + std::to_string(beta) +
                             " do not fit the " + (index_size == 4 ? "int32" : "int64") +
                             " index type; use a larger beta= or int64 indices");
  if (static_cast<double>(n_blocks) * static_cast<double>(index_size) > 64.0 * (1ull << 30))
    throw OutOfMemoryError(std::string(format) + ": " + std::to_string(n_blocks) + " blocks of " +
                           std::to_string(beta) + "x" + std::to_string(beta) +
                           " need more than 64 GiB of block metadata; use a larger beta=");
}

template <class Value, class Index>
Blocked<Value, Index> block_csr(const Csr<Value, Index>& a, int d) {
  struct Slot {
    std::uint32_t key;
    std::int32_t comb;
    std::int64_t src;
  };
  Blocked<Value, Index> b;
  const std::int64_t beta = std::int64_t{1} << d, mask = beta - 1;
  const std::int64_t rows = a.rows, cols = a.cols, nnz = a.nnz();
  b.n_block_rows = (rows + beta - 1) / beta;
  b.n_block_cols = (cols + beta - 1) / beta;
  const std::int64_t nbr = b.n_block_rows, nbc = b.n_block_cols;
  auto& off = b.block_offset;
  off.assign(static_cast<std::size_t>(nbr * nbc + 1), 0);
  // Pass 1: entries per block (a block row is owned by one thread).
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t br = 0; br < nbr; ++br) {
    std::int64_t* cnt = off.data() + br * nbc + 1;
    for (std::int64_t r = br * beta; r < std::min(rows, (br + 1) * beta); ++r)
      for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) ++cnt[a.col_idx[k] >> d];
  }
  for (std::size_t i = 1; i < off.size(); ++i) off[i] += off[i - 1];
  // Pass 2: scatter into blocks, then sort each block by Morton key.
  std::vector<Slot> slots(static_cast<std::size_t>(nnz));
#pragma omp parallel
  {
    std::vector<std::int64_t> cursor(static_cast<std::size_t>(nbc));
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t br = 0; br < nbr; ++br) {
      for (std::int64_t bc = 0; bc < nbc; ++bc) cursor[bc] = off[br * nbc + bc];
      for (std::int64_t r = br * beta; r < std::min(rows, (br + 1) * beta); ++r)
        for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
          const std::int64_t c = a.col_idx[k];
          const auto ri = static_cast<std::int32_t>(r & mask), ci = static_cast<std::int32_t>(c & mask);
          slots[cursor[c >> d]++] = {morton_key(ri, ci, d), pack(ri, ci, d), k};
        }
      for (std::int64_t bc = 0; bc < nbc; ++bc) {
        auto first = slots.begin() + off[br * nbc + bc], last = slots.begin() + off[br * nbc + bc + 1];
        if (last - first > 1)
          std::sort(first, last, [](const Slot& x, const Slot& y) { return x.key < y.key; });
      }
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
  const BlockParams p = block_params_from_options(o, sizeof(Value), false);
  Csb s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.beta_log2 = p.beta_log2;
  const std::int64_t beta = p.beta();
  const std::int64_t nbr = (std::int64_t{a.rows} + beta - 1) / beta;
  const std::int64_t nbc = (std::int64_t{a.cols} + beta - 1) / beta;
  csb_detail::check_block_count(nbr * nbc, index_max<Index>() - 1, sizeof(Index), "csb", p.beta());
  try {
    auto b = csb_detail::block_csr(a, p.beta_log2);
    s.n_block_rows = static_cast<Index>(nbr);
    s.n_block_cols = static_cast<Index>(nbc);
    s.values = std::move(b.values);
    s.comb = std::move(b.comb);
    s.block_offset.assign(b.block_offset.begin(), b.block_offset.end());
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError("csb: out of host memory building " + std::to_string(nbr * nbc) +
                           " blocks of beta=" + std::to_string(beta) + " (try a larger beta=)");
  }
  return s;
}

template <class Value, class Index>
Csr<Value, Index> Csb<Value, Index>::to_csr() const {
  Coo<Value, Index> c;
  c.rows = rows;
  c.cols = cols;
  c.row_idx.reserve(values.size());
  c.col_idx.reserve(values.size());
  c.values = values;
  const int d = beta_log2;
  const std::int32_t mask = (1 << d) - 1;
  for (std::int64_t id = 0; id < n_blocks(); ++id) {
    const std::int64_t br = id / n_block_cols, bc = id % n_block_cols;
    for (Index k = block_offset[id]; k < block_offset[id + 1]; ++k) {
      c.row_idx.push_back(static_cast<Index>((br << d) + ((comb[k] >> d) & mask)));
      c.col_idx.push_back(static_cast<Index>((bc << d) + (comb[k] & mask)));
    }
  }
  return spmat::to_csr(c);
}

template <class Value, class Index>
std::size_t traffic_bytes(const Csb<Value, Index>& s, Op op, std::int64_t k) {
  return default_traffic(s.storage_bytes(), op, s.shape(), k, sizeof(Value));
}

#define SPMAT_INSTANTIATE(V, I)                                                         \
  template struct Csb<V, I>;                                                            \
  template csb_detail::Blocked<V, I> csb_detail::block_csr(const Csr<V, I>&, int);      \
  template std::size_t traffic_bytes(const Csb<V, I>&, Op, std::int64_t);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

std::vector<FormatEntry> csb_entries() {
  const BackendCaps cpu{.available = true, .spmv = true, .spmv_t = true, .spmm = false,
                        .add = false, .deterministic_spmv = true, .deterministic_spmv_t = true};
  // CUDA: the thesis kernels (one thread per block, float atomics for both operations).
  const BackendCaps gpu{.available = kCudaCompiled, .spmv = true, .spmv_t = true, .spmm = false,
                        .add = false, .deterministic_spmv = false, .deterministic_spmv_t = false};
  const std::vector<ParamInfo> params{
      {"beta", "L1 line / sizeof(value) (fp32 32, fp64 16)",
       "block size, a power of two (thesis Eq. 3.3)"},
      {"l1_line_bytes", "128", "L1 line size the defaults derive from"}};
  std::vector<FormatEntry> v;
  v.push_back(make_entry<Csb>(
      {.name = "csb",
       .summary = "CSB-baseline: beta x beta blocks, Morton order inside; GPU thread per block",
       .caps = {cpu, gpu},
       .params = params}));
  return v;
}

}  // namespace spmat
