// spmat/plan/tune.cpp — timing the candidates (CUDA events on the GPU, steady_clock on the CPU).
// SPDX-License-Identifier: MIT
#include "spmat/plan/tune.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>

#include "spmat/bench/timer.hpp"
#include "spmat/config.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/plan/model.hpp"
#include "spmat/registry.hpp"

namespace spmat {

namespace {

constexpr int kMaxTimed = 8;          // candidates timed per operation
constexpr double kReach = 1.6;        // ... whose prediction is within this factor of the best
// ... or within this many milliseconds of it: products of a few microseconds are bound by the
// launch and the memory latency, which the traffic model does not rank to a few percent, and
// timing one costs about 4 ms.
constexpr double kReachMs = 0.008;
constexpr int kWarmup = 2, kReps = 7;
// Warm-up wall time: after a host-side build the GPU clocks are down and need about 10 ms to
// come back; a candidate timed right after another (no build, or a build of under a
// millisecond such as a cuSPARSE descriptor) finds them up.
constexpr double kMinWarmupAfterBuildMs = 10, kMinWarmupMs = 2, kQuickBuildMs = 1;
constexpr double kSampleMs = 0.2;  // the GPU timer's default span of one sample

/// Vectors for one operation in the backend's memory, freed on scope exit.
template <class Value>
struct Operands {
  Backend backend;
  std::vector<Value> hx, hy;
  Value* x = nullptr;
  Value* y = nullptr;
  Operands(Backend b, std::int64_t nx, std::int64_t ny) : backend(b) {
    hx.assign(static_cast<std::size_t>(std::max<std::int64_t>(nx, 1)), Value(1));
    hy.assign(static_cast<std::size_t>(std::max<std::int64_t>(ny, 1)), Value(0));
#if SPMAT_WITH_CUDA
    if (b == Backend::cuda) {
      try {
        x = static_cast<Value*>(bench::gpu::alloc(hx.size() * sizeof(Value), "tune x"));
        y = static_cast<Value*>(bench::gpu::alloc(hy.size() * sizeof(Value), "tune y"));
        bench::gpu::upload(x, hx.data(), hx.size() * sizeof(Value));
      } catch (...) {
        release();  // no destructor runs for a constructor that throws
        throw;
      }
      return;
    }
#endif
    x = hx.data();
    y = hy.data();
  }
  ~Operands() { release(); }
  void release() noexcept {
#if SPMAT_WITH_CUDA
    if (backend == Backend::cuda) {
      bench::gpu::free(x, hx.size() * sizeof(Value));
      bench::gpu::free(y, hy.size() * sizeof(Value));
    }
#endif
  }
  Operands(const Operands&) = delete;
  Operands& operator=(const Operands&) = delete;
};

double median_ms(Backend b, const std::function<void()>& run, double min_warmup_ms) {
#if SPMAT_WITH_CUDA
  if (b == Backend::cuda)
    return bench::summarize(bench::gpu::time_runs(run, kWarmup, kReps, false, min_warmup_ms)).median_ms;
#else
  (void)b;
  (void)min_warmup_ms;
#endif
  return bench::summarize(bench::cpu::time_runs(run, kWarmup, kReps, false)).median_ms;
}

}  // namespace

template <class Value, class Index>
void tune_plan(const Csr<Value, Index>& a, const PlanRequest& r, FormatPlan& p,
               BuiltParts<Value>* keep) {
  // Time spent beyond what `auto` would spend anyway: the builds of candidates other than the
  // model's choice, and all the timing. The budget bounds it: each timed operation gets an
  // equal share of what is left, and a candidate whose estimated build and timing would not
  // fit in its operation's share is skipped; tune_ms reports what was spent.
  double added_ms = 0;
  BuiltParts<Value> local;
  BuiltParts<Value>& built = keep ? *keep : local;
  std::unique_ptr<Csr<Value, Index>> at;
  double build_slowdown = 1.0;
  int ops_left = 0;
  for (const auto& choice : p.choices) ops_left += choice.op != Op::add;
  for (auto& choice : p.choices) {
    if (choice.op == Op::add) continue;  // add's result is a new matrix: not timed here
    const double op_start_ms = added_ms;
    const double op_budget_ms = std::max(0.0, r.tune_budget_ms - added_ms) / std::max(1, ops_left--);
    std::vector<Candidate*> mine;
    for (auto& c : p.candidates)
      if (c.op == choice.op) mine.push_back(&c);
    if (mine.size() < 2) continue;
    // The model's choice first, then the other candidates whose prediction is within reach of
    // it, best predicted first; cuSPARSE's fastest predicted variant is timed in any case (last
    // if out of reach), so that tune is never slower than the vendor library by a wrong guess.
    const double best = mine.front()->predicted_ms;
    std::vector<Candidate*> timed{mine.front()};
    std::vector<Candidate*> rest(mine.begin() + 1, mine.end());
    std::stable_sort(rest.begin(), rest.end(),
                     [](const Candidate* x, const Candidate* y) { return x->predicted_ms < y->predicted_ms; });
    Candidate* vendor = nullptr;
    for (auto* c : mine)
      if (c->format.rfind("cusparse", 0) == 0 && (!vendor || c->predicted_ms < vendor->predicted_ms))
        vendor = c;
    const auto within_reach = [&](const Candidate* c) {
      return c->predicted_ms <= kReach * best || c->predicted_ms <= best + kReachMs;
    };
    for (auto* c : rest)
      if (static_cast<int>(timed.size()) < kMaxTimed - (vendor ? 1 : 0) && within_reach(c) &&
          c != vendor)
        timed.push_back(c);
    if (vendor && vendor != mine.front()) timed.push_back(vendor);
    const bool t = choice.op == Op::spmv_t;
    Operands<Value> ops(r.backend, t ? a.rows : (choice.op == Op::spmm ? a.cols * r.k : a.cols),
                        t ? a.cols : (choice.op == Op::spmm ? a.rows * r.k : a.rows));
    // One timing's estimated cost: a short warm-up and kWarmup + kReps samples of at least
    // kSampleMs (the timer's span per sample) or of the predicted time if longer.
    const auto timing_ms = [](const Candidate* c) {
      return kMinWarmupMs + (kWarmup + kReps) * std::max(kSampleMs, c->predicted_ms);
    };
    // Builds first, all of them, then the timings back to back: the GPU idles during host-side
    // builds and its clocks drop, so timings between builds would each need a long warm-up.
    // A candidate is built only while its build and its timing fit in the operation's share of
    // the budget (the first, the model's choice, always: `auto` builds it anyway), with the
    // builds' estimates scaled by how much slower than estimated they have been so far.
    std::vector<Candidate*> ready;
    double reserved_ms = kMinWarmupAfterBuildMs;  // the one long warm-up before the timings
    for (auto* c : timed) {
      const auto key = std::make_pair(c->format, c->transposed);
      const bool free_build = c == mine.front();
      double build_est_ms = 0;
      if (!free_build && !built.count(key)) {
        build_est_ms = plan_model::estimated_build_ms(*c);
        if (c->transposed && !at) build_est_ms += plan_model::estimated_transpose_ms(a.nnz(), a.rows);
        build_est_ms *= build_slowdown;
      }
      if (!ready.empty() &&
          added_ms - op_start_ms + reserved_ms + build_est_ms + timing_ms(c) > op_budget_ms) {
        c->note += " (not timed: it would exceed the tuning budget)";
        continue;
      }
      try {
        if (!built.count(key)) {
          const auto& e = find_format(c->format);
          std::shared_ptr<MatrixImpl<Value>> impl;
          const bool transposes = c->transposed && !at;
          const double build_ms = bench::wall_ms([&] {
            if (c->transposed) {
              if (!at) at = std::make_unique<Csr<Value, Index>>(transpose(a));
              impl = std::shared_ptr<MatrixImpl<Value>>(e.factory<Value, Index>()(*at, {}, r.backend));
            } else {
              impl = std::shared_ptr<MatrixImpl<Value>>(e.factory<Value, Index>()(a, {}, r.backend));
            }
          });
          if (!free_build) added_ms += build_ms;
          // The builds' speed on this host and matrix, against the model's estimate: later
          // estimates are scaled by it, so one slow build is enough to keep the rest in budget.
          const double est_ms =
              plan_model::estimated_build_ms(*c) +
              (transposes ? plan_model::estimated_transpose_ms(a.nnz(), a.rows) : 0.0);
          if (est_ms > kQuickBuildMs) build_slowdown = std::max(build_slowdown, build_ms / est_ms);
          built[key] = std::move(impl);
        }
      } catch (const Error& e) {
        c->note += std::string(" (not timed: ") + e.what() + ")";
        continue;
      }
      ready.push_back(c);
      reserved_ms += timing_ms(c);
    }
    // The timings: the first after a full warm-up, the rest after a short one each. Then, while
    // the budget allows, the two fastest once more in the other order, each keeping its better
    // median: two products a few percent apart are told apart by more than one sample set.
    const auto time_one = [&](Candidate* c, double warmup_ms) {
      const MatrixImpl<Value>* m = built[std::make_pair(c->format, c->transposed)].get();
      std::function<void()> run;
      if (choice.op == Op::spmv || (t && c->transposed))
        run = [&] { m->spmv(ops.x, ops.y, Value(1), Value(0)); };
      else if (t)
        run = [&] { m->spmv_t(ops.x, ops.y, Value(1), Value(0)); };
      else
        run = [&] { m->spmm(ops.x, ops.y, r.k, r.layout, Value(1), Value(0)); };
      double ms = 0;
      try {
        added_ms += bench::wall_ms([&] {
          m->prepare(c->transposed ? Op::spmv : choice.op, r.k, r.layout);
          ms = median_ms(r.backend, run, warmup_ms);
        });
      } catch (const Error& e) {
        c->note += std::string(" (not timed: ") + e.what() + ")";
        return;
      }
      c->measured_ms = std::isnan(c->measured_ms) ? ms : std::min(c->measured_ms, ms);
    };
    for (std::size_t i = 0; i < ready.size(); ++i)
      time_one(ready[i], i == 0 ? kMinWarmupAfterBuildMs : kMinWarmupMs);
    std::vector<Candidate*> ranked;
    for (auto* c : ready)
      if (!std::isnan(c->measured_ms)) ranked.push_back(c);
    std::sort(ranked.begin(), ranked.end(),
              [](const Candidate* x, const Candidate* y) { return x->measured_ms < y->measured_ms; });
    if (ranked.size() >= 2 &&
        added_ms - op_start_ms + timing_ms(ranked[0]) + timing_ms(ranked[1]) <= op_budget_ms) {
      time_one(ranked[1], kMinWarmupMs);
      time_one(ranked[0], kMinWarmupMs);
    }
    Candidate* fastest = nullptr;
    for (auto* c : ready)
      if (!std::isnan(c->measured_ms) && (!fastest || c->measured_ms < fastest->measured_ms))
        fastest = c;
    if (fastest) {
      choice.format = fastest->format;
      choice.transposed = fastest->transposed;
      choice.predicted_ms = fastest->predicted_ms;
      choice.measured_ms = fastest->measured_ms;
      choice.setup_ms = fastest->setup_ms;
    }
  }
  p.tune_ms = added_ms;
  p.reason = "fastest measured of the model's best candidates; " + p.reason;
}

#define SPMAT_INSTANTIATE(V, I) \
  template void tune_plan(const Csr<V, I>&, const PlanRequest&, FormatPlan&, BuiltParts<V>*);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
