// spmat/registry.hpp — the one list of formats: names, capabilities, parameters, factories.
// SPDX-License-Identifier: MIT
//
// The CLI, the benchmark and the conformance suite all read this list; nothing else
// enumerates formats. Adding a format = one folder + one line in registry.cpp.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/device_csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/matrix_impl.hpp"

namespace spmat {

/// The products a backend's kernels provide. make_entry (format_adapter.hpp) derives them from
/// the types: the free functions of the host storage, the device struct's (or the CUDA
/// implementation class's) products.
struct BackendOps {
  bool spmv = false;
  bool spmv_t = false;
  bool spmm = false;
  bool add = false;
  friend constexpr bool operator==(const BackendOps&, const BackendOps&) = default;
};

/// What one backend of a format can do. `deterministic_*`: bitwise-identical results from run
/// to run (no floating-point atomics, fixed reduction order). For the formats registered with
/// make_entry, `available` and the four products are derived from the kernels that exist; the
/// rest is declared by the entry (DeclaredCaps, format_adapter.hpp).
struct BackendCaps {
  bool available = false;
  bool spmv = false;
  bool spmv_t = false;
  bool spmm = false;
  bool add = false;
  bool deterministic_spmv = true;
  bool deterministic_spmv_t = true;

  BackendOps ops() const { return {spmv, spmv_t, spmm, add}; }

  bool supports(Op op) const {
    switch (op) {
      case Op::spmv: return available && spmv;
      case Op::spmv_t: return available && spmv_t;
      case Op::spmm: return available && spmm;
      case Op::add: return available && add;
    }
    return false;
  }
};

struct Capabilities {
  BackendCaps cpu;
  BackendCaps cuda;
  const BackendCaps& on(Backend b) const { return b == Backend::cpu ? cpu : cuda; }
};

/// A build parameter a format understands, for help texts and option checking.
struct ParamInfo {
  std::string name;
  std::string default_value;
  std::string help;
};

template <class Value, class Index>
using Factory = std::function<std::unique_ptr<MatrixImpl<Value>>(
    const Csr<Value, Index>&, const FormatOptions&, Backend)>;

/// Builds the CUDA storage straight from a validated canonical CSR in device memory (no host
/// copy). Formats without one are built from a downloaded copy (Matrix::build says so).
template <class Value, class Index>
using DeviceFactory = std::function<std::unique_ptr<MatrixImpl<Value>>(const DeviceCsr<Value, Index>&,
                                                                       const FormatOptions&)>;

struct FormatEntry {
  std::string name;     ///< registry name, lower case with dashes ("bro-ell")
  std::string summary;  ///< one line for `spmat formats`
  Capabilities caps;
  std::vector<ParamInfo> params;
  std::tuple<Factory<float, std::int32_t>, Factory<float, std::int64_t>,
             Factory<double, std::int32_t>, Factory<double, std::int64_t>>
      factories;
  /// Empty where the format has no device builder (see DeviceFactory).
  std::tuple<DeviceFactory<float, std::int32_t>, DeviceFactory<float, std::int64_t>,
             DeviceFactory<double, std::int32_t>, DeviceFactory<double, std::int64_t>>
      device_factories;

  template <class Value, class Index>
  const Factory<Value, Index>& factory() const {
    return std::get<Factory<Value, Index>>(factories);
  }
  template <class Value, class Index>
  Factory<Value, Index>& factory() {
    return std::get<Factory<Value, Index>>(factories);
  }
  /// Whether Matrix::build from a device CSR builds this format on the GPU (else it builds from
  /// a downloaded copy).
  bool builds_on_device() const { return static_cast<bool>(std::get<0>(device_factories)); }
  template <class Value, class Index>
  const DeviceFactory<Value, Index>& device_factory() const {
    return std::get<DeviceFactory<Value, Index>>(device_factories);
  }
  template <class Value, class Index>
  DeviceFactory<Value, Index>& device_factory() {
    return std::get<DeviceFactory<Value, Index>>(device_factories);
  }
};

/// Every registered format, in a fixed order (baselines first).
const std::vector<FormatEntry>& registry();
/// The entry called `name`; throws UnsupportedError listing the known names otherwise.
const FormatEntry& find_format(std::string_view name);

/// A format with build options, as a plan names its choices: "name" or "name:key=value,...",
/// e.g. "tiled:k=128,layout=row" (tiled planned for the product's K and layout).
struct FormatSpec {
  std::string name;
  FormatOptions options;
  /// Splits at the first ':'; throws ParseError on malformed options.
  static FormatSpec parse(std::string_view spec);
};
/// Whether this build has the CUDA backend compiled in (says nothing about a GPU being present).
bool cuda_compiled();
/// Whether a usable GPU is present at run time (any CUDA error counts as "no GPU").
bool cuda_available();

}  // namespace spmat
