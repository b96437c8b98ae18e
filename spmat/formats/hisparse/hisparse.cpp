// spmat/formats/hisparse/hisparse.cpp — HiSparse: build (key sort + two passes), decode, to_csr,
// traffic model, registry entry.
// SPDX-License-Identifier: MIT
//
// Construction (spec §3, the GPU variant's key sort done on the host): every entry gets the key
// of its interleaved base-d digits (r0,c0,r1,c1,...) top level first; one sort by key makes
// every node contiguous at every level and every leaf row-major. Leaves are runs of equal key
// prefixes; each upper level is the run-length grouping of the level below. Then the two
// passes of the thesis: sizing (types and byte offsets, level by level, top-down) and filling
// (every node independently, in parallel, child pointers from the sizing pass).
#include "spmat/formats/hisparse/hisparse.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "spmat/config.hpp"
#include "spmat/core/typed_options.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

namespace hisparse {
namespace {

/// D = max(1, ⌈log_d m⌉): the number of levels whose d^D square covers m.
int depth_for(std::int64_t m, int log2d) {
  int depth = 1;
  while (depth * log2d < 63 && (std::int64_t{1} << (depth * log2d)) < m) ++depth;
  if (depth * log2d > 64)
    throw UnsupportedError("hisparse: a dimension of " + std::to_string(m) +
                           " needs more than 128 key bits with d = " +
                           std::to_string(1 << log2d) + "; use d = 128 or 256");
  return depth;
}

}  // namespace

template <class Value, class Index>
Proto<Value> decode(const HiSparse<Value, Index>& a) {
  Proto<Value> t;
  t.rows = a.rows;
  t.cols = a.cols;
  t.log2d = a.log2d;
  t.depth = a.depth;
  if (a.root == kNull) return t;
  const std::int64_t d = a.d();
  const std::uint8_t* base = a.bytes();
  t.levels.resize(static_cast<std::size_t>(a.depth));
  t.levels[0].brow = {0};
  t.levels[0].bcol = {0};
  std::vector<std::uint32_t> cur{a.root}, next;
  for (int l = 0; l < a.depth; ++l) {
    const bool leaf = l == a.depth - 1;
    ProtoLevel& lv = t.levels[l];
    ProtoLevel* nx = leaf ? nullptr : &t.levels[l + 1];
    next.clear();
    for (std::size_t i = 0; i < cur.size(); ++i) {
      const std::uint8_t* node = base + offset_of(cur[i]);
      const std::int64_t br = lv.brow[i], bc = lv.bcol[i];
      auto push = [&](std::int64_t r, std::int64_t c, const std::uint8_t* entry) {
        lv.lr.push_back(static_cast<std::uint8_t>(r));
        lv.lc.push_back(static_cast<std::uint8_t>(c));
        if (leaf) {
          t.values.push_back(load<Value>(entry));
        } else {
          lv.child.push_back(static_cast<std::int64_t>(next.size()));
          next.push_back(load<std::uint32_t>(entry));
          nx->brow.push_back(br * d + r);
          nx->bcol.push_back(bc * d + c);
        }
      };
      if (type_of(cur[i]) == dense) {
        if (leaf) {  // a dense leaf is full inside the matrix
          const std::int64_t rin = std::min<std::int64_t>(d, a.rows - br * d);
          const std::int64_t cin = std::min<std::int64_t>(d, a.cols - bc * d);
          for (std::int64_t r = 0; r < rin; ++r)
            for (std::int64_t c = 0; c < cin; ++c) push(r, c, node + (r * d + c) * sizeof(Value));
        } else {
          for (std::int64_t s = 0; s < d * d; ++s)
            if (load<std::uint32_t>(node + s * 4) != kNull) push(s / d, s % d, node + s * 4);
        }
      } else {
        const std::int64_t n = load<std::uint32_t>(node);
        const std::uint8_t* ent = node + coo_entries_offset(n);
        const std::size_t es = leaf ? sizeof(Value) : 4;
        for (std::int64_t k = 0; k < n; ++k) push(node[8 + 2 * k], node[9 + 2 * k], ent + k * es);
      }
      lv.begin.push_back(static_cast<std::int64_t>(lv.lr.size()));
    }
    std::swap(cur, next);
  }
  return t;
}

template <class Value, class Index>
HiSparse<Value, Index> serialize(const Proto<Value>& t, bool allow_dense) {
  HiSparse<Value, Index> s;
  s.rows = static_cast<Index>(t.rows);
  s.cols = static_cast<Index>(t.cols);
  s.nnz = static_cast<std::int64_t>(t.values.size());
  s.log2d = t.log2d;
  s.depth = t.depth;
  s.allow_dense = allow_dense;
  s.levels.assign(static_cast<std::size_t>(t.depth), LevelStats{});
  const std::int64_t d = std::int64_t{1} << t.log2d;
  // Pass 1 (sizing, top-down): type and byte offset of every node, in level order.
  std::vector<std::vector<std::uint32_t>> ptr(t.levels.size());
  std::uint64_t off = kHeaderBytes;
  for (std::size_t l = 0; l < t.levels.size(); ++l) {
    const ProtoLevel& lv = t.levels[l];
    const bool leaf = l + 1 == t.levels.size();
    const std::size_t es = leaf ? sizeof(Value) : 4;
    ptr[l].resize(static_cast<std::size_t>(lv.nodes()));
    for (std::int64_t i = 0; i < lv.nodes(); ++i) {
      const std::int64_t n = lv.begin[i + 1] - lv.begin[i];
      NodeType type = coo_type(n);
      std::uint64_t bytes = coo_bytes(n, es);
      bool full = true;
      if (leaf) {
        const std::int64_t rin = std::min<std::int64_t>(d, t.rows - lv.brow[i] * d);
        const std::int64_t cin = std::min<std::int64_t>(d, t.cols - lv.bcol[i] * d);
        full = n == rin * cin;
      }
      if (allow_dense && full && dense_bytes(t.log2d, es) < bytes) {
        type = dense;
        bytes = dense_bytes(t.log2d, es);
      }
      ptr[l][i] = encode(off, type);
      LevelStats& st = s.levels[l];
      ++st.nodes_by_type[type];
      st.entries_by_type[type] += n;
      ++st.nodes_by_class[size_class(type, n)];
      off += bytes;
      if (off >= kMaxPoolBytes)
        throw UnsupportedError("hisparse: the node pool would exceed the 16 GiB that 32-bit node "
                               "pointers address; use a larger d or split the matrix");
    }
  }
  s.pool.assign(off / sizeof(Chunk), Chunk{});
  std::uint8_t* base = s.pool.data()->b;
  s.root = t.levels.empty() ? kNull : ptr[0][0];
  store<std::uint32_t>(base, s.root);
  base[4] = static_cast<std::uint8_t>(t.depth);
  base[5] = static_cast<std::uint8_t>(t.log2d);
  base[6] = static_cast<std::uint8_t>(sizeof(Value));
  store<std::uint64_t>(base + 8, static_cast<std::uint64_t>(s.nnz));
  // Pass 2 (fill): every node independently.
  for (std::size_t l = 0; l < t.levels.size(); ++l) {
    const ProtoLevel& lv = t.levels[l];
    const bool leaf = l + 1 == t.levels.size();
    const std::vector<std::uint32_t>* child_ptr = leaf ? nullptr : &ptr[l + 1];
    // Small levels run serially: a parallel region costs more than filling a few nodes.
#pragma omp parallel for schedule(dynamic, 64) if (lv.nodes() > 256)
    for (std::int64_t i = 0; i < lv.nodes(); ++i) {
      const std::uint32_t p = ptr[l][i];
      std::uint8_t* node = base + offset_of(p);
      const std::int64_t b = lv.begin[i], n = lv.begin[i + 1] - b;
      auto put = [&](std::uint8_t* at, std::int64_t k) {
        if (leaf) store<Value>(at, t.values[k]);
        else store<std::uint32_t>(at, (*child_ptr)[lv.child[k]]);
      };
      const std::size_t es = leaf ? sizeof(Value) : 4;
      if (type_of(p) == dense) {
        for (std::int64_t k = b; k < b + n; ++k) put(node + (lv.lr[k] * d + lv.lc[k]) * es, k);
      } else {
        store<std::uint32_t>(node, static_cast<std::uint32_t>(n));
        std::uint8_t* ent = node + coo_entries_offset(n);
        for (std::int64_t k = 0; k < n; ++k) {
          node[8 + 2 * k] = lv.lr[b + k];
          node[9 + 2 * k] = lv.lc[b + k];
          put(ent + k * es, b + k);
        }
      }
    }
  }
  return s;
}

template <class Value, class Index>
std::vector<LeafRef> leaf_list(const HiSparse<Value, Index>& a) {
  std::vector<LeafRef> cur, next;
  if (a.root == kNull) return cur;
  cur.push_back({a.root, 0, 0});
  const std::int64_t d = a.d();
  const std::uint8_t* base = a.bytes();
  for (int l = 0; l + 1 < a.depth; ++l) {
    next.clear();
    for (const LeafRef& w : cur) {
      const std::uint8_t* node = base + offset_of(w.ptr);
      if (type_of(w.ptr) == dense) {
        for (std::int64_t s = 0; s < d * d; ++s) {
          const auto p = load<std::uint32_t>(node + 4 * s);
          if (p != kNull) next.push_back({p, w.brow * d + s / d, w.bcol * d + s % d});
        }
      } else {
        const std::int64_t n = load<std::uint32_t>(node);
        const std::uint8_t* ent = node + coo_entries_offset(n);
        for (std::int64_t k = 0; k < n; ++k)
          next.push_back({load<std::uint32_t>(ent + 4 * k), w.brow * d + node[8 + 2 * k],
                          w.bcol * d + node[9 + 2 * k]});
      }
    }
    std::swap(cur, next);
  }
  return cur;
}

template <class Value, class Index>
Plan build_plan(const HiSparse<Value, Index>& a, bool by_col, std::int64_t item_cost) {
  Plan plan;
  const std::int64_t d = a.d();
  const std::int64_t n_out = by_col ? a.cols : a.rows;
  const std::int64_t nb = (n_out + d - 1) / d;
  const std::int64_t n_in = by_col ? a.rows : a.cols;
  if (nb > 0xffffffffll || (n_in + d - 1) / d > 0xffffffffll)
    throw UnsupportedError("hisparse: more than 2^32 blocks of d = " + std::to_string(d) +
                           " along one dimension; the CUDA plan stores 32-bit block indices");
  const std::vector<LeafRef> leaves = leaf_list(a);
  const std::uint8_t* base = a.bytes();
  // Class of each leaf: 0 thread, 1 warp, 2 dense; and its cost.
  std::vector<std::uint8_t> cls(leaves.size());
  std::vector<std::int64_t> cost(leaves.size());
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const NodeType t = type_of(leaves[i].ptr);
    const std::int64_t n = t == dense ? 0 : load<std::uint32_t>(base + offset_of(leaves[i].ptr));
    cls[i] = t == dense ? 2 : n <= kThreadLeafMax ? 0 : 1;
    cost[i] = plan_cost(t, n, a.log2d);
  }
  // Counting sort by (output block, class), stable: tree order inside a bucket.
  std::vector<std::int64_t> ptr(static_cast<std::size_t>(3 * nb) + 1, 0);
  auto key = [&](std::size_t i) {
    return 3 * (by_col ? leaves[i].bcol : leaves[i].brow) + cls[i];
  };
  for (std::size_t i = 0; i < leaves.size(); ++i) ++ptr[static_cast<std::size_t>(key(i)) + 1];
  for (std::size_t k = 1; k < ptr.size(); ++k) ptr[k] += ptr[k - 1];
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), order(leaves.size());
  for (std::size_t i = 0; i < leaves.size(); ++i)
    order[static_cast<std::size_t>(fill[static_cast<std::size_t>(key(i))]++)] =
        static_cast<std::int64_t>(i);
  plan.leaves.resize(leaves.size());
  for (std::size_t j = 0; j < order.size(); ++j) {
    const LeafRef& w = leaves[static_cast<std::size_t>(order[j])];
    plan.leaves[j] = {w.ptr, static_cast<std::uint32_t>(by_col ? w.brow : w.bcol)};
  }
  // Cut every bucket into items of cost ≤ item_cost (at least one leaf each).
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::int64_t lo = ptr[3 * b], hi = ptr[3 * b + 3];
    const std::int64_t cut_warp = ptr[3 * b + 1], cut_dense = ptr[3 * b + 2];
    const std::size_t first = plan.items.size();
    std::int64_t j = lo;
    do {
      std::int64_t e = j, c = 0;
      while (e < hi && (e == j || c + cost[static_cast<std::size_t>(order[e])] <= item_cost))
        c += cost[static_cast<std::size_t>(order[e++])];
      auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
      plan.items.push_back({u32(b), u32(j), u32(std::clamp(cut_warp, j, e)),
                            u32(std::clamp(cut_dense, j, e)), u32(e), 0});
      j = e;
    } while (j < hi);
    if (plan.items.size() - first > 1) {
      plan.has_split = true;
      for (std::size_t k = first; k < plan.items.size(); ++k) plan.items[k].split = 1;
    }
  }
  return plan;
}

}  // namespace hisparse

const OptionTable<HiSparseOptions>& HiSparseOptions::fields() {
  using O = HiSparseOptions;
  static const OptionTable<O> t{
      int_choice_option("d", &O::d, {2, 4, 8, 16, 32, 64, 128, 256},
                        "node size d x d, a power of two in 2..256 (thesis setting 128)"),
      choice_option("dense", &O::dense, {"auto", "never"},
                    "dense nodes: auto (when smaller; leaves only when full) or never"),
      choice_option("spmv", &O::spmv, {"plan", "plan6", "plan_tl", "plan1", "levels"},
                    "CUDA spmv/spmv_t (default plan_tl: on the H100, SpMV^T 1.8x faster than plan on banded, within 11% elsewhere): plan (leaf lists built at setup, a warp per item), plan6 (the same kernel compiled for 6 blocks per SM instead of 4: 40 registers, some spills), plan_tl (plan, but y = S^T x hands each lane one entry of 32 consecutive ones per shared atomic, fewer same-column conflicts on banded leaves), plan1 (the same lists, a thread block per item) or levels (traverse per call)"),
      choice_option("add", &O::add, {"merge", "merge_ct", "sort"}, "CUDA add (default merge_ct: on the H100, A + A^T up to 1.35x faster than merge): merge (candidates placed by merge path; only a transposed operand's entries are sorted), merge_ct (merge, with the transposed operand ordered per node by a warp bitmap count instead of a radix sort; d <= 128) or sort (radix sort of all candidates per level)"),
      int_option("item_cost", &O::item_cost, 1, std::numeric_limits<std::int64_t>::max(),
                 "CUDA plan: upper bound of one work item's cost (entries + 8 per leaf); plan lowers it for small matrices"),
      choice_option("build", &O::build, {"cpu", "gpu"},
                    "construction: cpu (host key sort + two passes) or gpu (CUB radix sort + device serializer, same bytes)"),
      bool_option("transposed", &O::transposed,
                  "1: set the transposed state (the logical matrix is the input's transpose, free)")};
  return t;
}

template <class Value, class Index>
HiSparse<Value, Index> HiSparse<Value, Index>::build(const Csr<Value, Index>& a,
                                                     const FormatOptions& o) {
  using namespace hisparse;
  check_index_range<Index>(a.rows, a.cols, a.nnz(), "hisparse");
  const auto opt = parse_options<HiSparseOptions>(o);
  const std::int64_t d = opt.d;
  const std::string& spmv_opt = opt.spmv;
  const std::string& add_opt = opt.add;
  // The kernel choices are state on top of the pool, the same whichever side built it.
  auto with_options = [&](HiSparse s) {
    s.gpu_levels = spmv_opt == "levels";
    s.gpu_plan_block = spmv_opt == "plan1";
    s.gpu_plan_occ6 = spmv_opt == "plan6";
    s.gpu_plan_tlanes = spmv_opt == "plan_tl";
    s.plan_item_cost = opt.item_cost;
    s.gpu_add_sort = add_opt == "sort";
    s.gpu_add_tcount = add_opt == "merge_ct";
    s.transposed = opt.transposed;  // state only: the logical matrix is aᵀ, the pool stores a
    return s;
  };
  Proto<Value> t;
  t.rows = a.rows;
  t.cols = a.cols;
  t.log2d = 0;
  while ((std::int64_t{1} << t.log2d) < d) ++t.log2d;
  t.depth = depth_for(std::max<std::int64_t>(a.rows, a.cols), t.log2d);
  const std::int64_t nnz = a.nnz();
  if (opt.build == "gpu") {
#if SPMAT_WITH_CUDA
    return with_options(build_on_gpu(a, t.log2d, t.depth, opt.dense == "auto"));
#else
    throw UnsupportedError("hisparse: build=gpu needs a CUDA build of spmat; use build=cpu");
#endif
  }
  if (nnz > 0) {
    const int ld = t.log2d, depth = t.depth;
    const std::int64_t mask = d - 1;
    using Key = unsigned __int128;
    struct Item {
      Key key;
      std::int64_t r, c, k;
    };
    std::vector<Item> items(static_cast<std::size_t>(nnz));
#pragma omp parallel for schedule(dynamic, 256) if (nnz > 65536)
    for (Index r = 0; r < a.rows; ++r)
      for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
        const std::int64_t c = a.col_idx[k];
        Key key = 0;
        for (int l = 0; l < depth; ++l) {
          const int sh = ld * (depth - 1 - l);
          key = (key << (2 * ld)) | static_cast<Key>((((r >> sh) & mask) << ld) | ((c >> sh) & mask));
        }
        items[k] = {key, r, c, k};
      }
    std::sort(items.begin(), items.end(), [](const Item& x, const Item& y) { return x.key < y.key; });
    t.levels.resize(static_cast<std::size_t>(depth));
    ProtoLevel& leaf = t.levels.back();
    t.values.reserve(static_cast<std::size_t>(nnz));
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Item& it = items[i];
      if (i == 0 || (it.key >> (2 * ld)) != (items[i - 1].key >> (2 * ld))) {
        if (i > 0) leaf.begin.push_back(static_cast<std::int64_t>(i));
        leaf.brow.push_back(it.r >> ld);
        leaf.bcol.push_back(it.c >> ld);
      }
      leaf.lr.push_back(static_cast<std::uint8_t>(it.r & mask));
      leaf.lc.push_back(static_cast<std::uint8_t>(it.c & mask));
      t.values.push_back(a.values[it.k]);
    }
    leaf.begin.push_back(nnz);
    for (int l = depth - 2; l >= 0; --l) {
      const ProtoLevel& ch = t.levels[l + 1];
      ProtoLevel& lv = t.levels[l];
      for (std::int64_t j = 0; j < ch.nodes(); ++j) {
        const std::int64_t pr = ch.brow[j] >> ld, pc = ch.bcol[j] >> ld;
        if (j == 0 || pr != lv.brow.back() || pc != lv.bcol.back()) {
          if (j > 0) lv.begin.push_back(static_cast<std::int64_t>(lv.lr.size()));
          lv.brow.push_back(pr);
          lv.bcol.push_back(pc);
        }
        lv.lr.push_back(static_cast<std::uint8_t>(ch.brow[j] & mask));
        lv.lc.push_back(static_cast<std::uint8_t>(ch.bcol[j] & mask));
        lv.child.push_back(j);
      }
      lv.begin.push_back(static_cast<std::int64_t>(lv.lr.size()));
    }
  }
  return with_options(serialize<Value, Index>(t, opt.dense == "auto"));
}

template <class Value, class Index>
Csr<Value, Index> HiSparse<Value, Index>::to_csr() const {
  const hisparse::Proto<Value> t = hisparse::decode(*this);
  Coo<Value, Index> coo = reserved_coo<Value, Index>(transposed ? cols : rows, transposed ? rows : cols,
                                                     static_cast<std::int64_t>(t.values.size()));
  if (!t.levels.empty()) {
    const hisparse::ProtoLevel& leaf = t.levels.back();
    for (std::int64_t i = 0; i < leaf.nodes(); ++i)
      for (std::int64_t k = leaf.begin[i]; k < leaf.begin[i + 1]; ++k) {
        const auto r = static_cast<Index>((leaf.brow[i] << log2d) + leaf.lr[k]);
        const auto c = static_cast<Index>((leaf.bcol[i] << log2d) + leaf.lc[k]);
        coo.row_idx.push_back(transposed ? c : r);
        coo.col_idx.push_back(transposed ? r : c);
        coo.values.push_back(scale == Value(1) ? t.values[k] : scale * t.values[k]);
      }
  }
  return spmat::to_csr(coo);
}

#define SPMAT_INSTANTIATE(V, I)                                                     \
  template struct HiSparse<V, I>;                                                   \
  template hisparse::Proto<V> hisparse::decode(const HiSparse<V, I>&);              \
  template HiSparse<V, I> hisparse::serialize<V, I>(const hisparse::Proto<V>&, bool); \
  template std::vector<hisparse::LeafRef> hisparse::leaf_list(const HiSparse<V, I>&);  \
  template hisparse::Plan hisparse::build_plan(const HiSparse<V, I>&, bool, std::int64_t);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
