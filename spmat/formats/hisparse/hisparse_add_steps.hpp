// spmat/formats/hisparse/hisparse_add_steps.hpp — the per-element steps of the GPU addition and
// the GPU serializer of HiSparse, shared by the CUDA kernels (hisparse_add_cuda.cu) and their
// host mirror in hisparse_add_steps_test.cpp (so the logic is tested on machines without a GPU).
// SPDX-License-Identifier: MIT
//
// Plain functions of plain integers: __host__ __device__ under nvcc, inline otherwise.
// Candidate key of the level merge (one per entry of an operand node under a result node):
//   bits 63..17  result node index k at this level (key order of the level)
//   bits 16..1   local position (r << 8 | c) in the OUTPUT frame (swapped for a transposed operand)
//   bit  0       source: 0 = A, 1 = B (A sorts first when both hold the position)
// Sorting the candidates by key merges the two sorted lists of every node (and sorts the entries
// of a transposed operand's node, which are column-major in the output frame: spec Q9).
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define SPMAT_HD __host__ __device__ __forceinline__
#else
#define SPMAT_HD inline
#endif

namespace spmat::hisparse::steps {

SPMAT_HD std::uint64_t cand_key(std::int64_t node, unsigned r, unsigned c, unsigned src) {
  return (static_cast<std::uint64_t>(node) << 17) |
         (static_cast<std::uint64_t>((r << 8) | c) << 1) | src;
}
SPMAT_HD std::int64_t key_node(std::uint64_t k) { return static_cast<std::int64_t>(k >> 17); }
SPMAT_HD unsigned key_row(std::uint64_t k) { return static_cast<unsigned>((k >> 9) & 0xff); }
SPMAT_HD unsigned key_col(std::uint64_t k) { return static_cast<unsigned>((k >> 1) & 0xff); }
SPMAT_HD unsigned key_src(std::uint64_t k) { return static_cast<unsigned>(k & 1); }
SPMAT_HD bool same_position(std::uint64_t a, std::uint64_t b) { return (a >> 1) == (b >> 1); }
/// The operand entries of one output entry: a into A, b into B, −1 where that operand has none.
struct OperandEntries {
  std::int64_t a = -1, b = -1;
};
/// Those of the output entry whose first candidate is candidate i of the m sorted ones (keys,
/// key = keys[i]; idx: their operand entry indices). A's candidate sorts first, so B's, when both
/// operands hold the position, is candidate i + 1.
SPMAT_HD OperandEntries operand_entries(std::uint64_t key, const std::uint64_t* keys,
                                        const std::int64_t* idx, std::int64_t i, std::int64_t m) {
  OperandEntries k;
  if (key_src(key) == 0) {
    k.a = idx[i];
    if (i + 1 < m && same_position(keys[i + 1], key)) k.b = idx[i + 1];
  } else {
    k.b = idx[i];
  }
  return k;
}
/// Bits the radix sort must cover for n result nodes.
inline int key_bits(std::int64_t n) {
  int bits = 17;
  while ((std::int64_t{1} << (bits - 17)) < n) ++bits;
  return bits;
}

/// Largest i in [0, n) with a[i] <= v (a non-decreasing, a[0] <= v): the segment holding v.
SPMAT_HD std::int64_t find_segment(const std::int64_t* a, std::int64_t n, std::int64_t v) {
  std::int64_t lo = 0, hi = n;  // invariant: a[lo] <= v, answer in [lo, hi)
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (a[mid] <= v) lo = mid;
    else hi = mid;
  }
  return lo;
}

/// Node of entry s of a level: node_of[s] where the level carries its entry -> node map (a plain
/// load instead of a binary search over millions of nodes), else find_segment.
SPMAT_HD std::int64_t node_at(const std::int32_t* node_of, const std::int64_t* begin,
                              std::int64_t n, std::int64_t s) {
  return node_of ? static_cast<std::int64_t>(node_of[s]) : find_segment(begin, n, s);
}

/// Candidate e of the merge: result node k = find_segment(off, n, e), j = e − off[k]; the first
/// na candidates of node k come from A's node ia, the rest from B's node ib. Returns the key and
/// the operand entry index in `idx`.
SPMAT_HD std::uint64_t expand(std::int64_t e, const std::int64_t* off, std::int64_t n,
                              const std::int64_t* qa, const std::int64_t* qb,
                              const std::int64_t* a_begin, const std::uint8_t* a_lr,
                              const std::uint8_t* a_lc, bool ta, const std::int64_t* b_begin,
                              const std::uint8_t* b_lr, const std::uint8_t* b_lc, bool tb,
                              std::int64_t* idx) {
  const std::int64_t k = find_segment(off, n, e);
  const std::int64_t j = e - off[k];
  const std::int64_t ia = qa[k];
  const std::int64_t na = ia >= 0 ? a_begin[ia + 1] - a_begin[ia] : 0;
  if (j < na) {
    const std::int64_t x = a_begin[ia] + j;
    *idx = x;
    return ta ? cand_key(k, a_lc[x], a_lr[x], 0) : cand_key(k, a_lr[x], a_lc[x], 0);
  }
  const std::int64_t x = b_begin[qb[k]] + (j - na);
  *idx = x;
  return tb ? cand_key(k, b_lc[x], b_lr[x], 1) : cand_key(k, b_lr[x], b_lc[x], 1);
}

// --- Merge path (add=merge, the default) -----------------------------------------------------
// Instead of sorting all M candidates of a level, every candidate computes its place in the
// merged list of its result node directly: its rank in its own (sorted) list plus the number
// of entries of the other operand's node that precede it (binary search; on equal positions A
// comes first, as with the src bit of cand_key). The queue holds every operand node exactly
// once, in key order, so an operand's side of the level is its level entries in storage order.
// A transposed operand's node lists are column-major in the output frame: they are sorted first
// (radix sort of (node, output position) keys over that operand's entries only), which gives
// the permutation `perm` (sorted view index -> entry); node ranges are unchanged by it.

/// Local position (r << 8 | c) of operand entry x in the output frame.
SPMAT_HD unsigned out_pos(const std::uint8_t* lr, const std::uint8_t* lc, std::int64_t x,
                          bool t) {
  return t ? (static_cast<unsigned>(lc[x]) << 8) | lr[x]
           : (static_cast<unsigned>(lr[x]) << 8) | lc[x];
}
/// Sort key of a transposed operand's entry in node `node` at output position p.
SPMAT_HD std::uint64_t tkey(std::int64_t node, unsigned p) {
  return (static_cast<std::uint64_t>(node) << 16) | p;
}
/// Bits the transposed operand's sort must cover for `nodes` nodes.
inline int tkey_bits(std::int64_t nodes) {
  int bits = 16;
  while ((std::int64_t{1} << (bits - 16)) < nodes) ++bits;
  return bits;
}
/// Entries s in [lo, hi) of a sorted view (entry perm[s], or s without perm) whose output
/// position is < p (inclusive = false) or <= p (inclusive = true).
SPMAT_HD std::int64_t count_before(std::int64_t lo, std::int64_t hi, const std::uint8_t* lr,
                                   const std::uint8_t* lc, const std::int64_t* perm, bool t,
                                   unsigned p, bool inclusive) {
  const std::int64_t base = lo;
  while (lo < hi) {  // first s whose position is not before p
    const std::int64_t mid = lo + (hi - lo) / 2;
    const unsigned q = out_pos(lr, lc, perm ? perm[mid] : mid, t);
    if (q < p || (inclusive && q == p)) lo = mid + 1;
    else hi = mid;
  }
  return lo - base;
}
/// Candidate t of the merge at a level (t < ea: sorted view index t of A's entries, else
/// t − ea of B's). inv_a / inv_b: operand node -> result node. a_node / b_node: the operands'
/// entry -> node maps of this level, or nullptr (binary search). Writes the candidate's key (the
/// key of cand_key) and operand entry to keys[o] / idx[o] at its place o in the sorted order.
SPMAT_HD void merge_place(std::int64_t t, std::int64_t ea, const std::int64_t* off,
                          const std::int64_t* qa, const std::int64_t* qb,
                          const std::int64_t* inv_a, const std::int64_t* inv_b, std::int64_t na,
                          std::int64_t nb, const std::int64_t* a_begin, const std::uint8_t* a_lr,
                          const std::uint8_t* a_lc, const std::int64_t* a_perm, bool ta,
                          const std::int64_t* b_begin, const std::uint8_t* b_lr,
                          const std::uint8_t* b_lc, const std::int64_t* b_perm, bool tb,
                          std::uint64_t* keys, std::int64_t* idx,
                          const std::int32_t* a_node = nullptr,
                          const std::int32_t* b_node = nullptr) {
  const bool from_a = t < ea;
  const std::int64_t s = from_a ? t : t - ea;
  const std::int64_t* begin = from_a ? a_begin : b_begin;
  // The sorted view permutes entries inside their nodes only, so view index s lies in the node
  // of entry s.
  const std::int64_t node = node_at(from_a ? a_node : b_node, begin, from_a ? na : nb, s);
  const std::int64_t k = (from_a ? inv_a : inv_b)[node];
  const std::int64_t x = from_a ? (a_perm ? a_perm[s] : s) : (b_perm ? b_perm[s] : s);
  const unsigned p = from_a ? out_pos(a_lr, a_lc, x, ta) : out_pos(b_lr, b_lc, x, tb);
  std::int64_t o = off[k] + (s - begin[node]);
  if (from_a) {
    const std::int64_t ib = qb[k];
    if (ib >= 0) o += count_before(b_begin[ib], b_begin[ib + 1], b_lr, b_lc, b_perm, tb, p, false);
  } else {
    const std::int64_t ia = qa[k];
    if (ia >= 0) o += count_before(a_begin[ia], a_begin[ia + 1], a_lr, a_lc, a_perm, ta, p, true);
  }
  keys[o] = cand_key(k, p >> 8, p & 0xffu, from_a ? 0u : 1u);
  idx[o] = x;
}

// --- Node layout (the CPU serializer's rule, hisparse.cpp) ---------------------------------
SPMAT_HD std::int64_t coo_padded(std::int64_t n) {
  const std::int64_t x = n == 1 ? 1 : n == 2 ? 2 : 4;
  return (n + x - 1) / x * x;
}
SPMAT_HD std::uint64_t round16(std::uint64_t b) { return (b + 15) & ~std::uint64_t{15}; }
SPMAT_HD std::uint64_t coo_entries_offset(std::int64_t n) {
  return round16(8 + 2 * static_cast<std::uint64_t>(coo_padded(n)));
}
/// Node type (0 dense, 1 COO1, 2 COO2, 3 COO4) and its bytes, in `bytes`. A leaf may be dense
/// only when full inside the matrix; dense iff allowed and strictly smaller than the COO node.
SPMAT_HD unsigned node_type(std::int64_t n, bool leaf, std::int64_t brow, std::int64_t bcol,
                            std::int64_t rows, std::int64_t cols, int log2d, std::uint64_t es,
                            bool allow_dense, std::uint64_t* bytes) {
  const std::int64_t d = std::int64_t{1} << log2d;
  unsigned type = n == 1 ? 1u : n == 2 ? 2u : 3u;
  std::uint64_t b = coo_entries_offset(n) + round16(static_cast<std::uint64_t>(coo_padded(n)) * es);
  bool full = true;
  if (leaf) {
    const std::int64_t rr = rows - brow * d, cr = cols - bcol * d;
    const std::int64_t rin = rr < d ? rr : d, cin = cr < d ? cr : d;
    full = n == rin * cin;
  }
  const std::uint64_t db = round16((std::uint64_t{1} << (2 * log2d)) * es);
  if (allow_dense && full && db < b) {
    type = 0;
    b = db;
  }
  *bytes = b;
  return type;
}
SPMAT_HD int size_class(unsigned type, std::int64_t n) {
  return type == 0 ? 0 : n == 1 ? 1 : n <= 32 ? 2 : 3;
}
SPMAT_HD std::uint32_t encode(std::uint64_t byte_offset, unsigned type) {
  return static_cast<std::uint32_t>((byte_offset >> 4) << 2) | type;
}
/// Byte offset, inside its node, of entry j (local coordinates r, c) of a node of n entries.
SPMAT_HD std::uint64_t entry_offset(unsigned type, std::int64_t n, std::int64_t j, unsigned r,
                                    unsigned c, int log2d, std::uint64_t es) {
  if (type == 0) return ((static_cast<std::uint64_t>(r) << log2d) + c) * es;
  return coo_entries_offset(n) + static_cast<std::uint64_t>(j) * es;
}

}  // namespace spmat::hisparse::steps

// --- GPU construction (hisparse_build_cuda.cu) ----------------------------------------------
namespace spmat::hisparse::steps {
/// The build key of entry (r, c): interleaved base-d digits (r0,c0,r1,c1,...) top level first,
/// as in the CPU build; needs 2·log2d·depth ≤ 64 bits (the caller checks).
SPMAT_HD std::uint64_t build_key(std::int64_t r, std::int64_t c, int log2d, int depth) {
  const std::int64_t mask = (std::int64_t{1} << log2d) - 1;
  std::uint64_t key = 0;
  for (int l = 0; l < depth; ++l) {
    const int sh = log2d * (depth - 1 - l);
    key = (key << (2 * log2d)) |
          static_cast<std::uint64_t>((((r >> sh) & mask) << log2d) | ((c >> sh) & mask));
  }
  return key;
}
/// Sorted entries i−1 and i (full coordinates) lie in different level-l nodes (shift =
/// log2d·(depth − l)) or, with shift = log2d·(depth − 1 − l), in different level-l entries.
SPMAT_HD bool differs(std::int64_t r0, std::int64_t c0, std::int64_t r1, std::int64_t c1,
                      int shift) {
  return (r0 >> shift) != (r1 >> shift) || (c0 >> shift) != (c1 >> shift);
}
}  // namespace spmat::hisparse::steps
