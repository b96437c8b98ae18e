// spmat/formats/ell/row_limits.hpp — the build-time limits of formats that pad rows or walk a
// whole row with one thread (or one sub-warp): ell, ellr, sell, bro-ell, bro-csr, and hyb and
// bro-hyb when their ELL width is forced.
// SPDX-License-Identifier: MIT
//
// These formats are fast on matrices with even rows and silently 10 to 5000 times slower than CSR on
// power-law or R-MAT matrices: padding to a long row multiplies storage and traffic, and the
// thread that walks a long row keeps the whole kernel waiting (sell on gen:rmat:21:16, longest
// row 62161 entries: 45.7 ms against 0.31 ms for cusparse-csr on an H200,
// bench/results/2026-11-22-h200). The builds measure both from the row lengths before
// allocating anything and refuse with UnsupportedError, which the planner and the benchmark
// treat as "this format does not take this matrix".
//
//   padding ratio = stored slots / (nnz + rows)     option max_fill, default 8
//     Counted against nnz + rows because CSR pays per row too (its row pointer): a matrix of
//     mostly empty rows is not charged for them, a diagonal stored in ELL has ratio 0.5. For
//     plain ELL (slots = rows · longest row) it equals longest row / (mean row + 1), so it
//     bounds the serial walk of a row as well.
//   skew = longest row / mean row (nnz / rows)      option max_skew, default 8
//     Checked only when the longest row takes more than 64 serial steps of its thread or
//     sub-warp: a walk that short costs about a couple of kernel launches whatever the mean.
//
// Why 8: on the SuiteSparse matrices of the planner's calibration
// (bench/results/2026-11-25-h100/planner) the finite-element ones have skew <= 4.4 and ELL
// padding ratio <= 4.2, the gen: stencils and bands skew 1 and padding ratio under 1; census
// graphs reach skew 10-15 (ellr runs there at 0.9-1.0x of cuSPARSE, sell at 0.4-0.55x), and
// graphs with hubs are far above (ca-HepPh 25: sell 13x slower than cuSPARSE; email-Enron 138:
// 31x). `inf` lifts a limit.
#pragma once
#include <cstdint>

#include "spmat/core/options.hpp"
#include "spmat/core/typed_options.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

/// A longest row walked in at most this many serial steps is never refused for skew.
inline constexpr std::int64_t kShortRowSteps = 64;

/// The registry entries of the two options (what `spmat formats` lists), so that every format
/// states them alike. max_fill: `slots` says what is stored ("rows x longest row"), `when` limits
/// the check ("" or e.g. "forced K only: "). max_skew: `walker` says what walks a row
/// ("its thread", "its tpr lanes"). Defaults kDefaultMaxFill and kDefaultMaxSkew.
ParamInfo max_fill_param(const char* slots, const char* when = "");
ParamInfo max_skew_param(const char* walker);

/// The two options as fields of a typed options struct (spmat/core/typed_options.hpp): same
/// name and help as max_fill_param / max_skew_param, a number >= 0 (inf: no limit). The
/// member's initializer is the default (kDefaultMaxFill, kDefaultMaxSkew).
template <class Opts>
OptionField<Opts> max_fill_option(double Opts::*member, const char* slots, const char* when = "") {
  ParamInfo p = max_fill_param(slots, when);
  return double_option(std::move(p.name), member, 0.0, false, std::move(p.help));
}
template <class Opts>
OptionField<Opts> max_skew_option(double Opts::*member, const char* walker) {
  ParamInfo p = max_skew_param(walker);
  return double_option(std::move(p.name), member, 0.0, false, std::move(p.help));
}

/// The limit option `name` (max_fill or max_skew) of format `fmt`, `fallback` when absent.
/// Throws ParseError unless it is a number >= 0 (inf: no limit).
double row_limit_option(const char* fmt, const FormatOptions& o, const char* name,
                        double fallback);

/// slots / (nnz + rows); 0 for a matrix without rows and entries.
double padding_ratio(double slots, std::int64_t nnz, std::int64_t rows);

/// What check_padding refuses: padding_ratio(slots, nnz, rows) > max_fill.
bool exceeds_padding(double slots, std::int64_t nnz, std::int64_t rows, double max_fill);

/// What check_row_skew refuses: the longest row is more than max_skew times the mean row
/// (nnz / rows) and takes more than kShortRowSteps steps of `lanes` lanes. Examples with a mean
/// row of 5 and max_skew 8: longest 64 on one lane → false (a short walk), 65 → true (13 times
/// the mean); 256 on 4 lanes → false (64 steps). Mean 10, longest 70 → false (7 times).
bool exceeds_row_skew(std::int64_t longest, std::int64_t nnz, std::int64_t rows,
                      std::int64_t lanes, double max_skew);

/// Throws UnsupportedError when padding_ratio(slots, nnz, rows) > max_fill; the message names
/// `fmt`, the ratio, the limit, the option that raises it and `instead` (what to use instead).
/// Example: ell on 2000 rows with 3000 nonzeros whose longest row has 1001 entries: 2002000
/// slots, ratio 400.4 > 8 →
///   "ell: padding ratio 400.4 exceeds max_fill=8 (2002000 slots for 3000 nonzeros and 2000
///    rows: storage and traffic 400.4 times CSR's); use hyb or csr for matrices with a few long
///    rows, or raise max_fill (inf: no limit)"
void check_padding(const char* fmt, double slots, std::int64_t nnz, std::int64_t rows,
                   double max_fill, const char* instead);

/// Throws UnsupportedError when the longest row is more than max_skew times the mean row
/// (nnz / rows) and takes more than kShortRowSteps steps of `lanes` lanes (1: a thread per
/// row); the message names `fmt`, the skew, the limit, the option that raises it and `instead`.
void check_row_skew(const char* fmt, std::int64_t longest, std::int64_t nnz, std::int64_t rows,
                    std::int64_t lanes, double max_skew, const char* instead);

}  // namespace spmat
