// spmat/formats/hisparse/hisparse_plan_test.cpp — the CUDA SpMV plan of HiSparse: its structure
// and a CPU emulation of plan_kernel (hisparse_cuda.cu) on the host; on a GPU, both CUDA paths
// (spmv=plan, spmv=levels) against the fp64 reference with NaN-poisoned outputs.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/hisparse/hisparse.hpp"
#include "tests/support/hisparse_cases.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat {
namespace {

using namespace hisparse;

/// m×n, ~density random entries, one long row, a full 40×40 block (dense leaves for d ≤ 32),
/// an explicit zero.
Csr<double, std::int64_t> plan_matrix(std::int64_t m, std::int64_t n, double density,
                                      std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> v(-2, 2);
  auto c = testing::random_coo(m, n, density, rng, [](std::int64_t, std::int64_t) { return true; });
  auto add = [&](std::int64_t r, std::int64_t k, double x) { testing::add_entry(c, r, k, x); };
  if (m > 3)
    for (std::int64_t k = 0; k < n; k += 3) add(3, k, v(rng));
  for (std::int64_t r = 0; r < std::min<std::int64_t>(m, 40); ++r)
    for (std::int64_t k = 0; k < std::min<std::int64_t>(n, 40); ++k)
      add(m - std::min<std::int64_t>(m, 40) + r, k, v(rng));
  if (m > 0 && n > 0) add(m - 1, n - 1, 0.0);
  auto a = to_csr(c);  // duplicates summed
  return a;
}

/// The matrices of the plan tests: random rectangular ones, empty shapes, a single entry.
/// n×n band of half-width h (2h + 1 entries per row inside the matrix): the big leaves whose
/// column products put many lanes on one column (spmv=plan_tl's case).
Csr<double, std::int64_t> band_matrix(std::int64_t n, std::int64_t h, std::uint64_t seed) {
  Csr<double, std::int64_t> a{n, n, std::vector<std::int64_t>(static_cast<std::size_t>(n + 1), 0), {}, {}};
  std::uint64_t s = seed * 2654435761u + 1;
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t c = std::max<std::int64_t>(0, r - h); c <= std::min(n - 1, r + h); ++c) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      a.col_idx.push_back(c);
      a.values.push_back(static_cast<double>(s >> 40) / static_cast<double>(1ull << 24) - 0.5);
    }
    a.row_ptr[static_cast<std::size_t>(r + 1)] = static_cast<std::int64_t>(a.col_idx.size());
  }
  return a;
}

std::vector<Csr<double, std::int64_t>> plan_cases(std::uint64_t seed) {
  std::vector<Csr<double, std::int64_t>> v;
  v.push_back(band_matrix(700, 8, seed + 7));
  v.push_back(band_matrix(260, 40, seed + 8));
  v.push_back(plan_matrix(300, 170, 0.03, seed));
  v.push_back(plan_matrix(45, 700, 0.1, seed + 1));
  v.push_back(plan_matrix(1500, 1400, 0.002, seed + 2));
  for (auto [m, n] : {std::pair<int, int>{0, 0}, {0, 5}, {5, 0}, {37, 53}})
    v.push_back(Csr<double, std::int64_t>{m, n, std::vector<std::int64_t>(m + 1, 0), {}, {}});
  Csr<double, std::int64_t> one{300, 200, std::vector<std::int64_t>(301, 0), {}, {}};
  for (int r = 171; r <= 300; ++r) one.row_ptr[r] = 1;
  one.col_idx = {150};
  one.values = {-3.5};
  v.push_back(one);
  return v;
}

/// What both plan kernels do around their COO leaves, on the host: y = alpha·op(S)·x + beta·y
/// with op(S) = S (by_col false) or Sᵀ. With split items y is first scaled by beta (the split
/// items then add into it); each item sums its COO leaves by `coo_leaves(it, acc)`, then its
/// dense leaves row by row, and writes alpha·acc (+ beta·y) to its output block.
template <class Value, class Index, class CooLeaves>
std::vector<Value> emulate_items(const HiSparse<Value, Index>& a, const Plan& p, bool by_col,
                                 const std::vector<Value>& x, std::vector<Value> y, Value alpha,
                                 Value beta, CooLeaves&& coo_leaves) {
  const std::int64_t d = a.d(), n_out = by_col ? a.cols : a.rows;
  const std::uint8_t* pool = a.bytes();
  if (p.has_split) {
    for (auto& e : y) e = beta == Value(0) ? Value(0) : beta * e;
    beta = 1;
  }
  for (const PlanItem& it : p.items) {
    std::vector<Value> acc(static_cast<std::size_t>(d), Value(0));
    const std::int64_t out0 = std::int64_t{it.out_block} * d;
    coo_leaves(it, acc);
    for (std::uint32_t j = it.dense_begin; j < it.end; ++j) {
      const PlanLeaf& lf = p.leaves[j];
      const std::uint8_t* val = pool + offset_of(lf.ptr);
      const std::int64_t in0 = std::int64_t{lf.in_block} * d;
      const std::int64_t r0 = by_col ? in0 : out0, c0 = by_col ? out0 : in0;
      const std::int64_t rin = std::min(d, a.rows - r0), cin = std::min(d, a.cols - c0);
      for (std::int64_t r = 0; r < rin; ++r)
        for (std::int64_t c = 0; c < cin; ++c)
          acc[by_col ? c : r] +=
              load<Value>(val + (r * d + c) * sizeof(Value)) * x[by_col ? r0 + r : c0 + c];
    }
    for (std::int64_t o = 0; o < d && out0 + o < n_out; ++o) {
      Value& t = y[out0 + o];
      if (it.split) t += alpha * acc[o];
      else t = beta == Value(0) ? alpha * acc[o] : alpha * acc[o] + beta * t;
    }
  }
  return y;
}

/// The host mirror of plan_kernel: its COO leaves (thread leaves, then warp leaves) entry by entry.
template <class Value, class Index>
void thread_coo_leaves(const HiSparse<Value, Index>& a, const Plan& p, bool by_col,
                       const std::vector<Value>& x, const PlanItem& it, std::vector<Value>& acc) {
  const std::int64_t d = a.d();
  const std::uint8_t* pool = a.bytes();
  auto coo = [&](const PlanLeaf& lf) {
    const std::uint8_t* node = pool + offset_of(lf.ptr);
    const std::uint32_t n = load<std::uint32_t>(node);
    const std::uint8_t* val = node + coo_entries_offset(n);
    const std::int64_t in0 = std::int64_t{lf.in_block} * d;
    for (std::uint32_t k = 0; k < n; ++k) {
      const int r = node[8 + 2 * k], c = node[9 + 2 * k];
      acc[by_col ? c : r] += load<Value>(val + k * sizeof(Value)) * x[in0 + (by_col ? r : c)];
    }
  };
  for (std::uint32_t j = it.begin; j < it.warp_begin; ++j) coo(p.leaves[j]);
  for (std::uint32_t j = it.warp_begin; j < it.dense_begin; ++j) coo(p.leaves[j]);
}

/// The host mirror of plan_warp_kernel (the default CUDA path): COO leaves in batches of 32,
/// a scan of their groups of 4 entries, the flat walk over the groups with the kernel's binary
/// search, and the kernel's exact loads (8 coordinate bytes at node + 8 + 8g; 16 entry bytes,
/// fp64 32 only when entries 2..3 exist, at node + coo_entries_offset(n) + 4g·sizeof(Value)),
/// each asserted to stay inside the node; register runs of one output index as in apply_group.
template <class Value, class Index>
void warp_coo_leaves(const HiSparse<Value, Index>& a, const Plan& p, bool by_col,
                     const std::vector<Value>& x, const PlanItem& it, std::vector<Value>& acc) {
  const std::int64_t d = a.d();
  const std::uint8_t* pool = a.bytes();
  for (std::uint32_t base = it.begin; base < it.dense_begin; base += 32) {
    std::uint32_t lp[32] = {}, ln[32] = {}, lin[32] = {}, groups[32] = {}, incl[32] = {};
    for (int l = 0; l < 32; ++l) {
      if (base + l < it.dense_begin) {
        lp[l] = p.leaves[base + l].ptr;
        lin[l] = p.leaves[base + l].in_block;
        ln[l] = load<std::uint32_t>(pool + offset_of(lp[l]));
        EXPECT_NE(type_of(lp[l]), dense);
      }
      groups[l] = (ln[l] + 3) / 4;
      incl[l] = groups[l] + (l > 0 ? incl[l - 1] : 0);
    }
    const std::uint32_t total = incl[31];
    for (std::uint32_t t = 0; t < total; ++t) {
      int s = 0;
      for (int b = 16; b > 0; b >>= 1)
        if (incl[s + b - 1] <= t) s += b;
      EXPECT_TRUE(incl[s] > t && (s == 0 || incl[s - 1] <= t)) << "search";
      const std::uint32_t g = t - (incl[s] - groups[s]), n = ln[s];
      const std::uint8_t* node = pool + offset_of(lp[s]);
      const std::uint64_t node_bytes = coo_bytes(n, sizeof(Value));
      const int count = static_cast<int>(std::min<std::uint32_t>(4, n - 4 * g));
      EXPECT_GE(count, 1);
      EXPECT_LE(8 + 8 * g + 8, node_bytes) << "coordinate load inside the node";
      const std::uint64_t voff = coo_entries_offset(n) + 4 * g * sizeof(Value);
      EXPECT_EQ(voff % 16, 0u);
      const std::uint64_t vbytes = sizeof(Value) == 4 ? 16 : (count > 2 ? 32 : 16);
      EXPECT_LE(voff + vbytes, node_bytes) << "entry load inside the node";
      const std::int64_t in0 = std::int64_t{lin[s]} * d;
      int key = -1;
      Value run = 0;
      for (int k = 0; k < count; ++k) {
        const int r = node[8 + 8 * g + 2 * k], c = node[9 + 8 * g + 2 * k];
        const Value pr = load<Value>(node + voff + k * sizeof(Value)) * x[in0 + (by_col ? r : c)];
        const int o = by_col ? c : r;
        if (o != key) {
          if (key >= 0) acc[key] += run;
          key = o;
          run = pr;
        } else {
          run += pr;
        }
      }
      if (key >= 0) acc[key] += run;
    }
  }
}

/// y = alpha·op(S)·x + beta·y as the plan kernels compute it: plan_warp_kernel's COO leaves
/// (warp_coo_leaves) where `warp`, else plan_kernel's (thread_coo_leaves).
template <class Value, class Index>
std::vector<Value> emulate(const HiSparse<Value, Index>& a, const Plan& p, bool by_col,
                           const std::vector<Value>& x, std::vector<Value> y, Value alpha,
                           Value beta, bool warp) {
  return emulate_items(a, p, by_col, x, std::move(y), alpha, beta,
                       [&](const PlanItem& it, std::vector<Value>& acc) {
                         if (warp) warp_coo_leaves(a, p, by_col, x, it, acc);
                         else thread_coo_leaves(a, p, by_col, x, it, acc);
                       });
}

/// Structure: every leaf exactly once, items ordered by output block with every block covered,
/// each leaf in the range of its class, item costs bounded unless an item holds one leaf.
template <class Value, class Index>
void check_structure(const HiSparse<Value, Index>& a, const Plan& p, bool by_col,
                     std::int64_t item_cost) {
  const std::int64_t d = a.d(), n_out = by_col ? a.cols : a.rows;
  const std::int64_t nb = (n_out + d - 1) / d;
  const std::vector<LeafRef> leaves = leaf_list(a);
  ASSERT_EQ(p.leaves.size(), leaves.size());
  std::vector<int> seen(static_cast<std::size_t>(nb), 0);
  std::uint32_t next = 0;
  bool split = false;
  for (const PlanItem& it : p.items) {
    ASSERT_LT(std::int64_t{it.out_block}, nb);
    ++seen[it.out_block];
    EXPECT_EQ(it.begin, next) << "items tile the leaf array in order";
    ASSERT_LE(it.begin, it.warp_begin);
    ASSERT_LE(it.warp_begin, it.dense_begin);
    ASSERT_LE(it.dense_begin, it.end);
    next = it.end;
    std::int64_t cost = 0;
    for (std::uint32_t j = it.begin; j < it.end; ++j) {
      const NodeType t = type_of(p.leaves[j].ptr);
      const std::int64_t n = t == dense ? 0 : load<std::uint32_t>(a.bytes() + offset_of(p.leaves[j].ptr));
      cost += plan_cost(t, n, a.log2d);
      if (j < it.warp_begin) EXPECT_TRUE(t != dense && n <= kThreadLeafMax);
      else if (j < it.dense_begin) EXPECT_TRUE(t != dense && n > kThreadLeafMax);
      else EXPECT_EQ(t, dense);
    }
    EXPECT_TRUE(cost <= item_cost || it.end - it.begin == 1) << "cost " << cost;
    split = split || it.split;
  }
  EXPECT_EQ(next, p.leaves.size());
  EXPECT_EQ(split, p.has_split);
  for (std::int64_t b = 0; b < nb; ++b) {
    EXPECT_GE(seen[b], 1) << "block " << b;
    for (const PlanItem& it : p.items)
      if (std::int64_t{it.out_block} == b) EXPECT_EQ(it.split != 0, seen[b] > 1);
  }
  // The multiset of (pointer, input block) equals the traversal's leaves.
  std::vector<std::pair<std::uint32_t, std::int64_t>> want, got;
  for (const LeafRef& w : leaves) want.emplace_back(w.ptr, by_col ? w.brow : w.bcol);
  for (const PlanLeaf& w : p.leaves) got.emplace_back(w.ptr, w.in_block);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
}

template <class Value, class Index>
void plan_battery() {
  const std::uint64_t seed = testing::fresh_seed();
  const double tol = testing::tolerance<Value>();
  for (const auto& src : plan_cases(seed)) {
    const auto a = convert<Value, Index>(src);
    for (int d : {4, 16, 32, 128})
      for (std::int64_t cost : {std::int64_t{8192}, std::int64_t{20}}) {
        SCOPED_TRACE(std::to_string(a.rows) + "x" + std::to_string(a.cols) + " d " +
                     std::to_string(d) + " item_cost " + std::to_string(cost) + " seed " +
                     std::to_string(seed));
        const auto h = HiSparse<Value, Index>::build(a, FormatOptions().set("d", std::to_string(d)));
        for (bool by_col : {false, true}) {
          const Plan p = build_plan(h, by_col, cost);
          check_structure(h, p, by_col, cost);
          const std::int64_t n_in = by_col ? a.rows : a.cols, n_out = by_col ? a.cols : a.rows;
          const auto x = testing::random_vector<Value>(n_in, seed + 3);
          const auto y0 = testing::random_vector<Value>(n_out, seed + 4);
          const auto want = by_col ? reference::spmv_t<Value, Index, Value, Value>(a, x)
                                   : reference::spmv<Value, Index, Value, Value>(a, x);
          const auto want2 = by_col ? reference::spmv_t<Value, Index, Value, Value>(a, x, 0.5, -2, y0)
                                    : reference::spmv<Value, Index, Value, Value>(a, x, 0.5, -2, y0);
          for (bool warp : {false, true}) {
            const auto run = [&](std::vector<Value> y, Value alpha, Value beta) {
              return emulate(h, p, by_col, x, std::move(y), alpha, beta, warp);
            };
            const auto got = run(testing::poisoned<Value>(n_out), Value(1), Value(0));
            EXPECT_LE(reference::relative_norm2_error<Value>(got, want), tol) << by_col << (warp ? " warp" : "");
            const auto got2 = run(y0, Value(0.5), Value(-2));
            EXPECT_LE(reference::relative_norm2_error<Value>(got2, want2), tol) << by_col << (warp ? " warp" : "");
          }
        }
      }
  }
}

TEST(HiSparsePlan, HostEmulationMatchesTheReferenceFp32Int32) { plan_battery<float, std::int32_t>(); }
TEST(HiSparsePlan, HostEmulationMatchesTheReferenceFp64Int64) { plan_battery<double, std::int64_t>(); }

TEST(HiSparsePlan, SplitsLongBucketsAndKeepsShortOnesWhole) {
  const auto a = convert<double, std::int32_t>(plan_matrix(300, 170, 0.03, 5));
  const auto h = HiSparse<double, std::int32_t>::build(a, FormatOptions().set("d", "16"));
  EXPECT_FALSE(build_plan(h, false, std::int64_t{1} << 40).has_split);
  EXPECT_TRUE(build_plan(h, false, 20).has_split);  // row 3 alone costs more than 20
  EXPECT_THROW((HiSparse<double, std::int32_t>::build(a, FormatOptions().set("spmv", "x"))), ParseError);
  EXPECT_TRUE((HiSparse<double, std::int32_t>::build(a, FormatOptions().set("spmv", "plan1"))).gpu_plan_block);
  EXPECT_TRUE((HiSparse<double, std::int32_t>::build(a, FormatOptions().set("spmv", "plan6"))).gpu_plan_occ6);
  EXPECT_TRUE((HiSparse<double, std::int32_t>::build(a, FormatOptions().set("spmv", "plan_tl"))).gpu_plan_tlanes);
  EXPECT_THROW((HiSparse<double, std::int32_t>::build(a, FormatOptions().set("item_cost", "0"))), ParseError);
}

#if SPMAT_WITH_CUDA
/// Both CUDA paths, both directions, both states, beta = 0 into NaN poison and alpha/beta
/// (skipped, saying why, where GPU tests cannot run).
template <class Value, class Index>
void gpu_battery() {
  SPMAT_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const double tol = testing::tolerance<Value>();
  for (const auto& src : plan_cases(seed)) {
    const auto a = convert<Value, Index>(src);
    for (const char* path : {"plan", "plan6", "plan_tl", "plan1", "levels"})
      for (int d : {16, 32, 128})
        for (const char* cost : {"8192", "20"}) {
          if (std::string(path) == "levels" && std::string(cost) == "20") continue;
          for (bool state_t : {false, true}) {
            SCOPED_TRACE(std::to_string(a.rows) + "x" + std::to_string(a.cols) + " spmv=" + path +
                         " d " + std::to_string(d) + " item_cost " + cost +
                         (state_t ? " transposed state" : "") + " seed " + std::to_string(seed));
            auto h = HiSparse<Value, Index>::build(
                a, FormatOptions().set("d", std::to_string(d)).set("spmv", path).set("item_cost", cost));
            if (state_t) h = hisparse_transposed(std::move(h));
            const auto logical = state_t ? transpose(a) : a;
            const auto impl = make_cuda_impl(std::move(h));
            for (bool t : {false, true}) {
              const std::int64_t n_in = t ? logical.rows : logical.cols;
              const std::int64_t n_out = t ? logical.cols : logical.rows;
              const auto x = testing::random_vector<Value>(n_in, seed + 5);
              const auto y0 = testing::random_vector<Value>(n_out, seed + 6);
              const auto want = t ? reference::spmv_t<Value, Index, Value, Value>(logical, x)
                                  : reference::spmv<Value, Index, Value, Value>(logical, x);
              const auto want2 = t ? reference::spmv_t<Value, Index, Value, Value>(logical, x, 0.5, -2, y0)
                                   : reference::spmv<Value, Index, Value, Value>(logical, x, 0.5, -2, y0);
              cuda::DeviceBuffer<Value> dx(x, "x"), dy(static_cast<std::size_t>(n_out), "y");
              dy.fill_bytes(0xFF);
              if (t) impl->spmv_t(dx.data(), dy.data(), Value(1), Value(0));
              else impl->spmv(dx.data(), dy.data(), Value(1), Value(0));
              cuda::synchronize();
              EXPECT_LE(reference::relative_norm2_error<Value>(dy.download(), want), tol)
                  << (t ? "spmv_t" : "spmv") << " beta 0 over NaN";
              dy.upload(y0);
              if (t) impl->spmv_t(dx.data(), dy.data(), Value(0.5), Value(-2));
              else impl->spmv(dx.data(), dy.data(), Value(0.5), Value(-2));
              cuda::synchronize();
              EXPECT_LE(reference::relative_norm2_error<Value>(dy.download(), want2), tol)
                  << (t ? "spmv_t" : "spmv") << " alpha 0.5 beta -2";
            }
          }
        }
  }
}

TEST(HiSparsePlan, GpuFp32Int32) { gpu_battery<float, std::int32_t>(); }
TEST(HiSparsePlan, GpuFp32Int64) { gpu_battery<float, std::int64_t>(); }
TEST(HiSparsePlan, GpuFp64Int32) { gpu_battery<double, std::int32_t>(); }
TEST(HiSparsePlan, GpuFp64Int64) { gpu_battery<double, std::int64_t>(); }
#endif

}  // namespace
}  // namespace spmat
