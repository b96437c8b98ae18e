// spmat/gen/spec.cpp — the table of generators, describe(), and the spec parser.
// SPDX-License-Identifier: MIT
#include "spmat/gen/spec.hpp"

#include <charconv>
#include <cmath>

#include "spmat/core/error.hpp"
#include "spmat/gen/generators.hpp"

namespace spmat::gen {
namespace detail {

namespace {

// The one list of generators. describe() prints it and docs/generators.md repeats describe()'s
// lines verbatim (a test checks that), so edit here first.
constexpr GeneratorInfo kTable[] = {
    {"random_p", "gen:random_p:<n>|<m>x<n>:<p>",
     "uniform random: each entry present with probability p", "gen:random_p:1000:0.01", 2, 2,
     "seed values"},
    {"random_k", "gen:random_k:<n>|<m>x<n>:<k>", "k distinct uniformly random columns per row",
     "gen:random_k:10000:16", 2, 2, "seed values"},
    {"ideal", "gen:ideal[:<n>]", "GCSB ideal: equal nnz in every block of a block row",
     "gen:ideal:1024", 0, 1, "block density spread seed values"},
    {"lap2d", "gen:lap2d:<n>", "2-D 5-point Laplacian, n x n grid: n^2 rows, 4 and -1",
     "gen:lap2d:100", 1, 1, ""},
    {"lap3d", "gen:lap3d:<n>", "3-D 7-point Laplacian, n^3 grid: n^3 rows, 6 and -1",
     "gen:lap3d:20", 1, 1, ""},
    {"lap3d27", "gen:lap3d27:<n>", "3-D 27-point stencil, n^3 grid: n^3 rows, 26 and -1",
     "gen:lap3d27:16", 1, 1, ""},
    {"rmat", "gen:rmat:<scale>:<edge_factor>",
     "R-MAT (Graph500): 2^scale rows, edge_factor*2^scale edges", "gen:rmat:12:16", 2, 2,
     "a b c seed values"},
    {"banded", "gen:banded:<n>:<bandwidth>", "every entry with |i-j| <= bandwidth",
     "gen:banded:1000:3", 2, 2, "seed values"},
    {"powerlaw", "gen:powerlaw:<n>:<mean_k>", "power-law row lengths (mean mean_k), random columns",
     "gen:powerlaw:10000:8:alpha=2.5", 2, 2, "alpha seed values"},
};

// Positional names, parallel to kTable (for "missing argument <p>").
std::vector<std::string_view> positional_names(const GeneratorInfo& info) {
  std::vector<std::string_view> out;
  std::string_view g = info.grammar;
  g.remove_prefix(4 + info.name.size());  // "gen:<name>"
  while (!g.empty()) {
    while (!g.empty() && (g.front() == ':' || g.front() == '[')) g.remove_prefix(1);
    const auto end = g.find(':');
    std::string_view item = g.substr(0, end);
    while (!item.empty() && item.back() == ']') item.remove_suffix(1);
    if (!item.empty()) out.push_back(item);
    if (end == std::string_view::npos) break;
    g.remove_prefix(end);
  }
  return out;
}

std::string known_list() {
  std::string s;
  for (const auto& g : kTable) s += (s.empty() ? "" : ", ") + std::string(g.name);
  return s;
}

std::string key_list(std::string_view keys) {
  std::string s;
  for (char c : keys) s += c == ' ' ? std::string(", ") : std::string(1, c);
  return s;
}

bool key_accepted(std::string_view keys, std::string_view key) {
  while (!keys.empty()) {
    const auto sp = keys.find(' ');
    if (keys.substr(0, sp) == key) return true;
    if (sp == std::string_view::npos) break;
    keys.remove_prefix(sp + 1);
  }
  return false;
}

bool parse_int(std::string_view s, std::int64_t& v) {
  if (s.empty() || s.front() == '+' || s.front() == '-') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parse_real(std::string_view s, double& v) {
  if (s.empty() || s.front() == '+') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(v);
}

std::string fmt_real(double v) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, p);
}

}  // namespace

std::span<const GeneratorInfo> generator_table() { return kTable; }

Spec split_spec(std::string_view text) {
  Spec s;
  s.text = std::string(text);
  std::string_view rest = text;
  if (is_generator_spec(rest)) rest.remove_prefix(4);
  auto fail = [&](const std::string& m) {
    throw ParseError(s.text + ": " + m + "; expected gen:<name>[:<args>][:key=value] with <name> one of " +
                     known_list());
  };
  if (rest.empty()) fail("no generator name");
  std::vector<std::string_view> items;
  for (;;) {
    const auto c = rest.find(':');
    items.push_back(rest.substr(0, c));
    if (c == std::string_view::npos) break;
    rest.remove_prefix(c + 1);
  }
  s.name = std::string(items[0]);
  if (s.name.empty()) fail("no generator name");
  for (std::size_t i = 1; i < items.size(); ++i) {
    const std::string_view item = items[i];
    if (item.empty()) fail("item " + std::to_string(i) + " is empty (two ':' in a row or a trailing ':')");
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      if (!s.keys.empty())
        fail("positional argument '" + std::string(item) + "' after key=value items (keys come last)");
      s.args.emplace_back(item);
      continue;
    }
    std::string key(item.substr(0, eq)), value(item.substr(eq + 1));
    if (key.empty() || value.empty()) fail("item '" + std::string(item) + "' is not key=value");
    for (const auto& [k, v] : s.keys)
      if (k == key) fail("key '" + key + "' given twice");
    s.keys.emplace_back(std::move(key), std::move(value));
  }
  return s;
}

Args::Args(const Spec& spec, const GeneratorInfo& info) : spec_(spec), info_(info) {
  const auto n = static_cast<int>(spec.args.size());
  const auto names = positional_names(info);
  if (n < info.min_args)
    fail("missing argument " + std::string(names[static_cast<std::size_t>(n)]));
  if (n > info.max_args)
    fail("too many arguments (" + std::to_string(n) + " given, at most " +
         std::to_string(info.max_args) + ")");
  for (const auto& [k, v] : spec.keys)
    if (!key_accepted(info.keys, k))
      fail("unknown key '" + k + "' (" +
           (info.keys.empty() ? std::string(info.name) + " accepts no keys"
                              : "accepted: " + key_list(info.keys)) +
           ")");
}

void Args::fail(const std::string& message) const {
  throw ParseError(spec_.text + ": " + message + "; expected " + std::string(info_.grammar) +
                   " (e.g. " + std::string(info_.example) + ")");
}

std::int64_t Args::integer(std::size_t pos, std::string_view what, std::int64_t lo,
                           std::int64_t hi) const {
  const std::string& s = spec_.args.at(pos);
  std::int64_t v = 0;
  if (!parse_int(s, v))
    fail("argument " + std::string(what) + " = '" + s + "' is not a non-negative integer");
  if (v < lo || v > hi)
    fail("argument " + std::string(what) + " = " + s + " is out of range [" + std::to_string(lo) +
         ", " + std::to_string(hi) + "]");
  return v;
}

double Args::real(std::size_t pos, std::string_view what, double lo, double hi) const {
  const std::string& s = spec_.args.at(pos);
  double v = 0;
  if (!parse_real(s, v)) fail("argument " + std::string(what) + " = '" + s + "' is not a number");
  if (v < lo || v > hi)
    fail("argument " + std::string(what) + " = " + s + " is out of range [" + fmt_real(lo) + ", " +
         fmt_real(hi) + "]");
  return v;
}

Dims Args::dims(std::size_t pos, std::string_view what, bool rectangular, std::int64_t hi) const {
  const std::string& s = spec_.args.at(pos);
  const auto x = s.find('x');
  if (x != std::string::npos && !rectangular)
    fail("argument " + std::string(what) + " = '" + s + "': this generator is square only");
  std::int64_t m = 0, n = 0;
  const bool ok = x == std::string::npos
                      ? parse_int(s, n) && (m = n, true)
                      : parse_int(std::string_view(s).substr(0, x), m) &&
                            parse_int(std::string_view(s).substr(x + 1), n);
  if (!ok)
    fail("argument " + std::string(what) + " = '" + s + "' is not " +
         (rectangular ? "<n> or <m>x<n>" : "<n>") + " with non-negative integers");
  if (m > hi || n > hi)
    fail("argument " + std::string(what) + " = " + s + ": dimensions above " + std::to_string(hi));
  return {m, n};
}

const std::string* Args::find_key(std::string_view key) const {
  for (const auto& [k, v] : spec_.keys)
    if (k == key) return &v;
  return nullptr;
}

std::int64_t Args::key_integer(std::string_view key, std::int64_t dflt, std::int64_t lo,
                               std::int64_t hi) const {
  const std::string* s = find_key(key);
  if (!s) return dflt;
  std::int64_t v = 0;
  if (!parse_int(*s, v))
    fail("key " + std::string(key) + " = '" + *s + "' is not a non-negative integer");
  if (v < lo || v > hi)
    fail("key " + std::string(key) + " = " + *s + " is out of range [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "]");
  return v;
}

double Args::key_real(std::string_view key, double dflt, double lo, double hi) const {
  const std::string* s = find_key(key);
  if (!s) return dflt;
  double v = 0;
  if (!parse_real(*s, v)) fail("key " + std::string(key) + " = '" + *s + "' is not a number");
  if (v < lo || v > hi)
    fail("key " + std::string(key) + " = " + *s + " is out of range [" + fmt_real(lo) + ", " +
         fmt_real(hi) + "]");
  return v;
}

std::uint64_t Args::seed() const {
  const std::string* s = find_key("seed");
  if (!s) return 0;
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (s->empty() || s->front() == '-' || ec != std::errc() || p != s->data() + s->size())
    fail("key seed = '" + *s + "' is not an unsigned 64-bit integer");
  return v;
}

ValueKind Args::values() const {
  const std::string* s = find_key("values");
  if (!s || *s == "uniform") return ValueKind::uniform;
  if (*s == "ones") return ValueKind::ones;
  if (*s == "int") return ValueKind::integers;
  fail("key values = '" + *s + "' is not one of uniform, ones, int");
}

std::int64_t checked_product(std::string_view spec, std::string_view what,
                             std::initializer_list<std::int64_t> factors) {
  std::int64_t p = 1;
  for (std::int64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p))
      throw IndexOverflowError(std::string(spec) + ": " + std::string(what) +
                               " overflows 64-bit integers");
  return p;
}

}  // namespace detail

std::string describe() {
  std::string s =
      "Matrix generators: use gen:<name>:<args>[:key=value]... wherever a matrix file is accepted.\n";
  for (const auto& g : detail::generator_table()) {
    std::string line = "  " + std::string(g.grammar);
    line.resize(std::max<std::size_t>(line.size() + 2, 36), ' ');
    s += line + std::string(g.summary) + "  e.g. " + std::string(g.example) + "\n";
  }
  s +=
      "Keys (after the positionals):\n"
      "  seed=<N>                          every random generator; default 0, so a bare spec is deterministic\n"
      "  values=uniform|ones|int           random generators: uniform in (-1,1) (default), all 1, or +-1..+-4\n"
      "  block=<b> density=<d> spread=<s>  ideal: block size (32), density (0.05075645 = thesis), row spread (0.5)\n"
      "  a=<a> b=<b> c=<c>                 rmat: quadrant probabilities (0.57 0.19 0.19; d = 1-a-b-c)\n"
      "  alpha=<a>                         powerlaw: exponent of P(len) ~ len^-alpha (2.0; > 1)\n";
  return s;
}

}  // namespace spmat::gen
