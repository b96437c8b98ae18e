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
#include "spmat/plan/candidate_builder.hpp"
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
// Samples per timing: warm-up and timed. Products of a tenth of a millisecond or more are one
// call per sample and vary by a percent or two between samples: fewer of them tell them apart.
constexpr int kWarmup = 2, kReps = 7;
constexpr int kLongWarmup = 1, kLongReps = 5;
constexpr double kLongProductMs = 0.1;
// The budget is planned from estimates; this share of it is planned, the rest absorbs their
// errors (tune_ms must stay within the budget).
constexpr double kBudgetPlanned = 0.75;
constexpr double kReservedPerOpMs = 5;  // kept for each operation still to be timed
constexpr double kTimingOverheadMs = 0.5;  // a timing's prepare, events and synchronisation
// Warm-up wall time: after a host-side build the GPU clocks are down and need about 10 ms to
// come back; a candidate timed right after another (no build, or a build of under a
// millisecond such as a cuSPARSE descriptor) finds them up.
constexpr double kMinWarmupAfterBuildMs = 10, kMinWarmupMs = 1, kQuickBuildMs = 1;
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

struct Samples {
  int warmup, reps;
};
/// The samples of a product predicted to take `predicted_ms`.
Samples samples_for(double predicted_ms) {
  return predicted_ms >= kLongProductMs ? Samples{kLongWarmup, kLongReps} : Samples{kWarmup, kReps};
}

double median_ms(Backend b, const std::function<void()>& run, Samples n, double min_warmup_ms) {
#if SPMAT_WITH_CUDA
  if (b == Backend::cuda)
    return bench::summarize(bench::gpu::time_runs(run, n.warmup, n.reps, false, min_warmup_ms)).median_ms;
#else
  (void)b;
  (void)min_warmup_ms;
#endif
  return bench::summarize(bench::cpu::time_runs(run, n.warmup, n.reps, false)).median_ms;
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
  // On the GPU, A is uploaded once and every candidate with a device builder is built from
  // it (a few products' time; a host build of a large matrix takes seconds and would not fit).
  // The upload is the model's choice's own when that one is built from it, else it counts.
  CandidateBuilder<Value, Index> builder(a, r.backend);
  double build_slowdown = 1.0;
  // The same for the timings: how much longer than estimated they have taken so far (a
  // product slower than predicted takes its samples' time longer), so that the last timings
  // the budget admits keep tune_ms within it.
  double timing_slowdown = 1.0;
  // The operations timed: those with two candidates or more (add's result is a new matrix: not
  // timed here). Each gets an equal share of what is left of the budget.
  const auto timed_op = [&](Op op) {
    if (op == Op::add) return false;
    int n = 0;
    for (const auto& c : p.candidates) n += c.op == op;
    return n >= 2;
  };
  int ops_left = 0;
  for (const auto& choice : p.choices) ops_left += timed_op(choice.op);
  bool first_op = true;
  for (auto& choice : p.choices) {
    if (!timed_op(choice.op)) continue;
    const double op_start_ms = added_ms;
    const double op_budget_ms =
        std::max(0.0, kBudgetPlanned * r.tune_budget_ms - added_ms) / std::max(1, ops_left--);
    std::vector<Candidate*> mine;
    for (auto& c : p.candidates)
      if (c.op == choice.op) mine.push_back(&c);
    // The model's choice first, then the other candidates whose prediction is within reach of
    // it, best predicted first, then cuSPARSE's fastest predicted variant in any case (even out
    // of reach), so that tune is never slower than the vendor library by a wrong guess; its
    // other variants last, where the budget leaves room: they run within a few percent of each
    // other on every matrix measured, while spmat's formats differ by tens of percent from
    // their predictions on some.
    const double best = mine.front()->predicted_ms;
    std::vector<Candidate*> rest(mine.begin() + 1, mine.end());
    std::stable_sort(rest.begin(), rest.end(),
                     [](const Candidate* x, const Candidate* y) { return x->predicted_ms < y->predicted_ms; });
    const auto is_vendor = [](const Candidate* c) { return c->format.rfind("cusparse", 0) == 0; };
    Candidate* vendor = nullptr;
    for (auto* c : mine)
      if (is_vendor(c) && (!vendor || c->predicted_ms < vendor->predicted_ms)) vendor = c;
    const auto within_reach = [&](const Candidate* c) {
      return c->predicted_ms <= kReach * best || c->predicted_ms <= best + kReachMs;
    };
    std::vector<Candidate*> timed{mine.front()};
    for (auto* c : rest)
      if (!is_vendor(c) && within_reach(c)) timed.push_back(c);
    if (vendor && vendor != mine.front()) timed.push_back(vendor);
    for (auto* c : rest)
      if (is_vendor(c) && c != vendor && within_reach(c)) timed.push_back(c);
    if (static_cast<int>(timed.size()) > kMaxTimed) {
      // Keep the vendor's best within the cap.
      timed.resize(kMaxTimed);
      if (vendor && std::find(timed.begin(), timed.end(), vendor) == timed.end()) timed.back() = vendor;
    }
    const bool t = choice.op == Op::spmv_t;
    Operands<Value> ops(r.backend, t ? a.rows : (choice.op == Op::spmm ? a.cols * r.k : a.cols),
                        t ? a.cols : (choice.op == Op::spmm ? a.rows * r.k : a.rows));
    // One timing's estimated cost: a short warm-up and its samples, each of at least kSampleMs
    // (the timer's span per sample) or of the predicted time if longer.
    const auto estimated_timing_ms = [](const Candidate* c, double warmup_ms) {
      const Samples n = samples_for(c->predicted_ms);
      return kTimingOverheadMs + warmup_ms +
             (n.warmup + n.reps) * std::max(kSampleMs, c->predicted_ms);
    };
    const auto timing_ms = [&](const Candidate* c) {
      return estimated_timing_ms(c, kMinWarmupMs) * timing_slowdown;
    };
    // Builds first, all of them, then the timings back to back: the GPU idles during host-side
    // builds and its clocks drop, so timings between builds would each need a long warm-up
    // (one before the first timing is enough; device builds keep the GPU busy).
    // A candidate is built only while its build and its timing fit in the operation's share of
    // the budget (the first, the model's choice, always: `auto` builds it anyway), with the
    // builds' estimates scaled by how much slower than estimated they have been so far.
    std::vector<Candidate*> ready;
    // Whether the GPU idles, its clocks down: while the host computed the statistics (before
    // the first operation) or built a candidate, and until a device build of over a
    // millisecond ran. The first timing then gets the long warm-up.
    bool gpu_idle = first_op;
    first_op = false;
    double reserved_ms = 0;  // the timings of the candidates built so far
    const auto long_warmup_ms = [&] { return gpu_idle ? kMinWarmupAfterBuildMs - kMinWarmupMs : 0.0; };
    for (auto* c : timed) {
      const auto key = std::make_pair(c->format, c->transposed);
      const bool free_build = c == mine.front();
      // The estimated build: on the device or the host, with the upload or the transpose it
      // needs first if not done yet.
      const auto estimated_ms = [&] {
        return (builder.on_device(c->format) ? plan_model::estimated_device_build_ms(*c)
                                             : plan_model::estimated_build_ms(*c)) +
               builder.preparation_ms(c->format, c->transposed);
      };
      double build_est_ms = 0;
      if (!free_build && !built.count(key)) build_est_ms = estimated_ms() * build_slowdown;
      if (!ready.empty() &&
          added_ms - op_start_ms + reserved_ms + long_warmup_ms() + build_est_ms + timing_ms(c) >
              op_budget_ms) {
        c->note += " (not timed: it would exceed the tuning budget)";
        continue;
      }
      try {
        if (!built.count(key)) {
          std::shared_ptr<MatrixImpl<Value>> impl;
          const bool on_device = builder.on_device(c->format);
          const double est_ms = estimated_ms();
          const double build_ms =
              bench::wall_ms([&] { impl = builder.build(c->format, c->transposed); });
          gpu_idle = on_device ? gpu_idle && build_ms < kQuickBuildMs : true;
          if (!free_build) added_ms += build_ms;
          // The builds' speed on this host and matrix, against the model's estimate: later
          // estimates are scaled by it, so one slow build is enough to keep the rest in budget.
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
        const double spent_ms = bench::wall_ms([&] {
          m->prepare(c->transposed ? Op::spmv : choice.op, r.k, r.layout);
          ms = median_ms(r.backend, run, samples_for(c->predicted_ms), warmup_ms);
        });
        added_ms += spent_ms;
        timing_slowdown =
            std::max(timing_slowdown, spent_ms / estimated_timing_ms(c, warmup_ms));
      } catch (const Error& e) {
        c->note += std::string(" (not timed: ") + e.what() + ")";
        return;
      }
      c->measured_ms = std::isnan(c->measured_ms) ? ms : std::min(c->measured_ms, ms);
    };
    // Past the model's choice, a timing that would take tune over its budget is skipped (the
    // estimates above plan three quarters of it; this holds when they were too low), keeping a
    // few milliseconds for the model's choice of each operation still to come.
    const auto fits = [&](const Candidate* c) {
      return added_ms + timing_ms(c) <= r.tune_budget_ms - kReservedPerOpMs * ops_left;
    };
    for (std::size_t i = 0; i < ready.size(); ++i) {
      if (i > 0 && !fits(ready[i])) {
        ready[i]->note += " (not timed: it would exceed the tuning budget)";
        continue;
      }
      time_one(ready[i], i == 0 && gpu_idle ? kMinWarmupAfterBuildMs : kMinWarmupMs);
    }
    std::vector<Candidate*> ranked;
    for (auto* c : ready)
      if (!std::isnan(c->measured_ms)) ranked.push_back(c);
    std::sort(ranked.begin(), ranked.end(),
              [](const Candidate* x, const Candidate* y) { return x->measured_ms < y->measured_ms; });
    if (ranked.size() >= 2 &&
        added_ms - op_start_ms + timing_ms(ranked[0]) + timing_ms(ranked[1]) <= op_budget_ms &&
        fits(ranked[0]) && fits(ranked[1])) {
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
