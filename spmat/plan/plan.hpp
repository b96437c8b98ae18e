// spmat/plan/plan.hpp — the planner: which format and kernel for this matrix and these operations.
// SPDX-License-Identifier: MIT
//
//   spmat::PlanRequest req;                      // spmv + spmv_t, many calls, fp64
//   req.backend = spmat::Backend::cuda;
//   spmat::Plan p = spmat::plan(csr, req);       // from statistics: no kernel runs
//   std::cout << p.describe();                   // choice, ranked candidates, reason
//   auto A = spmat::Matrix<double>::build(csr, "auto", spmat::Backend::cuda);  // the same, built
//
// Two levels: `automatic` ranks the candidates with a per-format time model driven by matrix
// statistics (row-length distribution, skew, column spread, size against the cache); `tune`
// also builds and times the best few on the device within a budget and keeps the fastest,
// caching the decision on disk (see plan_cache.hpp).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/types.hpp"
#include "spmat/plan/stats.hpp"

namespace spmat {

enum class PlanLevel { automatic, tune };

struct PlanRequest {
  /// Operations the matrix will serve. Only the first one's storage is built with the matrix;
  /// the others' on their first use.
  std::vector<Op> ops{Op::spmv, Op::spmv_t, Op::spmm, Op::add};
  /// Expected calls of each operation; 0 = many (the build cost is not weighed).
  std::int64_t calls = 0;
  std::int64_t k = 32;                        ///< spmm: dense columns
  DenseLayout layout = DenseLayout::row_major;  ///< spmm: layout of B and C
  Backend backend = Backend::cpu;
  /// Bytes the stored matrix may take on the backend (0 = no limit). A stored transpose is
  /// only planned when both copies fit.
  std::size_t memory_budget = 0;
  bool deterministic = false;  ///< only kernels that give bitwise-identical results run to run
  PlanLevel level = PlanLevel::automatic;
  double tune_budget_ms = 100;  ///< tune: wall time for timing the candidates
  bool use_cache = true;        ///< tune: read and write the on-disk plan cache
  /// SpMVᵀ strategy: "auto" (planner weighs them), "store" (a transposed copy beside the
  /// matrix), "native" (only kernels running Aᵀx from the one storage).
  std::string transpose = "auto";

  /// The request from format options (`ops=spmv+spmv_t,calls=100,deterministic=1,...`), as
  /// `Matrix::build(csr, "auto", backend, options)` receives them.
  static PlanRequest from_options(const FormatOptions& o, Backend backend, PlanLevel level);
  /// A stable text form (the plan cache's key includes it).
  std::string key() const;
};

/// One way to run one operation.
struct Candidate {
  Op op = Op::spmv;
  std::string format;      ///< registry name
  bool transposed = false; ///< runs as spmv on a stored Aᵀ (spmv_t only)
  double predicted_ms = NAN;
  double measured_ms = NAN;  ///< tune only
  std::size_t bytes = 0;     ///< estimated storage bytes (of Aᵀ, for a stored transpose)
  double setup_ms = NAN;     ///< estimated build (host conversion and upload)
  std::string note;          ///< why it ranks where it does
};

/// The choice for one operation.
struct OpChoice {
  Op op = Op::spmv;
  std::string format;
  bool transposed = false;
  double predicted_ms = NAN;
  double measured_ms = NAN;
  double setup_ms = NAN;  ///< estimated build of its storage (0 when another choice shares it)
};

struct FormatPlan {
  PlanLevel level = PlanLevel::automatic;
  Backend backend = Backend::cpu;
  std::string precision;                ///< fp32 / fp64
  MatrixStats stats;
  std::vector<OpChoice> choices;        ///< one per requested operation
  std::vector<Candidate> candidates;    ///< every candidate, best first within each operation
  std::string reason;                   ///< one line: why this choice
  double plan_ms = 0;                   ///< statistics + model (+ tuning) wall time
  /// tune: the time beyond what auto spends anyway (builds of candidates other than the
  /// model's choice, and the timing); included in plan_ms
  double tune_ms = 0;
  bool from_cache = false;              ///< tune: the decision came from the plan cache

  const OpChoice* choice(Op op) const;
  /// Estimated build time of every storage the plan chose (each counted once).
  double setup_ms() const;
  /// Several lines: the choices, the ranked candidates with predicted (and measured) times.
  std::string describe() const;
};

/// Plans from statistics (level automatic) or also by timing (level tune, which needs the
/// backend present: for cuda, a GPU). Throws UnsupportedError where no registered format
/// serves a requested operation under the request's constraints.
template <class Value, class Index>
FormatPlan plan(const Csr<Value, Index>& a, const PlanRequest& request);

/// The automatic level from statistics alone, without a matrix (what `plan` does first).
/// `value_bytes`/`index_bytes`: 4 or 8.
FormatPlan plan_from_stats(const MatrixStats& s, const PlanRequest& request, int value_bytes,
                     int index_bytes);

}  // namespace spmat
