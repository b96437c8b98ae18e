// spmat/plan/plan_options.hpp — the options of the planner's formats `auto` and `tune`, typed.
// SPDX-License-Identifier: MIT
//
// PlanRequest::from_options reads them through this struct's field table
// (spmat/core/typed_options.hpp); the registry entries of auto and tune list the same table.
#pragma once
#include <cstdint>
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/core/types.hpp"

namespace spmat {

/// Build options of auto and tune (tune uses budget_ms and cache too). ops: operations joined by
/// '+'; the booleans also take true/false, yes/no, on/off.
struct PlanOptions {
  static constexpr const char* format = "auto";
  std::string ops = "spmv+spmv_t+spmm+add";
  std::int64_t calls = 0;
  std::int64_t k = 32;
  DenseLayout layout = DenseLayout::row_major;
  std::int64_t memory = 0;
  bool deterministic = false;
  std::string transpose = "auto";
  double budget_ms = 100;
  bool cache = true;
  static const OptionTable<PlanOptions>& fields();
  bool operator==(const PlanOptions&) const = default;
};

}  // namespace spmat
