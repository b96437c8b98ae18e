// spmat/formats/hisparse/hisparse_cpu.cpp — OpenMP kernels of HiSparse: spmv, spmv_t, add.
// SPDX-License-Identifier: MIT
#include <algorithm>
#include <numeric>

#include "spmat/core/parallel.hpp"
#include "spmat/formats/hisparse/hisparse.hpp"

namespace spmat {

namespace {

using namespace hisparse;

using LeafItem = LeafRef;

/// Stored-frame product: by_col = false: y[r] = alpha Σ S[r,c] x[c] + beta y[r];
/// by_col = true: y[c] = alpha Σ S[r,c] x[r] + beta y[c].
template <class Value, class Index>
void apply(const HiSparse<Value, Index>& a, const Value* x, Value* y, Value alpha, Value beta,
           bool by_col) {
  const std::int64_t n_out = by_col ? a.cols : a.rows;
  const std::int64_t d = a.d();
  const std::int64_t nb = (n_out + d - 1) / d;
  if (nb == 0) return;
  const std::vector<LeafItem> leaves = leaf_list(a);
  // Bucket the leaves by output block (counting sort, stable: tree order within a bucket).
  std::vector<std::int64_t> bptr(static_cast<std::size_t>(nb) + 1, 0);
  for (const LeafItem& w : leaves) ++bptr[(by_col ? w.bcol : w.brow) + 1];
  std::partial_sum(bptr.begin(), bptr.end(), bptr.begin());
  std::vector<std::int64_t> order(leaves.size()), fill(bptr.begin(), bptr.end() - 1);
  for (std::size_t i = 0; i < leaves.size(); ++i)
    order[fill[by_col ? leaves[i].bcol : leaves[i].brow]++] = static_cast<std::int64_t>(i);
  const std::uint8_t* base = a.bytes();
#pragma omp parallel if (nb > 1 && leaves.size() > 16)
  {
    std::vector<Value> acc(static_cast<std::size_t>(d));
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t b = 0; b < nb; ++b) {
      std::fill(acc.begin(), acc.end(), Value(0));
      for (std::int64_t j = bptr[b]; j < bptr[b + 1]; ++j) {
        const LeafItem& w = leaves[order[j]];
        const std::uint8_t* node = base + offset_of(w.ptr);
        const Value* xs = x + (by_col ? w.brow : w.bcol) * d;
        if (type_of(w.ptr) == dense) {
          const std::int64_t rin = std::min<std::int64_t>(d, a.rows - w.brow * d);
          const std::int64_t cin = std::min<std::int64_t>(d, a.cols - w.bcol * d);
          for (std::int64_t r = 0; r < rin; ++r)
            for (std::int64_t c = 0; c < cin; ++c) {
              const auto v = load<Value>(node + (r * d + c) * sizeof(Value));
              if (by_col) acc[c] += v * xs[r];
              else acc[r] += v * xs[c];
            }
        } else {
          const std::int64_t n = load<std::uint32_t>(node);
          const std::uint8_t* ent = node + coo_entries_offset(n);
          for (std::int64_t k = 0; k < n; ++k) {
            const auto v = load<Value>(ent + k * sizeof(Value));
            const std::uint8_t r = node[8 + 2 * k], c = node[9 + 2 * k];
            if (by_col) acc[c] += v * xs[r];
            else acc[r] += v * xs[c];
          }
        }
      }
      const std::int64_t end = std::min(n_out, (b + 1) * d);
      for (std::int64_t o = b * d; o < end; ++o) axpby_store(y[o], alpha, acc[o - b * d], beta);
    }
  }
}

/// The dual top-down traversal of add (spec §6), into a proto tree.
template <class Value>
struct Merger {
  const Proto<Value>& A;
  const Proto<Value>& B;
  bool ta, tb;  ///< swap the coordinates of this operand (it is transposed, the other is not)
  Value ca, cb;
  Proto<Value>& C;

  struct Ent {
    std::uint16_t key;  ///< (row << 8) | col in the output frame
    std::int64_t idx;   ///< entry index in the operand's level
  };

  static void gather(const Proto<Value>& t, int l, std::int64_t node, bool swap,
                     std::vector<Ent>& out) {
    out.clear();
    if (node < 0) return;
    const ProtoLevel& lv = t.levels[l];
    for (std::int64_t k = lv.begin[node]; k < lv.begin[node + 1]; ++k) {
      const std::uint16_t r = swap ? lv.lc[k] : lv.lr[k], c = swap ? lv.lr[k] : lv.lc[k];
      out.push_back({static_cast<std::uint16_t>((r << 8) | c), k});
    }
    // A transposed node's entries are column-major in the output frame: sort them (spec Q9).
    if (swap) std::sort(out.begin(), out.end(), [](const Ent& x, const Ent& y) { return x.key < y.key; });
  }

  std::int64_t node(int l, std::int64_t ia, std::int64_t ib, std::int64_t br, std::int64_t bc) {
    ProtoLevel& out = C.levels[l];
    const std::int64_t me = static_cast<std::int64_t>(out.brow.size());
    out.brow.push_back(br);
    out.bcol.push_back(bc);
    const bool leaf = l + 1 == C.depth;
    std::vector<Ent> ea, eb;
    gather(A, l, ia, ta, ea);
    gather(B, l, ib, tb, eb);
    std::size_t i = 0, j = 0;
    while (i < ea.size() || j < eb.size()) {
      const bool take_a = j == eb.size() || (i < ea.size() && ea[i].key <= eb[j].key);
      const bool take_b = i == ea.size() || (j < eb.size() && eb[j].key <= ea[i].key);
      const std::uint16_t key = take_a ? ea[i].key : eb[j].key;
      const std::int64_t ka = take_a ? ea[i++].idx : -1, kb = take_b ? eb[j++].idx : -1;
      out.lr.push_back(static_cast<std::uint8_t>(key >> 8));
      out.lc.push_back(static_cast<std::uint8_t>(key & 0xff));
      if (leaf) {
        C.values.push_back(ka >= 0 && kb >= 0 ? ca * A.values[ka] + cb * B.values[kb]
                           : ka >= 0          ? ca * A.values[ka]
                                              : cb * B.values[kb]);
      } else {
        const std::size_t slot = out.child.size();
        out.child.push_back(-1);
        const std::int64_t child =
            node(l + 1, ka >= 0 ? A.levels[l].child[ka] : -1, kb >= 0 ? B.levels[l].child[kb] : -1,
                 (br << C.log2d) + (key >> 8), (bc << C.log2d) + (key & 0xff));
        out.child[slot] = child;
      }
    }
    out.begin.push_back(static_cast<std::int64_t>(out.lr.size()));
    return me;
  }
};

}  // namespace

template <class Value, class Index>
void spmv(const HiSparse<Value, Index>& a, const Value* x, Value* y, Value alpha, Value beta) {
  apply(a, x, y, alpha * a.scale, beta, a.transposed);
}

template <class Value, class Index>
void spmv_t(const HiSparse<Value, Index>& a, const Value* x, Value* y, Value alpha, Value beta) {
  apply(a, x, y, alpha * a.scale, beta, !a.transposed);
}

template <class Value, class Index>
HiSparse<Value, Index> add(const HiSparse<Value, Index>& a, const HiSparse<Value, Index>& b,
                           Value alpha, Value beta) {
  const Shape sa = a.shape(), sb = b.shape();
  if (sa.rows != sb.rows || sa.cols != sb.cols)
    throw DimensionMismatchError("hisparse add: shapes differ (" + std::to_string(sa.rows) + "x" +
                                 std::to_string(sa.cols) + " and " + std::to_string(sb.rows) +
                                 "x" + std::to_string(sb.cols) + ")");
  if (a.log2d != b.log2d)
    throw UnsupportedError("hisparse add: the operands have different node sizes (d = " +
                           std::to_string(a.d()) + " and " + std::to_string(b.d()) +
                           "); build both with the same d");
  // Both transposed: add in storage order and mark the result transposed (spec Q8).
  const bool both = a.transposed && b.transposed;
  const Proto<Value> pa = decode(a), pb = decode(b);
  Proto<Value> pc;
  pc.rows = both ? a.rows : sa.rows;
  pc.cols = both ? a.cols : sa.cols;
  pc.log2d = a.log2d;
  pc.depth = a.depth;
  if (!pa.levels.empty() || !pb.levels.empty()) {
    pc.levels.resize(static_cast<std::size_t>(pc.depth));
    Merger<Value> m{pa, pb, a.transposed && !both, b.transposed && !both, alpha * a.scale,
                    beta * b.scale, pc};
    m.node(0, pa.levels.empty() ? -1 : 0, pb.levels.empty() ? -1 : 0, 0, 0);
  }
  HiSparse<Value, Index> c = serialize<Value, Index>(pc, a.allow_dense);
  c.gpu_levels = a.gpu_levels;
  c.plan_item_cost = a.plan_item_cost;
  c.gpu_add_sort = a.gpu_add_sort;
  c.gpu_add_tcount = a.gpu_add_tcount;
  c.gpu_plan_occ6 = a.gpu_plan_occ6;
  c.gpu_plan_tlanes = a.gpu_plan_tlanes;
  c.transposed = both;
  return c;
}

#define SPMAT_INSTANTIATE(V, I)                                         \
  template void spmv(const HiSparse<V, I>&, const V*, V*, V, V);        \
  template void spmv_t(const HiSparse<V, I>&, const V*, V*, V, V);      \
  template HiSparse<V, I> add(const HiSparse<V, I>&, const HiSparse<V, I>&, V, V);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
