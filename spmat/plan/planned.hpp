// spmat/plan/planned.hpp — the matrix behind the "auto" and "tune" formats: a plan and the
// format instances it chose (one per distinct format; a stored transpose where planned).
//
// The storage of the first planned operation is built at once; the others (a transposed copy
// for spmv_t, say) on their operation's first prepare or call, from that storage's to_csr(), so
// a matrix planned for spmv and spmv_t costs no second storage until Aᵀx is used. A symmetric
// matrix's transpose shares the forward storage.
// SPDX-License-Identifier: MIT
#pragma once
#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <mutex>
#include <vector>

#include "spmat/matrix_impl.hpp"
#include "spmat/plan/plan.hpp"

namespace spmat {

template <class Value>
class PlannedImpl final : public MatrixImpl<Value> {
 public:
  struct Part {
    std::string format;
    bool transposed = false;  ///< holds Aᵀ
    std::shared_ptr<MatrixImpl<Value>> impl;  ///< null until first used
  };
  /// Builds storages of a CSR or of its transpose, in the index type `build` was given, on the
  /// GPU where the format has a device builder (candidate_builder.hpp).
  class PartSource {
   public:
    virtual ~PartSource() = default;
    /// Whether the CSR equals its transpose.
    virtual bool symmetric() = 0;
    virtual std::shared_ptr<MatrixImpl<Value>> build(const std::string& format, bool transposed) = 0;
  };
  /// The PartSource of a CSR (taken over).
  using Builder = std::function<std::unique_ptr<PartSource>(Csr<Value, std::int64_t>)>;

  /// `prebuilt`: storages already built for this matrix (by tuning), keyed by (format, Aᵀ).
  template <class Index>
  static std::unique_ptr<PlannedImpl> build(
      const Csr<Value, Index>& a, FormatPlan plan,
      std::map<std::pair<std::string, bool>, std::shared_ptr<MatrixImpl<Value>>> prebuilt = {});
  PlannedImpl(FormatPlan plan, std::deque<Part> parts, Shape shape, Backend backend, Builder builder)
      : plan_(std::move(plan)),
        parts_(std::move(parts)),
        shape_(shape),
        backend_(backend),
        builder_(std::move(builder)) {}

  const FormatPlan* plan() const override { return &plan_; }
  Shape shape() const override { return shape_; }
  Backend backend() const override { return backend_; }
  std::size_t storage_bytes() const override;
  std::size_t traffic_bytes(Op op, std::int64_t k) const override;
  Csr<Value, std::int64_t> to_csr() const override;
  void prepare(Op op, std::int64_t k, DenseLayout layout) const override;
  void spmv(const Value* x, Value* y, Value alpha, Value beta) const override;
  void spmv_t(const Value* x, Value* y, Value alpha, Value beta) const override;
  void spmm(const Value* b, Value* c, std::int64_t k, DenseLayout layout, Value alpha,
            Value beta) const override;
  std::unique_ptr<MatrixImpl<Value>> add(const MatrixImpl<Value>& b, Value alpha,
                                         Value beta) const override;
  /// Updates every built storage holding A; a stored transpose, or a storage that cannot take
  /// new values, is dropped and rebuilt on its next use (from the updated first storage).
  void update_values(const Value* values, Memory where) override;

 private:
  /// The part serving `op`, built on first use. A format that refuses the matrix then
  /// (UnsupportedError, IndexOverflowError, OutOfMemoryError) gives way to the operation's next
  /// candidate, and the plan says so. None left: OutOfMemoryError when one refused for lack of
  /// memory, UnsupportedError otherwise.
  const Part& part_for(Op op) const;
  /// part_for without the lock once the operation's storage is built: the products' path, so
  /// that a product's host-side cost does not grow by a lock and a search over the parts.
  const Part& resolved(Op op) const {
    const Part* p = resolved_[static_cast<std::size_t>(op)].load(std::memory_order_acquire);
    return p ? *p : part_for(op);
  }
  /// Builds `part` from the first part's storage (A, or Aᵀ when that part holds the transpose).
  void build_part(Part& part) const;
  mutable FormatPlan plan_;      // choices move on to the next candidate when one refuses
  mutable std::deque<Part> parts_;  // impls filled in lazily under mutex_ (deque: stable references)
  mutable std::mutex mutex_;
  /// Per operation (Op's value): its part once built; cleared under mutex_ when a part may go.
  mutable std::array<std::atomic<const Part*>, 4> resolved_{};
  Shape shape_;
  Backend backend_;
  Builder builder_;
};

}  // namespace spmat
