// tools/cmd_info.cpp — `spmat info`: read a matrix (file or gen:spec) and print its statistics.
// SPDX-License-Identifier: MIT
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "spmat/core/csr.hpp"
#include "spmat/gen/generators.hpp"
#include "spmat/io/binary_cache.hpp"
#include "spmat/io/file_io.hpp"
#include "spmat/io/load.hpp"
#include "spmat/io/matrix_market.hpp"
#include "tools/commands.hpp"

namespace spmat::cli {

namespace {

constexpr const char* kUsage =
    "usage: spmat info <matrix> [--time] [--fp32] [--int64] [--lenient]\n"
    "       spmat info --generators\n"
    "  <matrix>      .mtx / .mtx.gz / .smc file, - (standard input), or a generator spec\n"
    "                (gen:lap2d:2000)\n"
    "  --time        print the read time and, for Matrix Market, MB/s of uncompressed text\n"
    "  --fp32        read values as float (default double)\n"
    "  --int64       read indices as int64 (default int32, int64 when the matrix needs it or\n"
    "                the input is a pipe)\n"
    "  --lenient     accept what some real files need: words after a pattern entry's indices,\n"
    "                data after the gzip stream, integer values beyond 2^53 (rounded)\n"
    "  --generators  list the generators and their grammar\n";

struct Flags {
  std::string spec;
  bool time = false, fp32 = false, int64 = false, lenient = false;
};

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

// CPU seconds of this process: on a shared machine the wall time of a one-thread read also
// counts time spent waiting for a core, so MB/s is reported against both.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Columns holding at least one entry. A file may declare 10^12 columns and no entries: the
// memory used here follows the entries, never the column count.
template <class Value, class Index>
std::int64_t used_columns(const Csr<Value, Index>& a) {
  const std::size_t nnz = a.col_idx.size();
  if (static_cast<std::uint64_t>(a.cols) <= 8 * std::uint64_t(nnz) + (1u << 16)) {
    std::vector<bool> used(static_cast<std::size_t>(a.cols), false);  // a bit per column
    std::int64_t n = 0;
    for (const Index c : a.col_idx)
      if (!used[static_cast<std::size_t>(c)]) {
        used[static_cast<std::size_t>(c)] = true;
        ++n;
      }
    return n;
  }
  std::vector<Index> cols(a.col_idx);
  std::sort(cols.begin(), cols.end());
  return std::unique(cols.begin(), cols.end()) - cols.begin();
}

template <class Value, class Index>
void print_info(const Flags& f) {
  using clock = std::chrono::steady_clock;
  io::MatrixMarketHeader h;
  bool is_mm = false, is_cache = false, gzip = false;
  std::size_t text_bytes = 0;
  io::ReadOptions opt;
  opt.lenient = f.lenient;
  const auto t0 = clock::now();
  const double c0 = cpu_seconds();
  Csr<Value, Index> a;
  if (gen::is_generator_spec(f.spec)) {
    a = gen::generate<Value, Index>(f.spec);
  } else {
    io::InputStream in(f.spec, f.lenient);
    gzip = in.gzip();
    if (io::ends_with(f.spec, ".smc") || in.magic() == "SPMATSMC") {
      is_cache = true;
      a = io::read_binary_cache<Value, Index>(in, opt);
    } else {
      is_mm = true;
      a = io::read_matrix_market<Value, Index>(in, opt, &h, &text_bytes);
    }
    if (is_cache) text_bytes = static_cast<std::size_t>(in.bytes_read());
  }
  const double secs = std::chrono::duration<double>(clock::now() - t0).count();
  const double cpu = cpu_seconds() - c0;
  const std::int64_t rows = a.rows, cols = a.cols, nnz = a.nnz();

  std::printf("name          %s\n", io::matrix_name(f.spec).c_str());
  if (is_mm)
    std::printf("source        Matrix Market %s %s %s, %lld stored entries%s\n",
                std::string(io::to_string(h.format)).c_str(), std::string(io::to_string(h.field)).c_str(),
                std::string(io::to_string(h.symmetry)).c_str(), static_cast<long long>(h.entries),
                gzip ? " (gzip)" : "");
  else if (is_cache)
    std::printf("source        spmat binary cache\n");
  else
    std::printf("source        generator\n");
  std::printf("rows          %lld\ncols          %lld\nnnz           %lld\n", (long long)rows,
              (long long)cols, (long long)nnz);
  if (rows > 0 && cols > 0)
    std::printf("density       %.3g\n", double(nnz) / (double(rows) * double(cols)));

  // Symmetry of the values as read (full storage).
  const char* sym = "rectangular";
  if (rows == cols) {
    const Csr<Value, Index> t = transpose(a);
    if (t.row_ptr != a.row_ptr || t.col_idx != a.col_idx) sym = "unsymmetric";
    else if (t.values == a.values) sym = "symmetric";
    else if (std::equal(t.values.begin(), t.values.end(), a.values.begin(),
                        [](Value x, Value y) { return x == -y; }))
      sym = "skew-symmetric";
    else sym = "structurally symmetric";
  }
  std::printf("symmetry      %s\n", sym);

  // Row lengths, empty columns, bandwidth, diagonal.
  std::int64_t mn = rows ? INT64_MAX : 0, mx = 0, empty_rows = 0, lower = 0, upper = 0, diag = 0;
  double sum = 0, sum2 = 0;
  for (Index r = 0; r < a.rows; ++r) {
    const std::int64_t len = a.row_ptr[r + 1] - a.row_ptr[r];
    mn = std::min(mn, len);
    mx = std::max(mx, len);
    empty_rows += len == 0;
    sum += double(len);
    sum2 += double(len) * double(len);
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const std::int64_t c = a.col_idx[k];
      lower = std::max(lower, std::int64_t(r) - c);
      upper = std::max(upper, c - std::int64_t(r));
      diag += c == r;
    }
  }
  const double mean = rows ? sum / double(rows) : 0;
  const double sd = rows ? std::sqrt(std::max(0.0, sum2 / double(rows) - mean * mean)) : 0;
  const std::int64_t empty_cols = cols - used_columns(a);
  std::printf("row length    min %lld  mean %.2f  max %lld  stddev %.2f\n", (long long)mn, mean,
              (long long)mx, sd);
  std::printf("empty rows    %lld\nempty cols    %lld\n", (long long)empty_rows, (long long)empty_cols);
  std::printf("bandwidth     lower %lld  upper %lld\n", (long long)lower, (long long)upper);
  std::printf("diagonal      %lld stored entries\n", (long long)diag);
  const double b32 = double(rows + 1 + nnz) * 4 + double(nnz) * sizeof(Value);
  const double b64 = double(rows + 1 + nnz) * 8 + double(nnz) * sizeof(Value);
  std::printf("CSR bytes     %.0f (%.2f MiB) with %s/int32, %.0f (%.2f MiB) with %s/int64\n", b32,
              mib(b32), std::string(precision_name<Value>()).c_str(), b64, mib(b64),
              std::string(precision_name<Value>()).c_str());
  if (f.time) {
    std::printf("read time     %.3f s wall, %.3f s CPU, as %s/%s\n", secs, cpu,
                std::string(precision_name<Value>()).c_str(), std::string(index_name<Index>()).c_str());
    const double bytes = double(text_bytes);
    if (is_mm || is_cache)
      std::printf("read speed    %.1f MB/s wall, %.1f MB/s CPU of %s (%.1f MB)\n",
                  bytes / 1e6 / secs, bytes / 1e6 / cpu,
                  is_mm ? "uncompressed text" : "cache file", bytes / 1e6);
  }
}

template <class Value>
void print_info_value(const Flags& f) {
  // A pipe cannot be read twice, so it is read with int64 indices at once.
  const bool once = f.spec == "-" || (!gen::is_generator_spec(f.spec) &&
                                      std::filesystem::exists(f.spec) &&
                                      !std::filesystem::is_regular_file(f.spec));
  if (f.int64 || once) return print_info<Value, std::int64_t>(f);
  try {
    print_info<Value, std::int32_t>(f);
  } catch (const IndexOverflowError& e) {
    std::printf("(too large for int32 indices: %s; reading with int64)\n", e.what());
    print_info<Value, std::int64_t>(f);
  }
}

}  // namespace

int cmd_info(int argc, char** argv) {
  Flags f;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--time") f.time = true;
    else if (a == "--fp32") f.fp32 = true;
    else if (a == "--int64") f.int64 = true;
    else if (a == "--lenient") f.lenient = true;
    else if (a == "--generators") {
      std::fputs(gen::describe().c_str(), stdout);
      return 0;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a.size() > 1 && a[0] == '-' && a[1] == '-') {
      throw ParseError("unknown option '" + a + "'\n" + kUsage);
    } else if (f.spec.empty()) {
      f.spec = a;
    } else {
      throw ParseError("expected one matrix, found a second one '" + a + "'\n" + kUsage);
    }
  }
  if (f.spec.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (f.fp32) print_info_value<float>(f);
  else print_info_value<double>(f);
  return 0;
}

}  // namespace spmat::cli
