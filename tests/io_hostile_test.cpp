// tests/io_hostile_test.cpp — the readers under hostile input: work and memory bounded by the
// bytes of the input, the memory limit, streamed gzip (trailing data, padding, a lying
// trailer), pipes and standard input, strict and lenient reading, and the writer's field and
// symmetry. The hostile files are made here, small, rather than committed.
// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/io/binary_cache.hpp"
#include "spmat/io/file_io.hpp"
#include "spmat/io/load.hpp"
#include "spmat/io/matrix_market.hpp"
#include "spmat/io/read_options.hpp"
#include "tests/support/temp_files.hpp"

namespace {

namespace fs = std::filesystem;
using spmat::Csr;
using spmat::io::ReadOptions;
using Mat = Csr<double, std::int32_t>;
using Mat64 = Csr<double, std::int64_t>;

std::string temp_path(const std::string& name) {
  static const std::string dir = spmat::testing::make_temp_dir("spmat_io_hostile_");
  return dir + "/" + name;
}

std::string write_text(const std::string& name, const std::string& text) {
  return spmat::testing::write_file(temp_path(name), text);
}

std::string write_gzip(const std::string& name, const std::string& text) {
  return spmat::testing::write_gzip_file(temp_path(name), text);
}

using spmat::testing::read_file;

ReadOptions lenient() {
  ReadOptions o;
  o.lenient = true;
  return o;
}

// Runs `read` and returns the message of the spmat::Error it must throw.
template <class F>
std::string error_of(F&& read) {
  try {
    read();
  } catch (const spmat::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a spmat::Error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "read without an error";
  return "";
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

constexpr const char* kGeneral = "%%MatrixMarket matrix coordinate real general\n";

// --- strict and lenient ------------------------------------------------------------------------

TEST(Hostile, APatternEntryWithAValueIsRefusedStrictlyAndReadLeniently) {
  const std::string path = write_text(
      "pattern_value.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 2 -1.5\n");
  const std::string msg = error_of([&] { (void)spmat::io::read_matrix_market<double, std::int32_t>(path); });
  EXPECT_CONTAINS(msg, "pattern_value.mtx:4:5: ");  // line 4, column 5: the '-1.5'
  EXPECT_CONTAINS(msg, "'-1.5'");
  EXPECT_CONTAINS(msg, "lenient");
  Mat expect;
  expect.rows = 2;
  expect.cols = 3;
  expect.row_ptr = {0, 1, 2};
  expect.col_idx = {2, 1};
  expect.values = {1, 1};
  EXPECT_EQ((spmat::io::read_matrix_market<double, std::int32_t>(path, lenient())), expect);
  EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(path, lenient())), expect);
}

TEST(Hostile, IntegerValuesBeyondTwoToThe53AreRefusedStrictlyAndRoundedLeniently) {
  const std::string exact = write_text(
      "int_exact.mtx",
      "%%MatrixMarket matrix coordinate integer general\n1 2 2\n1 1 9007199254740992\n1 2 -9007199254740992\n");
  const auto a = spmat::io::read_matrix_market<double, std::int64_t>(exact);
  EXPECT_EQ(a.values, (std::vector<double>{9007199254740992.0, -9007199254740992.0}));
  const std::string path = write_text(
      "int_big.mtx", "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 9007199254740993\n");
  const std::string msg = error_of([&] { (void)spmat::io::read_matrix_market<double, std::int32_t>(path); });
  EXPECT_CONTAINS(msg, "int_big.mtx:3:5: ");
  EXPECT_CONTAINS(msg, "2^53");
  EXPECT_EQ((spmat::io::read_matrix_market<double, std::int32_t>(path, lenient()).values),
            std::vector<double>{9007199254740992.0});
  const std::string arr = write_text("int_big_array.mtx",
                                     "%%MatrixMarket matrix array integer general\n1 1\n-9007199254740995\n");
  EXPECT_CONTAINS(error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(arr); }),
                  "int_big_array.mtx:3:1: ");
}

TEST(Hostile, ValuesBeyondTheStoredTypeAreRefusedStrictlyAndInfiniteLeniently) {
  const std::string big = write_text("real_big.mtx", std::string(kGeneral) + "1 2 2\n1 1 1e400\n1 2 2\n");
  const std::string msg = error_of([&] { (void)spmat::io::read_matrix_market<double, std::int32_t>(big); });
  EXPECT_CONTAINS(msg, "real_big.mtx:3:5: ");
  EXPECT_CONTAINS(msg, "range of a double");
  EXPECT_CONTAINS(msg, "lenient");
  const auto inf = spmat::io::read_matrix_market<double, std::int32_t>(big, lenient());
  EXPECT_TRUE(std::isinf(inf.values.at(0)) && inf.values[0] > 0);
  // Underflow rounds to the nearest double, as the text means: accepted.
  const std::string tiny = write_text("real_tiny.mtx", std::string(kGeneral) + "1 1 1\n1 1 1e-400\n");
  EXPECT_EQ((spmat::io::read_matrix_market<double, std::int32_t>(tiny).values), std::vector<double>{0.0});
  // fp32: a value past its range is refused there and read as is in fp64.
  const std::string f32 = write_text("real_f32.mtx", std::string(kGeneral) + "1 1 1\n1 1  -1e39\n");
  const std::string m32 = error_of([&] { (void)spmat::io::read_matrix_market<float, std::int32_t>(f32); });
  EXPECT_CONTAINS(m32, "real_f32.mtx:3:6: ");
  EXPECT_CONTAINS(m32, "fp32");
  EXPECT_EQ((spmat::io::read_matrix_market<double, std::int32_t>(f32).values), std::vector<double>{-1e39});
  const auto f = spmat::io::read_matrix_market<float, std::int32_t>(f32, lenient());
  EXPECT_TRUE(std::isinf(f.values.at(0)) && f.values[0] < 0);
}

TEST(Hostile, AnIndexOutOfRangeNamesItsColumn) {
  const std::string path = write_text("col_range.mtx", std::string(kGeneral) + "2 2 1\n1  7 1.0\n");
  EXPECT_CONTAINS(error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(path); }),
                  "col_range.mtx:3:4: column index 7 is out of range");
}

// --- gzip ------------------------------------------------------------------------------------

const std::string kSmall = std::string(kGeneral) + "2 2 2\n1 1 1.5\n2 2 -2\n";

Mat small_matrix() {
  Mat m;
  m.rows = 2;
  m.cols = 2;
  m.row_ptr = {0, 1, 2};
  m.col_idx = {0, 1};
  m.values = {1.5, -2};
  return m;
}

TEST(Hostile, DataAfterTheGzipStreamIsRefusedStrictlyAndIgnoredLeniently) {
  const std::string gz = read_file(write_gzip("good.mtx.gz", kSmall));
  const std::string path = write_text("trailing.mtx.gz", gz + "garbage after the stream\n");
  const std::string msg = error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(path); });
  EXPECT_CONTAINS(msg, "trailing.mtx.gz:");
  EXPECT_CONTAINS(msg, "after the end of the gzip stream");
  EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(path, lenient())), small_matrix());
  // Zero padding is trailing data too.
  const std::string padded = write_text("padded.mtx.gz", gz + std::string(512, '\0'));
  EXPECT_CONTAINS(error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(padded); }),
                  "after the end of the gzip stream");
}

TEST(Hostile, ConcatenatedGzipMembersAreOneStream) {
  const std::string a = read_file(write_gzip("part1.gz", kSmall.substr(0, 60)));
  const std::string b = read_file(write_gzip("part2.gz", kSmall.substr(60)));
  const std::string path = write_text("members.mtx.gz", a + b);
  EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(path)), small_matrix());
}

TEST(Hostile, TheGzipTrailerSizeIsNotTrusted) {
  std::string gz = read_file(write_gzip("trailer.mtx.gz", kSmall));
  for (int k = 1; k <= 4; ++k) gz[gz.size() - k] = '\xff';  // ISIZE: 4 GiB - 1
  const std::string path = write_text("lying_trailer.mtx.gz", gz);
  const std::string msg = error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(path); });
  EXPECT_CONTAINS(msg, "corrupt");
  // A 20-byte gzip file claiming 4 GiB: truncated, nothing allocated for the claim.
  const std::string tiny = write_text("tiny.mtx.gz", gz.substr(0, 16) + "\xff\xff\xff\xff");
  EXPECT_FALSE(error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(tiny); }).empty());
}

TEST(Hostile, AGzipBombOfBlankLinesStopsEarly) {
  // 80 MiB of newlines compress to ~80 KiB: the reader stops after 64 MiB of filler instead of
  // inflating it all, and holds only its window of text meanwhile.
  const std::string bomb = std::string(kGeneral) + "2 2 2\n" + std::string(std::size_t(80) << 20, '\n') + "1 1 1\n";
  const std::string path = write_gzip("bomb.mtx.gz", bomb);
  EXPECT_LT(fs::file_size(path), std::uintmax_t(1) << 20);
  const std::string msg = error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(path); });
  EXPECT_CONTAINS(msg, "blank and comment lines");
  // After the declared entries, 1 MiB of blank lines at most.
  const std::string tail = write_gzip("tail.mtx.gz", kSmall + std::string(std::size_t(2) << 20, '\n'));
  const std::string tmsg = error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(tail); });
  EXPECT_CONTAINS(tmsg, "tail.mtx.gz:");
  EXPECT_CONTAINS(tmsg, "blank and comment lines after the 2 entries declared on line 2");
  // A little is fine.
  const std::string some = write_gzip("some.mtx.gz", kSmall + "\n\n% end\n\n");
  EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(some)), small_matrix());
}

// --- duplicate entries -----------------------------------------------------------------------

// The text of a duplicate bomb: the banner, the size line, then `copies` times the line
// "1 1 1" (600 KB of text per 10^5 copies, a few hundred bytes of gzip).
std::string duplicate_text(const std::string& size_line, std::size_t copies) {
  std::string text = std::string(kGeneral) + size_line + "\n";
  text.reserve(text.size() + 6 * copies);
  for (std::size_t k = 0; k < copies; ++k) text += "1 1 1\n";
  return text;
}

std::string duplicate_bomb(const std::string& name, const std::string& size_line, std::size_t copies) {
  return write_gzip(name, duplicate_text(size_line, copies));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(Hostile, ADuplicateBombIsRefusedStrictlyAtTheSizeLine) {
  const std::string path = duplicate_bomb("dup_bomb.mtx.gz", "1 1 100000", 100000);
  EXPECT_LT(fs::file_size(path), std::uintmax_t(8192));
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(path); });
  EXPECT_LT(seconds_since(t0), 0.5);  // at the size line, before inflating the entries
  EXPECT_CONTAINS(msg, "dup_bomb.mtx.gz:2: ");
  EXPECT_CONTAINS(msg, "declares 100000 entries, but a 1 x 1 general matrix has only 1 position;");
  EXPECT_CONTAINS(msg, "expected at most 1 entry (lenient reading sums duplicate entries)");
  EXPECT_THROW((void)(spmat::io::read_matrix_market<float, std::int64_t>(path)), spmat::ParseError);
}

TEST(Hostile, PositionsCountTheStoredTriangleOfTheSymmetricKinds) {
  struct Case {
    const char* symmetry;
    const char* size;
    const char* says;
  };
  const Case refused[] = {
      {"general", "2 3 7", "a 2 x 3 general matrix has only 6 positions; expected at most 6 entries"},
      {"symmetric", "3 3 7", "a 3 x 3 symmetric matrix has only 6 positions on and below the diagonal"},
      {"hermitian", "3 3 7", "a 3 x 3 hermitian matrix has only 6 positions on and below the diagonal"},
      {"skew-symmetric", "3 3 4", "a 3 x 3 skew-symmetric matrix has only 3 positions below the diagonal"},
  };
  for (const auto& c : refused) {
    SCOPED_TRACE(c.symmetry);
    const std::string path = write_text("positions.mtx", std::string("%%MatrixMarket matrix coordinate real ") +
                                                             c.symmetry + "\n%\n" + c.size + "\n");
    const std::string msg = error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(path); });
    EXPECT_CONTAINS(msg, "positions.mtx:3: the size line declares");
    EXPECT_CONTAINS(msg, c.says);
  }
  // As many entries as positions is fine, duplicates among them too (summed).
  const std::string full = write_text("full.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n"
                                                  "3 3 3\n2 1 1\n3 1 2\n2 1 0.5\n");
  const auto a = spmat::io::load_matrix<double, std::int32_t>(full);
  EXPECT_EQ(a.values, (std::vector<double>{-1.5, -2, 1.5, 2}));
  // Sizes whose positions overflow 64 bits are counted exactly, not refused as duplicates.
  const std::string wide = write_text("wide.mtx", "%%MatrixMarket matrix coordinate real symmetric\n"
                                                  "999999999999999999 999999999999999999 1\n1 1 1\n");
  EXPECT_EQ(error_of([&] { (void)spmat::io::load_matrix<double, std::int64_t>(wide); }).find("positions"),
            std::string::npos);
}

TEST(Hostile, ADuplicateBombIsSummedLenientlyInBoundedMemory) {
  const std::string path = duplicate_bomb("dup_lenient.mtx.gz", "1 1 100000", 100000);
  const auto t0 = std::chrono::steady_clock::now();
  const auto a = spmat::io::load_matrix<double, std::int32_t>(path, lenient());
  EXPECT_LT(seconds_since(t0), 5.0);
  Mat expect;
  expect.rows = 1;
  expect.cols = 1;
  expect.row_ptr = {0, 1};
  expect.col_idx = {0};
  expect.values = {100000};
  EXPECT_EQ(a, expect);
  // 10^6 copies would take 16 MB as read; compacted as they come, they fit 8 MiB, from a
  // stream and from a plain file (whose size is checked against the entries held at most).
  const std::string big = duplicate_bomb("dup_big.mtx.gz", "1 1 1000000", 1000000);
  ReadOptions tight = lenient();
  tight.max_memory = std::uint64_t(8) << 20;
  EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(big, tight).values), std::vector<double>{1000000});
  const std::string plain = write_text("dup_big.mtx", duplicate_text("1 1 1000000", 1000000));
  EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(plain, tight).values), std::vector<double>{1000000});
}

// Lenient reading of a file with far more entries than positions sums them in file order, as a
// read without compaction does (spmat::to_csr of every entry and its mirror image): the same
// bits, for every symmetry, in fp64 and fp32.
template <class Value>
void check_duplicates_sum_in_file_order(const char* symmetry, std::uint64_t seed) {
  SCOPED_TRACE(symmetry);
  const std::string sym = symmetry;
  const bool mirror = sym != "general", skew = sym == "skew-symmetric";
  const int n = 40;
  const std::size_t entries = 150000;  // positions: at most 1600; compacted twice
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> index(1, n), exponent(-6, 6);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::string text = "%%MatrixMarket matrix coordinate real " + sym + "\n" + std::to_string(n) + " " +
                     std::to_string(n) + " " + std::to_string(entries) + "\n";
  spmat::Coo<Value, std::int32_t> coo;
  coo.rows = coo.cols = n;
  char line[96];
  for (std::size_t k = 0; k < entries; ++k) {
    int i = index(rng), j = index(rng);
    if (skew && i == j) j = i % n + 1;
    const double v = mantissa(rng) * std::pow(10.0, exponent(rng));
    std::snprintf(line, sizeof line, "%d %d %.17g\n", i, j, v);
    text += line;
    coo.row_idx.push_back(i - 1);
    coo.col_idx.push_back(j - 1);
    coo.values.push_back(static_cast<Value>(v));
    if (mirror && i != j) {
      coo.row_idx.push_back(j - 1);
      coo.col_idx.push_back(i - 1);
      coo.values.push_back(static_cast<Value>(skew ? -v : v));
    }
  }
  const auto expect = spmat::to_csr(coo);
  const std::string path = write_text("dup_order.mtx", text);
  const auto a = spmat::io::load_matrix<Value, std::int32_t>(path, lenient());
  EXPECT_EQ(a.row_ptr, expect.row_ptr);
  EXPECT_EQ(a.col_idx, expect.col_idx);
  ASSERT_EQ(a.values.size(), expect.values.size());
  EXPECT_EQ(std::memcmp(a.values.data(), expect.values.data(), a.values.size() * sizeof(Value)), 0);
  EXPECT_CONTAINS(error_of([&] { (void)spmat::io::load_matrix<Value, std::int32_t>(path); }), "positions");
}

TEST(Hostile, CompactedDuplicatesAreSummedInFileOrder) {
  for (const char* sym : {"general", "symmetric", "skew-symmetric"}) {
    check_duplicates_sum_in_file_order<double>(sym, 11);
    check_duplicates_sum_in_file_order<float>(sym, 12);
  }
}

// --- sizes the file cannot back -------------------------------------------------------------

TEST(Hostile, AnArrayFileWithZeroRowsAndHugeColumnsIsReadAtOnce) {
  const std::string path =
      write_text("array_wide.mtx", "%%MatrixMarket matrix array real general\n0 999999999999999999\n");
  const auto t0 = std::chrono::steady_clock::now();
  const auto a = spmat::io::load_matrix<double, std::int64_t>(path);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_EQ(a.rows, 0);
  EXPECT_EQ(a.cols, 999999999999999999);
  EXPECT_EQ(a.nnz(), 0);
  EXPECT_THROW((void)(spmat::io::load_matrix<double, std::int32_t>(path)), spmat::IndexOverflowError);
  // A skew-symmetric array file walks its triangle value by value.
  const std::string skew = write_text("array_skew.mtx",
                                      "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n");
  EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(skew).nnz()), 6);
}

TEST(Hostile, RowsTheFileCannotBackAreRefusedBeforeAllocating) {
  const std::string path = write_text("many_rows.mtx", std::string(kGeneral) + "500000000 500000000 0\n");
  for (int kind = 0; kind < 2; ++kind) {
    const std::string msg = error_of([&] {
      if (kind == 0) (void)spmat::io::load_matrix<double, std::int32_t>(path);
      else (void)spmat::io::load_matrix<float, std::int64_t>(path);
    });
    EXPECT_CONTAINS(msg, "many_rows.mtx:2: ");
    EXPECT_CONTAINS(msg, "500000000 rows");
    EXPECT_CONTAINS(msg, "SPMAT_MAX_MEMORY");
  }
  try {
    (void)spmat::io::load_matrix<double, std::int32_t>(path);
  } catch (const spmat::OutOfMemoryError&) {
  }
  // From a stream (gzip) the same: the rows are checked once the entries are read.
  const std::string gz = write_gzip("many_rows.mtx.gz", std::string(kGeneral) + "500000000 500000000 1\n1 1 1\n");
  EXPECT_THROW((void)(spmat::io::load_matrix<double, std::int32_t>(gz)), spmat::OutOfMemoryError);
  // A moderate number of empty rows is within the default; more is allowed on request.
  const std::string some = write_text("some_rows.mtx", std::string(kGeneral) + "1000000 1000000 0\n");
  EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(some).rows), 1000000);
  const std::string more = write_text("more_rows.mtx", std::string(kGeneral) + "8000000 1 0\n");
  EXPECT_THROW((void)(spmat::io::load_matrix<double, std::int32_t>(more)), spmat::OutOfMemoryError);
  ReadOptions big;
  big.max_memory = std::uint64_t(1) << 30;
  EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(more, big).rows), 8000000);
}

TEST(Hostile, TheMemoryLimitComesFromTheOptionOrTheEnvironment) {
  const std::string path = write_text("limit.mtx", kSmall);
  ReadOptions tiny;
  tiny.max_memory = 16;
  const std::string msg = error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(path, tiny); });
  EXPECT_CONTAINS(msg, "limit.mtx:2: ");
  EXPECT_CONTAINS(msg, "ReadOptions::max_memory");
  ::setenv("SPMAT_MAX_MEMORY", "1k", 1);
  EXPECT_CONTAINS(error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(
                               write_text("big_enough.mtx", std::string(kGeneral) + "1000 1000 0\n")); }),
                  "set by SPMAT_MAX_MEMORY");
  EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(path)), small_matrix());
  ::setenv("SPMAT_MAX_MEMORY", "lots", 1);
  EXPECT_CONTAINS(error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(path); }),
                  "SPMAT_MAX_MEMORY='lots' is not a size");
  ::unsetenv("SPMAT_MAX_MEMORY");
  EXPECT_EQ(spmat::io::parse_byte_size("8G", "x"), std::uint64_t(8) << 30);
  EXPECT_EQ(spmat::io::parse_byte_size("512MiB", "x"), std::uint64_t(512) << 20);
  EXPECT_EQ(spmat::io::parse_byte_size("1000", "x"), 1000u);
  EXPECT_THROW(spmat::io::parse_byte_size("99999999999T", "x"), spmat::ParseError);
  EXPECT_THROW(spmat::io::parse_byte_size("", "x"), spmat::ParseError);
}

// --- pipes and standard input ---------------------------------------------------------------

// Feeds `bytes` through a FIFO and reads it with `read`.
template <class F>
void through_fifo(const std::string& name, const std::string& bytes, F&& read) {
  std::signal(SIGPIPE, SIG_IGN);  // a reader that stops early must not kill the writer
  const std::string fifo = temp_path(name);
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::ofstream f(fifo, std::ios::binary);
    for (std::size_t at = 0; at < bytes.size(); at += 1000) f << bytes.substr(at, 1000) << std::flush;
  });
  try {
    read(fifo);
  } catch (...) {
    writer.join();
    throw;
  }
  writer.join();
  fs::remove(fifo);
}

TEST(Hostile, ALyingBinaryCacheHeaderAllocatesNothingAhead) {
  Mat64 a;
  a.rows = 3;
  a.cols = 3;
  a.row_ptr = {0, 1, 1, 2};
  a.col_idx = {0, 2};
  a.values = {1, 2};
  const std::string good = temp_path("lying.smc");
  spmat::io::write_binary_cache(good, a);
  std::string bytes = read_file(good);
  const std::int64_t rows = 100000000, nnz = 100000000;  // 2.4 GB of arrays claimed
  std::memcpy(&bytes[24], &rows, 8);
  std::memcpy(&bytes[40], &nnz, 8);
  const std::string path = write_text("lying_header.smc", bytes);
  EXPECT_CONTAINS(error_of([&] { (void)spmat::io::read_binary_cache<double, std::int64_t>(path); }),
                  "truncated or corrupt");
  // From a pipe the length is unknown: the arrays grow as bytes arrive, then end too early.
  through_fifo("lying.fifo", bytes, [](const std::string& p) {
    EXPECT_CONTAINS(error_of([&] { (void)spmat::io::load_matrix<double, std::int64_t>(p); }), "truncated");
  });
}

TEST(Hostile, PipesAreStreamedWhateverTheyHold) {
  through_fifo("text.fifo", kSmall, [](const std::string& p) {
    EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(p)), small_matrix());
  });
  const std::string gz = read_file(write_gzip("pipe.mtx.gz", kSmall));
  through_fifo("gz.fifo", gz, [](const std::string& p) {
    EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(p)), small_matrix());
  });
  spmat::io::write_binary_cache(temp_path("pipe.smc"), small_matrix());
  const std::string smc = read_file(temp_path("pipe.smc"));
  through_fifo("smc.fifo", smc, [](const std::string& p) {
    EXPECT_EQ((spmat::io::load_matrix<double, std::int32_t>(p)), small_matrix());
  });
  through_fifo("long.fifo", smc + "x", [](const std::string& p) {
    EXPECT_CONTAINS(error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(p); }),
                    "longer than its header");
  });
  through_fifo("empty.fifo", "", [](const std::string& p) {
    EXPECT_CONTAINS(error_of([&] { (void)spmat::io::load_matrix<double, std::int32_t>(p); }),
                    "the file is empty");
  });
}

TEST(Hostile, DashIsStandardInput) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int saved = ::dup(0);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::dup2(fds[0], 0), 0);
  ::close(fds[0]);
  std::thread writer([&] {
    std::size_t at = 0;
    while (at < kSmall.size()) {
      const ssize_t n = ::write(fds[1], kSmall.data() + at, kSmall.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
  });
  std::string msg;
  Mat a;
  try {
    a = spmat::io::load_matrix<double, std::int32_t>("-");
  } catch (const std::exception& e) {
    msg = e.what();
  }
  writer.join();
  ::dup2(saved, 0);
  ::close(saved);
  EXPECT_EQ(msg, "");
  EXPECT_EQ(a, small_matrix());
}

// --- the writer keeps field and symmetry ------------------------------------------------------

TEST(Hostile, EveryFieldAndSymmetryRoundTripsIdentically) {
  struct Case {
    const char* banner;
    const char* body;
  };
  const Case cases[] = {
      {"coordinate real general", "3 3 4\n1 1 1.5\n2 1 -2\n3 2 0.1\n3 3 0\n"},
      {"coordinate real symmetric", "3 3 3\n1 1 4\n2 1 -1.25\n3 2 7\n"},
      {"coordinate real skew-symmetric", "3 3 2\n2 1 3\n3 2 -5\n"},
      {"coordinate integer general", "2 3 3\n1 3 -7\n2 1 9007199254740992\n2 2 0\n"},
      {"coordinate integer symmetric", "2 2 2\n1 1 3\n2 1 -4\n"},
      {"coordinate integer skew-symmetric", "2 2 1\n2 1 6\n"},
      {"coordinate pattern general", "2 3 2\n1 3\n2 1\n"},
      {"coordinate pattern symmetric", "3 3 3\n1 1\n3 1\n3 2\n"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.banner);
    const std::string in = write_text("in.mtx", std::string("%%MatrixMarket matrix ") + c.banner + "\n" + c.body);
    spmat::io::MatrixMarketHeader h;
    const auto a = spmat::io::read_matrix_market<double, std::int64_t>(in, ReadOptions{}, &h);
    for (const std::string ext : {".mtx", ".mtx.gz"}) {
      const std::string out = temp_path("out" + ext);
      spmat::io::write_matrix_market(out, a, spmat::io::MmWriteOptions{h.field, h.symmetry});
      spmat::io::MatrixMarketHeader h2;
      const auto b = spmat::io::read_matrix_market<double, std::int64_t>(out, ReadOptions{}, &h2);
      EXPECT_EQ(b, a);
      EXPECT_EQ(h2.field, h.field);
      EXPECT_EQ(h2.symmetry, h.symmetry);
      EXPECT_EQ(h2.entries, h.entries);  // the stored triangle, not the expanded matrix
    }
    EXPECT_EQ(read_file(temp_path("out.mtx")).rfind(std::string("%%MatrixMarket matrix ") + c.banner + "\n", 0), 0u);
  }
  // Pattern writes no values.
  const std::string text = read_file(temp_path("out.mtx"));
  EXPECT_NE(text.find("\n3 3 3\n1 1\n3 1\n3 2\n"), std::string::npos) << text;
}

TEST(Hostile, TheWriterRefusesAFieldOrSymmetryTheMatrixLacks) {
  Mat a = small_matrix();
  a.values[0] = 0.5;
  using spmat::io::MmField;
  using spmat::io::MmSymmetry;
  const std::string path = temp_path("refused.mtx");
  EXPECT_CONTAINS(error_of([&] { spmat::io::write_matrix_market(path, a, {MmField::integer, MmSymmetry::general}); }),
                  "not an integer");
  Mat u;
  u.rows = 2;
  u.cols = 2;
  u.row_ptr = {0, 1, 1};
  u.col_idx = {1};
  u.values = {1};
  EXPECT_CONTAINS(error_of([&] { spmat::io::write_matrix_market(path, u, {MmField::real, MmSymmetry::symmetric}); }),
                  "not symmetric");
  EXPECT_CONTAINS(error_of([&] {
                    spmat::io::write_matrix_market(path, small_matrix(), {MmField::real, MmSymmetry::skew_symmetric});
                  }),
                  "not skew-symmetric");
  Mat r;
  r.rows = 1;
  r.cols = 2;
  r.row_ptr = {0, 0};
  EXPECT_CONTAINS(error_of([&] { spmat::io::write_matrix_market(path, r, {MmField::real, MmSymmetry::symmetric}); }),
                  "square");
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".part"));
}

}  // namespace
