// spmat/formats/hisparse/hisparse_add_steps_test.cpp — host mirror of the GPU addition and the
// GPU serializer (hisparse_add_cuda.cu): the same steps (count, scan, expand, sort, head, scan,
// fill; size, scan, pointer, fill) as plain loops over the shared step functions of
// hisparse_add_steps.hpp, checked byte for byte against the CPU add. Runs without a GPU.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <random>

#include "spmat/formats/csr/csr.hpp"
#include "spmat/formats/hisparse/hisparse.hpp"
#include "spmat/formats/hisparse/hisparse_add_steps.hpp"
#include "tests/support/hisparse_cases.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

using namespace hisparse;

std::vector<std::int64_t> exclusive(const std::vector<std::int64_t>& v) {
  std::vector<std::int64_t> o(v.size(), 0);
  for (std::size_t i = 1; i < v.size(); ++i) o[i] = o[i - 1] + v[i - 1];
  return o;
}

/// Mirror of add_device: one loop per kernel, in the kernels' order.
template <class Value>
Proto<Value> mirror_add(const Proto<Value>& A, bool ta, const Proto<Value>& B, bool tb, Value ca,
                        Value cb, std::int64_t rows, std::int64_t cols) {
  Proto<Value> C;
  C.rows = rows;
  C.cols = cols;
  C.log2d = A.log2d;
  C.depth = A.depth;
  const bool ea = A.levels.empty(), eb = B.levels.empty();
  if (ea && eb) return C;
  std::vector<std::int64_t> qa{ea ? -1 : 0}, qb{eb ? -1 : 0}, qbr{0}, qbc{0};
  std::int64_t n = 1;
  for (int l = 0; l < C.depth; ++l) {
    const bool leaf = l + 1 == C.depth;
    const ProtoLevel* la = ea ? nullptr : &A.levels[l];
    const ProtoLevel* lb = eb ? nullptr : &B.levels[l];
    std::vector<std::int64_t> cnt(n + 1, 0);
    for (std::int64_t k = 0; k < n; ++k)
      cnt[k] = (qa[k] >= 0 ? la->begin[qa[k] + 1] - la->begin[qa[k]] : 0) +
               (qb[k] >= 0 ? lb->begin[qb[k] + 1] - lb->begin[qb[k]] : 0);
    const auto off = exclusive(cnt);
    const std::int64_t m = off[n];
    // add_device does not read m back: every operand entry of level l is a candidate exactly once.
    EXPECT_EQ(m, static_cast<std::int64_t>((la ? la->lr.size() : 0) + (lb ? lb->lr.size() : 0)))
        << "level " << l;
    std::vector<std::uint64_t> keys(m);
    std::vector<std::int64_t> idx(m);
    for (std::int64_t e = 0; e < m; ++e)
      keys[e] = steps::expand(e, off.data(), n, qa.data(), qb.data(),
                              la ? la->begin.data() : nullptr, la ? la->lr.data() : nullptr,
                              la ? la->lc.data() : nullptr, ta, lb ? lb->begin.data() : nullptr,
                              lb ? lb->lr.data() : nullptr, lb ? lb->lc.data() : nullptr, tb,
                              &idx[e]);
    // Radix sort over key_bits(n) bits = a sort by key (keys are distinct and below 2^bits).
    const int bits = steps::key_bits(n);
    std::vector<std::int64_t> perm(m);
    std::iota(perm.begin(), perm.end(), 0);
    std::sort(perm.begin(), perm.end(), [&](auto x, auto y) { return keys[x] < keys[y]; });
    std::vector<std::uint64_t> k2(m);
    std::vector<std::int64_t> i2(m);
    for (std::int64_t i = 0; i < m; ++i) {
      k2[i] = keys[perm[i]];
      i2[i] = idx[perm[i]];
      EXPECT_LT(k2[i] >> 1, std::uint64_t{1} << (bits - 1)) << "key above the sorted bits";
    }
    // Mirror of the merge path (add=merge): inv_kernel, transposed_order, merge_kernel. It must
    // place every candidate exactly where the sort put it.
    {
      std::vector<std::int64_t> inv_a(la ? la->nodes() : 0, -1), inv_b(lb ? lb->nodes() : 0, -1);
      for (std::int64_t k = 0; k < n; ++k) {
        if (la && qa[k] >= 0) inv_a[qa[k]] = k;
        if (lb && qb[k] >= 0) inv_b[qb[k]] = k;
      }
      for (auto v : inv_a) EXPECT_GE(v, 0) << "an A node missing from the queue";
      for (auto v : inv_b) EXPECT_GE(v, 0) << "a B node missing from the queue";
      auto torder = [](const ProtoLevel& lv) {
        const auto e = static_cast<std::int64_t>(lv.lr.size());
        const int tb = steps::tkey_bits(lv.nodes());
        std::vector<std::uint64_t> tk(e);
        for (std::int64_t x = 0; x < e; ++x) {
          tk[x] = steps::tkey(steps::find_segment(lv.begin.data(), lv.nodes(), x),
                              steps::out_pos(lv.lr.data(), lv.lc.data(), x, true));
          EXPECT_LT(tk[x], std::uint64_t{1} << tb) << "transposed key above the sorted bits";
        }
        std::vector<std::int64_t> p(e);
        std::iota(p.begin(), p.end(), 0);
        std::stable_sort(p.begin(), p.end(), [&](auto x, auto y) { return tk[x] < tk[y]; });
        return p;
      };
      // Mirror of torder_kernel (add=merge_ct): per node, rank by count of smaller column-major
      // positions, through the same paths (n <= 32: compare all; n > 32: bitmap + word prefix).
      auto torder_count = [log2d = C.log2d](const ProtoLevel& lv) {
        std::vector<std::int64_t> p(lv.lr.size(), -1);
        const int nwords = ((1 << (2 * log2d)) + 31) >> 5;
        for (std::int64_t k = 0; k < lv.nodes(); ++k) {
          const std::int64_t b = lv.begin[k], n = lv.begin[k + 1] - b;
          auto pos = [&](std::int64_t i) {
            return (static_cast<unsigned>(lv.lc[b + i]) << log2d) | lv.lr[b + i];
          };
          if (n <= 32) {
            for (std::int64_t i = 0; i < n; ++i) {
              int rank = 0;
              for (std::int64_t j = 0; j < n; ++j) rank += pos(j) < pos(i) ? 1 : 0;
              p[b + rank] = b + i;
            }
            continue;
          }
          std::vector<unsigned> bits(nwords, 0u), pre(nwords, 0u);
          for (std::int64_t i = 0; i < n; ++i) bits[pos(i) >> 5] |= 1u << (pos(i) & 31u);
          unsigned run = 0;
          for (int w = 0; w < nwords; ++w) {
            pre[w] = run;
            run += static_cast<unsigned>(std::popcount(bits[w]));
          }
          for (std::int64_t i = 0; i < n; ++i) {
            const unsigned q = pos(i), w = q >> 5;
            p[b + pre[w] + static_cast<unsigned>(std::popcount(bits[w] & ((1u << (q & 31u)) - 1u)))] =
                b + i;
          }
        }
        return p;
      };
      std::vector<std::int64_t> pa, pb;
      if (la && ta) EXPECT_EQ(torder_count(*la), torder(*la)) << "merge_ct order of A, level " << l;
      if (lb && tb) EXPECT_EQ(torder_count(*lb), torder(*lb)) << "merge_ct order of B, level " << l;
      if (la && ta) pa = torder(*la);
      if (lb && tb) pb = torder(*lb);
      const std::int64_t ea_n = la ? static_cast<std::int64_t>(la->lr.size()) : 0;
      // Merge-path placement of every candidate; node maps or binary searches (null).
      auto place = [&](const std::int32_t* nda, const std::int32_t* ndb) {
        std::pair<std::vector<std::uint64_t>, std::vector<std::int64_t>> r{
            std::vector<std::uint64_t>(m, ~std::uint64_t{0}), std::vector<std::int64_t>(m, -1)};
        for (std::int64_t t = 0; t < m; ++t)
          steps::merge_place(t, ea_n, off.data(), qa.data(), qb.data(), inv_a.data(), inv_b.data(),
                             la ? la->nodes() : 0, lb ? lb->nodes() : 0,
                             la ? la->begin.data() : nullptr, la ? la->lr.data() : nullptr,
                             la ? la->lc.data() : nullptr, pa.empty() ? nullptr : pa.data(), ta,
                             lb ? lb->begin.data() : nullptr, lb ? lb->lr.data() : nullptr,
                             lb ? lb->lc.data() : nullptr, pb.empty() ? nullptr : pb.data(), tb,
                             r.first.data(), r.second.data(), nda, ndb);
        return r;
      };
      const auto [mk, mi] = place(nullptr, nullptr);
      EXPECT_EQ(mk, k2) << "merge path keys, level " << l;
      EXPECT_EQ(mi, i2) << "merge path entries, level " << l;
      // The same placement from the levels' entry -> node maps (no binary search).
      auto node_map = [](const ProtoLevel& lv) {
        std::vector<std::int32_t> v(lv.lr.size());
        for (std::int64_t k = 0; k < lv.nodes(); ++k)
          for (std::int64_t x = lv.begin[k]; x < lv.begin[k + 1]; ++x)
            v[x] = static_cast<std::int32_t>(k);
        return v;
      };
      const std::vector<std::int32_t> nda = la ? node_map(*la) : std::vector<std::int32_t>{},
                                      ndb = lb ? node_map(*lb) : std::vector<std::int32_t>{};
      const auto [mk2, mi2] = place(la ? nda.data() : nullptr, lb ? ndb.data() : nullptr);
      EXPECT_EQ(mk2, k2) << "merge path keys with node maps, level " << l;
      EXPECT_EQ(mi2, i2) << "merge path entries with node maps, level " << l;
    }
    std::vector<std::int64_t> head(m + 1, 0);
    for (std::int64_t i = 0; i < m; ++i)
      head[i] = i == 0 || !steps::same_position(k2[i], k2[i - 1]) ? 1 : 0;
    const auto pos = exclusive(head);
    const std::int64_t e = pos[m];
    ProtoLevel out;
    out.begin.assign(n + 1, 0);
    for (std::int64_t k = 0; k <= n; ++k) out.begin[k] = pos[off[k]];
    out.lr.assign(e, 0);
    out.lc.assign(e, 0);
    std::vector<std::int64_t> nqa(leaf ? 0 : e), nqb(leaf ? 0 : e), nbr(leaf ? 0 : e),
        nbc(leaf ? 0 : e);
    if (leaf) C.values.assign(e, Value(0));
    for (std::int64_t i = 0; i < m; ++i) {
      if (!head[i]) continue;
      const std::int64_t o = pos[i];
      const std::uint64_t key = k2[i];
      const unsigned r = steps::key_row(key), c = steps::key_col(key);
      out.lr[o] = static_cast<std::uint8_t>(r);
      out.lc[o] = static_cast<std::uint8_t>(c);
      const auto [ka, kb] = steps::operand_entries(key, k2.data(), i2.data(), i, m);
      if (leaf) {
        C.values[o] = ka >= 0 && kb >= 0 ? ca * A.values[ka] + cb * B.values[kb]
                      : ka >= 0          ? ca * A.values[ka]
                                         : cb * B.values[kb];
      } else {
        const std::int64_t k = steps::key_node(key);
        nqa[o] = ka;
        nqb[o] = kb;
        nbr[o] = (qbr[k] << C.log2d) + r;
        nbc[o] = (qbc[k] << C.log2d) + c;
      }
    }
    out.brow = qbr;
    out.bcol = qbc;
    if (!leaf) {
      out.child.resize(e);
      std::iota(out.child.begin(), out.child.end(), 0);
    }
    C.levels.push_back(std::move(out));
    qa = nqa;
    qb = nqb;
    qbr = nbr;
    qbc = nbc;
    n = e;
  }
  return C;
}

/// Mirror of serialize_device: bytes, root and level statistics.
template <class Value>
std::vector<std::uint8_t> mirror_serialize(const Proto<Value>& t, bool allow_dense,
                                           std::uint32_t* root, std::vector<LevelStats>* stats) {
  const std::size_t nl = t.levels.size();
  stats->assign(static_cast<std::size_t>(t.depth), LevelStats{});
  std::vector<std::vector<std::uint32_t>> ptrs(nl);
  std::uint64_t base = kHeaderBytes;
  for (std::size_t l = 0; l < nl; ++l) {
    const ProtoLevel& lv = t.levels[l];
    const bool leaf = l + 1 == nl;
    const std::int64_t n = lv.nodes();
    std::vector<std::uint64_t> sz(n + 1, 0), noff(n + 1, 0);
    std::vector<unsigned> type(n);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t cnt = lv.begin[i + 1] - lv.begin[i];
      type[i] = steps::node_type(cnt, leaf, lv.brow[i], lv.bcol[i], t.rows, t.cols, t.log2d,
                                 leaf ? sizeof(Value) : 4, allow_dense, &sz[i]);
      LevelStats& s = (*stats)[l];
      ++s.nodes_by_type[type[i]];
      s.entries_by_type[type[i]] += cnt;
      ++s.nodes_by_class[steps::size_class(type[i], cnt)];
    }
    for (std::int64_t i = 1; i <= n; ++i) noff[i] = noff[i - 1] + sz[i - 1];
    ptrs[l].resize(n);
    for (std::int64_t i = 0; i < n; ++i) ptrs[l][i] = steps::encode(base + noff[i], type[i]);
    base += noff[n];
  }
  std::vector<std::uint8_t> pool(base, 0);
  *root = nl > 0 ? ptrs[0][0] : kNull;
  std::memcpy(pool.data(), root, 4);
  pool[4] = static_cast<std::uint8_t>(t.depth);
  pool[5] = static_cast<std::uint8_t>(t.log2d);
  pool[6] = static_cast<std::uint8_t>(sizeof(Value));
  const auto nnz = static_cast<std::uint64_t>(t.values.size());
  std::memcpy(pool.data() + 8, &nnz, 8);
  for (std::size_t l = 0; l < nl; ++l) {
    const ProtoLevel& lv = t.levels[l];
    const bool leaf = l + 1 == nl;
    const std::uint64_t es = leaf ? sizeof(Value) : 4;
    const auto entries = static_cast<std::int64_t>(lv.lr.size());
    for (std::int64_t e = 0; e < entries; ++e) {
      const std::int64_t i = steps::find_segment(lv.begin.data(), lv.nodes(), e);
      const std::int64_t b = lv.begin[i], cnt = lv.begin[i + 1] - b, j = e - b;
      const std::uint32_t p = ptrs[l][i];
      const unsigned ty = p & 3u;
      std::uint8_t* node = pool.data() + (std::uint64_t{p >> 2} << 4);
      if (ty != 0) {
        if (j == 0) store<std::uint32_t>(node, static_cast<std::uint32_t>(cnt));
        node[8 + 2 * j] = lv.lr[e];
        node[9 + 2 * j] = lv.lc[e];
      }
      std::uint8_t* at = node + steps::entry_offset(ty, cnt, j, lv.lr[e], lv.lc[e], t.log2d, es);
      if (leaf) store<Value>(at, t.values[e]);
      else store<std::uint32_t>(at, ptrs[l + 1][e]);
    }
  }
  return pool;
}

/// The GPU algorithm (mirrored) against the CPU add, for operands with their states.
template <class Value, class Index>
void expect_mirror(const HiSparse<Value, Index>& a, const HiSparse<Value, Index>& b, Value al,
                   Value be, const std::string& what) {
  SCOPED_TRACE(what);
  const HiSparse<Value, Index> want = add(a, b, al, be);
  const bool both = a.transposed && b.transposed;
  const Shape sa = a.shape();
  const std::int64_t rows = both ? a.rows : sa.rows, cols = both ? a.cols : sa.cols;
  const Proto<Value> pa = decode(a), pb = decode(b);
  for (const auto* p : {&pa, &pb})
    for (const auto& lv : p->levels)
      for (std::size_t k = 0; k < lv.child.size(); ++k)
        ASSERT_EQ(lv.child[k], static_cast<std::int64_t>(k)) << "children in entry order";
  const Proto<Value> pc = mirror_add(pa, a.transposed && !both, pb, b.transposed && !both,
                                     al * a.scale, be * b.scale, rows, cols);
  const auto host = serialize<Value, Index>(pc, a.allow_dense);
  ASSERT_EQ(host.storage_bytes(), want.storage_bytes());
  EXPECT_EQ(0, std::memcmp(host.bytes(), want.bytes(), want.storage_bytes()))
      << "mirror add + host serializer: pool bytes differ from the CPU add";
  std::uint32_t root = 0;
  std::vector<LevelStats> stats;
  const auto bytes = mirror_serialize(pc, a.allow_dense, &root, &stats);
  ASSERT_EQ(bytes.size(), want.storage_bytes());
  EXPECT_EQ(0, std::memcmp(bytes.data(), want.bytes(), bytes.size()))
      << "mirror serializer: pool bytes differ from the CPU add";
  EXPECT_EQ(root, want.root);
  ASSERT_EQ(stats.size(), want.levels.size());
  for (std::size_t l = 0; l < stats.size(); ++l) {
    EXPECT_EQ(stats[l].nodes_by_type, want.levels[l].nodes_by_type) << "level " << l;
    EXPECT_EQ(stats[l].entries_by_type, want.levels[l].entries_by_type) << "level " << l;
    EXPECT_EQ(stats[l].nodes_by_class, want.levels[l].nodes_by_class) << "level " << l;
  }
}

template <class Value, class Index>
void mirror_battery() {
  const std::uint64_t seed = testing::fresh_seed();
  struct Case {
    std::int64_t m, n;
    double da, db;
  };
  for (const Case& cs : {Case{70, 70, 0.05, 0.08}, Case{37, 37, 0.3, 0.0}, Case{37, 37, 0.0, 0.0},
                         Case{33, 33, 1.0, 0.02}, Case{300, 300, 0.002, 0.01},
                         Case{50, 29, 0.1, 0.1}}) {
    const auto a64 = testing::random_int_matrix(cs.m, cs.n, cs.da, seed, cs.da > 0 ? 20 : 0);
    const auto b64 = testing::random_int_matrix(cs.m, cs.n, cs.db, seed + 1);
    const auto a = convert<Value, Index>(a64), b = convert<Value, Index>(b64);
    const auto at = transpose(a), bt = transpose(b);
    testing::for_each_d_and_dense(cs.m, cs.n, seed, [&](const FormatOptions& o, const std::string& tag) {
      const auto ha = HiSparse<Value, Index>::build(a, o), hb = HiSparse<Value, Index>::build(b, o);
      expect_mirror(ha, hb, Value(2), Value(-3), tag + " A + B");
      expect_mirror(ha, ha, Value(1), Value(-1), tag + " A - A (explicit zeros)");
      expect_mirror(ha, hb, Value(0), Value(1), tag + " 0A + B");
      // States: the transposed flag on storage of the transposes (logical A, B).
      const auto hat = hisparse_transposed(HiSparse<Value, Index>::build(at, o));
      const auto hbt = hisparse_transposed(HiSparse<Value, Index>::build(bt, o));
      expect_mirror(hat, hbt, Value(2), Value(-3), tag + " state At + state Bt");
      expect_mirror(hat, hb, Value(2), Value(0), tag + " state At + B");
      expect_mirror(ha, hbt, Value(0.5), Value(1), tag + " A + state Bt");
      if (cs.m == cs.n) {
        expect_mirror(ha, hisparse_transposed(ha), Value(1), Value(1), tag + " A + Aᵀ");
        expect_mirror(hisparse_transposed(hb), ha, Value(1), Value(1), tag + " Bᵀ + A");
      }
    });
  }
}

TEST(HiSparseAddSteps, MirrorFp64Int32) { mirror_battery<double, std::int32_t>(); }
TEST(HiSparseAddSteps, MirrorFp32Int64) { mirror_battery<float, std::int64_t>(); }

/// Mirror of build_on_gpu (hisparse_build_cuda.cu): keys, sort, decode, per-level heads + scans.
template <class Value, class Index>
Proto<Value> mirror_build(const Csr<Value, Index>& a, int log2d, int depth) {
  Proto<Value> t;
  t.rows = a.rows;
  t.cols = a.cols;
  t.log2d = log2d;
  t.depth = depth;
  const std::int64_t nnz = a.nnz();
  if (nnz == 0) return t;
  std::vector<std::int64_t> rowp(a.row_ptr.begin(), a.row_ptr.end());
  std::vector<std::uint64_t> keys(nnz);
  for (std::int64_t k = 0; k < nnz; ++k)
    keys[k] = steps::build_key(steps::find_segment(rowp.data(), a.rows, k), a.col_idx[k], log2d, depth);
  std::vector<std::int64_t> perm(nnz);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](auto x, auto y) { return keys[x] < keys[y]; });
  std::vector<std::int64_t> r(nnz), c(nnz);
  std::vector<Value> v(nnz);
  const std::uint64_t mask = (std::uint64_t{1} << log2d) - 1;
  for (std::int64_t i = 0; i < nnz; ++i) {
    const std::uint64_t key = keys[perm[i]];
    std::int64_t rr = 0, cc = 0;
    for (int l = 0; l < depth; ++l) {
      const std::uint64_t pair = key >> (2 * log2d * (depth - 1 - l));
      rr = (rr << log2d) | static_cast<std::int64_t>((pair >> log2d) & mask);
      cc = (cc << log2d) | static_cast<std::int64_t>(pair & mask);
    }
    r[i] = rr;
    c[i] = cc;
    v[i] = a.values[perm[i]];
  }
  for (int l = 0; l < depth; ++l) {
    const int ns = log2d * (depth - l), es = log2d * (depth - 1 - l);
    std::vector<std::int64_t> nh(nnz + 1, 0), eh(nnz + 1, 0);
    for (std::int64_t i = 0; i < nnz; ++i) {
      nh[i] = i == 0 || steps::differs(r[i - 1], c[i - 1], r[i], c[i], ns);
      eh[i] = i == 0 || steps::differs(r[i - 1], c[i - 1], r[i], c[i], es);
    }
    const auto npos = exclusive(nh), epos = exclusive(eh);
    ProtoLevel lv;
    lv.begin.assign(npos[nnz] + 1, 0);
    lv.begin[npos[nnz]] = epos[nnz];
    lv.brow.assign(npos[nnz], 0);
    lv.bcol.assign(npos[nnz], 0);
    lv.lr.assign(epos[nnz], 0);
    lv.lc.assign(epos[nnz], 0);
    const bool leaf = l + 1 == depth;
    if (leaf) t.values.assign(epos[nnz], Value(0));
    else {
      lv.child.resize(epos[nnz]);
      std::iota(lv.child.begin(), lv.child.end(), 0);
    }
    for (std::int64_t i = 0; i < nnz; ++i) {
      if (!eh[i]) continue;
      const std::int64_t e = epos[i];
      lv.lr[e] = static_cast<std::uint8_t>((r[i] >> es) & static_cast<std::int64_t>(mask));
      lv.lc[e] = static_cast<std::uint8_t>((c[i] >> es) & static_cast<std::int64_t>(mask));
      if (leaf) t.values[e] = v[i];
      if (nh[i]) {
        lv.begin[npos[i]] = e;
        lv.brow[npos[i]] = r[i] >> ns;
        lv.bcol[npos[i]] = c[i] >> ns;
      }
    }
    t.levels.push_back(std::move(lv));
  }
  return t;
}

TEST(HiSparseAddSteps, MirrorOfGpuBuildMatchesCpuBuild) {
  const std::uint64_t seed = testing::fresh_seed();
  using testing::random_int_matrix;
  for (const auto& src : {random_int_matrix(70, 70, 0.05, seed, 20), random_int_matrix(300, 200, 0.01, seed, 20),
                          random_int_matrix(1, 1, 1.0, seed), random_int_matrix(33, 45, 1.0, seed),
                          random_int_matrix(20, 20, 0.0, seed)})
    for (int d : {2, 4, 16, 128})
      for (const char* dense : {"auto", "never"}) {
        SCOPED_TRACE(std::to_string(src.rows) + "x" + std::to_string(src.cols) + " d " +
                     std::to_string(d) + " dense=" + dense + " seed " + std::to_string(seed));
        const auto a = convert<float, std::int32_t>(src);
        const auto want = HiSparse<float, std::int32_t>::build(
            a, FormatOptions().set("d", std::to_string(d)).set("dense", dense));
        ASSERT_LE(2 * want.log2d * want.depth, 64);
        const auto t = mirror_build(a, want.log2d, want.depth);
        std::uint32_t root = 0;
        std::vector<LevelStats> stats;
        const auto bytes = mirror_serialize(t, want.allow_dense, &root, &stats);
        ASSERT_EQ(bytes.size(), want.storage_bytes());
        EXPECT_EQ(0, std::memcmp(bytes.data(), want.bytes(), bytes.size())) << "pool bytes";
        EXPECT_EQ(root, want.root);
      }
}

TEST(HiSparseAddSteps, BuildOptionGpuWithoutCudaOrGpu) {
  const auto a = convert<double, std::int64_t>(testing::random_int_matrix(30, 30, 0.1, 3));
  const FormatOptions o = FormatOptions().set("build", "gpu");
  std::string why;
  if (testing::gpu_available(&why)) GTEST_SKIP() << "a GPU is present: hisparse_gpu_add_test.cpp covers build=gpu";
  using HS = HiSparse<double, std::int64_t>;
  EXPECT_ANY_THROW((void)HS::build(a, o)) << "build=gpu without a GPU";
  EXPECT_THROW((void)HS::build(a, FormatOptions().set("build", "x")), ParseError);
}

TEST(HiSparseAddSteps, FindSegmentAndKeys) {
  const std::int64_t off[] = {0, 3, 3, 7};
  EXPECT_EQ(steps::find_segment(off, 3, 0), 0);
  EXPECT_EQ(steps::find_segment(off, 3, 2), 0);
  EXPECT_EQ(steps::find_segment(off, 3, 3), 2);  // node 1 is empty: skipped
  EXPECT_EQ(steps::find_segment(off, 3, 6), 2);
  const std::uint64_t k = steps::cand_key(5, 255, 7, 1);
  EXPECT_EQ(steps::key_node(k), 5);
  EXPECT_EQ(steps::key_row(k), 255u);
  EXPECT_EQ(steps::key_col(k), 7u);
  EXPECT_EQ(steps::key_src(k), 1u);
  EXPECT_TRUE(steps::same_position(k, steps::cand_key(5, 255, 7, 0)));
  EXPECT_EQ(steps::key_bits(1), 17);
  EXPECT_EQ(steps::key_bits(2), 18);
  EXPECT_EQ(steps::key_bits(5), 20);
}

}  // namespace
}  // namespace spmat
