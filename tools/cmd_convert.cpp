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
    "usage: spmat convert <in> <out> [--fp32] [--int64] [--keep] [--field F] [--symmetry S]\n"
    "                     [--lenient]\n"
    "  <in>           .mtx / .mtx.gz / .smc file, - (standard input), or a generator spec\n"
    "                 (gen:lap2d:2000)\n"
    "  <out>          .mtx, .mtx.gz (gzip) or .smc (binary cache)\n"
    "  --fp32         store float values (default double)\n"
    "  --int64        store int64 indices in a .smc (default int32, int64 when the matrix needs it)\n"
    "  --keep         write .mtx with the field and symmetry of the input's Matrix Market banner\n"
    "                 (default: coordinate real general)\n"
    "  --field F      write .mtx with field F: real, integer or pattern\n"
    "  --symmetry S   write .mtx with symmetry S: general, symmetric or skew-symmetric (the lower\n"
    "                 triangle only; refused when the matrix does not have it)\n"
    "  --lenient      accept what some real files need: words after a pattern entry's indices,\n"
    "                 data after the gzip stream, integer values beyond 2^53 (rounded)\n";

io::MmField parse_field(const std::string& s) {
  if (s == "real") return io::MmField::real;
  if (s == "integer") return io::MmField::integer;
  if (s == "pattern") return io::MmField::pattern;
  throw ParseError("unknown field '" + s + "'; expected real, integer or pattern");
}

io::MmSymmetry parse_symmetry(const std::string& s) {
  if (s == "general") return io::MmSymmetry::general;
  if (s == "symmetric") return io::MmSymmetry::symmetric;
  if (s == "skew-symmetric") return io::MmSymmetry::skew_symmetric;
  throw ParseError("unknown symmetry '" + s + "'; expected general, symmetric or skew-symmetric");
}

template <class Value>
void write_out(const std::string& out, const Csr<double, std::int64_t>& a, bool int64,
               const io::MmWriteOptions& mm) {
  if (!io::ends_with(out, ".smc")) {
    io::write_matrix_market(out, convert<Value, std::int64_t>(a, out), mm);
  } else if (int64 || a.rows > index_max<std::int32_t>() || a.cols > index_max<std::int32_t>() ||
             a.nnz() > index_max<std::int32_t>()) {
    io::write_binary_cache(out, convert<Value, std::int64_t>(a, out));
  } else {
    io::write_binary_cache(out, convert<Value, std::int32_t>(a, out));
  }
}

}  // namespace

int cmd_convert(int argc, char** argv) {
  std::string in, out, field, symmetry;
  bool fp32 = false, int64 = false, keep = false;
  io::ReadOptions opt;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw ParseError("option '" + a + "' needs a value\n" + kUsage);
      return argv[++i];
    };
    if (a == "--fp32") fp32 = true;
    else if (a == "--int64") int64 = true;
    else if (a == "--keep") keep = true;
    else if (a == "--lenient") opt.lenient = true;
    else if (a == "--field") field = value();
    else if (a == "--symmetry") symmetry = value();
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
  io::MatrixMarketHeader h;
  const auto a = io::load_matrix<double, std::int64_t>(in, opt, &h);
  const auto t1 = std::chrono::steady_clock::now();
  io::MmWriteOptions mm;
  if (keep && h.size_line > 0) {  // a Matrix Market input; hermitian of a real field is symmetric
    mm.field = h.field;
    mm.symmetry = h.symmetry == io::MmSymmetry::hermitian ? io::MmSymmetry::symmetric : h.symmetry;
  }
  if (!field.empty()) mm.field = parse_field(field);
  if (!symmetry.empty()) mm.symmetry = parse_symmetry(symmetry);
  if (fp32) write_out<float>(out, a, int64, mm);
  else write_out<double>(out, a, int64, mm);
  const auto t2 = std::chrono::steady_clock::now();
  std::printf("wrote %s: %lld x %lld, nnz %lld (read %.3f s, write %.3f s)\n", out.c_str(),
              (long long)a.rows, (long long)a.cols, (long long)a.nnz(),
              std::chrono::duration<double>(t1 - t0).count(),
              std::chrono::duration<double>(t2 - t1).count());
  return 0;
}

}  // namespace spmat::cli
