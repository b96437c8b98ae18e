// spmat/plan/model.hpp — the planner's per-format time model and candidate lists.
// SPDX-License-Identifier: MIT
//
// Internal to the planner. Predicted time of one call of a format on a matrix:
//   t = launch + bytes / (bandwidth * efficiency)
// where bytes is the CSR floor of the operation (every nonzero, x and y once: what any format
// must at least move in effect), bandwidth the device's memory bandwidth (higher while the
// matrix stays in L2), and efficiency the share of it the format's kernel reaches on a matrix
// of this shape. Efficiencies are fitted to measurements over structurally different matrices
// (bench/results/), as functions of the statistics, never of matrix names.
#pragma once
#include <string>
#include <vector>

#include "spmat/plan/plan.hpp"

namespace spmat::plan_model {

struct Device {
  std::string name;           ///< "NVIDIA H100 80GB HBM3", "cpu (16 threads)"
  double bandwidth_gbs = 0;   ///< DRAM bandwidth (nominal on GPUs)
  double l2_bytes = 0;        ///< last-level cache bytes
};

/// The current device of `backend` (no kernel runs: properties only).
Device device_for(Backend backend);

/// Every candidate for `op` under the request's constraints, with predicted times (unsorted).
std::vector<Candidate> candidates(const MatrixStats& s, const PlanRequest& r, const Device& d,
                                  Op op, int value_bytes, int index_bytes);

/// Rough host build time of a candidate's storage: a conversion and an upload of its bytes.
double estimated_build_ms(const Candidate& c);
/// Rough time to build a candidate's storage on the GPU from a device CSR (its device builder):
/// device-to-device copies for csr-class and cuSPARSE storages, a few sorts and scans for the
/// others.
double estimated_device_build_ms(const Candidate& c);
/// Rough time to upload `bytes` of host arrays (pageable memory).
double estimated_upload_ms(std::size_t bytes);
/// Rough time to transpose a device CSR of `bytes` (a radix sort and gathers).
double estimated_device_transpose_ms(std::size_t bytes);
/// Estimated host time to transpose a CSR of `nnz` nonzeros and `rows` rows (a counting sort).
double estimated_transpose_ms(std::int64_t nnz, std::int64_t rows);

/// One line: the structural class and what decided.
std::string reason(const MatrixStats& s, const FormatPlan& p, const Device& d);

/// Structural classes the efficiencies are fitted on.
enum class StructureClass { stencil, regular, irregular, skewed };
StructureClass classify(const MatrixStats& s);
const char* shape_name(StructureClass c);

}  // namespace spmat::plan_model
