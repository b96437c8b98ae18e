// bench/petsc/petsc_bench.cpp — MatMult and KSP time to solution: PETSc's AIJ against "spmat".
// SPDX-License-Identifier: MIT
//
//   mpiexec -n 2 petsc_bench MATRIX [--formats auto,csr] [--reps 100] [--ksp cg|gmres|none]
//                            [--rtol 1e-6] [--max-it 10000] [--ksp-solves 3] [--json FILE]
//
// MATRIX is anything spmat::io::load_matrix reads ("gen:lap2d:2000", a .mtx.gz). Every rank
// loads it and inserts its own rows (not timed). For each matrix type (AIJ, then spmat with each
// format) it times MatMult in batches of `reps` products, AIJ and spmat batches interleaved so
// that a slow spell of a shared machine hits both: the result is the median over 7 batches of
// the slowest rank's time per product. Then KSPSolve with Jacobi from x = 0 (b = A·1), after a
// KSPSetUp outside the timing, `ksp-solves` times per type, the types again interleaved: the
// median solve counts. One JSON object per type and format is appended to FILE (one per line,
// with the load average before and after the run) and a table row printed.
#include <petscksp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/io/load.hpp"
#include "spmat_petsc.h"

namespace {

using Csr = spmat::Csr<double, std::int32_t>;

struct Args {
  std::string matrix;
  std::vector<std::string> formats{"auto"};
  int reps = 100;
  std::string ksp = "cg";
  double rtol = 1e-6;
  int max_it = 10000;
  int ksp_solves = 3;
  std::string json;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    const auto e = std::min(s.find(',', b), s.size());
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

PetscErrorCode assemble(const Csr& a, const char* type, const char* format, Mat* A, double* seconds) {
  PetscInt m = PETSC_DECIDE, n = PETSC_DECIDE, M = a.rows, N = a.cols, rstart = 0, cstart = 0;
  PetscFunctionBegin;
  PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &m, &M));
  PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &n, &N));
  PetscCallMPI(MPI_Scan(&m, &rstart, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Scan(&n, &cstart, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  rstart -= m;
  cstart -= n;
  std::vector<PetscInt> dnz(m), onz(m);
  for (PetscInt i = 0; i < m; ++i)
    for (auto k = a.row_ptr[rstart + i]; k < a.row_ptr[rstart + i + 1]; ++k)
      (a.col_idx[k] >= cstart && a.col_idx[k] < cstart + n ? dnz[i] : onz[i])++;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, m, n, M, N));
  PetscCall(MatSetType(*A, type));
  if (format) PetscCall(MatSpmatSetFormat(*A, format));
  PetscCall(MatXAIJSetPreallocation(*A, 1, dnz.data(), onz.data(), nullptr, nullptr));
  for (PetscInt i = rstart; i < rstart + m; ++i)
    PetscCall(MatSetValues(*A, 1, &i, a.row_ptr[i + 1] - a.row_ptr[i], a.col_idx.data() + a.row_ptr[i],
                           a.values.data() + a.row_ptr[i], INSERT_VALUES));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  // Assembly end is where "spmat" builds its blocks: timed, the difference is spmat's build.
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  const double t0 = MPI_Wtime();
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  double t = MPI_Wtime() - t0;
  PetscCallMPI(MPI_Allreduce(&t, seconds, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

// Seconds per MatMult of one batch, the slowest rank's.
PetscErrorCode time_batch(Mat A, Vec x, Vec y, int reps, double* per_call) {
  PetscFunctionBegin;
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  const double t0 = MPI_Wtime();
  for (int r = 0; r < reps; ++r) PetscCall(MatMult(A, x, y));
  double t = (MPI_Wtime() - t0) / reps;
  PetscCallMPI(MPI_Allreduce(&t, per_call, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

struct Result {
  std::string type, format, local_formats;
  double assembly_s = 0;
  std::vector<double> batches;
  PetscInt its = 0;
  std::vector<double> ksp_solves;
  double ksp_s = 0, rnorm = 0;
  int reason = 0;
};

PetscErrorCode local_formats(Mat A, std::string* out) {
  const char *d = nullptr, *o = nullptr;
  PetscMPIInt rank, size;
  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(MatSpmatGetLocalFormats(A, &d, &o));
  // "diag/offdiag" per rank, gathered on rank 0 as "[0] sell/csr [1] ...".
  char mine[128];
  PetscCall(PetscSNPrintf(mine, sizeof(mine), "%s/%s", d, size > 1 ? o : "-"));
  std::vector<char> all(128 * size);
  PetscCallMPI(MPI_Gather(mine, 128, MPI_CHAR, all.data(), 128, MPI_CHAR, 0, PETSC_COMM_WORLD));
  out->clear();
  for (int r = 0; r < size; ++r) *out += (r ? " " : "") + std::string(all.data() + 128 * r);
  PetscFunctionReturn(0);
}

PetscErrorCode solve(Mat A, const Args& args, Result* res) {
  KSP ksp;
  PC pc;
  Vec x, b, ones;
  KSPConvergedReason reason;
  PetscReal rnorm;
  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &ones, &b));
  PetscCall(VecDuplicate(ones, &x));
  PetscCall(VecSet(ones, 1.0));
  PetscCall(MatMult(A, ones, b));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, args.ksp.c_str()));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, args.rtol, PETSC_DEFAULT, PETSC_DEFAULT, args.max_it));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCall(VecSet(x, 0.0));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  const double t0 = MPI_Wtime();
  PetscCall(KSPSolve(ksp, b, x));
  double t = MPI_Wtime() - t0;
  double slowest = 0;
  PetscCallMPI(MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  res->ksp_solves.push_back(slowest);
  PetscCall(KSPGetIterationNumber(ksp, &res->its));
  PetscCall(KSPGetResidualNorm(ksp, &rnorm));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  res->rnorm = rnorm;
  res->reason = static_cast<int>(reason);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&ones));
  PetscFunctionReturn(0);
}

std::string loadavg() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  char buf[64] = "";
  if (f) {
    if (!std::fgets(buf, sizeof(buf), f)) buf[0] = 0;
    std::fclose(f);
  }
  std::string s(buf);
  // "1.25 2.35 1.88 2/300 1234": the three averages
  std::size_t cut = 0;
  for (int spaces = 0; cut < s.size() && spaces < 3; ++cut)
    if (s[cut] == ' ') ++spaces;
  return s.substr(0, cut ? cut - 1 : 0);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr,
                            "petsc_bench MATRIX [--formats auto,csr] [--reps 100] [--ksp cg|gmres|none]\n"
                            "  [--rtol 1e-6] [--max-it 10000] [--json FILE]\n"));
  PetscCall(SpmatPetscRegister());
  PetscMPIInt rank, size;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        if (rank == 0) std::fprintf(stderr, "petsc_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--formats") args.formats = split(value());
    else if (a == "--reps") args.reps = std::max(1, std::atoi(value().c_str()));
    else if (a == "--ksp") args.ksp = value();
    else if (a == "--rtol") args.rtol = std::atof(value().c_str());
    else if (a == "--max-it") args.max_it = std::atoi(value().c_str());
    else if (a == "--ksp-solves") args.ksp_solves = std::max(1, std::atoi(value().c_str()));
    else if (a == "--json") args.json = value();
    else if (i == 1 && a[0] != '-') args.matrix = a;
    // Anything else is PETSc's (-log_view, -ksp_monitor, ...): PetscInitialize read it.
  }
  if (args.matrix.empty()) {
    if (rank == 0) std::fprintf(stderr, "usage: petsc_bench MATRIX [--formats auto,csr] [--reps 100] [--ksp cg|gmres|none] [--rtol 1e-6] [--max-it 10000] [--json FILE]\n");
    PetscCall(PetscFinalize());
    return 2;
  }
  const std::string load_start = loadavg();
  Csr a;
  try {
    a = spmat::io::load_matrix<double, std::int32_t>(args.matrix);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "petsc_bench: %s\n", e.what());
    PetscCall(PetscFinalize());
    return 1;
  }
  const int omp = [] {
    const char* s = std::getenv("OMP_NUM_THREADS");
    return s ? std::atoi(s) : 0;
  }();

  // AIJ first, then one spmat matrix per format; all stay alive so that batches interleave.
  std::vector<Result> results;
  std::vector<Mat> mats;
  results.push_back({"aij", "-", "-"});
  mats.push_back(nullptr);
  PetscCall(assemble(a, MATAIJ, nullptr, &mats.back(), &results.back().assembly_s));
  for (const auto& f : args.formats) {
    results.push_back({"spmat", f, ""});
    mats.push_back(nullptr);
    PetscCall(assemble(a, MATSPMAT, f.c_str(), &mats.back(), &results.back().assembly_s));
    PetscCall(local_formats(mats.back(), &results.back().local_formats));
  }
  Vec x, y;
  PetscCall(MatCreateVecs(mats[0], &x, &y));
  PetscCall(VecSet(x, 1.0));
  for (Mat A : mats)  // warm-up: first-touch, caches, any lazily built storage
    for (int r = 0; r < 5; ++r) PetscCall(MatMult(A, x, y));
  const int batches = 7;
  for (int b = 0; b < batches; ++b)
    for (std::size_t k = 0; k < mats.size(); ++k) {
      double t;
      PetscCall(time_batch(mats[k], x, y, args.reps, &t));
      results[k].batches.push_back(t);
    }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  if (args.ksp != "none" && a.rows == a.cols)
    for (int solve_pass = 0; solve_pass < args.ksp_solves; ++solve_pass)
      for (std::size_t k = 0; k < mats.size(); ++k) PetscCall(solve(mats[k], args, &results[k]));
  for (auto& r : results) r.ksp_s = median(r.ksp_solves);
  const std::string load_end = loadavg();

  if (rank == 0) {
    const double aij_ms = median(results[0].batches) * 1e3;
    std::printf("%s: %d x %d, %lld nonzeros, %d rank%s, OMP_NUM_THREADS=%s, load average %s -> %s\n", args.matrix.c_str(),
                static_cast<int>(a.rows), static_cast<int>(a.cols), static_cast<long long>(a.nnz()), size,
                size == 1 ? "" : "s", omp ? std::to_string(omp).c_str() : "unset", load_start.c_str(), load_end.c_str());
    std::printf("%-6s %-6s %11s %8s %9s %7s %10s %9s  %s\n", "type", "format", "MatMult ms", "GFLOP/s",
                "vs AIJ", "its", "KSP s", "assembly", "local formats (diagonal/off-diagonal per rank)");
    FILE* out = args.json.empty() ? nullptr : std::fopen(args.json.c_str(), "a");
    for (const auto& r : results) {
      const double ms = median(r.batches) * 1e3;
      const double gflops = 2.0 * static_cast<double>(a.nnz()) / (ms * 1e-3) / 1e9;
      std::printf("%-6s %-6s %11.4f %8.3f %8.2fx %7d %10.4f %8.3fs  %s\n", r.type.c_str(), r.format.c_str(), ms,
                  gflops, aij_ms / ms, static_cast<int>(r.its), r.ksp_s, r.assembly_s, r.local_formats.c_str());
      if (out) {
        std::string batches;
        for (double t : r.batches) batches += (batches.empty() ? "" : ", ") + std::to_string(t * 1e3);
        std::string solves;
        for (double t : r.ksp_solves) solves += (solves.empty() ? "" : ", ") + std::to_string(t);
        std::fprintf(out,
                     "{\"matrix\": \"%s\", \"name\": \"%s\", \"rows\": %d, \"cols\": %d, \"nnz\": %lld, "
                     "\"ranks\": %d, \"omp_threads\": %d, \"type\": \"%s\", \"format\": \"%s\", "
                     "\"local_formats\": \"%s\", \"assembly_end_s\": %.6f, \"matmult_ms\": %.6f, "
                     "\"matmult_batches_ms\": [%s], \"reps_per_batch\": %d, \"gflops\": %.4f, "
                     "\"speedup_vs_aij\": %.4f, \"ksp\": \"%s\", \"pc\": \"jacobi\", \"rtol\": %g, "
                     "\"ksp_its\": %d, \"ksp_s\": %.6f, \"ksp_solves_s\": [%s], \"ksp_rnorm\": %.6e, "
                     "\"ksp_reason\": %d, \"loadavg_start\": \"%s\", \"loadavg_end\": \"%s\"}\n",
                     args.matrix.c_str(), spmat::io::matrix_name(args.matrix).c_str(), static_cast<int>(a.rows),
                     static_cast<int>(a.cols), static_cast<long long>(a.nnz()), size, omp, r.type.c_str(),
                     r.format.c_str(), r.local_formats.c_str(), r.assembly_s, ms, batches.c_str(), args.reps,
                     gflops, aij_ms / ms, args.ksp.c_str(), args.rtol, static_cast<int>(r.its), r.ksp_s,
                     solves.c_str(), r.rnorm, r.reason, load_start.c_str(), load_end.c_str());
      }
    }
    if (out) std::fclose(out);
  }
  for (Mat& A : mats) PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
