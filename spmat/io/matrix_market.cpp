// spmat/io/matrix_market.cpp — the Matrix Market reader (hand-written tokenizer over the whole
// decompressed file, std::from_chars for reals) and writer.
// SPDX-License-Identifier: MIT
#include "spmat/io/matrix_market.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "spmat/io/file_io.hpp"

namespace spmat::io {

std::string_view to_string(MmFormat f) { return f == MmFormat::coordinate ? "coordinate" : "array"; }
std::string_view to_string(MmField f) {
  switch (f) {
    case MmField::real: return "real";
    case MmField::integer: return "integer";
    case MmField::pattern: return "pattern";
    case MmField::complex: return "complex";
  }
  return "?";
}
std::string_view to_string(MmSymmetry s) {
  switch (s) {
    case MmSymmetry::general: return "general";
    case MmSymmetry::symmetric: return "symmetric";
    case MmSymmetry::skew_symmetric: return "skew-symmetric";
    case MmSymmetry::hermitian: return "hermitian";
  }
  return "?";
}

namespace {

constexpr const char* kBannerExample = "'%%MatrixMarket matrix coordinate real general'";

inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
inline bool is_sep(char c) { return is_blank(c) || c == '\n'; }

std::string num(double v, const char* fmt = "%g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return r;
}

// A cursor over the text. The buffer ends with '\n' (a sentinel when the file did not), so
// scanning a line never needs the end pointer; `end` is only checked at line starts.
struct Parser {
  const std::string& path;
  const char* p;
  const char* end;
  std::int64_t line = 1;

  [[noreturn]] void fail(const std::string& msg) const { fail_at(line, msg); }
  [[noreturn]] void fail_at(std::int64_t at, const std::string& msg) const {
    throw ParseError(path + ":" + std::to_string(at) + ": " + msg);
  }

  // What the text at `q` looks like, for "found ..." in messages.
  std::string found(const char* q) const {
    if (q >= end) return "end of file";
    if (*q == '\n') return "end of line";
    const char* e = q;
    while (e < end && !is_sep(*e) && e - q < 24) ++e;
    std::string tok(q, e);
    for (auto& c : tok)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    return "'" + tok + (e < end && !is_sep(*e) ? "...'" : "'");
  }

  void skip_blanks() {
    while (is_blank(*p)) ++p;
  }
  void next_line() {  // p is at '\n'
    ++p;
    ++line;
  }
  void skip_line() {
    p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p) + 1));
    next_line();
  }
  // Skips blank and '%' comment lines; false at end of file.
  bool next_content_line() {
    for (;;) {
      if (p >= end) return false;
      skip_blanks();
      if (*p == '\n') {
        next_line();
      } else if (*p == '%') {
        skip_line();
      } else {
        return true;
      }
    }
  }
  void skip_to_eol() {
    while (*p != '\n') ++p;
  }
  void expect_eol(const char* after) {
    skip_blanks();
    if (*p != '\n') fail(std::string("expected end of line after ") + after + ", found " + found(p));
    next_line();
  }

  // A non-negative decimal integer followed by a separator.
  [[gnu::always_inline]] std::uint64_t parse_uint(const char* expected) {
    skip_blanks();
    const char* s = p;
    std::uint64_t v = 0;
    while (static_cast<unsigned>(*p - '0') < 10u) {
      v = v * 10 + static_cast<unsigned>(*p - '0');
      ++p;
    }
    if (p == s || !is_sep(*p) || p - s > 18) [[unlikely]]
      bad_uint(s, expected);
    return v;
  }
  [[noreturn, gnu::cold, gnu::noinline]] void bad_uint(const char* s, const char* expected) {
    const bool too_long = p != s && is_sep(*p);
    fail(std::string("expected ") + expected + ", found " + found(s) + (too_long ? " (too large)" : ""));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void bad_value(const char* s, const char* expected,
                                                        const char* note = "") {
    if (*s == '\n') fail(std::string("missing value: expected ") + expected + ", found end of line");
    fail(std::string("expected ") + expected + ", found " + found(s) + note);
  }

  [[gnu::always_inline]] double parse_real(const char* expected) {
    skip_blanks();
    const char* s = p;
    if (*p == '+' && p[1] != '-' && p[1] != '+') ++p;  // from_chars does not take a '+'
    double v = 0;
    const auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc() || !is_sep(*r.ptr)) [[unlikely]] {
      if (r.ec != std::errc::result_out_of_range || !is_sep(*r.ptr)) bad_value(s, expected);
      v = std::strtod(std::string(s, r.ptr).c_str(), nullptr);  // over/underflow: ±HUGE_VAL or 0
    }
    p = r.ptr;
    return v;
  }

  double parse_integer_value(const char* expected) {
    skip_blanks();
    const char* s = p;
    if (*p == '+' && p[1] != '-' && p[1] != '+') ++p;
    std::int64_t v = 0;
    const auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc() || !is_sep(*r.ptr)) [[unlikely]]
      bad_value(s, expected, r.ec == std::errc::result_out_of_range ? " (out of the 64-bit range)" : "");
    p = r.ptr;
    return static_cast<double>(v);
  }

  std::string_view word() {
    skip_blanks();
    const char* s = p;
    while (!is_sep(*p)) ++p;
    return {s, static_cast<std::size_t>(p - s)};
  }
};

// Parses the banner, comments and size line; leaves `ps` at the first data line.
MatrixMarketHeader parse_header(Parser& ps) {
  MatrixMarketHeader h;
  if (ps.end == ps.p) ps.fail(std::string("the file is empty; expected the banner ") + kBannerExample);
  const std::string_view magic = ps.word();
  if (lower(magic) != "%%matrixmarket")
    ps.fail(std::string("expected the banner ") + kBannerExample + ", found " +
            ps.found(magic.data()));
  auto token = [&](const char* what, const char* choices) {
    const std::string_view w = ps.word();
    if (w.empty())
      ps.fail(std::string("expected the ") + what + " (" + choices + ") in the banner, found end of line");
    return std::pair{lower(w), w.data()};
  };
  auto unknown = [&](const char* what, const char* choices, const char* at) {
    ps.fail(std::string("unknown ") + what + " " + ps.found(at) + " in the banner: expected " + choices);
  };
  const auto [object, object_at] = token("object", "matrix");
  if (object == "vector")
    throw UnsupportedError(ps.path + ":1: Matrix Market vectors are not supported; expected object 'matrix'");
  if (object != "matrix") unknown("object", "matrix", object_at);
  const char* formats = "coordinate or array";
  const auto [format, format_at] = token("format", formats);
  if (format == "coordinate") h.format = MmFormat::coordinate;
  else if (format == "array") h.format = MmFormat::array;
  else unknown("format", formats, format_at);
  const char* fields = "real, integer, pattern or complex";
  const auto [field, field_at] = token("field", fields);
  if (field == "real" || field == "double") h.field = MmField::real;
  else if (field == "integer") h.field = MmField::integer;
  else if (field == "pattern") h.field = MmField::pattern;
  else if (field == "complex") h.field = MmField::complex;
  else unknown("field", fields, field_at);
  const char* symmetries = "general, symmetric, skew-symmetric or hermitian";
  const auto [sym, sym_at] = token("symmetry", symmetries);
  if (sym == "general") h.symmetry = MmSymmetry::general;
  else if (sym == "symmetric") h.symmetry = MmSymmetry::symmetric;
  else if (sym == "skew-symmetric") h.symmetry = MmSymmetry::skew_symmetric;
  else if (sym == "hermitian") h.symmetry = MmSymmetry::hermitian;
  else unknown("symmetry", symmetries, sym_at);
  if (h.format == MmFormat::array && h.field == MmField::pattern)
    ps.fail("the pattern field is not allowed with the array format; expected real or integer");
  ps.skip_line();  // extra words after the symmetry are ignored

  const bool coord = h.format == MmFormat::coordinate;
  const char* size_form = coord ? "'rows cols entries'" : "'rows cols'";
  if (!ps.next_content_line())
    ps.fail(std::string("missing size line: expected ") + size_form + " after the banner, found end of file");
  h.size_line = ps.line;
  h.rows = static_cast<std::int64_t>(ps.parse_uint("the number of rows (a non-negative integer)"));
  h.cols = static_cast<std::int64_t>(ps.parse_uint("the number of columns (a non-negative integer)"));
  if (coord)
    h.entries = static_cast<std::int64_t>(ps.parse_uint("the number of entries (a non-negative integer)"));
  ps.expect_eol(coord ? "the size line 'rows cols entries'" : "the size line 'rows cols' of an array file");
  if (h.symmetry != MmSymmetry::general && h.rows != h.cols)
    ps.fail_at(h.size_line, "a " + std::string(to_string(h.symmetry)) + " matrix must be square, found " +
            std::to_string(h.rows) + " x " + std::to_string(h.cols));
  if (!coord) {
    const __int128 n = h.rows, m = h.cols;
    const __int128 values = h.symmetry == MmSymmetry::general          ? n * m
                            : h.symmetry == MmSymmetry::skew_symmetric ? n * (n - 1) / 2
                                                                       : n * (n + 1) / 2;
    if (values > (__int128(1) << 62))
      ps.fail_at(h.size_line, "the array size " + std::to_string(h.rows) + " x " + std::to_string(h.cols) +
              " is too large; expected at most 2^62 values");
    h.entries = static_cast<std::int64_t>(values);
  }
  return h;
}

// Refuse a declared size that the rest of the file or the memory cannot hold, before any
// allocation: each entry takes at least `min_text` bytes of text and `entry_bytes` of memory,
// each row `row_bytes` (row_ptr and to_csr's counts).
void check_declared_text(const Parser& ps, const MatrixMarketHeader& h) {
  const bool coord = h.format == MmFormat::coordinate;
  const std::int64_t min_text = !coord ? 2 : h.field == MmField::pattern ? 4 : 6;
  const __int128 left = ps.end - ps.p;
  if (__int128(h.entries) * min_text > left + 1)
    ps.fail_at(h.size_line, "the size line declares " + std::to_string(h.entries) +
                                (coord ? " entries" : " values") + ", but only " +
                                std::to_string(int64_t(left)) + " bytes follow (each takes at least " +
                                std::to_string(min_text) +
                                "): the file is truncated or the size line is wrong");
}

void check_declared_memory(const Parser& ps, const MatrixMarketHeader& h, std::size_t entry_bytes,
                           std::size_t row_bytes) {
  const std::string at = ps.path + ":" + std::to_string(h.size_line) + ": ";
  const double mirror = h.symmetry == MmSymmetry::general ? 1 : 2;
  const double need = double(h.entries) * mirror * double(entry_bytes) +
                      (double(h.rows) + 1) * double(row_bytes);
  const double avail = double(available_memory_bytes());
  if (avail > 0 && need > avail)
    throw OutOfMemoryError(at + "the size line declares " + std::to_string(h.rows) + " rows, " +
                           std::to_string(h.cols) + " columns and " + std::to_string(h.entries) +
                           " entries, which need about " + num(need / (1 << 30), "%.3g") +
                           " GiB of memory to read; expected at most the " +
                           num(avail / (1 << 30), "%.3g") + " GiB available");
}

template <class Value, class Index>
Csr<Value, Index> read_body(Parser& ps, const MatrixMarketHeader& h, FileBytes& text) {
  const std::string where = ps.path + ":" + std::to_string(h.size_line);
  if (h.field == MmField::complex)
    throw UnsupportedError(ps.path + ":1: complex matrices are not supported (field 'complex'); "
                           "spmat reads real, integer and pattern matrices");
  check_declared_text(ps, h);
  check_index_range<Index>(h.rows, h.cols, h.entries, where);
  // COO arrays + to_csr's permutation and counts + the CSR result.
  check_declared_memory(ps, h, 3 * sizeof(Index) + 2 * sizeof(Value) + sizeof(std::size_t),
                        3 * sizeof(Index));

  const bool mirror = h.symmetry != MmSymmetry::general;
  const double mirror_sign = h.symmetry == MmSymmetry::skew_symmetric ? -1.0 : 1.0;
  const bool skew = h.symmetry == MmSymmetry::skew_symmetric;
  Coo<Value, Index> c;
  c.rows = static_cast<Index>(h.rows);
  c.cols = static_cast<Index>(h.cols);
  const std::size_t cap = static_cast<std::size_t>(h.entries) * (mirror ? 2 : 1);
  c.row_idx.reserve(cap);
  c.col_idx.reserve(cap);
  c.values.reserve(cap);
  auto add = [&](std::uint64_t i, std::uint64_t j, double v) {  // 0-based
    c.row_idx.push_back(static_cast<Index>(i));
    c.col_idx.push_back(static_cast<Index>(j));
    c.values.push_back(static_cast<Value>(v));
    if (mirror && i != j) {
      c.row_idx.push_back(static_cast<Index>(j));
      c.col_idx.push_back(static_cast<Index>(i));
      c.values.push_back(static_cast<Value>(mirror_sign * v));
    }
  };
  const std::string declared = std::to_string(h.entries) + " " +
                               (h.format == MmFormat::coordinate ? "entries" : "values") +
                               " declared on line " + std::to_string(h.size_line);
  auto truncated = [&](std::int64_t k) {
    ps.fail("expected " + std::string(h.format == MmFormat::coordinate ? "entry " : "value ") +
            std::to_string(k + 1) + " of the " + declared +
            ", found end of file: the file is truncated");
  };
  auto value = [&]() -> double {
    switch (h.field) {
      case MmField::real: return ps.parse_real("a real number value");
      case MmField::integer: return ps.parse_integer_value("an integer value");
      default: return 1.0;
    }
  };
  const std::uint64_t rows = static_cast<std::uint64_t>(h.rows), cols = static_cast<std::uint64_t>(h.cols);
  const std::string row_expect = "a row index (an integer from 1 to " + std::to_string(rows) + ")";
  const std::string col_expect = "a column index (an integer from 1 to " + std::to_string(cols) + ")";
  const bool pattern = h.field == MmField::pattern;
  const char* eol_what = pattern ? "the entry 'row col'" : "the entry 'row col value'";

  if (h.format == MmFormat::coordinate) {
    for (std::int64_t k = 0; k < h.entries; ++k) {
      if (!ps.next_content_line()) truncated(k);
      const std::uint64_t i = ps.parse_uint(row_expect.c_str());
      if (i == 0 || i > rows)
        ps.fail("row index " + std::to_string(i) + " is out of range: expected 1 to " +
                std::to_string(rows) + " (Matrix Market indices are 1-based)");
      const std::uint64_t j = ps.parse_uint(col_expect.c_str());
      if (j == 0 || j > cols)
        ps.fail("column index " + std::to_string(j) + " is out of range: expected 1 to " +
                std::to_string(cols) + " (Matrix Market indices are 1-based)");
      const double v = value();
      if (pattern) ps.skip_to_eol();  // some SuiteSparse pattern files carry a value column
      if (skew && i == j && v != 0)
        ps.fail("expected no diagonal entry in a skew-symmetric matrix (its diagonal is zero), found (" +
                std::to_string(i) + ", " + std::to_string(i) + ") = " + num(v));
      ps.expect_eol(eol_what);
      add(i - 1, j - 1, v);
    }
  } else {  // array: column-major; symmetric kinds store the lower triangle
    std::int64_t k = 0;
    for (std::uint64_t j = 0; j < cols; ++j) {
      const std::uint64_t first = !mirror ? 0 : skew ? j + 1 : j;
      for (std::uint64_t i = first; i < rows; ++i, ++k) {
        if (!ps.next_content_line()) truncated(k);
        const double v = value();
        ps.expect_eol("the value (array files have one value per line)");
        if (v != 0) add(i, j, v);  // zeros of a dense file are not stored
      }
    }
  }
  if (ps.next_content_line())
    ps.fail("expected end of file after the " + declared + ", found " + ps.found(ps.p) +
            ": the file has more entries than declared");
  check_index_range<Index>(h.rows, h.cols, static_cast<std::int64_t>(c.col_idx.size()), where);
  text.data.reset();  // lower the peak memory before to_csr's own arrays
  return to_csr(c);
}

}  // namespace

MatrixMarketHeader read_matrix_market_header(const std::string& path) {
  constexpr std::size_t kPrefix = 1 << 20;
  FileBytes b = read_file_bytes(path, kPrefix);
  const bool cut = b.size >= kPrefix;
  try {
    Parser ps{path, b.begin(), b.end()};
    return parse_header(ps);
  } catch (const ParseError&) {
    if (!cut) throw;
  }
  b = read_file_bytes(path);  // a header past the first megabyte (long comments)
  Parser ps{path, b.begin(), b.end()};
  return parse_header(ps);
}

template <class Value, class Index>
Csr<Value, Index> read_matrix_market(const std::string& path, MatrixMarketHeader* header,
                                     std::size_t* text_bytes) {
  FileBytes b = read_file_bytes(path);
  if (text_bytes) *text_bytes = b.size;
  Parser ps{path, b.begin(), b.end()};
  const MatrixMarketHeader h = parse_header(ps);
  if (header) *header = h;
  return read_body<Value, Index>(ps, h, b);
}

template <class Value, class Index>
Csr<Value, Index> read_matrix_market(const std::string& path) {
  return read_matrix_market<Value, Index>(path, nullptr, nullptr);
}

template <class Value, class Index>
void write_matrix_market(const std::string& path, const Csr<Value, Index>& a) {
  a.validate(path);
  FileWriter w(path, ends_with(path, ".gz"));
  constexpr std::size_t kChunk = 1 << 20;
  constexpr int kDigits = std::is_same_v<Value, float> ? 9 : 17;  // exact round trip
  std::string buf = "%%MatrixMarket matrix coordinate real general\n% written by spmat\n" +
                    std::to_string(a.rows) + " " + std::to_string(a.cols) + " " +
                    std::to_string(a.col_idx.size()) + "\n";
  const std::size_t head = buf.size();
  buf.resize(head + kChunk + 128);
  char* const base = buf.data();
  char* out = base + head;
  for (Index r = 0; r < a.rows; ++r) {
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      char* const lim = base + buf.size();
      out = std::to_chars(out, lim, static_cast<std::int64_t>(r) + 1).ptr;
      *out++ = ' ';
      out = std::to_chars(out, lim, static_cast<std::int64_t>(a.col_idx[k]) + 1).ptr;
      *out++ = ' ';
      out = std::to_chars(out, lim, a.values[k], std::chars_format::general, kDigits).ptr;
      *out++ = '\n';
      if (static_cast<std::size_t>(out - base) >= kChunk) {
        w.write(base, static_cast<std::size_t>(out - base));
        out = base;
      }
    }
  }
  w.write(base, static_cast<std::size_t>(out - base));
  w.commit();
}

#define SPMAT_INSTANTIATE(V, I)                                                               \
  template Csr<V, I> read_matrix_market<V, I>(const std::string&);                            \
  template Csr<V, I> read_matrix_market<V, I>(const std::string&, MatrixMarketHeader*,        \
                                              std::size_t*);                                  \
  template void write_matrix_market(const std::string&, const Csr<V, I>&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::io
