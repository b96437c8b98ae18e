// spmat/io/matrix_market.cpp — the Matrix Market reader (hand-written tokenizer over whole lines
// streamed from the file, std::from_chars for reals) and writer.
// SPDX-License-Identifier: MIT
#include "spmat/io/matrix_market.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
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

// Limits on text that is not entries: a reader must not spend unbounded time on a stream of
// blank lines (a gzip bomb of newlines inflates 1000:1), nor hold an unbounded line.
constexpr std::int64_t kMaxFillerBytes = std::int64_t(64) << 20;  // blank/comment lines in all
constexpr std::int64_t kMaxTrailingBytes = std::int64_t(1) << 20;  // ... after the last entry
constexpr std::size_t kMaxLineBytes = std::size_t(16) << 20;
constexpr std::size_t kChunkBytes = std::size_t(1) << 20;

// Whole lines of text from an InputStream. The window [begin, end) always ends with '\n' (a
// sentinel is added when the file does not end with one), so scanning a line never needs the
// end pointer; `end` is only checked at line starts, where `refill` brings the next lines.
struct LineBuffer {
  InputStream& in;
  std::unique_ptr<char[]> buf;
  std::size_t cap = 0, len = 0;  // allocated bytes, bytes read into buf
  const char* end = nullptr;     // one past the last '\n' available
  bool eof = false;

  explicit LineBuffer(InputStream& s) : in(s) {
    // A small plain file gets a small window; it grows (to kMaxLineBytes) only for a long line.
    cap = s.regular() && !s.gzip() ? std::clamp<std::size_t>(s.file_size() + 1, 4096, kChunkBytes)
                                   : kChunkBytes;
    buf.reset(new char[cap + 1]);
    end = buf.get();
  }
  // Drops the lines before `end`, brings more whole lines; false at the end of the text.
  bool refill(const std::string& name, std::int64_t line) {
    const std::size_t used = static_cast<std::size_t>(end - buf.get());
    const std::size_t keep = len - used;
    std::memmove(buf.get(), end, keep);
    len = keep;
    end = buf.get();
    if (eof) return false;
    std::size_t searched = 0;
    for (;;) {
      if (len == cap) {
        if (cap >= kMaxLineBytes)
          throw ParseError(name + ":" + std::to_string(line) + ": a line is longer than " +
                           std::to_string(kMaxLineBytes >> 20) +
                           " MiB; expected Matrix Market lines (one entry per line)");
        std::unique_ptr<char[]> bigger(new char[2 * cap + 1]);
        std::memcpy(bigger.get(), buf.get(), len);
        buf = std::move(bigger);
        cap *= 2;
      }
      const std::size_t n = in.read(buf.get() + len, cap - len);
      if (n == 0) {
        eof = true;
        if (len == 0) return false;
        if (buf[len - 1] != '\n') buf[len++] = '\n';  // room: buf has cap + 1 bytes
        end = buf.get() + len;
        return true;
      }
      len += n;
      const void* nl = ::memrchr(buf.get() + searched, '\n', len - searched);
      searched = len;
      if (nl) {
        end = static_cast<const char*>(nl) + 1;
        return true;
      }
    }
  }
};

// A cursor over the lines of a LineBuffer.
struct Parser {
  const std::string& path;
  LineBuffer& lb;
  bool lenient = false;
  const char* p = nullptr;
  const char* end = nullptr;
  const char* line_begin = nullptr;
  std::int64_t line = 1;
  std::int64_t filler = 0;  // bytes of blank and comment lines so far

  Parser(const std::string& name, LineBuffer& b, bool len) : path(name), lb(b), lenient(len) {
    lb.in.set_line(&line);
    refill();
  }
  ~Parser() { lb.in.set_line(nullptr); }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  bool refill() {
    const bool more = lb.refill(path, line);
    p = line_begin = lb.buf.get();
    end = lb.end;
    return more;
  }

  [[noreturn]] void fail(const std::string& msg) const { fail_at(line, msg); }
  [[noreturn]] void fail_at(std::int64_t at, const std::string& msg) const {
    throw ParseError(path + ":" + std::to_string(at) + ": " + msg);
  }
  // "path:line:column: msg", the column (1-based, in bytes) of `q` on the current line.
  [[noreturn]] void fail_col(const char* q, const std::string& msg) const {
    throw ParseError(path + ":" + std::to_string(line) + ":" + std::to_string(q - line_begin + 1) +
                     ": " + msg);
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
    line_begin = p;
  }
  void skip_line() {
    p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    next_line();
  }
  // Skips blank and '%' comment lines, at most `budget` bytes of them in all (the filler count
  // goes on across calls); false at end of file.
  bool next_content_line(std::int64_t budget = kMaxFillerBytes, const char* after = nullptr) {
    for (;;) {
      if (p >= end && !refill()) return false;
      const char* s = p;
      skip_blanks();
      if (*p == '\n') {
        next_line();
      } else if (*p == '%') {
        skip_line();
      } else {
        return true;
      }
      filler += p - s;
      if (filler > budget) too_much_filler(budget, after);
    }
  }
  [[noreturn, gnu::cold, gnu::noinline]] void too_much_filler(std::int64_t budget, const char* after) const {
    if (after)
      fail(std::string("more than ") + std::to_string(kMaxTrailingBytes) +
           " bytes of blank and comment lines after the " + after +
           "; expected the end of the file (the file is padded)");
    fail("more than " + std::to_string(budget) +
         " bytes of blank and comment lines; expected Matrix Market entries (the file is "
         "padded or not a matrix)");
  }
  void skip_to_eol() {
    while (*p != '\n') ++p;
  }
  void expect_eol(const char* after, const char* hint = "") {
    skip_blanks();
    if (*p != '\n') [[unlikely]]
      fail_col(p, std::string("expected end of line after ") + after + ", found " + found(p) + hint);
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
    fail_col(s, std::string("expected ") + expected + ", found " + found(s) + (too_long ? " (too large)" : ""));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void bad_value(const char* s, const char* expected,
                                                        const char* note = "") {
    if (*s == '\n') fail_col(s, std::string("missing value: expected ") + expected + ", found end of line");
    fail_col(s, std::string("expected ") + expected + ", found " + found(s) + note);
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
      // Underflow rounds to the nearest double (zero or subnormal), which is what the text
      // means; overflow would turn a number into infinity without a word.
      if (std::isinf(v) && !lenient)
        fail_col(s, "the value " + std::string(s, r.ptr) +
                        " is beyond the range of a double (about 1.8e308); expected a finite "
                        "value (lenient reading makes it infinite)");
    }
    p = r.ptr;
    return v;
  }

  // Values are held as double: an integer beyond 2^53 in magnitude would be rounded.
  double parse_integer_value(const char* expected) {
    skip_blanks();
    const char* s = p;
    if (*p == '+' && p[1] != '-' && p[1] != '+') ++p;
    std::int64_t v = 0;
    const auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc() || !is_sep(*r.ptr)) [[unlikely]]
      bad_value(s, expected, r.ec == std::errc::result_out_of_range ? " (out of the 64-bit range)" : "");
    constexpr std::int64_t kExact = std::int64_t(1) << 53;
    if ((v > kExact || v < -kExact) && !lenient) [[unlikely]]
      fail_col(s, "the integer value " + std::string(s, r.ptr) +
                      " is beyond 2^53 in magnitude and would be rounded; expected |value| <= "
                      "9007199254740992 (lenient reading rounds it)");
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

// Bytes of text left after the cursor, when the input is a plain regular file (else -1).
std::int64_t known_bytes_left(const Parser& ps) {
  const InputStream& in = ps.lb.in;
  if (!in.regular() || in.gzip()) return -1;
  const std::uint64_t unparsed = static_cast<std::uint64_t>(ps.lb.buf.get() + ps.lb.len - ps.p);
  return static_cast<std::int64_t>(in.file_size() - (in.bytes_read() - unparsed));
}

// Refuses, before reading any entry, a declared count that the rest of a plain file cannot
// hold (each entry takes at least `min_text` bytes of text). Streams are checked as they come:
// nothing is allocated for entries that have not arrived.
void check_declared_text(const Parser& ps, const MatrixMarketHeader& h, std::int64_t left) {
  const bool coord = h.format == MmFormat::coordinate;
  const std::int64_t min_text = !coord ? 2 : h.field == MmField::pattern ? 4 : 6;
  if (left >= 0 && __int128(h.entries) * min_text > __int128(left) + 1)
    ps.fail_at(h.size_line, "the size line declares " + std::to_string(h.entries) +
                                (coord ? " entries" : " values") + ", but only " +
                                std::to_string(left) + " bytes follow (each takes at least " +
                                std::to_string(min_text) +
                                "): the file is truncated or the size line is wrong");
}

template <class Value, class Index>
Csr<Value, Index> read_body(Parser& ps, const MatrixMarketHeader& h, const ReadOptions& opt) {
  const std::string where = ps.path + ":" + std::to_string(h.size_line);
  if (h.field == MmField::complex)
    throw UnsupportedError(ps.path + ":1: complex matrices are not supported (field 'complex'); "
                           "spmat reads real, integer and pattern matrices");
  const std::int64_t left = known_bytes_left(ps);
  check_declared_text(ps, h, left);
  check_index_range<Index>(h.rows, h.cols, h.entries, where);

  const bool mirror = h.symmetry != MmSymmetry::general;
  const double mirror_sign = h.symmetry == MmSymmetry::skew_symmetric ? -1.0 : 1.0;
  const bool skew = h.symmetry == MmSymmetry::skew_symmetric;
  // Memory: COO (row, col, value) per stored entry; then to_csr's permutation and the CSR
  // arrays per entry, and three index arrays per row (counts, next slot, row_ptr).
  constexpr double kCooBytes = 2 * sizeof(Index) + sizeof(Value);
  constexpr double kCsrBytes = sizeof(std::size_t) + sizeof(Index) + sizeof(Value);
  const double row_bytes = (double(h.rows) + 1) * 3 * sizeof(Index);
  const std::string rows_what = std::to_string(h.rows) + " rows";
  const std::uint64_t max_stored = static_cast<std::uint64_t>(h.entries) * (mirror ? 2 : 1);
  if (left >= 0)  // a plain file: its size bounds the text, so a hopeless read fails now
    check_memory(opt, row_bytes + double(max_stored) * (kCooBytes + kCsrBytes),
                 ps.lb.in.file_size(), where,
                 rows_what + ", " + std::to_string(h.entries) + " entries as declared");

  Coo<Value, Index> c;
  c.rows = static_cast<Index>(h.rows);
  c.cols = static_cast<Index>(h.cols);
  // Capacity grows with the entries read (a declared count is a promise, not a fact), each
  // growth checked against the memory limit of the text read so far.
  auto grow = [&](std::size_t need) {
    std::size_t cap = std::max<std::size_t>(c.row_idx.capacity() * 2, std::size_t(1) << 16);
    cap = std::max(std::min<std::size_t>(cap, max_stored), need);
    // The input known so far: a plain file's whole size, else the text read up to here.
    const std::uint64_t input = left >= 0 ? ps.lb.in.file_size() : ps.lb.in.bytes_read();
    check_memory(opt, double(cap + c.row_idx.capacity()) * kCooBytes, input, where,
                 std::to_string(cap) + " entries");
    c.row_idx.reserve(cap);
    c.col_idx.reserve(cap);
    c.values.reserve(cap);
  };
  if (left >= 0) grow(static_cast<std::size_t>(max_stored));  // backed by the file's size
  auto add = [&](std::uint64_t i, std::uint64_t j, double v) {  // 0-based
    if (c.row_idx.size() + 2 > c.row_idx.capacity()) [[unlikely]]
      grow(c.row_idx.size() + 2);
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
  auto parsed_value = [&]() -> double {
    switch (h.field) {
      case MmField::real: return ps.parse_real("a real number value");
      case MmField::integer: return ps.parse_integer_value("an integer value");
      default: return 1.0;
    }
  };
  auto value = [&]() -> double {
    const char* at = ps.p;
    const double v = parsed_value();
    // fp32 storage: a finite value past its range would become infinity on conversion.
    if constexpr (std::is_same_v<Value, float>)
      if (std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max() && !ps.lenient)
        [[unlikely]] {
        while (is_blank(*at)) ++at;
        ps.fail_col(at, "the value " + num(v) +
                            " is beyond the range of fp32 (about 3.4e38); expected a smaller "
                            "value, or read the matrix as fp64 (lenient reading makes it infinite)");
      }
    return v;
  };
  const std::uint64_t rows = static_cast<std::uint64_t>(h.rows), cols = static_cast<std::uint64_t>(h.cols);
  const std::string row_expect = "a row index (an integer from 1 to " + std::to_string(rows) + ")";
  const std::string col_expect = "a column index (an integer from 1 to " + std::to_string(cols) + ")";
  const bool pattern = h.field == MmField::pattern;
  const char* eol_what = pattern ? "the pattern entry 'row col'" : "the entry 'row col value'";
  const char* eol_hint = pattern ? " (a pattern entry has no value; lenient reading ignores extra words)" : "";

  if (h.format == MmFormat::coordinate) {
    for (std::int64_t k = 0; k < h.entries; ++k) {
      if (!ps.next_content_line()) truncated(k);
      ps.skip_blanks();
      const char* at = ps.p;
      const std::uint64_t i = ps.parse_uint(row_expect.c_str());
      if (i == 0 || i > rows)
        ps.fail_col(at, "row index " + std::to_string(i) + " is out of range: expected 1 to " +
                            std::to_string(rows) + " (Matrix Market indices are 1-based)");
      ps.skip_blanks();
      at = ps.p;
      const std::uint64_t j = ps.parse_uint(col_expect.c_str());
      if (j == 0 || j > cols)
        ps.fail_col(at, "column index " + std::to_string(j) + " is out of range: expected 1 to " +
                            std::to_string(cols) + " (Matrix Market indices are 1-based)");
      const double v = value();
      if (pattern && ps.lenient) ps.skip_to_eol();  // some SuiteSparse pattern files carry values
      if (skew && i == j && v != 0)
        ps.fail("expected no diagonal entry in a skew-symmetric matrix (its diagonal is zero), found (" +
                std::to_string(i) + ", " + std::to_string(i) + ") = " + num(v));
      ps.expect_eol(eol_what, eol_hint);
      add(i - 1, j - 1, v);
    }
  } else {
    // Array: column-major, the symmetric kinds store the lower triangle. The loop runs once
    // per declared value (never once per column: a 0-row file may declare 10^18 columns).
    auto first = [&](std::uint64_t j) { return !mirror ? 0 : skew ? j + 1 : j; };
    std::uint64_t j = 0, i = first(0);
    for (std::int64_t k = 0; k < h.entries; ++k) {
      while (i >= rows) i = first(++j);  // only a skew file's last column is empty
      if (!ps.next_content_line()) truncated(k);
      const double v = value();
      ps.expect_eol("the value (array files have one value per line)");
      if (v != 0) add(i, j, v);  // zeros of a dense file are not stored
      ++i;
    }
  }
  // Blank and comment lines may follow, but not much: the declared entries are all read.
  if (ps.next_content_line(ps.filler + kMaxTrailingBytes, declared.c_str()))
    ps.fail("expected end of file after the " + declared + ", found " + ps.found(ps.p) +
            ": the file has more entries than declared");
  check_index_range<Index>(h.rows, h.cols, static_cast<std::int64_t>(c.col_idx.size()), where);
  // Rows cost memory whatever the file holds: a short file declaring 10^9 rows stops here.
  check_memory(opt, row_bytes + double(c.col_idx.size()) * (kCooBytes + kCsrBytes), ps.lb.in.bytes_read(),
               where, rows_what + " and " + std::to_string(c.col_idx.size()) + " stored entries");
  return to_csr(c);
}

}  // namespace

MatrixMarketHeader read_matrix_market_header(const std::string& path) {
  InputStream in(path);
  LineBuffer lb(in);
  Parser ps(in.name(), lb, false);
  return parse_header(ps);
}

template <class Value, class Index>
Csr<Value, Index> read_matrix_market(InputStream& in, const ReadOptions& options,
                                     MatrixMarketHeader* header, std::size_t* text_bytes) {
  LineBuffer lb(in);
  Parser ps(in.name(), lb, options.lenient);
  const MatrixMarketHeader h = parse_header(ps);
  if (header) *header = h;
  auto a = read_body<Value, Index>(ps, h, options);
  if (text_bytes) *text_bytes = static_cast<std::size_t>(in.bytes_read());
  return a;
}

template <class Value, class Index>
Csr<Value, Index> read_matrix_market(const std::string& path, const ReadOptions& options,
                                     MatrixMarketHeader* header, std::size_t* text_bytes) {
  InputStream in(path, options.lenient);
  return read_matrix_market<Value, Index>(in, options, header, text_bytes);
}

template <class Value, class Index>
Csr<Value, Index> read_matrix_market(const std::string& path, MatrixMarketHeader* header,
                                     std::size_t* text_bytes) {
  return read_matrix_market<Value, Index>(path, ReadOptions{}, header, text_bytes);
}

template <class Value, class Index>
Csr<Value, Index> read_matrix_market(const std::string& path) {
  return read_matrix_market<Value, Index>(path, ReadOptions{}, nullptr, nullptr);
}

namespace {

// Refuses to write `a` with a field or symmetry it does not have: the file would read back as
// another matrix.
template <class Value, class Index>
void check_writable(const std::string& path, const Csr<Value, Index>& a, const MmWriteOptions& o) {
  if (o.field == MmField::complex)
    throw UnsupportedError(path + ": cannot write the field 'complex'; expected real, integer or pattern");
  if (o.field == MmField::integer)
    for (std::size_t k = 0; k < a.values.size(); ++k) {
      const double v = static_cast<double>(a.values[k]);
      if (!(std::floor(v) == v && std::fabs(v) <= 9007199254740992.0))
        throw InvalidMatrixError(path + ": cannot write the field 'integer': value " + num(v, "%.17g") +
                                 " (entry " + std::to_string(k) +
                                 ") is not an integer within 2^53; expected integer values");
    }
  if (o.symmetry == MmSymmetry::general) return;
  const std::string sym(to_string(o.symmetry));
  if (a.rows != a.cols)
    throw InvalidMatrixError(path + ": cannot write a " + std::to_string(a.rows) + " x " +
                             std::to_string(a.cols) + " matrix as " + sym + "; expected a square matrix");
  const Csr<Value, Index> t = transpose(a);
  const bool skew = o.symmetry == MmSymmetry::skew_symmetric;
  bool same = t.row_ptr == a.row_ptr && t.col_idx == a.col_idx;
  for (std::size_t k = 0; same && k < a.values.size(); ++k)
    same = skew ? t.values[k] == -a.values[k] : t.values[k] == a.values[k];
  if (!same)
    throw InvalidMatrixError(path + ": cannot write the matrix as " + sym + ": it is not " + sym +
                             " (A" + (skew ? " != -A^T" : " != A^T") + "); expected a " + sym +
                             " matrix, or the symmetry 'general'");
}

}  // namespace

template <class Value, class Index>
void write_matrix_market(const std::string& path, const Csr<Value, Index>& a, const MmWriteOptions& o) {
  a.validate(path);
  check_writable(path, a, o);
  const bool lower_only = o.symmetry != MmSymmetry::general;  // mirrored again on reading
  std::int64_t entries = static_cast<std::int64_t>(a.col_idx.size());
  if (lower_only) {
    entries = 0;
    for (Index r = 0; r < a.rows; ++r)
      for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) entries += a.col_idx[k] <= r;
  }
  FileWriter w(path, ends_with(path, ".gz"));
  constexpr std::size_t kChunk = 1 << 20;
  constexpr int kDigits = std::is_same_v<Value, float> ? 9 : 17;  // exact round trip
  std::string buf = "%%MatrixMarket matrix coordinate " + std::string(to_string(o.field)) + " " +
                    std::string(to_string(o.symmetry)) + "\n% written by spmat\n" +
                    std::to_string(a.rows) + " " + std::to_string(a.cols) + " " +
                    std::to_string(entries) + "\n";
  const std::size_t head = buf.size();
  buf.resize(head + kChunk + 128);
  char* const base = buf.data();
  char* out = base + head;
  for (Index r = 0; r < a.rows; ++r) {
    for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      if (lower_only && a.col_idx[k] > r) break;  // columns are sorted within a row
      char* const lim = base + buf.size();
      out = std::to_chars(out, lim, static_cast<std::int64_t>(r) + 1).ptr;
      *out++ = ' ';
      out = std::to_chars(out, lim, static_cast<std::int64_t>(a.col_idx[k]) + 1).ptr;
      if (o.field == MmField::real) {
        *out++ = ' ';
        out = std::to_chars(out, lim, a.values[k], std::chars_format::general, kDigits).ptr;
      } else if (o.field == MmField::integer) {
        *out++ = ' ';
        out = std::to_chars(out, lim, static_cast<std::int64_t>(a.values[k])).ptr;
      }
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
  template Csr<V, I> read_matrix_market<V, I>(const std::string&, const ReadOptions&,         \
                                              MatrixMarketHeader*, std::size_t*);             \
  template Csr<V, I> read_matrix_market<V, I>(InputStream&, const ReadOptions&,               \
                                              MatrixMarketHeader*, std::size_t*);             \
  template void write_matrix_market(const std::string&, const Csr<V, I>&, const MmWriteOptions&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::io
