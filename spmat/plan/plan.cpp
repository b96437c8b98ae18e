// spmat/plan/plan.cpp — candidates, the time model, ranking and tuning.
// SPDX-License-Identifier: MIT
#include "spmat/plan/plan.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <sstream>

#include "spmat/plan/model.hpp"
#include "spmat/plan/plan_cache.hpp"
#include "spmat/plan/plan_options.hpp"
#include "spmat/plan/tune.hpp"
#include "spmat/registry.hpp"

namespace spmat {

namespace {

std::vector<Op> parse_ops(const std::string& text) {
  std::vector<Op> ops;
  std::string cur;
  auto flush = [&] {
    if (cur.empty()) return;
    const Op op = parse_op(cur);
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    cur.clear();
  };
  for (char c : text) {
    if (c == '+' || c == ' ' || c == ';') flush();
    else cur += c;
  }
  flush();
  if (ops.empty()) throw ParseError("auto: ops='" + text + "' names no operation");
  return ops;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

const OptionTable<PlanOptions>& PlanOptions::fields() {
  using O = PlanOptions;
  constexpr auto no_max = std::numeric_limits<std::int64_t>::max();
  static const std::vector<std::pair<std::string, bool>> yes_no{
      {"0", false}, {"1", true}, {"false", false}, {"true", true},
      {"no", false}, {"yes", true}, {"off", false}, {"on", true}};
  static const OptionTable<O> t{
      string_option("ops", &O::ops,
                    "operations to plan for, joined by '+' (storages past the first one's are built on first use)"),
      int_option("calls", &O::calls, 0, no_max,
                 "expected calls of each operation; 0 = many (build cost not weighed)"),
      int_option("k", &O::k, 1, no_max, "spmm: dense columns"),
      layout_option("layout", &O::layout, "spmm: layout of B and C (row, col)"),
      int_option("memory", &O::memory, 0, no_max,
                 "bytes the stored matrix may take (0 = no limit); limits a stored transpose"),
      enum_option("deterministic", &O::deterministic, yes_no,
                  "1: only kernels with bitwise-identical results run to run"),
      choice_option("transpose", &O::transpose, {"auto", "store", "native"},
                    "spmv_t strategy: auto, store (a transposed copy), native (one storage)"),
      double_option("budget_ms", &O::budget_ms, 0.0, true,
                    "tune: wall time for building and timing candidates"),
      enum_option("cache", &O::cache, yes_no, "tune: use the on-disk plan cache (SPMAT_CACHE_DIR)")};
  return t;
}

PlanRequest PlanRequest::from_options(const FormatOptions& o, Backend backend, PlanLevel level) {
  const auto opt = parse_options<PlanOptions>(o);
  PlanRequest r;
  r.backend = backend;
  r.level = level;
  r.ops = parse_ops(opt.ops);
  r.calls = opt.calls;
  r.k = opt.k;
  r.layout = opt.layout;
  r.memory_budget = static_cast<std::size_t>(opt.memory);
  r.deterministic = opt.deterministic;
  r.tune_budget_ms = opt.budget_ms;
  r.use_cache = opt.cache;
  r.transpose = opt.transpose;
  return r;
}

std::string PlanRequest::key() const {
  // Plain string building, no iostream: the key is computed inside host processes (Python,
  // with CUDA objects in the extension) where the stream's locale facets are not to be relied
  // on, and it must not depend on a locale anyway.
  std::string s = "ops=";
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (i) s += '+';
    s += to_string(ops[i]);
  }
  s += ",calls=" + std::to_string(calls) + ",k=" + std::to_string(k) + ",layout=";
  s += to_string(layout);
  s += ",backend=";
  s += to_string(backend);
  s += ",memory=" + std::to_string(memory_budget) + ",deterministic=" +
       (deterministic ? "1" : "0") + ",transpose=" + transpose;
  return s;
}

double FormatPlan::setup_ms() const {
  double total = 0;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    bool shared = false;  // two operations on one storage build it once
    for (std::size_t j = 0; j < i; ++j)
      shared = shared || (choices[j].format == choices[i].format && choices[j].transposed == choices[i].transposed);
    if (!shared && !std::isnan(choices[i].setup_ms)) total += choices[i].setup_ms;
  }
  return total;
}

const OpChoice* FormatPlan::choice(Op op) const {
  for (const auto& c : choices)
    if (c.op == op) return &c;
  return nullptr;
}

std::string FormatPlan::describe() const {
  std::ostringstream s;
  char buf[256];
  s << "matrix: " << stats.summary() << "\n";
  s << "plan (" << (level == PlanLevel::tune ? "tune" : "auto") << ", " << to_string(backend)
    << ", " << precision << (from_cache ? ", from the plan cache" : "") << "):\n";
  for (const auto& c : choices) {
    std::snprintf(buf, sizeof buf, "  %-7s -> %s%s  predicted %.4f ms", std::string(to_string(c.op)).c_str(),
                  c.format.c_str(), c.transposed ? " on a stored transpose" : "", c.predicted_ms);
    s << buf;
    if (!std::isnan(c.measured_ms)) {
      std::snprintf(buf, sizeof buf, ", measured %.4f ms", c.measured_ms);
      s << buf;
    }
    if (!std::isnan(c.setup_ms)) {
      std::snprintf(buf, sizeof buf, "; build about %.0f ms", c.setup_ms);
      s << buf;
    }
    s << "\n";
  }
  s << "reason: " << reason << "\n";
  std::snprintf(buf, sizeof buf, "planning: %.2f ms (tuning %.2f ms); estimated build of the chosen storages: %.0f ms\n",
                plan_ms, tune_ms, setup_ms());
  s << buf << "candidates (best first per operation):\n";
  for (const auto& c : candidates) {
    std::snprintf(buf, sizeof buf, "  %-7s %-22s predicted %9.4f ms", std::string(to_string(c.op)).c_str(),
                  (c.format + (c.transposed ? " (A^T)" : "")).c_str(), c.predicted_ms);
    s << buf;
    if (!std::isnan(c.measured_ms)) {
      std::snprintf(buf, sizeof buf, "  measured %9.4f ms", c.measured_ms);
      s << buf;
    }
    std::snprintf(buf, sizeof buf, "  %8.1f MB  %s\n", static_cast<double>(c.bytes) / 1e6, c.note.c_str());
    s << buf;
  }
  return s.str();
}

FormatPlan plan_from_stats(const MatrixStats& s, const PlanRequest& r, int value_bytes,
                     int index_bytes) {
  FormatPlan p;
  p.level = PlanLevel::automatic;
  p.backend = r.backend;
  p.precision = value_bytes == 4 ? "fp32" : "fp64";
  p.stats = s;
  const plan_model::Device dev = plan_model::device_for(r.backend);
  for (Op op : r.ops) {
    auto cands = plan_model::candidates(s, r, dev, op, value_bytes, index_bytes);
    if (cands.empty())
      throw UnsupportedError("auto: no registered format runs " + std::string(to_string(op)) +
                             " on " + std::string(to_string(r.backend)) +
                             (r.deterministic ? " deterministically" : "") +
                             (r.memory_budget ? " within the memory budget" : ""));
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
      return a.predicted_ms < b.predicted_ms;
    });
    const Candidate& best = cands.front();
    p.choices.push_back({op, best.format, best.transposed, best.predicted_ms, NAN, best.setup_ms});
    for (auto& c : cands) p.candidates.push_back(std::move(c));
  }
  p.reason = plan_model::reason(s, p, dev);
  return p;
}

template <class Value, class Index>
FormatPlan plan(const Csr<Value, Index>& a, const PlanRequest& r) {
  return detail::plan_keeping(a, r, static_cast<BuiltParts<Value>*>(nullptr));
}

namespace detail {
template <class Value, class Index>
FormatPlan plan_keeping(const Csr<Value, Index>& a, const PlanRequest& r, BuiltParts<Value>* built) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool transposed_ops =
      std::find(r.ops.begin(), r.ops.end(), Op::spmv_t) != r.ops.end();
  const MatrixStats s = matrix_stats(a, transposed_ops);
  FormatPlan p = plan_from_stats(s, r, sizeof(Value), sizeof(Index));
  if (r.level == PlanLevel::tune) {
    p.level = PlanLevel::tune;
    PlanCache cache = PlanCache::from_environment();
    const std::string key = plan_cache_key(structure_fingerprint(a), p, r, index_name<Index>());
    if (r.use_cache) {
      if (auto cached = cache.load(key); cached && apply_cached(p, *cached)) {
        p.from_cache = true;
        p.plan_ms = ms_since(t0);
        return p;
      }
    }
    tune_plan(a, r, p, built);  // sets tune_ms: the time beyond auto's own build
    if (r.use_cache) cache.store(key, p);
  }
  p.plan_ms = ms_since(t0);
  return p;
}

}  // namespace detail

#define SPMAT_INSTANTIATE(V, I)                                                   \
  template FormatPlan plan(const Csr<V, I>&, const PlanRequest&);                 \
  template FormatPlan detail::plan_keeping(const Csr<V, I>&, const PlanRequest&, \
                                           BuiltParts<V>*);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
