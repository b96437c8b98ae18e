// tests/support/test_support.hpp — shared test helpers: random inputs, poisoning, device copies.
// SPDX-License-Identifier: MIT
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/types.hpp"

namespace spmat::testing {

/// A fresh seed per call (tests print it on failure so a run can be reproduced).
std::uint64_t fresh_seed();

/// Random vector of small integers in [-4, 4] (exact sums) or uniform reals.
template <class Value>
std::vector<Value> random_vector(std::int64_t n, std::uint64_t seed, bool small_integers = false) {
  std::mt19937_64 rng(seed);
  std::vector<Value> v(static_cast<std::size_t>(n));
  if (small_integers) {
    std::uniform_int_distribution<int> d(-4, 4);
    for (auto& e : v) e = static_cast<Value>(d(rng));
  } else {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (auto& e : v) e = static_cast<Value>(d(rng));
  }
  return v;
}

template <class Value>
std::vector<Value> poisoned(std::int64_t n) {
  return std::vector<Value>(static_cast<std::size_t>(n), std::numeric_limits<Value>::quiet_NaN());
}

/// Tolerance of the conformance suite for value type Value.
template <class Value>
constexpr double tolerance() {
  return sizeof(Value) == 4 ? 1e-5 : 1e-12;
}

/// Whether GPU tests can run here; the reason when they cannot ("built without CUDA", ...).
bool gpu_available(std::string* why = nullptr);

}  // namespace spmat::testing
