// spmat/core/types.cpp — names of backends, operations and layouts; the int32 limit test hook.
// SPDX-License-Identifier: MIT
#include "spmat/core/types.hpp"

#include <iterator>

namespace spmat {

namespace detail {
std::int64_t& int32_limit_override() {
  static std::int64_t limit = 0;
  return limit;
}
}  // namespace detail

std::string_view to_string(Backend b) { return b == Backend::cpu ? "cpu" : "cuda"; }
namespace {
// The operations' names in the order of enum class Op: to_string prints them, parse_op reads them.
constexpr std::string_view kOpNames[] = {"spmv", "spmv_t", "spmm", "add"};
static_assert(std::size(kOpNames) == static_cast<std::size_t>(Op::add) + 1);
}  // namespace

std::string_view to_string(Op op) {
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(kOpNames) ? kOpNames[i] : "?";
}
std::string_view to_string(DenseLayout l) {
  return l == DenseLayout::row_major ? "row" : "col";
}

Backend parse_backend(std::string_view s) {
  if (s == "cpu") return Backend::cpu;
  if (s == "cuda" || s == "gpu") return Backend::cuda;
  throw ParseError("unknown backend '" + std::string(s) + "': expected cpu or cuda");
}
Op parse_op(std::string_view s) {
  for (std::size_t i = 0; i < std::size(kOpNames); ++i)
    if (s == kOpNames[i]) return static_cast<Op>(i);
  throw ParseError("unknown operation '" + std::string(s) +
                   "': expected spmv, spmv_t, spmm or add");
}
DenseLayout parse_layout(std::string_view s) {
  if (s == "row" || s == "row_major") return DenseLayout::row_major;
  if (s == "col" || s == "col_major") return DenseLayout::col_major;
  throw ParseError("unknown dense layout '" + std::string(s) + "': expected row or col");
}

}  // namespace spmat
