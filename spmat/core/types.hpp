// spmat/core/types.hpp — value/index type lists, backends, operations, and index-range checks.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "spmat/core/error.hpp"

namespace spmat {

/// The supported (Value, Index) pairs, kept in one place: the registry and the tests use it.
/// SPMAT_FOR_EACH_TYPE_PAIR(X) expands X(Value, Index) for each pair — used only for
/// explicit-instantiation blocks at the end of source files.
#define SPMAT_FOR_EACH_TYPE_PAIR(X) \
  X(float, std::int32_t)            \
  X(float, std::int64_t)            \
  X(double, std::int32_t)           \
  X(double, std::int64_t)

/// Explicit instantiation of class template Tmpl<Value, Index> for every type pair (at the end
/// of the source file that defines its members).
#define SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(Tmpl) \
  template struct Tmpl<float, std::int32_t>;        \
  template struct Tmpl<float, std::int64_t>;        \
  template struct Tmpl<double, std::int32_t>;       \
  template struct Tmpl<double, std::int64_t>;

/// The value and index types of a format storage Fmt<Value, Index> (every format template takes
/// the two): what the registry's factories and the CPU and CUDA backends compute in.
template <class Fmt>
struct format_types;
template <template <class, class> class Fmt, class Value, class Index>
struct format_types<Fmt<Value, Index>> {
  using value = Value;
  using index = Index;
};
template <class Fmt>
using format_value_t = typename format_types<Fmt>::value;
template <class Fmt>
using format_index_t = typename format_types<Fmt>::index;

enum class Backend { cpu, cuda };
/// Where an array passed to spmat lives (Matrix::update_values takes either).
enum class Memory { host, device };
enum class Op { spmv, spmv_t, spmm, add };
/// Layout of the dense operands of SpMM: row-major (C-style) or column-major (Fortran-style).
enum class DenseLayout { row_major, col_major };

std::string_view to_string(Backend b);
std::string_view to_string(Op op);
std::string_view to_string(DenseLayout l);
Backend parse_backend(std::string_view s);
Op parse_op(std::string_view s);
DenseLayout parse_layout(std::string_view s);

template <class Value>
constexpr std::string_view precision_name() {
  static_assert(std::is_same_v<Value, float> || std::is_same_v<Value, double>);
  return std::is_same_v<Value, float> ? "fp32" : "fp64";
}
template <class Index>
constexpr std::string_view index_name() {
  static_assert(std::is_same_v<Index, std::int32_t> || std::is_same_v<Index, std::int64_t>);
  return std::is_same_v<Index, std::int32_t> ? "int32" : "int64";
}

namespace detail {
/// Test hook: when > 0, caps the largest representable int32 index so that the overflow
/// path can be exercised on tiny inputs (SciPy's 64-bit reruns, scaled down).
std::int64_t& int32_limit_override();
}  // namespace detail

/// The largest value an index of type Index may hold in spmat (honours the test hook).
template <class Index>
std::int64_t index_max() {
  if constexpr (std::is_same_v<Index, std::int32_t>) {
    const std::int64_t o = detail::int32_limit_override();
    return o > 0 ? o : std::numeric_limits<std::int32_t>::max();
  } else {
    return std::numeric_limits<Index>::max();
  }
}

/// Throws IndexOverflowError unless rows, cols and nnz all fit Index.
/// `what` names the matrix in the message (a file name, "A", ...).
template <class Index>
void check_index_range(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                       std::string_view what = "matrix") {
  const std::int64_t lim = index_max<Index>();
  auto fail = [&](const char* field, std::int64_t v) {
    throw IndexOverflowError(std::string(what) + ": " + field + " = " + std::to_string(v) +
                             " does not fit the " + std::string(index_name<Index>()) +
                             " index type (limit " + std::to_string(lim) +
                             "); use int64 indices");
  };
  if (rows > lim) fail("rows", rows);
  if (cols > lim) fail("cols", cols);
  if (nnz > lim) fail("nnz", nnz);
}

/// RAII guard for the test hook above.
class ScopedInt32Limit {
 public:
  explicit ScopedInt32Limit(std::int64_t limit) : saved_(detail::int32_limit_override()) {
    detail::int32_limit_override() = limit;
  }
  ~ScopedInt32Limit() { detail::int32_limit_override() = saved_; }
  ScopedInt32Limit(const ScopedInt32Limit&) = delete;
  ScopedInt32Limit& operator=(const ScopedInt32Limit&) = delete;

 private:
  std::int64_t saved_;
};

}  // namespace spmat
