// spmat/plan/tune.cpp — timing the candidates (CUDA events on the GPU, steady_clock on the CPU).
// SPDX-License-Identifier: MIT
#include "spmat/plan/tune.hpp"

#include <algorithm>
#include <chrono>
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
    // The model's choice first, then every cuSPARSE variant (cheap to build from the CSR, and
    // the model cannot rank them to a few percent: tune is never slower than the vendor
    // library by a wrong guess among its algorithms), then the next best predictions within
    // reach.
    std::vector<Candidate*> timed{mine.front()};
    for (auto* c : mine)
      if (c->format.rfind("cusparse", 0) == 0 && c != mine.front()) timed.push_back(c);
    const double best = mine.front()->predicted_ms;
    for (auto* c : mine)
      if (static_cast<int>(timed.size()) < kMaxTimed && c->predicted_ms <= kReach * best &&
          std::find(timed.begin(), timed.end(), c) == timed.end())
        timed.push_back(c);
    const bool t = choice.op == Op::spmv_t;
    Operands<Value> ops(r.backend, t ? a.rows : (choice.op == Op::spmm ? a.cols * r.k : a.cols),
                        t ? a.cols : (choice.op == Op::spmm ? a.rows * r.k : a.rows));
    Candidate* fastest = nullptr;
    double warmup_ms = kMinWarmupAfterBuildMs;  // the first timing of an operation warms up fully
    for (auto* c : timed) {
      const bool free_build = c == mine.front();
      const auto key = std::make_pair(c->format, c->transposed);
      const bool needs_build = !free_build && !built.count(key);
      // Estimated cost: the build (scaled by how much slower than estimated the builds on this
      // host have been so far), the transpose it needs if not made yet, the warm-up, and
      // kWarmup + kReps samples of at least kSampleMs (the timer's span per sample) or of the
      // predicted time if longer.
      double build_est_ms = 0;
      if (needs_build) {
        build_est_ms = plan_model::estimated_build_ms(*c);
        if (c->transposed && !at) build_est_ms += plan_model::estimated_transpose_ms(a.nnz(), a.rows);
        build_est_ms *= build_slowdown;
      }
      const double cost_ms = build_est_ms +
                             (build_est_ms > kQuickBuildMs ? kMinWarmupAfterBuildMs : warmup_ms) +
                             (kWarmup + kReps) * std::max(kSampleMs, c->predicted_ms);
      if (fastest && added_ms - op_start_ms + cost_ms > op_budget_ms) {
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
          if (build_ms > kQuickBuildMs) warmup_ms = kMinWarmupAfterBuildMs;
          built[key] = std::move(impl);
        }
        const MatrixImpl<Value>* m = built[key].get();
        std::function<void()> run;
        if (choice.op == Op::spmv || (t && c->transposed))
          run = [&] { m->spmv(ops.x, ops.y, Value(1), Value(0)); };
        else if (t)
          run = [&] { m->spmv_t(ops.x, ops.y, Value(1), Value(0)); };
        else
          run = [&] { m->spmm(ops.x, ops.y, r.k, r.layout, Value(1), Value(0)); };
        added_ms += bench::wall_ms([&] {
          m->prepare(c->transposed ? Op::spmv : choice.op, r.k, r.layout);
          c->measured_ms = median_ms(r.backend, run, warmup_ms);
        });
        warmup_ms = kMinWarmupMs;
      } catch (const Error& e) {
        c->note += std::string(" (not timed: ") + e.what() + ")";
        continue;
      }
      if (!fastest || c->measured_ms < fastest->measured_ms) fastest = c;
    }
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
