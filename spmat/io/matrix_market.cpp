// spmat/io/matrix_market.cpp — the Matrix Market reader (hand-written tokenizer over whole lines
// streamed from the file, std::from_chars for reals) and writer.
// SPDX-License-Identifier: MIT
#include "spmat/io/matrix_market.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <type_traits>

#include "spmat/io/entry_store.hpp"
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

// Text read ahead of a LineBuffer's stream (by the run pipeline), served before the stream.
struct TextAhead {
  std::unique_ptr<char[]> owner;  // the run's text, kept alive while its bytes are served
  const char* p = nullptr;
  std::size_t n = 0;
};

// Whole lines of text from an InputStream, or a fixed run of whole lines already in memory (a
// run being parsed). The window [buf, end) always ends with '\n' (a sentinel is added when the
// file does not end with one), so scanning a line never needs the end pointer; `end` is only
// checked at line starts, where `refill` brings the next lines.
struct LineBuffer {
  InputStream* in = nullptr;  // nullptr: a fixed run of lines, nothing comes after it
  std::deque<TextAhead> ahead;
  std::unique_ptr<char[]> own;
  char* buf = nullptr;
  std::size_t cap = 0, len = 0;  // allocated bytes, bytes read into buf
  const char* end = nullptr;     // one past the last '\n' available
  bool eof = false;

  explicit LineBuffer(InputStream& s) : in(&s) {
    // A small plain file gets a small window; it grows (to kMaxLineBytes) only for a long line.
    cap = s.regular() && !s.gzip() ? std::clamp<std::size_t>(s.file_size() + 1, 4096, kChunkBytes)
                                   : kChunkBytes;
    own.reset(new char[cap + 1]);
    buf = own.get();
    end = buf;
  }
  // Whole lines [text, text + n), n > 0 and text[n - 1] == '\n'.
  LineBuffer(char* text, std::size_t n) : buf(text), cap(n), len(n), end(text + n), eof(true) {}

  // Up to n bytes: the text read ahead first, then the stream.
  std::size_t read(char* out, std::size_t n) {
    while (!ahead.empty()) {
      TextAhead& a = ahead.front();
      const std::size_t c = std::min(n, a.n);
      std::memcpy(out, a.p, c);
      a.p += c;
      a.n -= c;
      if (a.n == 0) ahead.pop_front();
      if (c > 0) return c;
    }
    return in->read(out, n);
  }

  // Drops the lines before `end`, brings more whole lines; false at the end of the text.
  bool refill(const std::string& name, std::int64_t line) {
    if (!in) {  // a fixed run: once consumed, nothing is left
      buf += len;
      len = 0;
      end = buf;
      return false;
    }
    const std::size_t used = static_cast<std::size_t>(end - buf);
    const std::size_t keep = len - used;
    std::memmove(buf, end, keep);
    len = keep;
    end = buf;
    if (eof) return false;
    std::size_t searched = 0;
    for (;;) {
      if (len == cap) {
        if (cap >= kMaxLineBytes)
          throw ParseError(name + ":" + std::to_string(line) + ": a line is longer than " +
                           std::to_string(kMaxLineBytes >> 20) +
                           " MiB; expected Matrix Market lines (one entry per line)");
        std::unique_ptr<char[]> bigger(new char[2 * cap + 1]);
        std::memcpy(bigger.get(), buf, len);
        own = std::move(bigger);
        buf = own.get();
        cap *= 2;
      }
      const std::size_t n = read(buf + len, cap - len);
      if (n == 0) {
        eof = true;
        if (len == 0) return false;
        if (buf[len - 1] != '\n') buf[len++] = '\n';  // room: buf has cap + 1 bytes
        end = buf + len;
        return true;
      }
      len += n;
      const void* nl = ::memrchr(buf + searched, '\n', len - searched);
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

  // `first_line`, `filler_so_far`: where the text of `b` starts (the run pipeline hands the
  // rest of a file to a new Parser), so that messages name the right line.
  Parser(const std::string& name, LineBuffer& b, bool len, std::int64_t first_line = 1,
         std::int64_t filler_so_far = 0)
      : path(name), lb(b), lenient(len), line(first_line), filler(filler_so_far) {
    if (lb.in) {
      lb.in->set_line(&line);
      refill();
    } else {
      p = line_begin = lb.buf;
      end = lb.end;
    }
  }
  ~Parser() {
    if (lb.in) lb.in->set_line(nullptr);
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  bool refill() {
    const bool more = lb.refill(path, line);
    p = line_begin = lb.buf;
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
  const InputStream& in = *ps.lb.in;
  if (!in.regular() || in.gzip()) return -1;
  const std::uint64_t unparsed = static_cast<std::uint64_t>(ps.lb.buf + ps.lb.len - ps.p);
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

// The positions a coordinate file can fill: every (i, j) of a general matrix; those on and
// below the diagonal of a symmetric or hermitian one (an entry above it is the mirror image of
// one below); those below the diagonal of a skew-symmetric one. Exact for any declared size.
__int128 coordinate_positions(const MatrixMarketHeader& h) {
  const __int128 n = h.rows, m = h.cols;
  switch (h.symmetry) {
    case MmSymmetry::general: return n * m;
    case MmSymmetry::skew_symmetric: return n * (n - 1) / 2;
    default: return n * (n + 1) / 2;
  }
}

// Strict reading refuses a size line declaring more entries than the matrix has positions: the
// extra entries can only be duplicates, and a file of little else (a few KB of gzip inflating
// to millions of copies of one entry) would cost work and memory out of all proportion to the
// matrix. Lenient reading reads it and sums the duplicates, compacting them as they pile up.
void check_declared_positions(const Parser& ps, const MatrixMarketHeader& h) {
  const __int128 positions = coordinate_positions(h);
  if (ps.lenient || __int128(h.entries) <= positions) return;
  const char* which = h.symmetry == MmSymmetry::general          ? ""
                      : h.symmetry == MmSymmetry::skew_symmetric ? " below the diagonal"
                                                                 : " on and below the diagonal";
  const std::string p = std::to_string(static_cast<std::int64_t>(positions));  // < entries: fits
  const bool one = positions == 1;
  ps.fail_at(h.size_line, "the size line declares " + std::to_string(h.entries) + " entries, but a " +
                              std::to_string(h.rows) + " x " + std::to_string(h.cols) + " " +
                              std::string(to_string(h.symmetry)) + " matrix has only " + p +
                              (one ? " position" : " positions") + which + "; expected at most " + p +
                              (one ? " entry" : " entries") + " (lenient reading sums duplicate entries)");
}

// What every entry of a file is checked against; shared by the serial reader and the run
// parsers, so that both accept and refuse the same text with the same words.
struct EntryRules {
  MmField field;
  bool skew, pattern;
  std::uint64_t rows, cols;
  std::string row_expect, col_expect;
  const char* eol_what;
  const char* eol_hint;

  explicit EntryRules(const MatrixMarketHeader& h)
      : field(h.field),
        skew(h.symmetry == MmSymmetry::skew_symmetric),
        pattern(h.field == MmField::pattern),
        rows(static_cast<std::uint64_t>(h.rows)),
        cols(static_cast<std::uint64_t>(h.cols)),
        row_expect("a row index (an integer from 1 to " + std::to_string(rows) + ")"),
        col_expect("a column index (an integer from 1 to " + std::to_string(cols) + ")"),
        eol_what(pattern ? "the pattern entry 'row col'" : "the entry 'row col value'"),
        eol_hint(pattern ? " (a pattern entry has no value; lenient reading ignores extra words)" : "") {}
};

[[noreturn, gnu::cold, gnu::noinline]] void index_out_of_range(const Parser& ps, const char* at,
                                                               const char* which, std::uint64_t v,
                                                               std::uint64_t n) {
  ps.fail_col(at, std::string(which) + " index " + std::to_string(v) + " is out of range: expected 1 to " +
                      std::to_string(n) + " (Matrix Market indices are 1-based)");
}

[[noreturn, gnu::cold, gnu::noinline]] void beyond_fp32(const Parser& ps, const char* at, double v) {
  while (is_blank(*at)) ++at;
  ps.fail_col(at, "the value " + num(v) +
                      " is beyond the range of fp32 (about 3.4e38); expected a smaller value, or "
                      "read the matrix as fp64 (lenient reading makes it infinite)");
}

[[noreturn, gnu::cold, gnu::noinline]] void skew_diagonal(const Parser& ps, std::uint64_t i, double v) {
  ps.fail("expected no diagonal entry in a skew-symmetric matrix (its diagonal is zero), found (" +
          std::to_string(i) + ", " + std::to_string(i) + ") = " + num(v));
}

// The value of an entry (1 for pattern), checked against the range of the stored type.
template <class Value>
[[gnu::always_inline]] inline double read_value(Parser& ps, MmField field) {
  [[maybe_unused]] const char* at = ps.p;
  double v = 1.0;
  if (field == MmField::real) v = ps.parse_real("a real number value");
  else if (field == MmField::integer) v = ps.parse_integer_value("an integer value");
  // fp32 storage: a finite value past its range would become infinity on conversion.
  if constexpr (std::is_same_v<Value, float>)
    if (std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max() && !ps.lenient) [[unlikely]]
      beyond_fp32(ps, at, v);
  return v;
}

// One coordinate entry, from the start of its line (where next_content_line leaves the parser)
// to the start of the next: 1-based indices checked against the size, the value, the end of
// the line.
template <class Value>
[[gnu::always_inline]] inline void read_entry(Parser& ps, const EntryRules& r, std::uint64_t& i,
                                              std::uint64_t& j, double& v) {
  ps.skip_blanks();
  const char* at = ps.p;
  i = ps.parse_uint(r.row_expect.c_str());
  if (i == 0 || i > r.rows) [[unlikely]] index_out_of_range(ps, at, "row", i, r.rows);
  ps.skip_blanks();
  at = ps.p;
  j = ps.parse_uint(r.col_expect.c_str());
  if (j == 0 || j > r.cols) [[unlikely]] index_out_of_range(ps, at, "column", j, r.cols);
  v = read_value<Value>(ps, r.field);
  if (r.pattern && ps.lenient) ps.skip_to_eol();  // some SuiteSparse pattern files carry values
  if (r.skew && i == j && v != 0) [[unlikely]] skew_diagonal(ps, i, v);
  ps.expect_eol(r.eol_what, r.eol_hint);
}

// The entries read so far, in file order over the pieces; the serial reader appends to the
// last piece.
template <class Value, class Index>
struct EntryStore {
  detail::EntryPieces<Value, Index> pieces;
  std::size_t sealed = 0;  // entries in the pieces before the last

  std::size_t total() const { return sealed + (pieces.empty() ? 0 : pieces.back().size()); }
  detail::EntryPiece<Value, Index>& open() {
    sealed = total();
    return pieces.emplace_back();
  }
  void append(detail::EntryPiece<Value, Index>&& p) {
    sealed = total();
    pieces.push_back(std::move(p));
  }
};

// --- the run pipeline -------------------------------------------------------------------------
// A large coordinate file is parsed on several threads: one reads (inflates) the text in runs
// of whole lines while the others parse the runs already read. A run's entries are taken in
// file order, and only while the runs are clean; everything else goes to the serial reader
// (see read_runs), so the entries, their order and every message are those of a serial read.

constexpr std::size_t kRunBytes = std::size_t(1) << 20;

// Runs of whole lines of about kRunBytes, read after the header (the rest of its window first).
// A read error or a line longer than a run ends the runs early: what was read and not handed
// out stays in carry(), and the serial reader, reading it next, meets the long line or the
// error (InputStream throws it again) where it would have without runs.
class TextRuns {
 public:
  TextRuns(InputStream& in, const char* rest, std::size_t n) : in_(in), carry_(rest, n) {}

  bool next(std::unique_ptr<char[]>& text, std::size_t& len) {
    if (done_) return false;
    const std::size_t cap = std::max(kRunBytes, carry_.size() + 1);
    std::unique_ptr<char[]> b(new char[cap + 1]);  // + 1: room for a final '\n'
    std::size_t n = carry_.size();
    std::memcpy(b.get(), carry_.data(), n);
    carry_.clear();
    bool eof = false;
    try {
      while (n < cap) {
        const std::size_t got = in_.read(b.get() + n, cap - n);
        if (got == 0) {
          eof = true;
          break;
        }
        n += got;
      }
    } catch (const Error&) {
      carry_.assign(b.get(), n);
      done_ = true;
      return false;
    }
    if (eof) {
      done_ = true;
      if (n == 0) return false;
      if (b[n - 1] != '\n') b[n++] = '\n';  // as LineBuffer does at the end of the text
      len = n;
    } else {
      const void* nl = ::memrchr(b.get(), '\n', n);
      if (!nl) {
        carry_.assign(b.get(), n);
        done_ = true;
        return false;
      }
      len = static_cast<std::size_t>(static_cast<const char*>(nl) + 1 - b.get());
      carry_.assign(b.get() + len, n - len);
    }
    text = std::move(b);
    return true;
  }
  const std::string& carry() const { return carry_; }
  // No more runs: the text ended, or ended early.
  bool done() const { return done_; }

 private:
  InputStream& in_;
  std::string carry_;
  bool done_ = false;
};

// A run and what parsing it found.
template <class Value, class Index>
struct Run {
  std::unique_ptr<char[]> text;
  std::size_t len = 0;
  detail::EntryPiece<Value, Index> entries;
  std::int64_t lines = 0, filler = 0;  // its lines, its bytes of blank and comment lines
  std::size_t after_last = 0;          // the offset of the line after its last entry
  std::int64_t lines_to_last = 0, filler_to_last = 0;
  bool failed = false;  // an error in the text: the serial reader reports it with its line
  bool done = false;    // parsed (guarded by the pipeline's mutex)
};

// `expect`: about the entries the run holds (from the runs parsed before), so that the
// arrays are allocated once, neither grown nor trimmed by copying.
template <class Value, class Index>
void parse_run(Run<Value, Index>& r, const std::string& path, bool lenient, const EntryRules& rules,
               std::size_t expect) {
  LineBuffer lb(r.text.get(), r.len);
  Parser ps(path, lb, lenient, 0, 0);
  auto& e = r.entries;
  e.reserve(expect);
  try {
    // No filler budget here: the runs' filler is added up in file order when they are taken.
    while (ps.next_content_line(std::numeric_limits<std::int64_t>::max())) {
      std::uint64_t i, j;
      double v;
      read_entry<Value>(ps, rules, i, j, v);
      e.push(static_cast<Index>(i - 1), static_cast<Index>(j - 1), static_cast<Value>(v));
      r.after_last = static_cast<std::size_t>(ps.p - r.text.get());
      r.lines_to_last = ps.line;
      r.filler_to_last = ps.filler;
    }
  } catch (const Error&) {
    r.failed = true;
    e = {};
    return;
  }
  r.lines = ps.line;
  r.filler = ps.filler;
  if (e.capacity() > e.size() + e.size() / 4 + 64) {
    e.row.shrink_to_fit();
    e.col.shrink_to_fit();
    e.val.shrink_to_fit();
  }
}

// Where the serial reader takes over from the pipeline: its first line, the filler bytes and
// the entries before it.
struct ResumeAt {
  std::int64_t line = 0, filler = 0, entries = 0;
};

// Reads the coordinate entries after the header on `threads` threads (thread 0 reads the text
// and takes the parsed runs in file order; the others parse). A run is taken while it is clean:
// parsed without an error, within the filler budget, not past the declared count. The serial
// reader takes over at the first run that is not (reading it again, it reports the error or
// the surplus entry at its line), or after the last declared entry (for the blank lines allowed
// after it), or after the last run; `rest` gets the text read and not taken, in file order.
// `check_stored(n)` checks the memory limit for n entries held.
template <class Value, class Index, class CheckStored>
ResumeAt read_runs(Parser& ps, const MatrixMarketHeader& h, const EntryRules& rules, int threads,
                   EntryStore<Value, Index>& store, CheckStored&& check_stored,
                   std::deque<TextAhead>& rest) {
  using R = Run<Value, Index>;
  TextRuns source(*ps.lb.in, ps.p, static_cast<std::size_t>(ps.lb.buf + ps.lb.len - ps.p));
  // Runs read and not yet taken: one per thread and a little slack, so that memory does not
  // depend on how far the reading gets ahead of the parsing.
  const std::size_t max_flight = static_cast<std::size_t>(threads) + 2;
  std::mutex m;
  std::condition_variable work_cv, done_cv;
  std::deque<std::unique_ptr<R>> flight;  // read, not yet taken, in file order
  std::size_t handed = 0;                  // the first `handed` of them went to a parser
  bool cancel = false;  // the parsers leave
  std::exception_ptr fatal;

  ResumeAt at{ps.line, ps.filler, 0};
  std::unique_ptr<R> stopped;  // the run the serial reader starts in ...
  std::size_t stopped_from = 0;  // ... at this offset

  // Text for the serial reader, in file order: runs (from an offset), then the carry.
  auto hand_on = [&](std::unique_ptr<char[]> text, std::size_t from, std::size_t len) {
    const char* t = text.get();
    rest.push_back(TextAhead{std::move(text), t + from, len - from});
  };
  auto hand_on_carry = [&] {
    const std::string& c = source.carry();
    if (c.empty()) return;
    std::unique_ptr<char[]> copy(new char[c.size()]);
    std::memcpy(copy.get(), c.data(), c.size());
    hand_on(std::move(copy), 0, c.size());
  };
  {
    auto r = std::make_unique<R>();
    const bool one = source.next(r->text, r->len);
    if (!one || source.done()) {  // at most one run: not worth a team, the serial reader reads it
      if (one) hand_on(std::move(r->text), 0, r->len);
      hand_on_carry();
      return at;
    }
    flight.push_back(std::move(r));
  }

  // Takes a clean run's entries; false (with `stopped` set) where the serial reader takes over.
  auto take = [&](std::unique_ptr<R> r) -> bool {
    const std::int64_t n = static_cast<std::int64_t>(r->entries.size());
    if (r->failed || at.filler + r->filler > kMaxFillerBytes || at.entries + n > h.entries) {
      stopped = std::move(r);
      return false;
    }
    check_stored(store.total() + r->entries.size());
    const ResumeAt last{at.line + r->lines_to_last, at.filler + r->filler_to_last, at.entries + n};
    at = {at.line + r->lines, at.filler + r->filler, at.entries + n};
    if (n > 0) store.append(std::move(r->entries));
    if (at.entries == h.entries) {
      at = last;
      stopped_from = r->after_last;
      stopped = std::move(r);
      return false;
    }
    return true;
  };
  // Bytes of text per entry in the runs parsed so far (guarded by `m`): 16 until one is parsed,
  // a little less than most files have.
  std::size_t text_seen = 16, entries_seen = 1;
  // Parses the next run not handed out yet, if any (called and returning with `lk` held).
  auto parse_next = [&](std::unique_lock<std::mutex>& lk) -> bool {
    if (handed == flight.size()) return false;
    R* r = flight[handed++].get();
    const std::size_t expect = r->len / std::max<std::size_t>(1, text_seen / entries_seen) * 21 / 20 + 64;
    lk.unlock();
    parse_run(*r, ps.path, ps.lenient, rules, expect);
    lk.lock();
    if (!r->failed) {
      text_seen += r->len;
      entries_seen += r->entries.size();
    }
    r->done = true;
    done_cv.notify_all();
    return true;
  };
  auto produce = [&] {
    std::unique_lock lk(m);
    bool more = true;
    for (;;) {
      while (!flight.empty() && flight.front()->done) {
        std::unique_ptr<R> r = std::move(flight.front());
        flight.pop_front();
        --handed;
        lk.unlock();
        const bool go_on = take(std::move(r));
        lk.lock();
        if (!go_on) return;
      }
      if (cancel || (!more && flight.empty())) return;
      if (!more || flight.size() >= max_flight) {
        // Nothing to read now: parse a run, or wait for the oldest one.
        if (!parse_next(lk)) done_cv.wait(lk, [&] { return cancel || flight.front()->done; });
        continue;
      }
      lk.unlock();
      auto r = std::make_unique<R>();
      more = source.next(r->text, r->len);
      lk.lock();
      if (more) {
        flight.push_back(std::move(r));
        work_cv.notify_one();
      }
    }
  };
  auto work = [&] {
    std::unique_lock lk(m);
    while (!cancel) {
      if (!parse_next(lk)) work_cv.wait(lk);
    }
  };
#pragma omp parallel num_threads(threads)
  {
    const bool reader = omp_get_thread_num() == 0;
    try {
      if (reader) produce();
      else work();
    } catch (...) {
      std::lock_guard lk(m);
      if (!fatal) fatal = std::current_exception();
      cancel = true;
      done_cv.notify_all();
      work_cv.notify_all();
    }
    if (reader) {  // the runs are all taken, or the serial reader takes over: the parsers leave
      std::lock_guard lk(m);
      cancel = true;
      work_cv.notify_all();
    }
  }
  if (fatal) std::rethrow_exception(fatal);
  if (stopped) {
    hand_on(std::move(stopped->text), stopped_from, stopped->len);
    for (auto& r : flight) hand_on(std::move(r->text), 0, r->len);
  }
  hand_on_carry();
  return at;
}

template <class Value, class Index>
Csr<Value, Index> read_body(Parser& ps, const MatrixMarketHeader& h, const ReadOptions& opt) {
  const std::string where = ps.path + ":" + std::to_string(h.size_line);
  if (h.field == MmField::complex)
    throw UnsupportedError(ps.path + ":1: complex matrices are not supported (field 'complex'); "
                           "spmat reads real, integer and pattern matrices");
  const bool coord = h.format == MmFormat::coordinate;
  if (coord) check_declared_positions(ps, h);
  const std::int64_t left = known_bytes_left(ps);
  check_declared_text(ps, h, left);
  check_index_range<Index>(h.rows, h.cols, h.entries, where);

  using detail::Mirror;
  const Mirror mirror = h.symmetry == MmSymmetry::general          ? Mirror::none
                        : h.symmetry == MmSymmetry::skew_symmetric ? Mirror::negated
                                                                   : Mirror::same;
  InputStream& in = *ps.lb.in;
  // Memory: the entries as the file lists them (COO); then, per entry after mirroring, the CSR
  // arrays and their copy when duplicates are summed; and three index arrays per row.
  constexpr double kCooBytes = 2 * sizeof(Index) + sizeof(Value);
  constexpr double kCsrBytes = 2 * (sizeof(Index) + sizeof(Value));
  const double row_bytes = (double(h.rows) + 1) * 3 * sizeof(Index);
  const std::string rows_what = std::to_string(h.rows) + " rows";
  // More entries declared than positions (lenient reading only): there are duplicates, maybe
  // millions of one entry. The entries read are compacted (duplicates summed, see
  // detail::compact) when they reach twice those kept by the last compaction plus a margin (at
  // least the rows, whose arrays a compaction walks): memory follows the matrix rather than
  // the file, and the work stays linear, each compaction having at least as many new entries
  // as old ones.
  const __int128 positions = coord ? coordinate_positions(h) : h.entries;
  const bool compacting = __int128(h.entries) > positions;
  const std::size_t compact_margin = std::max<std::size_t>(std::size_t(1) << 16, static_cast<std::size_t>(h.rows));
  std::size_t compact_at = compacting ? compact_margin : std::numeric_limits<std::size_t>::max();
  // The most entries held at once: those declared, or what compaction keeps them to.
  const double held = compacting ? std::min(double(h.entries), 2 * double(positions) + double(compact_margin))
                                 : double(h.entries);

  const double mirrored = mirror == Mirror::none ? 1 : 2;
  if (left >= 0)  // a plain file: its size bounds the text, so a hopeless read fails now
    check_memory(opt, row_bytes + held * (kCooBytes + mirrored * kCsrBytes), in.file_size(), where,
                 rows_what + ", " + std::to_string(h.entries) + " entries as declared");
  // The input known so far: a plain file's whole size, else the text read up to here.
  const auto input_bytes = [&] { return left >= 0 ? in.file_size() : in.bytes_read(); };

  const EntryRules rules(h);
  EntryStore<Value, Index> store;
  detail::EntryPiece<Value, Index>* open = nullptr;  // the piece the serial reader fills
  // Room for one more entry in the open piece (k: the entries read so far). Capacity grows with
  // the entries read (a declared count is a promise, not a fact), each growth checked against
  // the memory limit of the input read so far; when compacting, the entries are compacted
  // instead once they reach compact_at.
  auto make_room = [&](std::int64_t k) {
    if (store.total() >= compact_at) {
      check_memory(opt, row_bytes + double(store.total()) * (kCooBytes + kCsrBytes), input_bytes(), where,
                   rows_what + " and " + std::to_string(store.total()) + " entries to sum");
      detail::compact(store.pieces, static_cast<Index>(h.rows), static_cast<Index>(h.cols), mirror);
      store.sealed = 0;
      compact_at = 2 * store.total() + compact_margin;
      open = &store.open();
    }
    if (open->size() < open->capacity()) return;
    const std::size_t need = open->size() + 1;
    std::size_t cap = std::max<std::size_t>(open->capacity() * 2, std::size_t(1) << 16);
    if (compacting) cap = compact_at - store.sealed;  // full exactly when compaction is due
    cap = std::max(std::min(cap, open->size() + static_cast<std::size_t>(h.entries - k)), need);
    check_memory(opt, double(store.sealed + cap + open->capacity()) * kCooBytes, input_bytes(), where,
                 std::to_string(cap) + " entries");
    open->reserve(cap);
  };
  const std::string declared = std::to_string(h.entries) + " " + (coord ? "entries" : "values") +
                               " declared on line " + std::to_string(h.size_line);
  auto truncated = [&](const Parser& p, std::int64_t k) {
    p.fail("expected " + std::string(coord ? "entry " : "value ") + std::to_string(k + 1) + " of the " +
           declared + ", found end of file: the file is truncated");
  };
  auto read_serially = [&](Parser& p, std::int64_t k0) {
    for (std::int64_t k = k0; k < h.entries; ++k) {
      if (!p.next_content_line()) truncated(p, k);
      std::uint64_t i, j;
      double v;
      read_entry<Value>(p, rules, i, j, v);
      if (open->size() == open->capacity()) [[unlikely]]
        make_room(k);
      open->push(static_cast<Index>(i - 1), static_cast<Index>(j - 1), static_cast<Value>(v));
    }
  };

  // Many threads for a coordinate file of more than one run of text; one when compacting (the
  // runs in flight would hold more entries than its bound).
  const bool small = ps.lb.eof || (left >= 0 && left <= static_cast<std::int64_t>(kRunBytes));
  int threads = coord && h.entries > 0 && !compacting && !small && !omp_in_parallel() ? omp_get_max_threads() : 1;
  if (left >= 0)  // no more threads than runs (a plain file's size is known)
    threads = static_cast<int>(std::min<std::int64_t>(threads, left / static_cast<std::int64_t>(kRunBytes) + 1));
  Parser* active = &ps;  // the parser that reads the end of the text
  std::optional<LineBuffer> rest_lb;
  std::optional<Parser> rest_ps;
  if (threads > 1) {
    std::size_t next_check = std::size_t(1) << 16;
    auto check_stored = [&](std::size_t n) {  // as make_room does, at each doubling
      if (n < next_check) return;
      next_check = 2 * n;
      check_memory(opt, double(n) * kCooBytes, input_bytes(), where, std::to_string(n) + " entries");
    };
    rest_lb.emplace(in);
    const ResumeAt at = read_runs(ps, h, rules, threads, store, check_stored, rest_lb->ahead);
    active = &rest_ps.emplace(ps.path, *rest_lb, ps.lenient, at.line, at.filler);
    open = &store.open();
    read_serially(*active, at.entries);
  } else {
    open = &store.open();
    if (left >= 0) {  // backed by the file's size
      const std::size_t cap = std::min(static_cast<std::size_t>(h.entries), compact_at);
      check_memory(opt, double(cap) * kCooBytes, input_bytes(), where, std::to_string(cap) + " entries");
      open->reserve(cap);
    }
    if (coord) {
      read_serially(ps, 0);
    } else {
      // Array: column-major, the symmetric kinds store the lower triangle. The loop runs once
      // per declared value (never once per column: a 0-row file may declare 10^18 columns).
      const bool skew = mirror == Mirror::negated;
      const std::uint64_t rows = static_cast<std::uint64_t>(h.rows);
      auto first = [&](std::uint64_t j) { return mirror == Mirror::none ? 0 : skew ? j + 1 : j; };
      std::uint64_t j = 0, i = first(0);
      for (std::int64_t k = 0; k < h.entries; ++k) {
        while (i >= rows) i = first(++j);  // only a skew file's last column is empty
        if (!ps.next_content_line()) truncated(ps, k);
        const double v = read_value<Value>(ps, h.field);
        ps.expect_eol("the value (array files have one value per line)");
        if (v != 0) {  // zeros of a dense file are not stored
          if (open->size() == open->capacity()) make_room(k);
          open->push(static_cast<Index>(i), static_cast<Index>(j), static_cast<Value>(v));
        }
        ++i;
      }
    }
  }
  // Blank and comment lines may follow, but not much: the declared entries are all read.
  if (active->next_content_line(active->filler + kMaxTrailingBytes, declared.c_str()))
    active->fail("expected end of file after the " + declared + ", found " + active->found(active->p) +
                 ": the file has more entries than declared");
  const std::size_t stored = store.total();
  const std::size_t n = detail::expanded_count(store.pieces, mirror);
  check_index_range<Index>(h.rows, h.cols, static_cast<std::int64_t>(n), where);
  // Rows cost memory whatever the file holds: a short file declaring 10^9 rows stops here.
  check_memory(opt, row_bytes + double(stored) * kCooBytes + double(n) * kCsrBytes, in.bytes_read(), where,
               rows_what + " and " + std::to_string(n) + " stored entries");
  return detail::pieces_to_csr(store.pieces, static_cast<Index>(h.rows), static_cast<Index>(h.cols), mirror);
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
