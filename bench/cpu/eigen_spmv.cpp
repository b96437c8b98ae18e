// bench/cpu/eigen_spmv.cpp — times Eigen3's row-major sparse matrix × vector (OpenMP) the way
// `spmat bench --backend cpu` times spmat's CPU kernels, for the bccoo CPU comparison
// (bench/reproduce bccoo-cpu).
// SPDX-License-Identifier: MIT
//
//   eigen_spmv [--threads N] [--reps N] [--warmup N] MATRIX...     (MATRIX: .mtx[.gz] or gen:...)
// prints one JSON object per matrix and line:
//   {"matrix":{"name":..,"rows":..,"cols":..,"nnz":..},"format":"eigen-csr","op":"spmv",
//    "precision":"fp64","index":"int32","threads":N,"time_ms":median,"time_min_ms":..,
//    "time_max_ms":..,"repetitions":..,"setup_ms":..,"gflops":..,"max_relative_norm2":..,
//    "correct":true}
// Method (as spmat's harness): y = A·x with x random in [-1, 1), `warmup` untimed runs, then
// `reps` runs each timed with steady_clock; median/min/max. setup_ms = copying spmat's CSR into
// Eigen. Correctness: relative 2-norm error of the first timed run against spmat's fp64
// reference (<= 1e-12 → correct). Eigen parallelises a row-major sparse × dense product with
// OpenMP only when compiled with -fopenmp (EIGEN_HAS_OPENMP) and the matrix has more than 20,000
// nonzeros; the thread count is Eigen::setNbThreads(N) (default: OMP_NUM_THREADS).
#include <omp.h>

#include <Eigen/Sparse>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "spmat/core/reference.hpp"
#include "spmat/io/load.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int run(const std::string& spec, int threads, int reps, int warmup) {
  const auto a = spmat::io::load_matrix<double, std::int32_t>(spec);
  const auto t_setup = Clock::now();
  Eigen::SparseMatrix<double, Eigen::RowMajor, std::int32_t> m(a.rows, a.cols);
  {
    // Build through a Map of spmat's CSR arrays (canonical: sorted, no duplicates).
    Eigen::Map<const Eigen::SparseMatrix<double, Eigen::RowMajor, std::int32_t>> map(
        a.rows, a.cols, static_cast<std::int32_t>(a.values.size()), a.row_ptr.data(),
        a.col_idx.data(), a.values.data());
    m = map;
    m.makeCompressed();
  }
  const double setup_ms = ms_since(t_setup);

  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> xv(static_cast<std::size_t>(a.cols));
  for (auto& v : xv) v = dist(rng);
  Eigen::Map<const Eigen::VectorXd> x(xv.data(), a.cols);
  Eigen::VectorXd y = Eigen::VectorXd::Constant(a.rows, std::nan(""));

  for (int i = 0; i < warmup; ++i) y.noalias() = m * x;
  std::vector<double> times;
  double err = 0;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    y.noalias() = m * x;
    times.push_back(ms_since(t0));
    if (i == 0) {
      const std::vector<double> got(y.data(), y.data() + y.size());
      err = spmat::reference::relative_norm2_error<double>(
          got, spmat::reference::spmv<double, std::int32_t, double, double>(a, xv));
    }
  }
  std::sort(times.begin(), times.end());
  const double med = times.empty() ? NAN : times[times.size() / 2];
  const std::string name = spmat::io::matrix_name(spec);
  std::printf(
      "{\"matrix\":{\"name\":\"%s\",\"rows\":%lld,\"cols\":%lld,\"nnz\":%lld},"
      "\"format\":\"eigen-csr\",\"op\":\"spmv\",\"precision\":\"fp64\",\"index\":\"int32\","
      "\"threads\":%d,\"time_ms\":%.9g,\"time_min_ms\":%.9g,\"time_max_ms\":%.9g,"
      "\"repetitions\":%d,\"setup_ms\":%.6g,\"gflops\":%.6g,\"max_relative_norm2\":%.3g,"
      "\"correct\":%s}\n",
      name.c_str(), static_cast<long long>(a.rows), static_cast<long long>(a.cols),
      static_cast<long long>(a.nnz()), threads, med, times.empty() ? NAN : times.front(),
      times.empty() ? NAN : times.back(), reps, setup_ms, 2.0 * a.nnz() / (med * 1e6), err,
      err <= 1e-12 ? "true" : "false");
  std::fflush(stdout);
  return err <= 1e-12 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = omp_get_max_threads(), reps = 10, warmup = 2;
  std::vector<std::string> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> int {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "eigen_spmv: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (arg == "--threads") threads = value();
    else if (arg == "--reps") reps = value();
    else if (arg == "--warmup") warmup = value();
    else if (arg == "-h" || arg == "--help") {
      std::printf("usage: eigen_spmv [--threads N] [--reps N] [--warmup N] MATRIX...\n");
      return 0;
    } else specs.push_back(arg);
  }
  if (threads < 1 || reps < 1 || warmup < 0 || specs.empty()) {
    std::fprintf(stderr, "usage: eigen_spmv [--threads N>=1] [--reps N>=1] [--warmup N>=0] MATRIX...\n");
    return 2;
  }
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
  int bad = 0;
  for (const auto& s : specs) {
    try {
      bad += run(s, threads, reps, warmup);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "eigen_spmv: %s: %s\n", s.c_str(), e.what());
      ++bad;
    }
  }
  return bad ? 1 : 0;
}
