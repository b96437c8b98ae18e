// spmat/plan/tune.hpp — the tune level: build and time the best few candidates, keep the fastest.
// SPDX-License-Identifier: MIT
#pragma once
#include "spmat/plan/plan.hpp"

namespace spmat {

/// Times, per operation, the candidates of `p` whose prediction is within reach of the best
/// (at most four, cuSPARSE's best always among them on the GPU) until `r.tune_budget_ms` is
/// spent, and makes the fastest measured one the choice. Measured times land in the
/// candidates. An operation with one candidate is not timed.
template <class Value, class Index>
void tune_plan(const Csr<Value, Index>& a, const PlanRequest& r, FormatPlan& p);

}  // namespace spmat
