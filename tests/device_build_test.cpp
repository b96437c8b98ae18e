// tests/device_build_test.cpp — building from a CSR in device memory and updating values.
// SPDX-License-Identifier: MIT
//
// CPU (run everywhere): update_values on the CPU backend for every format that has it, its
// argument errors and refusals, the registry's device-builder flags, device input refused
// without a GPU.
// GPU (skip, with the reason, when spmat was built without CUDA or no GPU is present): every
// format with a device builder builds the same device arrays, byte for byte, from a device CSR
// as from the host CSR (random, skewed, empty-row, symmetric, stencil, shared-prefix, zero-row,
// zero-column, empty matrices; fp32 and fp64; int32 and int64 indices), tiled in every layout;
// every other format builds from a device CSR through the host; spmv of both against the fp64
// reference with the output poisoned with NaN; csr adopts a view without copying it and never
// writes into it; update_values then spmv equals a fresh build with the new values (values given
// in host and in device memory); an invalid device CSR gives InvalidMatrixError naming the
// violation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "spmat/bench/harness.hpp"
#include "spmat/config.hpp"
#include "spmat/formats/tiled/tiled.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/matrix.hpp"
#include "spmat/plan/candidate_builder.hpp"
#include "tests/support/device_ops.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#endif

namespace spmat {
namespace {

using Csr64 = Csr<double, std::int64_t>;

/// Canonical CSR with the given row lengths (clamped to cols), distinct sorted columns, values
/// small nonzero integers (exact sums in fp32 and fp64).
Csr64 make_csr(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& lengths,
               std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> val(1, 4);
  Csr64 a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(1, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t len = std::min(lengths[static_cast<std::size_t>(r)], cols);
    std::set<std::int64_t> c;
    if (len * 2 >= cols) {
      std::vector<std::int64_t> all(static_cast<std::size_t>(cols));
      for (std::int64_t j = 0; j < cols; ++j) all[static_cast<std::size_t>(j)] = j;
      std::shuffle(all.begin(), all.end(), rng);
      c.insert(all.begin(), all.begin() + len);
    } else {
      std::uniform_int_distribution<std::int64_t> col(0, cols - 1);
      while (static_cast<std::int64_t>(c.size()) < len) c.insert(col(rng));
    }
    for (auto j : c) {
      a.col_idx.push_back(j);
      a.values.push_back((rng() & 1 ? 1 : -1) * val(rng));
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

struct Case {
  std::string name;
  Csr64 a;
};

/// CSR from each row's set of columns, values small nonzero integers.
Csr64 csr_from_sets(std::int64_t cols, const std::vector<std::set<std::int64_t>>& sets, std::uint64_t seed) {
  Csr64 a;
  a.rows = static_cast<std::int64_t>(sets.size());
  a.cols = cols;
  a.row_ptr.assign(1, 0);
  for (const auto& row : sets) {
    for (auto j : row) {
      a.col_idx.push_back(j);
      a.values.push_back(static_cast<double>(static_cast<int>(testing::mix64(seed + a.col_idx.size()) % 4) + 1));
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

/// A symmetric pattern: random pairs (i, j) and (j, i) with the diagonal, `wide` rows (and
/// columns) of `wide_len` entries more.
Csr64 symmetric_csr(std::int64_t n, std::int64_t pairs, std::vector<std::int64_t> wide, std::int64_t wide_len,
                    std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> any(0, n - 1);
  std::vector<std::set<std::int64_t>> s(static_cast<std::size_t>(n));
  auto add = [&](std::int64_t i, std::int64_t j) {
    s[static_cast<std::size_t>(i)].insert(j);
    s[static_cast<std::size_t>(j)].insert(i);
  };
  for (std::int64_t i = 0; i < n; ++i) add(i, i);
  for (std::int64_t k = 0; k < pairs; ++k) add(any(rng), any(rng));
  for (auto w : wide)
    for (std::int64_t k = 0; k < wide_len; ++k) add(w, any(rng));
  return csr_from_sets(n, s, seed);
}

/// The 5-point stencil of an nx × ny grid (symmetric; its boundary rows move in pattern order).
Csr64 stencil_csr(std::int64_t nx, std::int64_t ny) {
  std::vector<std::set<std::int64_t>> s(static_cast<std::size_t>(nx * ny));
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t x = 0; x < nx; ++x) {
      auto& r = s[static_cast<std::size_t>(y * nx + x)];
      r.insert(y * nx + x);
      if (x > 0) r.insert(y * nx + x - 1);
      if (x + 1 < nx) r.insert(y * nx + x + 1);
      if (y > 0) r.insert((y - 1) * nx + x);
      if (y + 1 < ny) r.insert((y + 1) * nx + x);
    }
  return csr_from_sets(nx * ny, s, 5);
}

/// Rows that are prefixes of a few long column patterns: many rows tie on long prefixes, many
/// are equal, some end where others go on (the pattern sort's hard case).
Csr64 prefix_rows_csr(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::int64_t>> base(5);
  for (auto& b : base) {
    std::set<std::int64_t> c;
    while (c.size() < 60) c.insert(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(cols)));
    b.assign(c.begin(), c.end());
  }
  std::vector<std::set<std::int64_t>> s(static_cast<std::size_t>(rows));
  for (auto& r : s) {
    const auto& b = base[rng() % base.size()];
    const std::size_t len = rng() % 4 == 0 ? b.size() : rng() % (b.size() + 1);
    r.insert(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(len));
  }
  return csr_from_sets(cols, s, seed);
}

/// The matrices every builder is checked on.
std::vector<Case> cases(std::uint64_t seed) {
  std::vector<Case> v;
  std::mt19937_64 rng(seed);
  {  // random, mean 8 per row
    std::vector<std::int64_t> len(500);
    for (auto& l : len) l = static_cast<std::int64_t>(rng() % 17);
    v.push_back({"random", make_csr(500, 700, len, seed + 1)});
  }
  {  // skewed: power-law rows plus one row longer than the CSR chunk (4096) and a dense-ish row
    std::vector<std::int64_t> len(3000);
    for (std::size_t r = 0; r < len.size(); ++r)
      len[r] = static_cast<std::int64_t>(1 + 2000 / (1 + static_cast<double>(rng() % 3000)));
    len[17] = 9000;
    len[2500] = 600;
    v.push_back({"skewed", make_csr(3000, 10000, len, seed + 2)});
  }
  {  // empty rows: every third row empty, some long ones
    std::vector<std::int64_t> len(1025);
    for (std::size_t r = 0; r < len.size(); ++r) len[r] = r % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % 40);
    v.push_back({"empty_rows", make_csr(1025, 1000, len, seed + 3)});
  }
  v.push_back({"symmetric", symmetric_csr(700, 2000, {}, 0, seed + 4)});
  v.push_back({"symmetric_wide_rows", symmetric_csr(500, 1500, {3, 250}, 60, seed + 5)});
  v.push_back({"stencil", stencil_csr(23, 19)});
  v.push_back({"prefix_rows", prefix_rows_csr(900, 400, seed + 6)});
  v.push_back({"zero_rows", make_csr(0, 50, {}, seed)});
  v.push_back({"zero_cols", make_csr(40, 0, std::vector<std::int64_t>(40, 0), seed)});
  v.push_back({"no_entries", make_csr(33, 65, std::vector<std::int64_t>(33, 0), seed)});
  v.push_back({"one_entry", make_csr(1, 1, {1}, seed)});
  return v;
}

/// Same structure as `a`, new values (distinct from the old ones, small integers).
template <class Value, class Index>
std::vector<Value> new_values(const Csr<Value, Index>& a, std::uint64_t seed) {
  std::vector<Value> v(a.values.size());
  for (std::size_t k = 0; k < v.size(); ++k)
    v[k] = static_cast<Value>(static_cast<int>(testing::mix64(seed + k) % 9) - 4);
  return v;
}

template <class Value, class Index>
Csr<Value, Index> with_values(Csr<Value, Index> a, const std::vector<Value>& v) {
  a.values = v;
  return a;
}

/// y = A x on the matrix's backend (output poisoned with NaN) against the fp64 reference.
template <class Value, class Index>
void expect_spmv_matches(const Matrix<Value>& m, const Csr<Value, Index>& a, const std::string& what) {
  const auto x = testing::operand_vector<Value>(a.cols, 7, true);
  const auto y = testing::apply_spmv(m, Op::spmv, x);
  const auto want = reference::spmv<Value, Index, Value, Value>(a, std::span<const Value>(x));
  ASSERT_EQ(y.size(), want.size()) << what;
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_EQ(static_cast<double>(y[i]), want[i]) << what << ": row " << i;  // exact: small integers
}

// The formats whose CPU storage takes new values in place.
const std::vector<std::string> kCpuUpdatable = {"csr", "coo", "csc", "ell", "ellr", "sell", "hyb"};

template <class Value, class Index>
void check_cpu_update(const std::string& format) {
  for (const auto& c : cases(11)) {
    const auto a = convert<Value, Index>(c.a);
    std::optional<Matrix<Value>> built;
    try {
      built = Matrix<Value>::build(a, format, Backend::cpu);
    } catch (const UnsupportedError&) {
      continue;  // refused by design (ELL padding on the skewed matrix)
    }
    Matrix<Value>& m = *built;
    const auto v = new_values(a, 99);
    m.update_values(v);
    const auto b = with_values(a, v);
    const std::string what = format + " " + c.name;
    EXPECT_EQ(m.to_csr(), (convert<Value, std::int64_t>(b))) << what;
    expect_spmv_matches(m, b, what);
  }
}

TEST(UpdateValuesCpu, EqualsAFreshBuild) {
  for (const auto& f : kCpuUpdatable) {
    SCOPED_TRACE(f);
    testing::for_each_type_pair([&]<class V, class I>() { check_cpu_update<V, I>(f); });
  }
}

TEST(UpdateValuesCpu, PlannedMatrixTakesTheValues) {
  const auto a = cases(5)[0].a;
  for (const char* ops : {"spmv", "spmv+spmv_t"}) {
    auto m = Matrix<double>::build(a, "auto", Backend::cpu, FormatOptions().set("ops", ops));
    const auto v = new_values(a, 3);
    m.update_values(v);
    const auto b = with_values(a, v);
    EXPECT_EQ(m.to_csr(), b) << ops;
    expect_spmv_matches(m, b, ops);
    // spmv_t (possibly a stored transpose, rebuilt from the new values)
    const auto x = testing::operand_vector<double>(a.rows, 3, true);
    const auto y = testing::apply_spmv(m, Op::spmv_t, x);
    const auto want = reference::spmv_t<double, std::int64_t, double, double>(b, std::span<const double>(x));
    for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], want[i]) << ops << " col " << i;
  }
}

TEST(UpdateValuesCpu, WrongCountIsADimensionMismatch) {
  const auto a = cases(5)[0].a;
  auto m = Matrix<double>::build(a, "csr", Backend::cpu);
  std::vector<double> v(a.values.size() + 1, 1.0);
  EXPECT_THROW(m.update_values(v), DimensionMismatchError);
}

TEST(UpdateValuesCpu, FormatsThatCannotNameThemselves) {
  // Formats outside kCpuUpdatable refuse with UnsupportedError naming the format (or take the
  // values, for formats added later: then they must equal a fresh build).
  const auto a = cases(5)[0].a;
  const auto v = new_values(a, 8);
  for (const auto& e : registry()) {
    if (!e.caps.cpu.available) continue;
    if (std::find(kCpuUpdatable.begin(), kCpuUpdatable.end(), e.name) != kCpuUpdatable.end()) continue;
    std::optional<Matrix<double>> m;
    try {
      m = Matrix<double>::build(a, e.name, Backend::cpu);
    } catch (const UnsupportedError&) {
      continue;  // refuses the matrix by design
    }
    try {
      m->update_values(v);
      expect_spmv_matches(*m, with_values(a, v), e.name);
    } catch (const UnsupportedError& err) {
      EXPECT_NE(std::string(err.what()).find("'" + e.name + "'"), std::string::npos) << err.what();
    }
  }
}

TEST(DeviceBuild, RegistryFlags) {
  for (const char* f : {"csr", "csr-scalar", "csr-vector", "csr-merge", "coo", "coo-seg", "csc",
                        "ell", "ellr", "sell", "hyb", "bccoo-gpu", "bro-ell", "bro-coo",
                        "bro-hyb", "tiled"})
    EXPECT_EQ(find_format(f).builds_on_device(), kCudaCompiled) << f;
  EXPECT_FALSE(find_format("auto").builds_on_device());
#if SPMAT_WITH_CUDA
  for (const char* f : {"cusparse-csr", "cusparse-csr-alg2", "cusparse-coo"})
    EXPECT_TRUE(find_format(f).builds_on_device()) << f;
#endif
}

TEST(DeviceBuild, RefusedWithoutAGpu) {
  std::string why;
  if (testing::gpu_available(&why)) GTEST_SKIP() << "a GPU is present";
  DeviceCsrView<double, std::int32_t> v;
  EXPECT_THROW((void)Matrix<double>::build(v, "csr"), UnsupportedError);
}

TEST(DeviceBuild, BenchNeedsTheCudaBackend) {
  bench::BenchConfig c;
  c.matrices = {bench::matrix_from_csr("m", cases(1)[0].a)};
  c.formats = {{"csr", {}}};
  c.backend = Backend::cpu;
  c.build_from_device = true;
  EXPECT_THROW((void)bench::run_bench(c), UnsupportedError);
}

#if SPMAT_WITH_CUDA

/// Every format available on the CUDA backend, planners excluded.
std::vector<const FormatEntry*> cuda_formats(bool device_builder) {
  std::vector<const FormatEntry*> v;
  for (const auto& e : registry())
    if (e.caps.cuda.available && e.name != "auto" && e.name != "tune" &&
        e.builds_on_device() == device_builder)
      v.push_back(&e);
  return v;
}

/// The stored arrays of two builds, name by name and byte for byte, and their storage bytes.
/// `same_bytes` = false after products or value updates, which may leave memory of their own
/// (partial sums, value maps) in one of the two.
template <class Value>
void expect_same_arrays(const Matrix<Value>& host, const Matrix<Value>& dev, const std::string& what,
                        bool same_bytes = true) {
  const auto hs = detail::impl_of(host).stored_arrays();
  const auto ds = detail::impl_of(dev).stored_arrays();
  ASSERT_EQ(hs.size(), ds.size()) << what;
  for (std::size_t i = 0; i < hs.size(); ++i) {
    EXPECT_EQ(hs[i].name, ds[i].name) << what;
    EXPECT_TRUE(hs[i].bytes == ds[i].bytes) << what << ": array " << hs[i].name << " differs ("
                                            << hs[i].bytes.size() << " vs " << ds[i].bytes.size() << " bytes)";
  }
  if (same_bytes) EXPECT_EQ(host.storage_bytes(), dev.storage_bytes()) << what;
}

template <class Value, class Index>
void check_device_builders(std::uint64_t seed) {
  for (const auto& c : cases(seed)) {
    const auto a = convert<Value, Index>(c.a);
    for (const FormatEntry* e : cuda_formats(true)) {
      const std::string what = e->name + " " + c.name + " " + std::string(precision_name<Value>()) +
                               " " + std::string(index_name<Index>());
      std::optional<Matrix<Value>> host, dev;
      try {
        host = Matrix<Value>::build(a, e->name, Backend::cuda);
      } catch (const UnsupportedError& err) {  // refused by design (ELL padding): both ways
        EXPECT_THROW((void)Matrix<Value>::build(cuda::upload_csr(a), e->name), UnsupportedError) << what;
        continue;
      }
      dev = Matrix<Value>::build(cuda::upload_csr(a), e->name);
      expect_same_arrays(*host, *dev, what);
      EXPECT_EQ(dev->to_csr(), (convert<Value, std::int64_t>(a))) << what;
      expect_spmv_matches(*dev, a, what + " (device-built)");
      expect_spmv_matches(*host, a, what + " (host-built)");
    }
  }
}

/// The panel arrays of `dev` (built) are the host builder's `h`, byte for byte.
template <class Value, class Index>
void expect_host_panels(const Matrix<Value>& dev, const TiledStorage<Value, Index>& h, const std::string& what) {
  const auto bytes = [](const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    const auto* p = reinterpret_cast<const std::byte*>(v.data());
    return std::vector<std::byte>(p, p + v.size() * sizeof(T));
  };
  const std::map<std::string, std::vector<std::byte>> want{
      {"pn_col_ptr", bytes(h.pn_col_ptr)}, {"pn_val_ptr", bytes(h.pn_val_ptr)}, {"pn_col", bytes(h.pn_col)},
      {"pn_mask", bytes(h.pn_mask)},       {"pn_val", bytes(h.pn_val)}};
  int seen = 0;
  for (const auto& a : detail::impl_of(dev).stored_arrays())
    if (const auto it = want.find(a.name); it != want.end()) {
      ++seen;
      EXPECT_TRUE(a.bytes == it->second) << what << ": " << a.name << " differs from the host builder's ("
                                         << a.bytes.size() << " vs " << it->second.size() << " bytes)";
    }
  EXPECT_EQ(seen, 5) << what;
}

/// Every tiled layout the device builder makes (whole or segmented rows, pattern order on and
/// off, panel arrays of 4 to 32 rows, the model's choice) against the host builder, byte for
/// byte: as built (the panel arrays waiting for their first use on both), once prepared for a
/// product that runs the panel kernel (the arrays then built from the stored rows: the host
/// builder's), then after update_values against a fresh build with the new values.
const char* kTiledLayouts[] = {
    "kernel=rows,variant=baseline,reorder=off",
    "kernel=rows,variant=baseline,reorder=on",
    "kernel=rows,variant=segmented,segsize=7,reorder=on",
    "kernel=rows,variant=segmented,segsize=64,reorder=off",
    "kernel=panel,panel_rows=4,variant=baseline,reorder=on",
    "kernel=panel,panel_rows=8,variant=segmented,segsize=5,reorder=off",
    "kernel=panel,panel_rows=16,variant=baseline,reorder=off",
    "kernel=panel,panel_rows=32,variant=segmented,segsize=3,reorder=on",
    "panel_reuse=0.5,panel_per_sm=0,cv_max=1000",
    "variant=auto,reorder=auto,k=64,panel_per_sm=0"};

template <class Value, class Index>
void check_tiled_layouts(std::uint64_t seed) {
  for (const auto& c : cases(seed)) {
    const auto a = convert<Value, Index>(c.a);
    const auto v = new_values(a, seed + 2);
    for (const char* cfg : kTiledLayouts) {
      const std::string what = std::string(cfg) + " " + c.name + " " + std::string(precision_name<Value>()) + " " +
                               std::string(index_name<Index>());
      const auto o = FormatOptions::parse(cfg);
      const auto host = Matrix<Value>::build(a, "tiled", Backend::cuda, o);
      auto dev = Matrix<Value>::build(cuda::upload_csr(a), "tiled", o);
      expect_same_arrays(host, dev, what);
      expect_spmv_matches(dev, a, what + " (device-built)");
      const std::int64_t k = 256 / static_cast<std::int64_t>(sizeof(Value));  // B row slices of 256 bytes
      host.prepare(Op::spmm, k, DenseLayout::row_major);
      dev.prepare(Op::spmm, k, DenseLayout::row_major);
      expect_same_arrays(host, dev, what + ", panel arrays built", false);
      expect_host_panels(dev, TiledStorage<Value, Index>::build(a, o), what);
      dev.update_values(v, Memory::host);
      const auto fresh = Matrix<Value>::build(with_values(a, v), "tiled", Backend::cuda, o);
      fresh.prepare(Op::spmm, k, DenseLayout::row_major);
      expect_same_arrays(fresh, dev, what + ", updated", false);
    }
  }
}

TEST(DeviceBuild, TiledLayoutsAsTheHostBuilder) {
  SPMAT_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  check_tiled_layouts<float, std::int32_t>(seed);
  check_tiled_layouts<double, std::int64_t>(seed);
}

TEST(DeviceBuild, SameArraysAsTheHostBuilder) {
  SPMAT_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::for_each_type_pair([&]<class V, class I>() { check_device_builders<V, I>(seed); });
}

template <class Value, class Index>
void check_fallback_builds(std::uint64_t seed) {
  const auto a = convert<Value, Index>(cases(seed)[0].a);
  std::vector<const FormatEntry*> formats = cuda_formats(false);
  formats.push_back(&find_format("auto"));
  for (const FormatEntry* e : formats) {
    std::optional<Matrix<Value>> m;
    try {
      m = Matrix<Value>::build(cuda::upload_csr(a), e->name);
    } catch (const UnsupportedError&) {
      EXPECT_THROW((void)Matrix<Value>::build(a, e->name, Backend::cuda), UnsupportedError) << e->name;
      continue;
    }
    if (!m->supports(Op::spmv)) continue;
    expect_spmv_matches(*m, a, e->name + " (built from a downloaded device CSR)");
  }
}

TEST(DeviceBuild, OtherFormatsBuildThroughTheHost) {
  SPMAT_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  check_fallback_builds<float, std::int32_t>(seed);
  check_fallback_builds<double, std::int64_t>(seed);
}

TEST(DeviceBuild, CsrAdoptsAViewWithoutCopyingAndNeverWritesIt) {
  SPMAT_SKIP_WITHOUT_GPU();
  const auto a = convert<float, std::int32_t>(cases(3)[0].a);
  cuda::DeviceBuffer<std::int32_t> rp(a.row_ptr), ci(a.col_idx);
  cuda::DeviceBuffer<float> va(a.values);
  const DeviceCsrView<float, std::int32_t> view{a.rows, a.cols, a.nnz(), rp.data(), ci.data(), va.data()};
  auto m = Matrix<float>::build(view, "csr");
  expect_spmv_matches(m, a, "csr on a view");
  // The matrix reads the caller's arrays: new values written there show at the next call.
  const auto v = new_values(a, 4);
  va.upload(v);
  expect_spmv_matches(m, with_values(a, v), "csr on a view, values changed in place");
  // update_values writes into memory of its own, not into the view's values.
  const auto w = new_values(a, 5);
  m.update_values(w, Memory::host);
  expect_spmv_matches(m, with_values(a, w), "csr on a view, after update_values");
  EXPECT_EQ(va.download(), v);
  EXPECT_EQ(m.to_csr(), (convert<float, std::int64_t>(with_values(a, w))));
}

TEST(DeviceBuild, OwningInputIsKeptAliveByTheMatrix) {
  SPMAT_SKIP_WITHOUT_GPU();
  const auto a = convert<double, std::int64_t>(cases(3)[1].a);
  std::optional<Matrix<double>> m;
  {
    auto owned = cuda::adopt_csr<double, std::int64_t>(
        a.rows, a.cols, cuda::DeviceBuffer<std::int64_t>(a.row_ptr),
        cuda::DeviceBuffer<std::int64_t>(a.col_idx), cuda::DeviceBuffer<double>(a.values));
    m = Matrix<double>::build(std::move(owned), "csr");
  }  // the DeviceCsr is gone; the matrix holds its arrays
  expect_spmv_matches(*m, a, "csr on an owning DeviceCsr");
  const auto v = new_values(a, 6);
  cuda::DeviceBuffer<double> dv(v);
  m->update_values(std::span<const double>(dv.span()));  // device values, in place
  expect_spmv_matches(*m, with_values(a, v), "csr on an owning DeviceCsr, updated");
}

template <class Value, class Index>
void check_device_update(std::uint64_t seed) {
  for (const auto& c : cases(seed)) {
    const auto a = convert<Value, Index>(c.a);
    const auto v = new_values(a, seed + 1);
    const auto b = with_values(a, v);
    for (const FormatEntry* e : cuda_formats(true)) {
      for (int way = 0; way < 2; ++way) {  // device-built, host-built
        const std::string what = e->name + " " + c.name + (way ? " host-built" : " device-built") +
                                 " " + std::string(precision_name<Value>()) + " " +
                                 std::string(index_name<Index>());
        std::optional<Matrix<Value>> m;
        try {
          m = way ? Matrix<Value>::build(a, e->name, Backend::cuda)
                  : Matrix<Value>::build(cuda::upload_csr(a), e->name);
        } catch (const UnsupportedError&) {
          continue;  // refused by design (ELL padding), checked above
        }
        try {
          m->update_values(v, Memory::host);
        } catch (const UnsupportedError& err) {  // a layout that depends on the values
          EXPECT_NE(std::string(err.what()).find("'" + e->name + "'"), std::string::npos)
              << what << ": " << err.what();
          continue;
        }
        expect_spmv_matches(*m, b, what + ", host values");
        EXPECT_EQ(m->to_csr(), (convert<Value, std::int64_t>(b))) << what;
        // Back to the old values from device memory, then compare with a fresh build's arrays.
        cuda::DeviceBuffer<Value> old(a.values);
        m->update_values(std::span<const Value>(old.span()), Memory::device);
        expect_spmv_matches(*m, a, what + ", device values");
        const auto fresh = Matrix<Value>::build(a, e->name, Backend::cuda);
        const auto hs = detail::impl_of(fresh).stored_arrays();
        const auto ds = detail::impl_of(*m).stored_arrays();
        ASSERT_EQ(hs.size(), ds.size()) << what;
        for (std::size_t i = 0; i < hs.size(); ++i)
          EXPECT_TRUE(hs[i].bytes == ds[i].bytes) << what << ": array " << hs[i].name;
      }
    }
  }
}

TEST(DeviceBuild, UpdateValuesEqualsAFreshBuild) {
  SPMAT_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::for_each_type_pair([&]<class V, class I>() { check_device_update<V, I>(seed); });
}

TEST(DeviceBuild, UpdateValuesRefusalNamesTheFormat) {
  SPMAT_SKIP_WITHOUT_GPU();
  const auto a = cases(3)[0].a;
  const auto v = new_values(a, 2);
  for (const FormatEntry* e : cuda_formats(false)) {
    std::optional<Matrix<double>> m;
    try {
      m = Matrix<double>::build(a, e->name, Backend::cuda);
    } catch (const UnsupportedError&) {
      continue;
    }
    try {
      m->update_values(v, Memory::host);
      if (m->supports(Op::spmv)) expect_spmv_matches(*m, with_values(a, v), e->name + " updated");
    } catch (const UnsupportedError& err) {
      EXPECT_NE(std::string(err.what()).find("'" + e->name + "'"), std::string::npos) << err.what();
    }
  }
}

/// Builds from a device copy of `a` as given (not validated on the host) and expects
/// InvalidMatrixError whose message contains `expect`.
void expect_invalid(const Csr<double, std::int32_t>& a, const std::string& expect) {
  cuda::DeviceBuffer<std::int32_t> rp(a.row_ptr), ci(a.col_idx);
  cuda::DeviceBuffer<double> va(a.values);
  const DeviceCsrView<double, std::int32_t> view{a.rows, a.cols,
                                                 static_cast<std::int64_t>(a.col_idx.size()),
                                                 rp.data(), ci.data(), va.data()};
  try {
    (void)Matrix<double>::build(view, "csr");
    ADD_FAILURE() << "no error; expected one mentioning '" << expect << "'";
  } catch (const InvalidMatrixError& e) {
    EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
  }
}

TEST(DeviceBuild, InvalidDeviceCsrIsAClearError) {
  SPMAT_SKIP_WITHOUT_GPU();
  Csr<double, std::int32_t> good;
  good.rows = 3;
  good.cols = 4;
  good.row_ptr = {0, 2, 2, 4};
  good.col_idx = {0, 3, 1, 2};
  good.values = {1, 2, 3, 4};
  // Each case breaks `good` in one way: its row_ptr, its col_idx, and the message expected.
  const struct {
    std::vector<std::int32_t> row_ptr, col_idx;
    const char* expect;
  } broken[] = {
      {{1, 2, 2, 4}, good.col_idx, "row_ptr[0] = 1, expected 0"},
      {{0, 2, 2, 3}, good.col_idx, "row_ptr[rows] = 3 but nnz = 4"},
      {{0, 3, 2, 4}, good.col_idx, "row_ptr decreases at row 1"},
      {good.row_ptr, {0, 3, 1, 4}, "column index 4 in row 2 is out of range [0, 4)"},
      {good.row_ptr, {0, 3, 2, 1}, "columns of row 2 are not strictly increasing (2 then 1)"},
      {good.row_ptr, {3, 3, 1, 2}, "columns of row 0 are not strictly increasing (3 then 3)"},
  };
  for (const auto& c : broken) {
    auto bad = good;
    bad.row_ptr = c.row_ptr;
    bad.col_idx = c.col_idx;
    expect_invalid(bad, c.expect);
  }
  // Host memory where device memory is expected.
  const DeviceCsrView<double, std::int32_t> host_view{good.rows, good.cols, 4, good.row_ptr.data(),
                                                      good.col_idx.data(), good.values.data()};
  try {
    (void)Matrix<double>::build(host_view, "csr");
    ADD_FAILURE() << "host pointers accepted";
  } catch (const InvalidMatrixError& e) {
    EXPECT_NE(std::string(e.what()).find("row_ptr is not device memory"), std::string::npos) << e.what();
  }
  // The context is still usable afterwards.
  expect_spmv_matches(Matrix<double>::build(cuda::upload_csr(good), "csr"), good, "after errors");
}

TEST(DeviceBuild, BenchReportsTheDeviceBuildAndUpdateTimes) {
  SPMAT_SKIP_WITHOUT_GPU();
  bench::BenchConfig c;
  c.matrices = {bench::matrix_from_csr("m", cases(1)[0].a)};
  c.formats = {{"csr", {}}, {"sell", {}}, {"gcsb", {}}};
  c.ops = {Op::spmv};
  c.precisions = {bench::Precision::fp64};
  c.backend = Backend::cuda;
  c.reps = 2;
  c.warmup = 0;
  c.copy_gbs = 1;
  c.build_from_device = true;
  const bench::Report r = bench::run_bench(c);
  ASSERT_EQ(r.results.size(), 3u);
  for (const auto& res : r.results) {
    SCOPED_TRACE(res.format);
    EXPECT_TRUE(res.completed && res.correct) << res.error;
    EXPECT_TRUE(std::isfinite(res.device_build_ms)) << res.device_build_error;
    EXPECT_EQ(res.device_builder, res.format != "gcsb");  // gcsb builds through the host
    EXPECT_EQ(std::isfinite(res.update_values_ms), res.format != "gcsb");
    EXPECT_TRUE(std::isfinite(res.device_build_ms) && std::isfinite(res.device_build_first_ms));
    const std::string json = bench::to_json(res).dump();
    EXPECT_NE(json.find("\"device_build_ms\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"update_values_ms\""), std::string::npos) << json;
  }
}

template <class Value, class Index>
void check_device_transpose(std::uint64_t seed) {
  for (const auto& c : cases(seed)) {
    const auto a = convert<Value, Index>(c.a);
    const auto up = cuda::upload_csr(a);
    const DeviceCsr<Value, Index> t = cuda::transpose(up.view());
    EXPECT_EQ(cuda::download(t.view()), transpose(a)) << c.name;
  }
}

TEST(DeviceBuild, TransposeEqualsTheHostTranspose) {
  SPMAT_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::for_each_type_pair([&]<class V, class I>() { check_device_transpose<V, I>(seed); });
}

// The planner's builder: storages of A and of Aᵀ built on the device (one upload, one device
// transpose) hold the arrays of the host builds.
TEST(DeviceBuild, PlannerBuildsOnTheDeviceTheStoragesOfTheHost) {
  SPMAT_SKIP_WITHOUT_GPU();
  const auto a = convert<float, std::int32_t>(cases(testing::fresh_seed())[0].a);
  CandidateBuilder<float, std::int32_t> builder(a, Backend::cuda);
  for (const char* f : {"csr", "bccoo-gpu", "bro-hyb", "cusparse-csr", "csc"})
    for (bool transposed : {false, true}) {
      const std::string what = std::string(f) + (transposed ? " on A^T" : "");
      EXPECT_TRUE(builder.on_device(f)) << what;
      const auto dev = builder.build(f, transposed);
      const auto host = Matrix<float>::build(transposed ? transpose(a) : a, f, Backend::cuda);
      const auto hs = detail::impl_of(host).stored_arrays();
      const auto ds = dev->stored_arrays();
      ASSERT_EQ(hs.size(), ds.size()) << what;
      for (std::size_t i = 0; i < hs.size(); ++i)
        EXPECT_TRUE(hs[i].bytes == ds[i].bytes) << what << ": array " << hs[i].name;
    }
  EXPECT_EQ(builder.symmetric(), transpose(a) == a);
  // A symmetric matrix (tridiagonal) compares equal to its transpose on the device.
  Csr<float, std::int32_t> tri;
  tri.rows = tri.cols = 5;
  tri.row_ptr = {0};
  for (std::int32_t r = 0; r < 5; ++r) {
    for (std::int32_t c = std::max(0, r - 1); c <= std::min(4, r + 1); ++c) {
      tri.col_idx.push_back(c);
      tri.values.push_back(c == r ? 2.0f : -1.0f);
    }
    tri.row_ptr.push_back(static_cast<std::int32_t>(tri.col_idx.size()));
  }
  EXPECT_TRUE((CandidateBuilder<float, std::int32_t>(tri, Backend::cuda).symmetric()));
  tri.values[1] = -3.0f;  // (0,1) no longer equals (1,0)
  EXPECT_FALSE((CandidateBuilder<float, std::int32_t>(tri, Backend::cuda).symmetric()));
  // Without a device builder: the host path.
  EXPECT_FALSE(builder.on_device("gcsb"));
  EXPECT_TRUE(builder.build("gcsb", false) != nullptr);
  // csr with 64-bit indices narrows its column indices: it uploads its own arrays.
  const auto a64 = convert<float, std::int64_t>(a);
  EXPECT_FALSE((CandidateBuilder<float, std::int64_t>(a64, Backend::cuda).on_device("csr")));
}

#endif  // SPMAT_WITH_CUDA

}  // namespace
}  // namespace spmat
