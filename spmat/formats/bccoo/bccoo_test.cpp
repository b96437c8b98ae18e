// spmat/formats/bccoo/bccoo_test.cpp — bccoo / bccoo-gpu / bcoo: exact encoded bytes, bit-exact
// encoder/decoder round trip on a real-matrix collection, CPU (and GPU) kernels vs the fp64
// reference.
// SPDX-License-Identifier: MIT
//
// The round trip reads $SPMAT_BCCOO_ROUNDTRIP_DIR, else $SPMAT_MATRIX_DIR/small, else data/small
// (skipped when absent). On a folder of large matrices it takes minutes:
//   SPMAT_BCCOO_ROUNDTRIP_DIR=data ./build/cpu/tests/spmat_tests \
//     --gtest_filter='Bccoo.RoundTripsBitExactOnEverySharedMatrix'
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/bccoo/bccoo.hpp"
#include "spmat/formats/bcoo/bcoo.hpp"
#include "spmat/io/load.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/device_ops.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/device_csr.hpp"
#endif

namespace spmat {
namespace {

using testing::example;
using testing::fresh_seed;

FormatOptions chunk(std::int64_t b) { return FormatOptions().set("chunk", std::to_string(b)); }

template <class Value, class Index>
bool bit_equal(const Csr<Value, Index>& a, const Csr<Value, Index>& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col_idx == b.col_idx &&
         a.values.size() == b.values.size() &&
         (a.values.empty() ||
          std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(Value)) == 0);
}

TEST(Bccoo, WorkedExampleHasTheDocumentedBytes) {
  const auto s = Bccoo<double, std::int32_t>::build(example<double, std::int32_t>(), chunk(4));
  ASSERT_EQ(s.lut.size(), 256u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(s.lut[i], i + 1.0);  // all counts 1: by bit pattern
  for (int i = 6; i < 256; ++i) EXPECT_EQ(s.lut[i], 0.0);
  EXPECT_EQ(s.row, (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(s.offset, (std::vector<std::int64_t>{0, 14, 20}));
  // Chunk 0: (0,0) Δ0 · (0,2) Δ2 · end row 0 · end row 1 (empty) · (2,0) absolute (Δ < 0) ·
  // (2,1) Δ1.  Chunk 1: c restarts at 0: (2,3) Δ3 · end row 2 · (3,3) Δ0 · end row 3.
  const std::vector<std::uint8_t> want{0x80, 0, 0x82, 1, 0xFF, 0xFF, 0xFE, 0, 0, 0, 0, 2, 0x81, 3,
                                       0x83, 4, 0xFF, 0x80, 5, 0xFF};
  EXPECT_EQ(s.data, want);
  EXPECT_EQ(s.storage_bytes(), 2048u + 2 * 4 + 3 * 8 + 20);
  EXPECT_TRUE(bit_equal(s.to_csr(), example<double, std::int32_t>()));
}

TEST(Bccoo, SixteenBitDeltaAndAbsoluteColumnsAreLittleEndian) {
  Csr<double, std::int64_t> a;
  a.rows = 1;
  a.cols = 70000;
  a.row_ptr = {0, 3};
  a.col_idx = {5, 130, 69999};  // Δ 5 (inline), Δ 125 (> 0x7C: uint16), Δ 69869 (> 0xFFFF)
  a.values = {0.5, 0.5, 0.5};
  const auto s = Bccoo<double, std::int64_t>::build(a, {});
  const std::vector<std::uint8_t> want{0x85, 0, 0xFD, 125, 0, 0, 0xFE, 0x6F, 0x11, 0x01, 0, 0, 0xFF};
  EXPECT_EQ(s.data, want);
  EXPECT_TRUE(bit_equal(s.to_csr(), a));
}

TEST(Bccoo, ValuesOutsideTheTableAreStoredRaw) {
  Csr<float, std::int32_t> a;  // 300 distinct values, each once: 1..256 get the table
  a.rows = 1;
  a.cols = 300;
  a.row_ptr = {0, 300};
  for (int j = 0; j < 300; ++j) a.col_idx.push_back(j), a.values.push_back(static_cast<float>(j + 1));
  const auto s = Bccoo<float, std::int32_t>::build(a, {});
  EXPECT_EQ(s.lut[255], 256.0f);
  ASSERT_EQ(s.data.size(), 256u * 2 + 44u * 5 + 1);  // LUT entries 2 B, raw fp32 entries 5 B
  EXPECT_EQ(s.data[0], 0x80);
  EXPECT_EQ(s.data[2], 0x81);
  EXPECT_EQ(s.data[3], 1);
  EXPECT_EQ(s.data[512], 0x01);  // Δ1, bit 7 clear: raw value follows
  EXPECT_EQ(bccoo::load<float>(s.data.data() + 513), 257.0f);
  EXPECT_EQ(s.data.back(), 0xFF);
  EXPECT_TRUE(bit_equal(s.to_csr(), a));
}

TEST(Bccoo, TableIsOrderedByCountThenBitPattern) {
  const auto t = bccoo::build_lut<double>({5, 3, 3, 7, 7, 7, -0.0, 0.0});
  EXPECT_EQ(t.lut[0], 7.0);
  EXPECT_EQ(t.lut[1], 3.0);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(t.lut[2]), 0u);  // +0 (pattern 0) before 5 before -0
  EXPECT_EQ(t.lut[3], 5.0);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(t.lut[4]), 0x8000000000000000ull);
  EXPECT_EQ(t.find(-0.0), 4);
  EXPECT_EQ(t.find(0.0), 2);
  EXPECT_EQ(t.find(1.0), -1);
}

TEST(BccooGpu, WorkedExampleHasTheDocumentedLayout) {
  const auto s = BccooGpu<double, std::int32_t>::build(example<double, std::int32_t>(), chunk(4));
  EXPECT_EQ(s.row, (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(s.column, (std::vector<std::int32_t>{0, 3}));
  EXPECT_EQ(s.format, (std::vector<std::uint8_t>{1, 1}));  // LUT, w_c = w_r = 1
  EXPECT_EQ(s.offset, (std::vector<std::int64_t>{0, 24, 48}));
  const std::vector<std::uint8_t> want{
      0, 0, 2, 2, 0, 0, 0, 0, /* rowoff */ 0, 2, 0, 1, 0, 0, 0, 0, /* coloff */
      0, 1, 2, 3, 0, 0, 0, 0, /* LUT idx */ 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      4, 5, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(s.data, want);
  EXPECT_EQ(s.storage_bytes(), 2048u + 2 * (2 * 4 + 1) + 3 * 8 + 48);
  EXPECT_TRUE(bit_equal(s.to_csr(), example<double, std::int32_t>()));
}

TEST(BccooGpu, WideOffsetsAndRawValuesPickWiderFields) {
  Csr<double, std::int64_t> a;  // rows 0 and 300 (w_r = 2), columns 1 and 100001 (w_c = 4)
  a.rows = 301;
  a.cols = 100002;
  a.row_ptr.assign(302, 1);
  a.row_ptr[0] = 0;
  a.row_ptr[301] = 2;
  a.col_idx = {100001, 1};
  a.values = {2.5, -1.0};
  auto s = BccooGpu<double, std::int64_t>::build(a, {});
  EXPECT_EQ(s.format[0], 1 | 2 << 1 | 1 << 3);
  EXPECT_EQ(s.column[0], 1);
  EXPECT_TRUE(bit_equal(s.to_csr(), a));
}

/// Spec §2 invariants of the CPU stream: no chunk starts with a marker; #markers = rows from the
/// first to the last non-empty row; all markers canonical (0xFF).
template <class Value, class Index>
void expect_stream_invariants(const Bccoo<Value, Index>& s, const Csr<Value, Index>& a,
                              const std::string& name) {
  std::int64_t markers = 0;
  for (std::int64_t h = 0; h < s.chunks(); ++h) {
    EXPECT_NE(s.data[s.offset[h]] & 0x7F, 0x7F) << name << ": chunk " << h << " starts with a marker";
    std::int64_t k = s.offset[h];
    while (k < s.offset[h + 1]) {
      const std::uint8_t t = s.data[k++];
      if ((t & 0x7F) == 0x7F) {
        EXPECT_EQ(t, 0xFF) << name;
        ++markers;
        continue;
      }
      k += (t & 0x7F) == 0x7E ? 4 : (t & 0x7F) == 0x7D ? 2 : 0;
      k += (t & 0x80) ? 1 : sizeof(Value);
    }
  }
  std::int64_t first = -1, last = -1;
  for (std::int64_t r = 0; r < a.rows; ++r)
    if (a.row_ptr[r + 1] > a.row_ptr[r]) last = r, first = first < 0 ? r : first;
  EXPECT_EQ(markers, first < 0 ? 0 : last - first + 1) << name;
}

TEST(Bccoo, RoundTripsBitExactOnEverySharedMatrix) {
  const char* env = std::getenv("SPMAT_BCCOO_ROUNDTRIP_DIR");
  const char* mdir = std::getenv("SPMAT_MATRIX_DIR");
  const std::string collection = mdir && *mdir ? mdir : SPMAT_DEFAULT_MATRIX_DIR;
  const std::string dir = env && *env ? std::string(env) : collection + "/small";
  if (!std::filesystem::is_directory(dir))
    GTEST_SKIP() << "matrix directory " << dir
                 << " not found (set SPMAT_MATRIX_DIR or SPMAT_BCCOO_ROUNDTRIP_DIR to run this test)";
  int n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    const std::string path = f.path().string();
    if (!path.ends_with(".mtx.gz") && !path.ends_with(".mtx")) continue;
    SCOPED_TRACE(path);
    Csr<double, std::int32_t> a;
    try {
      a = io::load_matrix<double, std::int32_t>(path);
    } catch (const Error& e) {  // complex matrices: spmat reads real/integer/pattern only
      std::cout << "[  NOTE    ] not loadable, skipped: " << e.what() << "\n";
      continue;
    }
    const auto s = Bccoo<double, std::int32_t>::build(a, {});
    EXPECT_TRUE(bit_equal(s.to_csr(), a)) << "bccoo round trip";
    EXPECT_EQ((Bccoo<double, std::int32_t>::build(s.to_csr(), {}).data), s.data) << "re-encoding";
    expect_stream_invariants(s, a, path);
    const auto g = BccooGpu<double, std::int32_t>::build(a, {});
    EXPECT_TRUE(bit_equal(g.to_csr(), a)) << "bccoo-gpu round trip";
    // fp32 / int64 with a chunk size off every power of two.
    const auto a32 = convert<float, std::int64_t>(a);
    EXPECT_TRUE(bit_equal(Bccoo<float, std::int64_t>::build(a32, chunk(37)).to_csr(), a32));
    EXPECT_TRUE(bit_equal(BccooGpu<float, std::int64_t>::build(a32, chunk(37)).to_csr(), a32));
    ++n;
  }
  EXPECT_GT(n, 0) << "no .mtx/.mtx.gz files in " << dir;
}

// ---- kernels against the reference ------------------------------------------------------------

/// rows×cols with leading/trailing empty rows, every 5th row empty, one long row (3000 entries),
/// values half from a small repeated set (LUT hits) and half random (raw), some explicit zeros.
template <class Value, class Index>
Csr<Value, Index> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Coo<Value, Index> c;
  c.rows = static_cast<Index>(rows);
  c.cols = static_cast<Index>(cols);
  std::uniform_int_distribution<std::int64_t> col(0, cols - 1);
  std::uniform_int_distribution<int> len(1, 12), pick(0, 9);
  std::uniform_real_distribution<double> real(-1, 1);
  auto value = [&] { const int p = pick(rng); return p < 5 ? Value(p - 2) * Value(0.5) : Value(real(rng)); };
  for (std::int64_t r = 3; r < rows - 4; ++r) {
    if (r % 5 == 0) continue;
    const int n = r == rows / 2 ? 3000 : len(rng);
    for (int k = 0; k < n; ++k) {
      c.row_idx.push_back(static_cast<Index>(r));
      c.col_idx.push_back(static_cast<Index>(col(rng)));
      c.values.push_back(value());
    }
  }
  return to_csr(c);
}

template <class Fmt, class Value, class Index>
void check_cpu_kernels(std::int64_t b) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", chunk " + std::to_string(b));
  const auto a = random_matrix<Value, Index>(1237, 1111, seed);
  const Fmt s = Fmt::build(a, chunk(b));
  ASSERT_TRUE(bit_equal(s.to_csr(), a));
  const double tol = testing::tolerance<Value>();
  for (Op op : {Op::spmv, Op::spmv_t}) {
    SCOPED_TRACE(std::string(to_string(op)));
    const std::int64_t n_in = op == Op::spmv ? a.cols : a.rows, n_out = op == Op::spmv ? a.rows : a.cols;
    const auto x = testing::random_vector<Value>(n_in, seed + 1);
    const auto y0 = testing::random_vector<Value>(n_out, seed + 2);
    auto run = [&](std::vector<Value>& y, Value al, Value be) {
      if (op == Op::spmv) spmv(s, x.data(), y.data(), al, be);
      else spmv_t(s, x.data(), y.data(), al, be);
    };
    auto ref = [&](double al, double be) {
      return op == Op::spmv ? reference::spmv<Value, Index, Value, Value>(a, x, al, be, y0)
                            : reference::spmv_t<Value, Index, Value, Value>(a, x, al, be, y0);
    };
    std::vector<Value> first;
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      auto y = testing::poisoned<Value>(n_out);
      run(y, Value(1.25), Value(0));
      EXPECT_LE(reference::relative_norm2_error<Value>(y, ref(1.25, 0)), tol) << threads << " threads, beta 0";
      if (op == Op::spmv) {  // spmv does not depend on the thread count
        if (first.empty()) first = y;
        else EXPECT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(Value)), 0) << threads;
      }
      auto y2 = y0;
      run(y2, Value(0.5), Value(-2));
      EXPECT_LE(reference::relative_norm2_error<Value>(y2, ref(0.5, -2)), tol) << threads << " threads";
    }
    omp_set_num_threads(omp_get_num_procs());
  }
}

template <class Value, class Index>
void check_all_cpu() {
  for (std::int64_t b : {1024, 1, 33}) {
    check_cpu_kernels<Bcoo<Value, Index>, Value, Index>(b);
    check_cpu_kernels<Bccoo<Value, Index>, Value, Index>(b);
    check_cpu_kernels<BccooGpu<Value, Index>, Value, Index>(b);
  }
}

TEST(BccooCpu, KernelsMatchReferenceFp64Int32) { check_all_cpu<double, std::int32_t>(); }
TEST(BccooCpu, KernelsMatchReferenceFp64Int64) { check_all_cpu<double, std::int64_t>(); }
TEST(BccooCpu, KernelsMatchReferenceFp32Int32) { check_all_cpu<float, std::int32_t>(); }
TEST(BccooCpu, KernelsMatchReferenceFp32Int64) { check_all_cpu<float, std::int64_t>(); }

TEST(BccooCpu, ChunkOptionIsValidated) {
  EXPECT_THROW(((void)Bccoo<double, std::int32_t>::build(example<double, std::int32_t>(), chunk(0))),
               ParseError);
  EXPECT_THROW(((void)Bcoo<double, std::int32_t>::build(example<double, std::int32_t>(), chunk(-3))),
               ParseError);
}

// ---- GPU --------------------------------------------------------------------------------------

/// Values only from {4, −1, 0.5, −0.25} (every chunk uses the value table), every 7th row empty,
/// leading/trailing empty rows, one 5000-entry row (spans several chunks of 1024).
template <class Value, class Index>
Csr<Value, Index> table_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Coo<Value, Index> c;
  c.rows = static_cast<Index>(rows);
  c.cols = static_cast<Index>(cols);
  std::uniform_int_distribution<std::int64_t> col(0, cols - 1);
  std::uniform_int_distribution<int> len(1, 9), pick(0, 3);
  const Value set[4] = {Value(4), Value(-1), Value(0.5), Value(-0.25)};
  for (std::int64_t r = 2; r < rows - 3; ++r) {
    if (r % 7 == 0) continue;
    const int n = r == rows / 3 ? 5000 : len(rng);
    for (int k = 0; k < n; ++k) {
      c.row_idx.push_back(static_cast<Index>(r));
      c.col_idx.push_back(static_cast<Index>(col(rng)));
      c.values.push_back(set[pick(rng)]);
    }
  }
  return to_csr(c);
}

/// One entry every `step` rows (random columns over `cols`, random values), plus a gap of 70000
/// empty rows: chunks span thousands of rows (row offsets 2 and 4 bytes, column offsets 4 bytes).
template <class Value, class Index>
Csr<Value, Index> sparse_rows_matrix(std::int64_t step, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Coo<Value, Index> c;
  c.rows = 200000;
  c.cols = 100000;
  std::uniform_int_distribution<std::int64_t> col(0, c.cols - 1);
  std::uniform_real_distribution<double> real(-1, 1);
  for (std::int64_t r = 1; r < c.rows; r += step) {
    if (r > 60000 && r < 130000) continue;
    c.row_idx.push_back(static_cast<Index>(r));
    c.col_idx.push_back(static_cast<Index>(col(rng)));
    c.values.push_back(static_cast<Value>(real(rng)));
  }
  return to_csr(c);
}

/// Power-law shape: runs of up to 300 empty rows, rows of 1–2 entries, and a few very
/// long rows (1500, 4000 and 9001 entries: with chunk 8 the longest spans > 1,000 chunks, so the
/// fix-up's warp-parallel carry walk takes several 128-chunk steps), columns over 100,000 (4-byte
/// column offsets: kernel=auto picks block), random values.
template <class Value, class Index>
Csr<Value, Index> powerlaw_like_matrix(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Coo<Value, Index> c;
  c.rows = 40000;
  c.cols = 100000;
  std::uniform_int_distribution<std::int64_t> col(0, c.cols - 1);
  std::uniform_int_distribution<int> len(0, 2), gap(0, 99);
  std::uniform_real_distribution<double> real(-1, 1);
  std::vector<std::int64_t> cols;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    if (gap(rng) == 0) r += 300;  // a run of 300 empty rows
    if (r >= c.rows) break;
    const std::int64_t n = r == 1000 ? 1500 : r == 20011 ? 4000 : r == 30333 ? 9001 : len(rng);
    cols.clear();
    for (std::int64_t k = 0; k < n; ++k) cols.push_back(col(rng));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (std::int64_t q : cols) {
      c.row_idx.push_back(static_cast<Index>(r));
      c.col_idx.push_back(static_cast<Index>(q));
      c.values.push_back(static_cast<Value>(real(rng)));
    }
  }
  return to_csr(c);
}

/// spmv and spmv_t of bccoo-gpu on the GPU against the reference, with NaN-poisoned output
/// (beta = 0) and with beta != 0; the stream kernel must also be bitwise deterministic.
template <class Value, class Index>
void check_gpu_on(const Csr<Value, Index>& a, std::uint64_t seed, std::int64_t b,
                  const std::string& kernel, std::int64_t blocks = 0) {
  SCOPED_TRACE("chunk " + std::to_string(b) + ", kernel " + kernel + ", blocks " +
               std::to_string(blocks));
  const auto opts = chunk(b).set("kernel", kernel).set("blocks", std::to_string(blocks));
  const auto m = Matrix<Value>::build(a, "bccoo-gpu", Backend::cuda, opts);
  for (Op op : {Op::spmv, Op::spmv_t}) {
    SCOPED_TRACE(std::string(to_string(op)));
    const std::int64_t n_in = op == Op::spmv ? a.cols : a.rows, n_out = op == Op::spmv ? a.rows : a.cols;
    const auto x = testing::random_vector<Value>(n_in, seed + 1);
    const auto y0 = testing::random_vector<Value>(n_out, seed + 2);
    const double tol = testing::tolerance<Value>() * 2;  // atomics reorder sums (rows ≤ 5000)
    const auto y1 = testing::apply_spmv(m, op, x);  // NaN-poisoned, beta = 0
    const auto w1 = op == Op::spmv ? reference::spmv<Value, Index, Value, Value>(a, x)
                                   : reference::spmv_t<Value, Index, Value, Value>(a, x);
    EXPECT_LE(reference::relative_norm2_error<Value>(y1, w1), tol) << "beta 0";
    const auto y2 = testing::apply_spmv(m, op, x, &y0, Value(0.5), Value(-2));
    const auto w2 = op == Op::spmv ? reference::spmv<Value, Index, Value, Value>(a, x, 0.5, -2, y0)
                                   : reference::spmv_t<Value, Index, Value, Value>(a, x, 0.5, -2, y0);
    EXPECT_LE(reference::relative_norm2_error<Value>(y2, w2), tol) << "beta -2";
    if (op == Op::spmv && kernel != "atomic" && b <= bccoo::kStreamMaxChunk) {
      const auto y3 = testing::apply_spmv(m, op, x);
      EXPECT_EQ(std::memcmp(y1.data(), y3.data(), y1.size() * sizeof(Value)), 0)
          << kernel << " spmv is not bitwise deterministic";
    }
  }
}

/// The persistent stream kernel (any grid) and the one-block-per-chunk kernel run the same
/// per-chunk code and the same fix-up: their results must be bitwise equal.
template <class Value, class Index>
void check_stream_equals_block(const Csr<Value, Index>& a, std::uint64_t seed, std::int64_t b) {
  SCOPED_TRACE("stream == block, chunk " + std::to_string(b));
  const auto x = testing::random_vector<Value>(a.cols, seed + 3);
  const auto y0 = testing::random_vector<Value>(a.rows, seed + 4);
  const auto ref = testing::apply_spmv(
      Matrix<Value>::build(a, "bccoo-gpu", Backend::cuda, chunk(b).set("kernel", "block")),
      Op::spmv, x, &y0, Value(1.5), Value(0.25));
  for (std::int64_t blocks : {0, 1, 3})
    for (int prefetch : {0, 1, 2}) {
      const auto m = Matrix<Value>::build(a, "bccoo-gpu", Backend::cuda,
                                          chunk(b)
                                              .set("kernel", "stream")
                                              .set("blocks", std::to_string(blocks))
                                              .set("prefetch", std::to_string(prefetch)));
      const auto y = testing::apply_spmv(m, Op::spmv, x, &y0, Value(1.5), Value(0.25));
      ASSERT_EQ(y.size(), ref.size());
      EXPECT_EQ(std::memcmp(y.data(), ref.data(), y.size() * sizeof(Value)), 0)
          << "blocks " << blocks << ", prefetch " << prefetch
          << ": stream and block kernels differ bitwise";
    }
}

template <class Value, class Index>
void check_gpu() {
  SPMAT_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  {  // mixed values: chunks mostly raw; chunk sizes across the stream kernel's block shapes
    SCOPED_TRACE("random_matrix");
    const auto a = random_matrix<Value, Index>(5003, 4099, seed);
    for (std::int64_t b : {1024, 100, 1, 33, 4096})
      for (const char* k : {"stream", "block", "atomic"}) check_gpu_on(a, seed, b, k);
    check_gpu_on(a, seed, 5000, "stream");  // > kStreamMaxChunk: falls back to atomic
    // Persistent kernel with few blocks: many chunks per block (header prefetch, L2 prefetch,
    // alternating scan buffers), grids that do and do not divide the chunk count.
    for (std::int64_t blocks : {1, 2, 7})
      for (std::int64_t b : {1024, 100, 8}) check_gpu_on(a, seed, b, "stream", blocks);
    for (std::int64_t b : {1024, 64, 1}) check_stream_equals_block(a, seed, b);
  }
  {  // every chunk uses the value table
    SCOPED_TRACE("table_matrix");
    const auto a = table_matrix<Value, Index>(20011, 30000, seed);
    const auto host = BccooGpu<Value, Index>::build(a, {});
    for (std::uint8_t f : host.format) ASSERT_EQ(f & 1, 1) << "every chunk should use the table";
    for (std::int64_t b : {1024, 256, 37, 2048})
      for (const char* k : {"stream", "block", "atomic"}) check_gpu_on(a, seed, b, k);
    for (std::int64_t b : {1024, 37}) check_gpu_on(a, seed, b, "stream", 3);  // table once/block
    check_stream_equals_block(a, seed, 256);
  }
  for (int per_row : {8, 16, 4}) {  // rows ending exactly at thread (8-entry) boundaries
    SCOPED_TRACE("rows of " + std::to_string(per_row));
    Coo<Value, Index> c;
    c.rows = 3001;
    c.cols = 3001;
    for (std::int64_t r = 0; r < c.rows; ++r)
      for (int k = 0; k < per_row && r % 11 != 5; ++k) {  // every 11th row empty
        c.row_idx.push_back(static_cast<Index>(r));
        c.col_idx.push_back(static_cast<Index>((r * 7 + k * 13) % c.cols));
        c.values.push_back(Value(k % 3 + 1));
      }
    const auto a = to_csr(c);
    for (std::int64_t b : {1024, 64, 8, 24})
      for (const char* k : {"stream", "block", "atomic"}) check_gpu_on(a, seed, b, k);
  }
  {  // power-law shape: empty-row runs, very long rows spanning up to > 1,000 chunks
    SCOPED_TRACE("powerlaw_like_matrix");
    const auto a = powerlaw_like_matrix<Value, Index>(seed);
    ASSERT_EQ((BccooGpu<Value, Index>::build(a, {}).kernel), BccooGpuKernel::block)
        << "4-byte column offsets: kernel=auto should pick block";
    for (std::int64_t b : {1024, 8, 1, 33})
      for (const char* k : {"auto", "stream", "block", "atomic"}) check_gpu_on(a, seed, b, k);
    for (std::int64_t b : {8, 100}) check_gpu_on(a, seed, b, "stream", 3);
    for (std::int64_t b : {1024, 8, 1}) check_stream_equals_block(a, seed, b);
  }
  {  // chunks spanning thousands of rows (wide row offsets), wide column offsets
    SCOPED_TRACE("sparse_rows_matrix");
    const auto a = sparse_rows_matrix<Value, Index>(13, seed);
    const auto host = BccooGpu<Value, Index>::build(a, {});
    int max_wr = 0;
    for (std::uint8_t f : host.format) max_wr = std::max(max_wr, (f >> 3) & 3);
    ASSERT_EQ(max_wr, 2) << "the 70000-row gap should need 4-byte row offsets";
    for (std::int64_t b : {1024, 8})
      for (const char* k : {"stream", "block", "atomic"}) check_gpu_on(a, seed, b, k);
    check_gpu_on(a, seed, 8, "stream", 5);  // gaps of empty rows between a block's chunks
  }
}

TEST(BccooGpuCuda, KernelsMatchReferenceFp64Int32) { check_gpu<double, std::int32_t>(); }
TEST(BccooGpuCuda, KernelsMatchReferenceFp64Int64) { check_gpu<double, std::int64_t>(); }
TEST(BccooGpuCuda, KernelsMatchReferenceFp32Int32) { check_gpu<float, std::int32_t>(); }
TEST(BccooGpuCuda, KernelsMatchReferenceFp32Int64) { check_gpu<float, std::int64_t>(); }

#if SPMAT_WITH_CUDA

/// 300 distinct values with counts 1..3 (equal counts across the 256-entry cut: the tie rule
/// decides which are in the table), +0 and −0 (distinct bit patterns), a long row.
template <class Value, class Index>
Csr<Value, Index> ties_matrix(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Coo<Value, Index> c;
  c.rows = 700;
  c.cols = 900;
  std::vector<Value> pool;
  for (int k = 0; k < 300; ++k)
    for (int n = 0; n < 1 + k % 3; ++n) pool.push_back(Value(k - 150) * Value(0.125));
  pool.push_back(Value(0));
  pool.push_back(-Value(0));
  std::shuffle(pool.begin(), pool.end(), rng);
  std::size_t next = 0;
  for (std::int64_t r = 0; r < c.rows && next < pool.size(); ++r) {
    const std::int64_t n = r == 300 ? 400 : r % 4 == 1 ? 0 : 1;
    for (std::int64_t k = 0; k < n && next < pool.size(); ++k) {
      c.row_idx.push_back(static_cast<Index>(r));
      c.col_idx.push_back(static_cast<Index>((k * 2 + r) % c.cols));
      c.values.push_back(pool[next++]);
    }
  }
  return to_csr(c);
}

/// bccoo-gpu built from a device CSR holds the arrays and kernel plan of the host build + upload
/// byte for byte, the same device bytes, the same CSR, the same (deterministic) products, and
/// refuses update_values naming the format.
template <class Value, class Index>
void expect_device_build_equals_host(const Csr<Value, Index>& a, const FormatOptions& o) {
  const auto host = Matrix<Value>::build(a, "bccoo-gpu", Backend::cuda, o);
  auto dev = Matrix<Value>::build(cuda::upload_csr(a), "bccoo-gpu", o);
  const auto hs = detail::impl_of(host).stored_arrays();
  const auto ds = detail::impl_of(dev).stored_arrays();
  ASSERT_EQ(hs.size(), ds.size());
  for (std::size_t i = 0; i < hs.size(); ++i) {
    EXPECT_EQ(hs[i].name, ds[i].name);
    EXPECT_TRUE(hs[i].bytes == ds[i].bytes) << "array " << hs[i].name << " differs";
  }
  EXPECT_EQ(host.storage_bytes(), dev.storage_bytes());
  EXPECT_EQ(host.traffic_bytes(Op::spmv), dev.traffic_bytes(Op::spmv));
  EXPECT_TRUE(bit_equal(dev.to_csr(), convert<Value, std::int64_t>(a)));
  const auto x = testing::random_vector<Value>(a.cols, 17);
  const auto yh = testing::apply_spmv(host, Op::spmv, x), yd = testing::apply_spmv(dev, Op::spmv, x);
  ASSERT_EQ(yh.size(), yd.size());
  const auto opts = parse_options<BccooGpuOptions>(o);
  if (opts.chunk <= bccoo::kStreamMaxChunk && opts.kernel != BccooGpuKernel::atomic) {
    EXPECT_EQ(std::memcmp(yh.data(), yd.data(), yh.size() * sizeof(Value)), 0);  // deterministic
  }
  try {
    dev.update_values(std::span<const Value>(a.values), Memory::host);
    ADD_FAILURE() << "update_values accepted";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("'bccoo-gpu'"), std::string::npos) << e.what();
  }
}

template <class Value, class Index>
void check_device_build() {
  SPMAT_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Csr<Value, Index> empty;
  empty.rows = 33;
  empty.cols = 65;
  empty.row_ptr.assign(34, 0);
  auto distinct = random_matrix<Value, Index>(3001, 2003, seed + 1);  // every value once: counts all 1
  for (std::size_t k = 0; k < distinct.values.size(); ++k)
    distinct.values[k] = Value(static_cast<double>(k % 2 ? -1 : 1) * (1.0 + 0.25 * static_cast<double>(k)));
  const std::vector<std::pair<std::string, Csr<Value, Index>>> matrices = {
      {"example", example<Value, Index>()},
      {"empty", empty},
      {"distinct_values", distinct},
      {"random_matrix", random_matrix<Value, Index>(5003, 4099, seed)},
      {"table_matrix", table_matrix<Value, Index>(20011, 30000, seed)},
      {"powerlaw_like_matrix", powerlaw_like_matrix<Value, Index>(seed)},
      {"sparse_rows_matrix", sparse_rows_matrix<Value, Index>(13, seed)},
      {"ties_matrix", ties_matrix<Value, Index>(seed)}};
  const std::vector<FormatOptions> options = {
      {},
      chunk(1),
      chunk(7),
      chunk(100),
      chunk(4096),
      chunk(5000),  // > kStreamMaxChunk: atomic
      chunk(std::int64_t{1} << 40),
      FormatOptions().set("kernel", "stream"),
      FormatOptions().set("kernel", "block"),
      FormatOptions().set("kernel", "atomic"),
      FormatOptions().set("blocks", "3").set("prefetch", "2")};
  for (const auto& [name, a] : matrices)
    for (const auto& o : options) {
      SCOPED_TRACE(name + " " + o.to_string());
      expect_device_build_equals_host(a, o);
    }
}

TEST(BccooGpuCuda, DeviceBuildEqualsHostBuildFp64Int32) { check_device_build<double, std::int32_t>(); }
TEST(BccooGpuCuda, DeviceBuildEqualsHostBuildFp64Int64) { check_device_build<double, std::int64_t>(); }
TEST(BccooGpuCuda, DeviceBuildEqualsHostBuildFp32Int32) { check_device_build<float, std::int32_t>(); }
TEST(BccooGpuCuda, DeviceBuildEqualsHostBuildFp32Int64) { check_device_build<float, std::int64_t>(); }

#endif  // SPMAT_WITH_CUDA

TEST(BccooGpu, KernelOptionIsValidated) {
  using G = BccooGpu<double, std::int32_t>;
  const auto a = example<double, std::int32_t>();
  EXPECT_EQ(G::build(a, {}).kernel, BccooGpuKernel::stream);  // auto, narrow columns
  EXPECT_EQ(G::build(a, FormatOptions().set("kernel", "stream")).kernel, BccooGpuKernel::stream);
  EXPECT_EQ(G::build(a, FormatOptions().set("kernel", "auto")).kernel, BccooGpuKernel::stream);
  EXPECT_EQ(G::build(a, FormatOptions().set("kernel", "atomic")).kernel, BccooGpuKernel::atomic);
  EXPECT_THROW((void)G::build(a, FormatOptions().set("kernel", "fast")), ParseError);
  EXPECT_EQ(G::build(a, FormatOptions().set("kernel", "block")).kernel, BccooGpuKernel::block);
  EXPECT_EQ(G::build(a, {}).blocks, 0);
  EXPECT_EQ(G::build(a, FormatOptions().set("blocks", "5")).blocks, 5);
  EXPECT_THROW((void)G::build(a, FormatOptions().set("blocks", "-1")), ParseError);
  EXPECT_EQ(G::build(a, {}).prefetch, 1);
  EXPECT_THROW((void)G::build(a, FormatOptions().set("prefetch", "3")), ParseError);
  EXPECT_EQ(G::build(a, {}).lut_used, 6);
}

TEST(BccooGpu, AutoKernelPicksBlockForScatteredColumns) {
  using bccoo::auto_kernel;
  EXPECT_EQ(auto_kernel({}), BccooGpuKernel::stream);
  EXPECT_EQ(auto_kernel({0x04, 0x04, 0x02}), BccooGpuKernel::block);  // 2 of 3 with w_c = 4
  EXPECT_EQ(auto_kernel({0x07, 0x02}), BccooGpuKernel::stream);       // half is not more
  EXPECT_EQ(auto_kernel({0x06, 0x0C, 0x02}), BccooGpuKernel::block);  // w_c = 8 counts too
  EXPECT_EQ(auto_kernel({0x05, 0x05, 0x04}), BccooGpuKernel::stream);  // table chunks do not
  EXPECT_EQ(auto_kernel({0x0D, 0x0D}), BccooGpuKernel::stream);
  // Built matrices: a narrow band stays stream; uniform columns, random values → block.
  using G = BccooGpu<double, std::int32_t>;
  const auto wide = powerlaw_like_matrix<double, std::int32_t>(7);
  EXPECT_EQ(G::build(wide, {}).kernel, BccooGpuKernel::block);
  EXPECT_EQ(G::build(wide, FormatOptions().set("kernel", "stream")).kernel,
            BccooGpuKernel::stream);
  Coo<double, std::int32_t> band;
  band.rows = band.cols = 5000;
  for (std::int32_t r = 0; r < band.rows; ++r)
    for (std::int32_t q = std::max(0, r - 2); q <= std::min(band.cols - 1, r + 2); ++q) {
      band.row_idx.push_back(r);
      band.col_idx.push_back(q);
      band.values.push_back(1.0 + r % 5);
    }
  EXPECT_EQ(G::build(to_csr(band), {}).kernel, BccooGpuKernel::stream);
}

}  // namespace
}  // namespace spmat
