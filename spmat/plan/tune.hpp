// spmat/plan/tune.hpp — the tune level: build and time the best few candidates, keep the fastest.
// SPDX-License-Identifier: MIT
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "spmat/matrix_impl.hpp"
#include "spmat/plan/plan.hpp"

namespace spmat {

/// Times, per operation, the model's choice, cuSPARSE's best (on the GPU) and the next
/// candidates predicted within reach of the best (four at most), and makes the fastest
/// measured one the choice. Measured times land in the candidates. `r.tune_budget_ms` bounds
/// the time beyond auto's own build: the builds of the other candidates (one whose estimated
/// build does not fit is skipped) and the timing. An operation with one candidate is not timed.
/// The storages built for timing, keyed by (format, holds Aᵀ), land in `built` when it is
/// given, so that the matrix being planned reuses the winner's instead of building it again.
template <class Value>
using BuiltParts = std::map<std::pair<std::string, bool>, std::shared_ptr<MatrixImpl<Value>>>;
template <class Value, class Index>
void tune_plan(const Csr<Value, Index>& a, const PlanRequest& r, FormatPlan& p,
               BuiltParts<Value>* built = nullptr);

namespace detail {
/// `plan`, keeping the storages tune built (see tune_plan).
template <class Value, class Index>
FormatPlan plan_keeping(const Csr<Value, Index>& a, const PlanRequest& r, BuiltParts<Value>* built);
}  // namespace detail

}  // namespace spmat
