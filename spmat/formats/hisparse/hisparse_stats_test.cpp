// spmat/formats/hisparse/hisparse_stats_test.cpp — the thesis's Fig. 7.1 (node statistics) and
// Fig. 3.2 (bytes vs COO / CSR) for HiSparse, as Markdown tables. Runs only when
// SPMAT_HISPARSE_STATS names matrices (';'-separated specs: files or gen:...); otherwise skipped.
// `bench/reproduce hisparse-stats` drives it. d = 128 unless SPMAT_HISPARSE_STATS_D is set.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "spmat/formats/hisparse/hisparse.hpp"
#include "spmat/io/load.hpp"

namespace spmat {
namespace {

using namespace hisparse;

std::string fmt(double v, int prec = 1) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}
std::string kfmt(double v) {  // the thesis's style: 236.5k, 1.6M
  if (v >= 1e6) return fmt(v / 1e6) + "M";
  if (v >= 1e4) return fmt(v / 1e3) + "k";
  return fmt(v, v == std::floor(v) ? 0 : 1);
}

TEST(HiSparseStats, PrintTables) {
  const char* list = std::getenv("SPMAT_HISPARSE_STATS");
  if (!list || !*list) GTEST_SKIP() << "set SPMAT_HISPARSE_STATS=spec;spec;... (bench/reproduce hisparse-stats)";
  const char* dv = std::getenv("SPMAT_HISPARSE_STATS_D");
  const std::string d = dv && *dv ? dv : "128";
  std::ostringstream t71, t32;
  t71 << "| Matrix | rows×cols | nnz | CSR row mean (sd), max | D | inner sparse, dense, mean "
         "children | leaves sparse, dense, mean entries (sparse) |\n|---|---|---|---|---|---|---|\n";
  t32 << "| Matrix | nnz | HiSparse fp32 B/nnz | COO fp32 | CSR fp32 | vs COO | vs CSR | "
         "HiSparse fp64 B/nnz | vs CSR fp64 |\n|---|---|---|---|---|---|---|---|---|\n";
  std::stringstream ss(list);
  std::string spec;
  while (std::getline(ss, spec, ';')) {
    if (spec.empty()) continue;
    Csr<double, std::int64_t> a;
    try {
      a = io::load_matrix<double, std::int64_t>(spec);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "skipping %s: %s\n", spec.c_str(), e.what());
      continue;
    }
    const std::string name = io::matrix_name(spec);
    const auto opts = FormatOptions().set("d", d);
    const std::int64_t nnz = a.nnz();
    double mean = a.rows ? double(nnz) / a.rows : 0, var = 0;
    std::int64_t mx = 0;
    for (std::int64_t r = 0; r < a.rows; ++r) {
      const std::int64_t n = a.row_ptr[r + 1] - a.row_ptr[r];
      var += (n - mean) * (n - mean);
      mx = std::max(mx, n);
    }
    const double sd = a.rows ? std::sqrt(var / a.rows) : 0;
    std::size_t bytes64 = 0;
    {
      const auto h = HiSparse<double, std::int64_t>::build(a, opts);
      bytes64 = h.storage_bytes();
    }
    const auto a32 = convert<float, std::int64_t>(a);
    a = Csr<double, std::int64_t>{};
    const auto h = HiSparse<float, std::int64_t>::build(a32, opts);
    std::int64_t in_s = 0, in_d = 0, in_e = 0, lf_s = 0, lf_d = 0, lf_e = 0;
    for (int l = 0; l < h.depth && !h.levels.empty(); ++l) {
      const LevelStats& st = h.levels[l];
      const std::int64_t sp = st.nodes_by_type[1] + st.nodes_by_type[2] + st.nodes_by_type[3];
      const std::int64_t se = st.entries_by_type[1] + st.entries_by_type[2] + st.entries_by_type[3];
      if (l + 1 < h.depth) {
        in_s += sp;
        in_d += st.nodes_by_type[0];
        in_e += se + st.entries_by_type[0];
      } else {
        lf_s += sp;
        lf_d += st.nodes_by_type[0];
        lf_e += se;
      }
    }
    const double inner_mean = in_s + in_d ? double(in_e) / double(in_s + in_d) : 0;
    const double leaf_mean = lf_s ? double(lf_e) / double(lf_s) : 0;
    t71 << "| " << name << " | " << kfmt(a32.rows) << "×" << kfmt(a32.cols) << " | " << kfmt(nnz)
        << " | " << fmt(mean) << " (" << fmt(sd) << "), " << kfmt(mx) << " | " << h.depth << " | "
        << kfmt(in_s) << ", " << in_d << ", " << fmt(inner_mean) << " | " << kfmt(lf_s) << ", "
        << lf_d << ", " << fmt(leaf_mean) << " |\n";
    const double z = nnz ? double(nnz) : 1;
    const double hb = double(h.storage_bytes()) / z;
    const double coo = 12.0;  // int32 row, col + fp32 value
    const double csr = (8.0 * nnz + 4.0 * (a32.rows + 1)) / z;
    const double hb64 = double(bytes64) / z;
    const double csr64 = (12.0 * nnz + 4.0 * (a32.rows + 1)) / z;
    t32 << "| " << name << " | " << kfmt(nnz) << " | " << fmt(hb, 2) << " | " << fmt(coo, 2)
        << " | " << fmt(csr, 2) << " | " << fmt(100.0 * (hb / coo - 1), 0) << "% | "
        << fmt(100.0 * (hb / csr - 1), 0) << "% | " << fmt(hb64, 2) << " | "
        << fmt(100.0 * (hb64 / csr64 - 1), 0) << "% |\n";
    std::fflush(stdout);
  }
  std::printf("\n### Node statistics (thesis Fig. 7.1), d = %s, fp32\n\n%s", d.c_str(), t71.str().c_str());
  std::printf("\n### Storage (thesis Fig. 3.2): bytes per non-zero, int32 COO/CSR\n\n%s", t32.str().c_str());
}

}  // namespace
}  // namespace spmat
