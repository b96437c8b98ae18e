// spmat/formats/ell/row_limits.cpp — padding and row-skew limits checked by the builds.
// SPDX-License-Identifier: MIT
#include "spmat/formats/ell/row_limits.hpp"

#include <cstdio>
#include <string>

#include "spmat/core/error.hpp"
#include "spmat/registry.hpp"

namespace spmat {

namespace {
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

ParamInfo max_fill_param(const char* slots, const char* when) {
  return {"max_fill", number(kDefaultMaxFill),
          std::string(when) + "refuse (UnsupportedError) when the padding ratio (" + slots +
              ") / (nnz + rows) exceeds this (inf: never)"};
}

ParamInfo max_skew_param(const char* walker) {
  return {"max_skew", number(kDefaultMaxSkew),
          "refuse (UnsupportedError) when the longest row is over this many times the mean row "
          "and takes over " + std::to_string(kShortRowSteps) + " steps of " + walker +
              " (inf: never)"};
}

double row_limit_option(const char* fmt, const FormatOptions& o, const char* name,
                        double fallback) {
  const double v = o.get_double(name, fallback);
  if (!(v >= 0))  // also NaN
    throw ParseError(std::string(fmt) + ": " + name + " must be a number >= 0 (inf: no limit)");
  return v;
}

double padding_ratio(double slots, std::int64_t nnz, std::int64_t rows) {
  const double per = static_cast<double>(nnz) + static_cast<double>(rows);
  return per > 0 ? slots / per : 0.0;
}

bool exceeds_padding(double slots, std::int64_t nnz, std::int64_t rows, double max_fill) {
  return padding_ratio(slots, nnz, rows) > max_fill;
}

bool exceeds_row_skew(std::int64_t longest, std::int64_t nnz, std::int64_t rows,
                      std::int64_t lanes, double max_skew) {
  if (rows <= 0 || nnz <= 0 || lanes <= 0) return false;
  if ((longest + lanes - 1) / lanes <= kShortRowSteps) return false;
  const double mean = static_cast<double>(nnz) / static_cast<double>(rows);
  return static_cast<double>(longest) / mean > max_skew;
}

void check_padding(const char* fmt, double slots, std::int64_t nnz, std::int64_t rows,
                   double max_fill, const char* instead) {
  // Slots arrive as a double: rows * width may overflow int64 for absurd inputs, the
  // comparison must not.
  if (!exceeds_padding(slots, nnz, rows, max_fill)) return;
  const double ratio = padding_ratio(slots, nnz, rows);
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "%s: padding ratio %.1f exceeds max_fill=%g (%.0f slots for %lld nonzeros and "
                "%lld rows: storage and traffic %.1f times CSR's); use %s for matrices with a "
                "few long rows, or raise max_fill (inf: no limit)",
                fmt, ratio, max_fill, slots, static_cast<long long>(nnz),
                static_cast<long long>(rows), ratio, instead);
  throw UnsupportedError(buf);
}

void check_row_skew(const char* fmt, std::int64_t longest, std::int64_t nnz, std::int64_t rows,
                    std::int64_t lanes, double max_skew, const char* instead) {
  if (!exceeds_row_skew(longest, nnz, rows, lanes, max_skew)) return;
  const std::int64_t steps = (longest + lanes - 1) / lanes;
  const double mean = static_cast<double>(nnz) / static_cast<double>(rows);
  const double skew = static_cast<double>(longest) / mean;
  char walker[64];
  if (lanes == 1)
    std::snprintf(walker, sizeof walker, "one thread walks each row");
  else
    std::snprintf(walker, sizeof walker, "%lld lanes walk each row",
                  static_cast<long long>(lanes));
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "%s: the longest row (%lld entries) is %.1f times the mean row (%.2f), over "
                "max_skew=%g: %s, so every call waits %lld serial steps on that row; use %s "
                "for matrices with a few long rows, or raise max_skew (inf: no limit)",
                fmt, static_cast<long long>(longest), skew, mean, max_skew, walker,
                static_cast<long long>(steps), instead);
  throw UnsupportedError(buf);
}

}  // namespace spmat
