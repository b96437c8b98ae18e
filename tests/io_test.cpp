// tests/io_test.cpp — Matrix Market and binary-cache I/O: round trips, every field and symmetry,
// the malformed-input battery (tests/data/mtx/), and the real matrices of the shared collection.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/io/binary_cache.hpp"
#include "spmat/io/file_io.hpp"
#include "spmat/io/load.hpp"
#include "spmat/io/matrix_market.hpp"
#include "tests/support/temp_files.hpp"
#include "tests/support/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using spmat::Csr;
using spmat::io::read_matrix_market;

std::string temp_dir() {
  static const std::string dir = spmat::testing::make_temp_dir("spmat_io_test_");
  return dir;
}

std::string temp_path(const std::string& name) { return temp_dir() + "/" + name; }

std::string write_text(const std::string& name, const std::string& text) {
  return spmat::testing::write_file(temp_path(name), text);
}

using spmat::testing::read_file;

// A random matrix with empty rows, an explicit zero, negative and non-terminating values.
template <class Value, class Index>
Csr<Value, Index> random_matrix(Index rows, Index cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  spmat::Coo<Value, Index> c;
  c.rows = rows;
  c.cols = cols;
  std::uniform_int_distribution<std::int64_t> ri(0, rows - 1), ci(0, cols - 1);
  std::uniform_real_distribution<double> v(-1.0, 1.0);
  for (int k = 0; k < 3 * rows; ++k) {
    const auto r = static_cast<Index>(ri(rng));
    if (r % 5 == 3) continue;  // empty rows
    c.row_idx.push_back(r);
    c.col_idx.push_back(static_cast<Index>(ci(rng)));
    c.values.push_back(static_cast<Value>(v(rng) / 3.0));
  }
  c.row_idx.push_back(0);
  c.col_idx.push_back(0);
  c.values.push_back(Value(0));  // explicit zero (may sum with a duplicate; still stored)
  return spmat::to_csr(c);
}

template <class Pair>
class IoTyped : public ::testing::Test {};
TYPED_TEST_SUITE(IoTyped, spmat::testing::Pairs);

TYPED_TEST(IoTyped, WritingThenReadingMtxAndMtxGzGivesTheSameMatrixExactly) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  const auto seed = spmat::testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto a = random_matrix<V, I>(37, 23, seed);
  const std::string tag = std::string(spmat::precision_name<V>()) + "_" + std::string(spmat::index_name<I>());
  for (const std::string ext : {".mtx", ".mtx.gz"}) {
    const std::string path = temp_path("round_" + tag + ext);
    spmat::io::write_matrix_market(path, a);
    EXPECT_EQ(spmat::io::is_gzip_file(path), ext == ".mtx.gz");
    EXPECT_EQ((read_matrix_market<V, I>(path)), a) << path;
    EXPECT_EQ((spmat::io::load_matrix<V, I>(path)), a) << path;
  }
  // gzip is recognised by its magic bytes, whatever the name says.
  const std::string renamed = temp_path("gzip_named_plain_" + tag + ".mtx");
  fs::copy_file(temp_path("round_" + tag + ".mtx.gz"), renamed, fs::copy_options::overwrite_existing);
  EXPECT_EQ((read_matrix_market<V, I>(renamed)), a);
}

TYPED_TEST(IoTyped, WritingThenReadingTheBinaryCacheGivesTheSameMatrixExactly) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  const auto seed = spmat::testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto a = random_matrix<V, I>(41, 53, seed);
  const std::string path = temp_path("round_" + std::string(spmat::precision_name<V>()) +
                                     std::string(spmat::index_name<I>()) + ".smc");
  spmat::io::write_binary_cache(path, a);
  EXPECT_EQ((spmat::io::read_binary_cache<V, I>(path)), a);
  EXPECT_EQ((spmat::io::load_matrix<V, I>(path)), a);
  const auto info = spmat::io::read_binary_cache_info(path);
  EXPECT_EQ(info.version, 1u);
  EXPECT_EQ(info.value_bytes, int(sizeof(V)));
  EXPECT_EQ(info.index_bytes, int(sizeof(I)));
  EXPECT_EQ(info.nnz, a.nnz());
  EXPECT_EQ(fs::file_size(path), 64 + (a.row_ptr.size() + a.col_idx.size()) * sizeof(I) +
                                     a.values.size() * sizeof(V));
}

TYPED_TEST(IoTyped, EmptyAndZeroByZeroMatricesRoundTrip) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  Csr<V, I> zero;  // 0 x 0
  Csr<V, I> empty;
  empty.rows = 4;
  empty.cols = 7;
  empty.row_ptr.assign(5, 0);
  for (const auto* m : {&zero, &empty}) {
    for (const std::string name : {"empty.mtx", "empty.mtx.gz", "empty.smc"}) {
      const std::string path = temp_path(std::to_string(m->rows) + name);
      if (name == "empty.smc") spmat::io::write_binary_cache(path, *m);
      else spmat::io::write_matrix_market(path, *m);
      EXPECT_EQ((spmat::io::load_matrix<V, I>(path)), *m) << path;
    }
  }
}

TEST(Io, TheWriterPrintsGeneralCoordinateOneBasedWithRoundTripDigits) {
  Csr<double, std::int32_t> a;
  a.rows = 2;
  a.cols = 3;
  a.row_ptr = {0, 1, 2};
  a.col_idx = {2, 0};
  a.values = {0.1, -2.0};
  const std::string path = temp_path("format.mtx");
  spmat::io::write_matrix_market(path, a);
  const std::string text = read_file(path);
  EXPECT_EQ(text.rfind("%%MatrixMarket matrix coordinate real general\n", 0), 0u) << text;
  EXPECT_NE(text.find("\n2 3 2\n1 3 0.10000000000000001\n2 1 -2\n"), std::string::npos) << text;
  Csr<float, std::int32_t> f = spmat::convert<float, std::int32_t>(a);
  spmat::io::write_matrix_market(path, f);
  EXPECT_NE(read_file(path).find("\n1 3 0.100000001\n"), std::string::npos) << read_file(path);
  EXPECT_FALSE(fs::exists(path + ".part"));
}

TEST(Io, TheBinaryCacheConvertsToTheRequestedTypesAndChecksTheIndexRange) {
  const auto a = random_matrix<double, std::int64_t>(30, 30, 7);
  const std::string path = temp_path("convert.smc");
  spmat::io::write_binary_cache(path, a);
  EXPECT_EQ((spmat::io::read_binary_cache<float, std::int32_t>(path)),
            (spmat::convert<float, std::int32_t>(a)));
  spmat::ScopedInt32Limit limit(20);
  try {
    (void)spmat::io::read_binary_cache<double, std::int32_t>(path);
    FAIL() << "expected IndexOverflowError";
  } catch (const spmat::IndexOverflowError& e) {
    EXPECT_NE(std::string(e.what()).find("convert.smc"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos) << e.what();
  }
}

// Writes a damaged copy of a valid cache and expects a ParseError naming it and `keyword`.
void expect_bad_cache(const std::string& name, const std::string& bytes, const std::string& keyword) {
  const std::string path = write_text(name, bytes);
  try {
    (void)spmat::io::read_binary_cache<double, std::int32_t>(path);
    ADD_FAILURE() << name << ": expected a ParseError";
  } catch (const spmat::ParseError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
    EXPECT_NE(msg.find(keyword), std::string::npos) << name << ": " << msg;
  }
}

TEST(Io, ACorruptedBinaryCacheIsRefusedWithAMessageNamingTheProblem) {
  const auto a = random_matrix<double, std::int32_t>(20, 20, 11);
  const std::string good_path = temp_path("good.smc");
  spmat::io::write_binary_cache(good_path, a);
  const std::string good = read_file(good_path);
  std::string flipped = good;
  flipped[good.size() - 3] ^= 0x10;  // a bit of the last value
  expect_bad_cache("flipped.smc", flipped, "checksum");
  std::string bad_col = good;
  bad_col[64 + 21 * 4 + 1] ^= 0x01;  // a bit of col_idx[0]
  expect_bad_cache("bad_col.smc", bad_col, "checksum");
  expect_bad_cache("truncated.smc", good.substr(0, good.size() - 8), "truncated");
  expect_bad_cache("long.smc", good + "xx", "truncated or corrupt");
  expect_bad_cache("short.smc", good.substr(0, 30), "too short");
  expect_bad_cache("empty.smc", "", "too short");
  std::string magic = good;
  magic[0] = 'X';
  expect_bad_cache("magic.smc", magic, "magic");
  std::string version = good;
  version[8] = 9;
  expect_bad_cache("version.smc", version, "version");
  std::string code = good;
  code[16] = 7;
  expect_bad_cache("code.smc", code, "type codes");
}

// --- every field and symmetry, on tiny hand-written files --------------------------------------

Csr<double, std::int32_t> read_text(const std::string& name, const std::string& text) {
  return read_matrix_market<double, std::int32_t>(write_text(name, text));
}

Csr<double, std::int32_t> csr(std::int32_t rows, std::int32_t cols, std::vector<std::int32_t> ptr,
                              std::vector<std::int32_t> idx, std::vector<double> val) {
  Csr<double, std::int32_t> c;
  c.rows = rows;
  c.cols = cols;
  c.row_ptr = std::move(ptr);
  c.col_idx = std::move(idx);
  c.values = std::move(val);
  return c;
}

TEST(MatrixMarket, GeneralRealSumsDuplicatesAndKeepsExplicitZeros) {
  EXPECT_EQ(read_text("general.mtx",
                      "%%MatrixMarket matrix coordinate real general\n% comment\n3 4 5\n"
                      "3 4 1.5\n1 2 -2.5e-1\n1 2 1\n2 3 0\n3 1 +4.\n"),
            csr(3, 4, {0, 1, 2, 4}, {1, 2, 0, 3}, {0.75, 0.0, 4.0, 1.5}));
}

TEST(MatrixMarket, SymmetricLowerTriangleIsExpandedWithoutDuplicatingTheDiagonal) {
  const auto expect = csr(3, 3, {0, 2, 3, 4}, {0, 1, 0, 2}, {4, -1, -1, 2.5});
  EXPECT_EQ(read_text("sym.mtx",
                      "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4.0\n2 1 -1.0\n3 3 2.5\n"),
            expect);
  // An entry above the diagonal is accepted and mirrored the same way.
  EXPECT_EQ(read_text("sym_upper.mtx",
                      "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4.0\n1 2 -1.0\n3 3 2.5\n"),
            expect);
  EXPECT_EQ(read_text("herm.mtx",
                      "%%MatrixMarket matrix coordinate real hermitian\n3 3 3\n1 1 4.0\n2 1 -1.0\n3 3 2.5\n"),
            expect);
}

TEST(MatrixMarket, SkewSymmetricMirrorsNegated) {
  EXPECT_EQ(read_text("skew.mtx",
                      "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 3\n3 2 -5\n"),
            csr(3, 3, {0, 1, 3, 4}, {1, 0, 2, 1}, {-3, 3, 5, -5}));
}

TEST(MatrixMarket, PatternEntriesGetTheValueOne) {
  EXPECT_EQ(read_text("pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 2\n"),
            csr(2, 3, {0, 1, 2}, {2, 1}, {1, 1}));
  // Some SuiteSparse pattern files (Pajek/Ragusa16) carry a value column: refused by default,
  // ignored by lenient reading.
  const std::string with_values = write_text(
      "pattern_value.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3 7\n2 2 -1.5\n");
  EXPECT_THROW((read_matrix_market<double, std::int32_t>(with_values)), spmat::ParseError);
  spmat::io::ReadOptions lenient;
  lenient.lenient = true;
  EXPECT_EQ((read_matrix_market<double, std::int32_t>(with_values, lenient)),
            csr(2, 3, {0, 1, 2}, {2, 1}, {1, 1}));
  EXPECT_EQ(read_text("pattern_sym.mtx",
                      "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n"),
            csr(2, 2, {0, 2, 3}, {0, 1, 0}, {1, 1, 1}));
}

TEST(MatrixMarket, IntegerFieldReadsSignedIntegers) {
  EXPECT_EQ(read_text("int.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 -7\n2 2 +3\n1 2 0\n"),
            csr(2, 2, {0, 2, 3}, {0, 1, 1}, {-7, 0, 3}));
}

TEST(MatrixMarket, ArrayFormatIsColumnMajorAndDropsZeros) {
  EXPECT_EQ(read_text("array.mtx", "%%MatrixMarket matrix array real general\n2 3\n1\n0\n2\n3\n0\n4\n"),
            csr(2, 3, {0, 2, 4}, {0, 1, 1, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(read_text("array_sym.mtx", "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n"),
            csr(2, 2, {0, 2, 4}, {0, 1, 0, 1}, {1, 2, 2, 3}));
  EXPECT_EQ(read_text("array_skew.mtx", "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n"),
            csr(3, 3, {0, 2, 4, 6}, {1, 2, 0, 2, 0, 1}, {-1, -2, 1, -3, 2, 3}));
}

TEST(MatrixMarket, LenientLayoutIsAccepted) {
  // Case-insensitive banner, CRLF, tabs, blank and comment lines between entries, no final newline.
  EXPECT_EQ(read_text("layout.mtx",
                      "%%MatrixMarket MATRIX Coordinate REAL General\r\n%c\r\n\r\n  2\t2  2 \r\n"
                      "1 1 1.0\r\n\r\n% between\r\n2\t2\t2.0"),
            csr(2, 2, {0, 1, 2}, {0, 1}, {1, 2}));
}

TEST(MatrixMarket, NanInfAndOutOfRangeValuesAreRead) {
  // nan and inf as written, underflow to the nearest double; an overflowing value (1e400)
  // needs lenient reading (strict reading refuses it: see io_hostile_test.cpp).
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\n1 5 5\n1 1 nan\n1 2 -inf\n"
      "1 3 1e400\n1 4 1e-400\n1 5 4.9e-324\n";
  EXPECT_THROW((read_text("special.mtx", text)), spmat::ParseError);
  spmat::io::ReadOptions lenient;
  lenient.lenient = true;
  const auto a = spmat::io::read_matrix_market<double, std::int32_t>(write_text("special.mtx", text), lenient);
  ASSERT_EQ(a.nnz(), 5);
  EXPECT_TRUE(std::isnan(a.values[0]));
  EXPECT_EQ(a.values[1], -INFINITY);
  EXPECT_EQ(a.values[2], INFINITY);
  EXPECT_EQ(a.values[3], 0.0);
  EXPECT_EQ(a.values[4], 4.9e-324);
}

TEST(MatrixMarket, TheHeaderIsReadWithoutTheEntries) {
  const std::string path = write_text("header.mtx",
                                      "%%MatrixMarket matrix coordinate pattern symmetric\n%x\n5 5 3\n1 1\n");
  const auto h = spmat::io::read_matrix_market_header(path);
  EXPECT_EQ(h.format, spmat::io::MmFormat::coordinate);
  EXPECT_EQ(h.field, spmat::io::MmField::pattern);
  EXPECT_EQ(h.symmetry, spmat::io::MmSymmetry::symmetric);
  EXPECT_EQ(h.rows, 5);
  EXPECT_EQ(h.cols, 5);
  EXPECT_EQ(h.entries, 3);
  EXPECT_EQ(h.size_line, 3);
  const auto c = spmat::io::read_matrix_market_header(std::string(SPMAT_TEST_DATA_DIR) + "/mtx/complex.mtx");
  EXPECT_EQ(c.field, spmat::io::MmField::complex);
}

// --- the malformed-input battery ---------------------------------------------------------------

struct BadFile {
  const char* file;
  int line;  // 0: any line number
  const char* keyword;
};

const BadFile kBattery[] = {
    {"empty.mtx", 1, "empty"},
    {"bad_banner.mtx", 1, "banner"},
    {"no_banner.mtx", 1, "banner"},
    {"unknown_format.mtx", 1, "format"},
    {"unknown_field.mtx", 1, "field"},
    {"unknown_symmetry.mtx", 1, "symmetry"},
    {"banner_too_short.mtx", 1, "symmetry"},
    {"vector_object.mtx", 1, "not supported"},
    {"complex.mtx", 1, "complex matrices are not supported"},
    {"missing_size_line.mtx", 4, "size line"},
    {"negative_size.mtx", 2, "number of rows"},
    {"size_not_a_number.mtx", 2, "number of columns"},
    {"size_missing_entries.mtx", 2, "number of entries"},
    {"symmetric_not_square.mtx", 2, "square"},
    {"truncated.mtx", 6, "truncated"},
    {"too_many_entries.mtx", 5, "more entries than declared"},
    {"index_zero.mtx", 4, "1-based"},
    {"row_past_size.mtx", 4, "row index 4 is out of range"},
    {"col_past_size.mtx", 5, "column index 9 is out of range"},
    {"index_not_a_number.mtx", 3, "row index"},
    {"index_fraction.mtx", 3, "row index"},
    {"index_negative.mtx", 3, "column index"},
    {"index_too_many_digits.mtx", 3, "too large"},
    {"value_not_a_number.mtx", 4, "real number"},
    {"value_trailing_garbage.mtx", 3, "real number"},
    {"missing_value.mtx", 4, "missing value"},
    {"extra_token.mtx", 3, "end of line"},
    {"integer_with_fraction.mtx", 3, "integer value"},
    {"huge_entries.mtx", 2, "size line"},
    {"huge_dimensions.mtx", 2, "rows"},
    {"skew_diagonal.mtx", 3, "skew-symmetric"},
    {"array_pattern.mtx", 1, "pattern"},
    {"array_truncated.mtx", 6, "truncated"},
    {"array_too_many.mtx", 7, "more entries than declared"},
    {"array_two_per_line.mtx", 3, "one value per line"},
    {"array_huge.mtx", 2, "too large"},
    {"truncated.mtx.gz", 0, "truncated"},
    {"corrupt.mtx.gz", 0, "corrupt"},
};

template <class V, class I>
void run_battery() {
  for (const auto& b : kBattery) {
    const std::string path = std::string(SPMAT_TEST_DATA_DIR) + "/mtx/" + b.file;
    ASSERT_TRUE(fs::exists(path)) << path;
    try {
      (void)spmat::io::load_matrix<V, I>(path);
      ADD_FAILURE() << b.file << ": read without an error";
    } catch (const spmat::Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(b.file), std::string::npos) << "no file name: " << msg;
      if (b.line > 0)
        EXPECT_NE(msg.find(std::string(b.file) + ":" + std::to_string(b.line) + ":"), std::string::npos)
            << "no line " << b.line << ": " << msg;
      else
        EXPECT_TRUE(std::regex_search(msg, std::regex(std::string(b.file) + ":[0-9]+:")))
            << "no line number: " << msg;
      EXPECT_NE(msg.find(b.keyword), std::string::npos) << "no '" << b.keyword << "': " << msg;
    } catch (const std::exception& e) {
      ADD_FAILURE() << b.file << ": not a spmat::Error: " << e.what();
    }
  }
}

TEST(MatrixMarketBattery, EveryMalformedFileGivesAnErrorNamingFileLineAndExpectation) {
  run_battery<double, std::int32_t>();
  run_battery<float, std::int64_t>();
}

TEST(MatrixMarketBattery, AMatrixTooLargeForTheIndexTypeSaysSo) {
  const std::string path = write_text("limit.mtx",
                                      "%%MatrixMarket matrix coordinate real general\n4 4 2\n1 1 1\n4 4 1\n");
  spmat::ScopedInt32Limit limit(3);
  try {
    (void)read_matrix_market<double, std::int32_t>(path);
    FAIL() << "expected IndexOverflowError";
  } catch (const spmat::IndexOverflowError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("limit.mtx:2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
  }
  EXPECT_EQ((read_matrix_market<double, std::int64_t>(path).nnz()), 2);
  // nnz after symmetric expansion is checked too: 3 stored entries become 4.
  const std::string sym = write_text("limit_sym.mtx",
                                     "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 1 1\n3 3 1\n");
  EXPECT_THROW((read_matrix_market<double, std::int32_t>(sym)), spmat::IndexOverflowError);
}

TEST(Io, AMissingFileSaysSoWithItsName) {
  const std::string path = temp_path("does_not_exist.mtx");
  for (int kind = 0; kind < 3; ++kind) {
    try {
      if (kind == 0) (void)spmat::io::load_matrix<double, std::int32_t>(path);
      if (kind == 1) (void)spmat::io::load_matrix<double, std::int32_t>(path + ".smc");
      if (kind == 2) (void)spmat::io::read_matrix_market_header(path);
      ADD_FAILURE() << "expected an error";
    } catch (const spmat::ParseError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot open '" + path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
    }
  }
}

TEST(Io, MatrixNamesAreFileStemsOrGeneratorSpecs) {
  EXPECT_EQ(spmat::io::matrix_name("data/matrices/G3_circuit.mtx.gz"), "G3_circuit");
  EXPECT_EQ(spmat::io::matrix_name("a/b.mtx"), "b");
  EXPECT_EQ(spmat::io::matrix_name("cache/x.y.smc"), "x.y");
  EXPECT_EQ(spmat::io::matrix_name("plain"), "plain");
  EXPECT_EQ(spmat::io::matrix_name("gen:lap2d:100"), "gen:lap2d:100");
}

// --- the parallel reader -------------------------------------------------------------------------
// A coordinate file of more than one run of text (1 MiB) is parsed on several threads; the
// matrix and every message must be those of a serial read (one thread), to the bit and the line.

// Sets the OpenMP thread count for a scope.
class Threads {
 public:
  explicit Threads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(saved_); }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;

 private:
  int saved_;
};

// The lines of a random coordinate file of about 3 MB (three runs): values of varied magnitude, duplicates,
// explicit zeros, and blank and comment lines here and there. Line k (1-based) is lines[k - 1].
constexpr int kBigSize = 20000;
constexpr std::int64_t kBigEntries = 120000;

std::vector<std::string> big_file_lines(const std::string& banner, bool skew, std::uint64_t seed,
                                        bool pattern = false) {
  const int n = kBigSize;
  const std::int64_t entries = kBigEntries;
  std::vector<std::string> lines = {"%%MatrixMarket matrix coordinate " + banner, "% generated",
                                    std::to_string(n) + " " + std::to_string(n) + " " + std::to_string(entries)};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> index(1, n), exponent(-8, 8), kind(0, 999);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  char buf[96];
  for (std::int64_t k = 0; k < entries; ++k) {
    const int what = kind(rng);
    if (what == 0) lines.emplace_back("");
    if (what == 1) lines.emplace_back("% a comment between entries");
    int i = index(rng), j = what < 20 ? i : index(rng);  // some diagonal entries
    if (skew && i == j) j = i % n + 1;
    const double v = what == 2 ? 0.0 : mantissa(rng) * std::pow(10.0, exponent(rng));
    if (pattern) std::snprintf(buf, sizeof buf, "%d %d", i, j);
    else std::snprintf(buf, sizeof buf, "%d %d %.17g", i, j, v);
    lines.emplace_back(buf);
    if (what == 3 && k + 1 < entries) {  // a duplicate of this entry
      lines.emplace_back(buf);
      ++k;
    }
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  return text;
}

std::string write_gzip_text(const std::string& name, const std::string& text) {
  return spmat::testing::write_gzip_file(temp_path(name), text);
}

// The message of the spmat::Error reading `path` on `threads` threads throws ("" if none).
template <class V = double, class I = std::int32_t>
std::string read_error(const std::string& path, int threads, const spmat::io::ReadOptions& o = {}) {
  Threads t(threads);
  try {
    (void)read_matrix_market<V, I>(path, o);
  } catch (const spmat::Error& e) {
    return e.what();
  }
  return "";
}

template <class V, class I>
void expect_bit_identical(const Csr<V, I>& a, const Csr<V, I>& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.row_ptr, b.row_ptr);
  EXPECT_EQ(a.col_idx, b.col_idx);
  ASSERT_EQ(a.values.size(), b.values.size());
  EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(V)), 0);
}

template <class V, class I>
void expect_parallel_read_is_serial_read(const std::string& path, const spmat::io::ReadOptions& o = {}) {
  Csr<V, I> serial, parallel;
  {
    Threads t(1);
    serial = read_matrix_market<V, I>(path, o);
  }
  for (const int threads : {2, 5}) {
    SCOPED_TRACE(threads);
    Threads t(threads);
    parallel = read_matrix_market<V, I>(path, o);
    expect_bit_identical(parallel, serial);
  }
}

TEST(MatrixMarketParallel, EverySymmetryAndFieldReadsAsTheSerialReaderReadsIt) {
  const struct {
    const char* banner;
    bool skew, pattern;
  } cases[] = {{"real general", false, false},
               {"real symmetric", false, false},
               {"real skew-symmetric", true, false},
               {"integer general", false, false},
               {"pattern symmetric", false, true}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.banner);
    auto lines = big_file_lines(c.banner, c.skew, 7, c.pattern);
    if (std::string(c.banner).rfind("integer", 0) == 0)  // integer values: the digits before any '.'
      for (std::size_t k = 3; k < lines.size(); ++k)
        if (const auto dot = lines[k].find_first_of(".e"); dot != std::string::npos) lines[k].resize(dot);
    const std::string text = join_lines(lines);
    ASSERT_GT(text.size(), std::size_t(1) << 20);  // more than one run
    const std::string plain = write_text("parallel.mtx", text), gz = write_gzip_text("parallel.mtx.gz", text);
    expect_parallel_read_is_serial_read<double, std::int32_t>(plain);
    expect_parallel_read_is_serial_read<float, std::int64_t>(gz);
  }
  // And both are what spmat::to_csr makes of every entry and its mirror image.
  const auto lines = big_file_lines("real symmetric", false, 8);
  spmat::Coo<double, std::int32_t> coo;
  coo.rows = coo.cols = kBigSize;
  for (std::size_t k = 3; k < lines.size(); ++k) {
    int i, j;
    double v;
    if (std::sscanf(lines[k].c_str(), "%d %d %lf", &i, &j, &v) != 3) continue;
    coo.row_idx.push_back(i - 1), coo.col_idx.push_back(j - 1), coo.values.push_back(v);
    if (i != j) coo.row_idx.push_back(j - 1), coo.col_idx.push_back(i - 1), coo.values.push_back(v);
  }
  Threads t(3);
  expect_bit_identical(read_matrix_market<double, std::int32_t>(write_text("sym.mtx", join_lines(lines))),
                       spmat::to_csr(coo));
}

TEST(MatrixMarketParallel, ErrorsNameTheLineTheSerialReaderNames) {
  const auto base = big_file_lines("real general", false, 9);
  const std::size_t mid = base.size() / 2, late = base.size() - 40;
  std::size_t first = 3;  // the index of the first entry's line
  while (base[first].empty() || base[first][0] == '%') ++first;
  struct Case {
    const char* what;
    std::size_t line;  // 1-based line the message must name (0: don't check)
    std::function<void(std::vector<std::string>&)> change;
    const char* says;
  };
  const Case cases[] = {
      {"a bad value", mid, [&](auto& l) { l[mid - 1] = "5 6 x1"; }, "expected a real number value"},
      {"a row out of range", late, [&](auto& l) { l[late - 1] = "20001 6 1"; }, "row index 20001 is out of range"},
      {"an extra word", first + 1, [&](auto& l) { l[first] += " x"; }, "expected end of line"},
      {"an entry too many", base.size(), [&](auto& l) { l[2] = "20000 20000 " + std::to_string(kBigEntries - 1); },
       "the file has more entries than declared"},
      {"an entry too few", base.size() + 1, [&](auto& l) { l[2] = "20000 20000 " + std::to_string(kBigEntries + 1); },
       "the file is truncated"},
      {"blank lines after the entries", 0, [&](auto& l) { l.resize(l.size() + (std::size_t(1) << 20) + 1); },
       "blank and comment lines after the 120000 entries declared on line 3"},
      {"a line of 3 MiB", mid + 1, [&](auto& l) { l[mid] = std::string(std::size_t(3) << 20, '7'); },
       "expected a row index"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto lines = base;
    c.change(lines);
    const std::string text = join_lines(lines);
    for (const std::string& path : {write_text("bad.mtx", text), write_gzip_text("bad.mtx.gz", text)}) {
      const std::string serial = read_error(path, 1);
      EXPECT_NE(serial.find(c.says), std::string::npos) << serial;
      if (c.line) EXPECT_NE(serial.find(path + ":" + std::to_string(c.line) + ":"), std::string::npos) << serial;
      for (const int threads : {2, 3}) EXPECT_EQ(read_error(path, threads), serial);
    }
  }
  // Out of memory: refused on every thread count (the sizes named depend on when it is seen).
  spmat::io::ReadOptions tight;
  tight.max_memory = std::size_t(1) << 20;
  const std::string gz = write_gzip_text("tight.mtx.gz", join_lines(base));
  for (const int threads : {1, 3}) {
    Threads t(threads);
    EXPECT_THROW((void)(read_matrix_market<double, std::int32_t>(gz, tight)), spmat::OutOfMemoryError);
  }
  // Not errors: no newline at the end, long comment lines and blank lines between the entries.
  std::string text = join_lines(base);
  text.pop_back();
  expect_parallel_read_is_serial_read<double, std::int32_t>(write_text("no_newline.mtx", text));
  auto lines = base;
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(late), std::size_t(100000), "");
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(mid), "%" + std::string(std::size_t(3) << 20, 'c'));
  expect_parallel_read_is_serial_read<double, std::int32_t>(write_text("long_comment.mtx", join_lines(lines)));
}

TEST(MatrixMarketParallel, GzipErrorsAndLenientReadingMatchTheSerialReader) {
  const std::string text = join_lines(big_file_lines("real general", false, 10));
  const std::string gz = read_file(write_gzip_text("whole.mtx.gz", text));
  // Cut in the middle: the error names the line where the text stops, as a serial read does.
  const std::string cut = write_text("cut.mtx.gz", gz.substr(0, gz.size() / 2));
  const std::string serial = read_error(cut, 1);
  EXPECT_TRUE(std::regex_search(serial, std::regex("cut\\.mtx\\.gz:[0-9]+: the gzip data is truncated"))) << serial;
  EXPECT_EQ(read_error(cut, 3), serial);
  // Data after the stream: an error (the same), or ignored when lenient (the same matrix).
  const std::string trailing = write_text("trailing.mtx.gz", gz + "junk");
  const std::string strict = read_error(trailing, 1);
  EXPECT_NE(strict.find("after the end of the gzip stream"), std::string::npos) << strict;
  EXPECT_EQ(read_error(trailing, 3), strict);
  spmat::io::ReadOptions lenient;
  lenient.lenient = true;
  expect_parallel_read_is_serial_read<double, std::int32_t>(trailing, lenient);
  // A pattern file whose entries carry values: refused strictly on the first such line, read
  // leniently.
  auto lines = big_file_lines("pattern general", false, 11, true);
  lines[lines.size() / 2] += " 2.5";
  const std::string pattern = write_gzip_text("pattern_values.mtx.gz", join_lines(lines));
  const std::string refused = read_error(pattern, 1);
  EXPECT_NE(refused.find(":" + std::to_string(lines.size() / 2 + 1) + ":"), std::string::npos) << refused;
  EXPECT_EQ(read_error(pattern, 3), refused);
  expect_parallel_read_is_serial_read<double, std::int32_t>(pattern, lenient);
}

// --- real matrices -----------------------------------------------------------------------------
// A matrix collection: $SPMAT_MATRIX_DIR, else data/ in the source tree (git-ignored), holding
// MANIFEST.tsv and small/*.mtx.gz. The tests skip when it is absent.

std::string matrix_dir() {
  const char* env = std::getenv("SPMAT_MATRIX_DIR");
  return env && *env ? env : SPMAT_DEFAULT_MATRIX_DIR;
}

TEST(MatrixMarketReal, SmallCollectionMatchesTheManifest) {
  const std::string dir = matrix_dir();
  if (!fs::exists(dir + "/MANIFEST.tsv") || !fs::exists(dir + "/small"))
    GTEST_SKIP() << "no matrix collection (MANIFEST.tsv and small/) in " << dir
                 << "; set SPMAT_MATRIX_DIR to run this test";
  std::ifstream manifest(dir + "/MANIFEST.tsv");
  std::string line;
  std::getline(manifest, line);  // header: file name rows cols nnz entries symmetry field ...
  int checked = 0;
  while (std::getline(manifest, line)) {
    std::vector<std::string> col;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) col.push_back(c);
    if (col.size() < 8 || col[0].rfind("small/", 0) != 0) continue;
    const std::string path = dir + "/" + col[0];
    if (!fs::exists(path)) continue;
    SCOPED_TRACE(path);
    if (col[7] == "complex") {
      EXPECT_THROW((read_matrix_market<double, std::int32_t>(path)), spmat::UnsupportedError);
      continue;
    }
    const auto h = spmat::io::read_matrix_market_header(path);
    EXPECT_EQ(h.rows, std::stoll(col[2]));
    EXPECT_EQ(h.cols, std::stoll(col[3]));
    EXPECT_EQ(h.entries, std::stoll(col[5]));
    // Strict reading refuses only what lenient reading is for (Ragusa16's pattern values).
    Csr<double, std::int32_t> a;
    try {
      a = read_matrix_market<double, std::int32_t>(path);
    } catch (const spmat::ParseError& e) {
      EXPECT_NE(std::string(e.what()).find("lenient"), std::string::npos) << e.what();
      EXPECT_EQ(col[0], "small/Ragusa16.mtx.gz") << e.what();
      spmat::io::ReadOptions lenient;
      lenient.lenient = true;
      a = read_matrix_market<double, std::int32_t>(path, lenient);
    }
    a.validate(path);
    EXPECT_EQ(a.rows, std::stoll(col[2]));
    EXPECT_EQ(a.cols, std::stoll(col[3]));
    EXPECT_EQ(a.nnz(), std::stoll(col[4]));
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no small/ rows in the manifest";
}

TEST(MatrixMarketReal, ARealMatrixSurvivesMtxGzAndCacheRoundTrips) {
  const std::string path = matrix_dir() + "/small/bcsstk01.mtx.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not found; set SPMAT_MATRIX_DIR to run this test";
  const auto a = read_matrix_market<double, std::int64_t>(path);
  spmat::io::write_matrix_market(temp_path("bcsstk01.mtx.gz"), a);
  EXPECT_EQ((read_matrix_market<double, std::int64_t>(temp_path("bcsstk01.mtx.gz"))), a);
  spmat::io::write_binary_cache(temp_path("bcsstk01.smc"), a);
  EXPECT_EQ((spmat::io::load_matrix<double, std::int64_t>(temp_path("bcsstk01.smc"))), a);
}

}  // namespace
