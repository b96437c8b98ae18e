// spmat/plan/planned.cpp — PlannedImpl and the "auto" / "tune" registry entries.
// SPDX-License-Identifier: MIT
#include "spmat/plan/planned.hpp"

#include <set>

#include "spmat/config.hpp"
#include "spmat/plan/candidate_builder.hpp"
#include "spmat/plan/plan_options.hpp"
#include "spmat/plan/tune.hpp"
#include "spmat/registry.hpp"

namespace spmat {

namespace {
/// A PartSource owning its CSR.
template <class Value, class Index>
class OwnedSource final : public PlannedImpl<Value>::PartSource {
 public:
  OwnedSource(Csr<Value, Index> a, Backend backend) : a_(std::move(a)), builder_(a_, backend) {}
  bool symmetric() override { return builder_.symmetric(); }
  std::shared_ptr<MatrixImpl<Value>> build(const std::string& format, bool transposed) override {
    return builder_.build(format, transposed);
  }

 private:
  Csr<Value, Index> a_;
  CandidateBuilder<Value, Index> builder_;  // reads a_ (declared first)
};

/// Errors after which the next candidate is tried: the format refuses the matrix, its index
/// type is too narrow for the format's own arrays, or the device has no room for it (a stored
/// transpose, say).
bool gives_way(const Error& e) {
  return dynamic_cast<const UnsupportedError*>(&e) || dynamic_cast<const IndexOverflowError*>(&e) ||
         dynamic_cast<const OutOfMemoryError*>(&e);
}

/// Moves `choice` on to its operation's best candidate not refused yet, noting why in the
/// plan's reason; throws when none is left: OutOfMemoryError when a candidate was refused for
/// lack of memory (`out_of_memory` remembers it over the calls of one search; more memory would
/// have let it build), UnsupportedError otherwise.
void next_candidate(FormatPlan& plan, OpChoice& choice, const Error& why,
                    std::set<std::pair<std::string, bool>>& refused, bool& out_of_memory) {
  refused.insert({choice.format, choice.transposed});
  out_of_memory = out_of_memory || dynamic_cast<const OutOfMemoryError*>(&why);
  plan.reason += "; " + choice.format + (choice.transposed ? " on A^T" : "") + " refused " +
                 std::string(to_string(choice.op)) + " (" + why.what() + ")";
  for (const auto& c : plan.candidates)
    if (c.op == choice.op && !refused.count({c.format, c.transposed})) {
      choice.format = c.format;
      choice.transposed = c.transposed;
      choice.predicted_ms = c.predicted_ms;
      choice.measured_ms = c.measured_ms;
      choice.setup_ms = c.setup_ms;
      return;
    }
  const std::string msg = "auto: every candidate format refused " +
                          std::string(to_string(choice.op)) + " on this matrix" +
                          (out_of_memory ? ", at least one for lack of memory" : "") + ": " +
                          plan.reason;
  if (out_of_memory) throw OutOfMemoryError(msg);
  throw UnsupportedError(msg);
}
}  // namespace

template <class Value>
template <class Index>
std::unique_ptr<PlannedImpl<Value>> PlannedImpl<Value>::build(
    const Csr<Value, Index>& a, FormatPlan plan,
    std::map<std::pair<std::string, bool>, std::shared_ptr<MatrixImpl<Value>>> prebuilt) {
  if (plan.choices.empty()) throw UnsupportedError("auto: the plan chose no format");
  const Backend backend = plan.backend;
  // Storages are built on the GPU from an upload where the format has a device builder
  // (candidate_builder.hpp): seconds of host build become milliseconds.
  Builder builder = [backend](Csr<Value, std::int64_t> m) -> std::unique_ptr<PartSource> {
    return std::make_unique<OwnedSource<Value, Index>>(convert<Value, Index>(m, "auto"), backend);
  };
  // The first operation's storage now, from the CSR at hand; the others on first use.
  OpChoice& first = plan.choices.front();
  std::shared_ptr<MatrixImpl<Value>> impl;
  std::set<std::pair<std::string, bool>> refused;
  bool out_of_memory = false;
  CandidateBuilder<Value, Index> from_a(a, backend);
  while (!impl) {
    if (auto it = prebuilt.find({first.format, first.transposed}); it != prebuilt.end() && it->second) {
      impl = it->second;
      break;
    }
    try {
      impl = from_a.build(first.format, first.transposed);
    } catch (const Error& e) {
      if (!gives_way(e)) throw;
      next_candidate(plan, first, e, refused, out_of_memory);
    }
  }
  std::deque<Part> parts;
  parts.push_back({first.format, first.transposed, impl});
  for (const auto& [key, built] : prebuilt)  // other tuned storages: kept only where chosen
    for (const auto& c : plan.choices)
      if (built && key != std::make_pair(first.format, first.transposed) &&
          key == std::make_pair(c.format, c.transposed)) {
        parts.push_back({key.first, key.second, built});
        break;
      }
  const Shape shape{a.rows, a.cols, a.nnz()};
  return std::make_unique<PlannedImpl>(std::move(plan), std::move(parts), shape, backend,
                                       std::move(builder));
}

template <class Value>
void PlannedImpl<Value>::build_part(Part& part) const {
  const Part& source = parts_.front();
  const auto from = builder_(source.impl->to_csr());
  const bool flip = source.transposed != part.transposed;
  // A symmetric matrix is its own transpose: share the storage of that format if built.
  if (flip)
    for (const auto& p : parts_)
      if (p.impl && p.format == part.format && from->symmetric()) {
        part.impl = p.impl;
        return;
      }
  part.impl = from->build(part.format, flip);
}

template <class Value>
const typename PlannedImpl<Value>::Part& PlannedImpl<Value>::part_for(Op op) const {
  std::lock_guard<std::mutex> lock(mutex_);
  OpChoice* choice = nullptr;
  for (auto& c : plan_.choices)
    if (c.op == op) choice = &c;
  if (!choice) {
    // An operation the plan was not asked about runs on the first storage when it holds A
    // and its format has the operation.
    const Part& first = parts_.front();
    if (!first.transposed && find_format(FormatSpec::parse(first.format).name).caps.on(backend_).supports(op))
      return first;
    std::string ops;
    for (const auto& c : plan_.choices) {
      if (!ops.empty()) ops += '+';
      ops += to_string(c.op);
    }
    throw UnsupportedError("auto: " + std::string(to_string(op)) + " was not planned (ops=" + ops +
                           ") and " + first.format + " does not run it; build with ops including " +
                           std::string(to_string(op)));
  }
  std::set<std::pair<std::string, bool>> refused;
  bool out_of_memory = false;
  for (;;) {
    Part* part = nullptr;
    for (auto& p : parts_)
      if (p.format == choice->format && p.transposed == choice->transposed) part = &p;
    if (!part) part = &parts_.emplace_back(Part{choice->format, choice->transposed, nullptr});
    try {
      if (!part->impl) build_part(*part);
      resolved_[static_cast<std::size_t>(op)].store(part, std::memory_order_release);
      return *part;
    } catch (const Error& e) {
      if (!gives_way(e)) throw;
      next_candidate(plan_, *choice, e, refused, out_of_memory);
    }
  }
}

template <class Value>
std::size_t PlannedImpl<Value>::storage_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    if (!parts_[i].impl) continue;
    bool seen = false;  // a symmetric matrix's "transpose" shares the forward storage
    for (std::size_t j = 0; j < i; ++j) seen = seen || parts_[j].impl == parts_[i].impl;
    if (!seen) bytes += parts_[i].impl->storage_bytes();
  }
  return bytes;
}

template <class Value>
std::size_t PlannedImpl<Value>::traffic_bytes(Op op, std::int64_t k) const {
  const Part& p = part_for(op);
  return p.transposed ? p.impl->traffic_bytes(Op::spmv, k) : p.impl->traffic_bytes(op, k);
}

template <class Value>
Csr<Value, std::int64_t> PlannedImpl<Value>::to_csr() const {
  const Part& first = parts_.front();
  return first.transposed ? transpose(first.impl->to_csr()) : first.impl->to_csr();
}

template <class Value>
void PlannedImpl<Value>::prepare(Op op, std::int64_t k, DenseLayout layout) const {
  const Part& p = part_for(op);
  p.impl->prepare(p.transposed ? Op::spmv : op, k, layout);
}

template <class Value>
void PlannedImpl<Value>::spmv(const Value* x, Value* y, Value alpha, Value beta) const {
  const Part& p = resolved(Op::spmv);
  if (p.transposed) throw UnsupportedError("auto: spmv planned on a transposed copy");
  p.impl->spmv(x, y, alpha, beta);
}

template <class Value>
void PlannedImpl<Value>::spmv_t(const Value* x, Value* y, Value alpha, Value beta) const {
  const Part& p = resolved(Op::spmv_t);
  if (p.transposed) p.impl->spmv(x, y, alpha, beta);
  else p.impl->spmv_t(x, y, alpha, beta);
}

template <class Value>
void PlannedImpl<Value>::spmm(const Value* b, Value* c, std::int64_t k, DenseLayout layout,
                              Value alpha, Value beta) const {
  resolved(Op::spmm).impl->spmm(b, c, k, layout, alpha, beta);
}

template <class Value>
std::unique_ptr<MatrixImpl<Value>> PlannedImpl<Value>::add(const MatrixImpl<Value>& b, Value alpha,
                                                           Value beta) const {
  const auto* pb = dynamic_cast<const PlannedImpl*>(&b);
  const Part& mine = part_for(Op::add);
  if (!pb) throw UnsupportedError("auto: add needs both operands built by the planner");
  const Part& theirs = pb->part_for(Op::add);
  if (mine.format != theirs.format || mine.transposed || theirs.transposed)
    throw UnsupportedError("auto: add needs both operands planned with the same format for add ('" +
                           mine.format + "' vs '" + theirs.format +
                           "'): build both with ops=add or name the format");
  auto sum = std::shared_ptr<MatrixImpl<Value>>(mine.impl->add(*theirs.impl, alpha, beta));
  FormatPlan p = plan_;
  p.choices.clear();
  p.candidates.clear();
  for (Op op : {Op::spmv, Op::spmv_t, Op::spmm, Op::add})
    p.choices.push_back({op, mine.format, false, NAN, NAN, NAN});
  p.reason = "the sum of two planned matrices, in their add format " + mine.format;
  const Shape s = sum->shape();
  return std::make_unique<PlannedImpl>(std::move(p), std::deque<Part>{{mine.format, false, sum}}, s,
                                       backend_, builder_);
}

template <class Value>
void PlannedImpl<Value>::update_values(const Value* values, Memory where) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (parts_.front().transposed)
    throw UnsupportedError("auto: the plan's first storage holds the transpose (" +
                           parts_.front().format + " on A^T), whose values are not in CSR order; "
                           "rebuild the matrix with the new values");
  for (auto& r : resolved_) r.store(nullptr, std::memory_order_release);
  std::set<const MatrixImpl<Value>*> done;
  for (auto& p : parts_) {
    // A transpose, even one sharing the forward storage because A was symmetric (the new values
    // may not be): part_for rebuilds it from the first storage.
    if (p.transposed) {
      p.impl = nullptr;
      continue;
    }
    if (!p.impl || done.count(p.impl.get())) continue;
    try {
      p.impl->update_values(values, where);
      done.insert(p.impl.get());
    } catch (const UnsupportedError& e) {
      // Only the first storage must take the values: the others are rebuilt from it.
      if (&p == &parts_.front())
        throw UnsupportedError("auto: the planned format " + p.format + ": " + e.what());
      p.impl = nullptr;
    }
  }
}

namespace {
template <class Value, class Index>
Factory<Value, Index> planned_factory(PlanLevel level) {
  return [level](const Csr<Value, Index>& a, const FormatOptions& o,
                 Backend backend) -> std::unique_ptr<MatrixImpl<Value>> {
    const PlanRequest r = PlanRequest::from_options(o, backend, level);
    BuiltParts<Value> built;
    FormatPlan p = detail::plan_keeping(a, r, &built);
    return PlannedImpl<Value>::build(a, std::move(p), std::move(built));
  };
}

FormatEntry planned_entry(std::string name, std::string summary, PlanLevel level) {
  // Every operation, on both backends; the plan picks a format that has it. Not declared
  // deterministic: a plan may choose atomics unless asked for deterministic=1. Declared caps,
  // not derived (format_adapter.hpp's make_entry): a plan is no storage template, its products
  // are those of the formats it picks.
  const BackendCaps cpu{.available = true, .spmv = true, .spmv_t = true, .spmm = true,
                        .add = true, .deterministic_spmv = true, .deterministic_spmv_t = true};
  const BackendCaps gpu{.available = kCudaCompiled, .spmv = true, .spmv_t = true,
                        .spmm = true, .add = true, .deterministic_spmv = false,
                        .deterministic_spmv_t = false};
  FormatEntry e{.name = std::move(name), .summary = std::move(summary), .caps = {cpu, gpu}};
  e.params = option_params<PlanOptions>();
  e.factory<float, std::int32_t>() = planned_factory<float, std::int32_t>(level);
  e.factory<float, std::int64_t>() = planned_factory<float, std::int64_t>(level);
  e.factory<double, std::int32_t>() = planned_factory<double, std::int32_t>(level);
  e.factory<double, std::int64_t>() = planned_factory<double, std::int64_t>(level);
  return e;
}
}  // namespace

std::vector<FormatEntry> planned_entries() {
  std::vector<FormatEntry> v;
  v.push_back(planned_entry("auto", "the planner's choice from matrix statistics (the default)",
                            PlanLevel::automatic));
  v.push_back(planned_entry("tune", "auto, then the best candidates timed on the device (cached)",
                            PlanLevel::tune));
  return v;
}

template class PlannedImpl<float>;
template class PlannedImpl<double>;
#define SPMAT_INSTANTIATE(V, I) \
  template std::unique_ptr<PlannedImpl<V>> PlannedImpl<V>::build(   \
      const Csr<V, I>&, FormatPlan,                                  \
      std::map<std::pair<std::string, bool>, std::shared_ptr<MatrixImpl<V>>>);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
