// tests/support/test_support.cpp — seeds and GPU availability for the tests.
// SPDX-License-Identifier: MIT
#include "tests/support/test_support.hpp"

#include <chrono>

#include "spmat/registry.hpp"

namespace spmat::testing {

std::uint64_t fresh_seed() {
  static std::mt19937_64 rng(static_cast<std::uint64_t>(
      std::chrono::high_resolution_clock::now().time_since_epoch().count()));
  return rng();
}

bool gpu_available(std::string* why) {
  if (!cuda_compiled()) {
    if (why) *why = "spmat was built without CUDA";
    return false;
  }
  if (!cuda_available()) {
    if (why) *why = "no usable CUDA GPU (cudaGetDeviceCount failed or found none)";
    return false;
  }
  return true;
}

}  // namespace spmat::testing
