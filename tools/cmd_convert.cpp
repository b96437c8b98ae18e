// tools/cmd_convert.cpp — `spmat convert`: between .mtx, .mtx.gz and the binary cache (.smc);
// generator specs are accepted as input.
// SPDX-License-Identifier: MIT
#include <chrono>
#include <cstdio>
#include <string>

#include "spmat/core/csr.hpp"
#include "spmat/io/binary_cache.hpp"
#include "spmat/io/file_io.hpp"
#include "spmat/io/load.hpp"
#include "spmat/io/matrix_market.hpp"
#include "tools/commands.hpp"

namespace spmat::cli {

namespace {

constexpr const char* kUsage =
    "usage: spmat convert <in> <out> [--fp32] [--int64]\n"
    "  <in>     .mtx / .mtx.gz / .smc file, or a generator spec (gen:lap2d:2000)\n"
    "  <out>    .mtx, .mtx.gz (gzip) or .smc (binary cache)\n"
    "  --fp32   store float values (default double)\n"
    "  --int64  store int64 indices in a .smc (default int32, int64 when the matrix needs it)\n";

template <class Value>
void write_out(const std::string& out, const Csr<double, std::int64_t>& a, bool int64) {
  if (!io::ends_with(out, ".smc")) {
    io::write_matrix_market(out, convert<Value, std::int64_t>(a, out));
  } else if (int64 || a.rows > index_max<std::int32_t>() || a.cols > index_max<std::int32_t>() ||
             a.nnz() > index_max<std::int32_t>()) {
    io::write_binary_cache(out, convert<Value, std::int64_t>(a, out));
  } else {
    io::write_binary_cache(out, convert<Value, std::int32_t>(a, out));
  }
}

}  // namespace

int cmd_convert(int argc, char** argv) {
  std::string in, out;
  bool fp32 = false, int64 = false;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--fp32") fp32 = true;
    else if (a == "--int64") int64 = true;
    else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a.size() > 1 && a[0] == '-' && a[1] == '-') {
      throw ParseError("unknown option '" + a + "'\n" + kUsage);
    } else if (in.empty()) in = a;
    else if (out.empty()) out = a;
    else throw ParseError("expected two file arguments, found a third '" + a + "'\n" + kUsage);
  }
  if (in.empty() || out.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (!io::ends_with(out, ".mtx") && !io::ends_with(out, ".mtx.gz") && !io::ends_with(out, ".smc"))
    throw ParseError("output '" + out + "': expected a name ending in .mtx, .mtx.gz or .smc");
  const auto t0 = std::chrono::steady_clock::now();
  const auto a = io::load_matrix<double, std::int64_t>(in);
  const auto t1 = std::chrono::steady_clock::now();
  if (fp32) write_out<float>(out, a, int64);
  else write_out<double>(out, a, int64);
  const auto t2 = std::chrono::steady_clock::now();
  std::printf("wrote %s: %lld x %lld, nnz %lld (read %.3f s, write %.3f s)\n", out.c_str(),
              (long long)a.rows, (long long)a.cols, (long long)a.nnz(),
              std::chrono::duration<double>(t1 - t0).count(),
              std::chrono::duration<double>(t2 - t1).count());
  return 0;
}

}  // namespace spmat::cli
