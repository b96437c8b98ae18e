// spmat/matrix.hpp — Matrix<Value>: the type-erased handle over any registered format and backend.
// SPDX-License-Identifier: MIT
//
//   auto csr = spmat::io::read_matrix<double, std::int32_t>("A.mtx.gz");
//   auto A = spmat::Matrix<double>::build(csr, "ell", spmat::Backend::cpu);
//   std::vector<double> x(A.cols(), 1.0), y(A.rows());
//   A.spmv(x, y);          // y = A x
//   A.spmv_t(y2, x2);      // x2 = Aᵀ y2, same storage
//   A.storage_bytes();     // exact footprint
//
// Options as strings ("tpr=8") or as the format's typed struct (spmat/core/typed_options.hpp):
//   Matrix<double>::build(csr, "csr", Backend::cuda, FormatOptions::parse("tpr=8"));
//   Matrix<double>::build(csr, spmat::CsrOptions{.tpr = 8}, Backend::cuda);  // format_options.hpp
//
// Vectors are spans in the backend's memory: host memory for Backend::cpu, device memory
// (e.g. spmat::cuda::DeviceBuffer) for Backend::cuda. Sizes are checked; contents are not.
//
// A CSR already on the GPU builds without a host round trip (docs/device-input.md):
//   auto B = spmat::Matrix<float>::build(spmat::DeviceCsrView<float, std::int32_t>{
//                rows, cols, nnz, d_row_ptr, d_col_idx, d_values}, "csr");
//   B.update_values(new_values_on_device);   // same structure, new values, no rebuild
//
// GPU work goes to the calling thread's current stream, the legacy default stream unless a
// spmat::StreamScope names another (spmat/stream.hpp, which also says what is asynchronous,
// what can be captured into a CUDA graph, and the rule: one matrix, one stream at a time):
//   { spmat::StreamScope on(my_stream); B.prepare(spmat::Op::spmv); B.spmv(dx, dy); }
#pragma once
#include <concepts>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include "spmat/core/csr.hpp"
#include "spmat/core/device_csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/plan/plan.hpp"
#include "spmat/registry.hpp"
#include "spmat/stream.hpp"

namespace spmat {

/// What the typed Matrix::build needs of an options struct: its format name and
/// to_format_options (spmat/core/typed_options.hpp, found through the struct's namespace), so
/// that this header does not depend on the typed-options machinery.
template <class Opts>
concept TypedOptionsStruct = requires(const Opts& o) {
  { Opts::format } -> std::convertible_to<std::string_view>;
  { to_format_options(o) } -> std::same_as<FormatOptions>;
};

template <class Value>
class Matrix;

namespace detail {
/// The implementation behind `m` (spmat/matrix_impl.hpp). Not part of the public interface:
/// for the library's own tests and tools, which compare storages array by array.
template <class Value>
MatrixImpl<Value>& impl_of(const Matrix<Value>& m);
}  // namespace detail

template <class Value>
class Matrix {
 public:
  /// Builds `format` from canonical CSR `a` (validated first) on `backend`. "auto" (the
  /// default) lets the planner choose from the matrix's statistics; "tune" also times the best
  /// candidates on the device (spmat/plan/plan.hpp).
  /// Throws UnsupportedError for an unknown format or a backend it lacks; CudaError /
  /// OutOfMemoryError from the upload.
  template <class Index>
  static Matrix build(const Csr<Value, Index>& a, std::string_view format = "auto",
                      Backend backend = Backend::cpu, const FormatOptions& options = {});
  /// Builds `format` on the CUDA backend from canonical CSR in device memory, whose arrays stay
  /// where they are (lifetime rules: spmat/core/device_csr.hpp). One kernel validates it first
  /// (InvalidMatrixError naming the first violation; pointers that are not device memory are
  /// refused too). Formats with a device builder (FormatEntry::builds_on_device) build on the
  /// GPU, csr adopting the arrays without a copy; the others are built from a downloaded copy
  /// and uploaded, like the host overload. Same errors as the host overload otherwise.
  template <class Index>
  static Matrix build(const DeviceCsrView<Value, Index>& a, std::string_view format = "auto",
                      const FormatOptions& options = {});
  /// The same from a DeviceCsr: the matrix shares `a.owner()` while it uses the arrays.
  template <class Index>
  static Matrix build(DeviceCsr<Value, Index> a, std::string_view format = "auto",
                      const FormatOptions& options = {});

  /// The three builds above with a format's typed options (spmat/format_options.hpp declares
  /// every format's struct; spmat/core/typed_options.hpp brings to_format_options), the format
  /// named by the struct:
  ///   Matrix<double>::build(csr, spmat::CsrOptions{.tpr = 8}, Backend::cuda);
  /// The struct is rendered to strings (to_format_options) and built like the string form, so
  /// both give the same matrix and the same errors.
  template <class Index, class Opts>
    requires TypedOptionsStruct<Opts>
  static Matrix build(const Csr<Value, Index>& a, const Opts& options,
                      Backend backend = Backend::cpu) {
    return build(a, Opts::format, backend, to_format_options(options));
  }
  template <class Index, class Opts>
    requires TypedOptionsStruct<Opts>
  static Matrix build(const DeviceCsrView<Value, Index>& a, const Opts& options) {
    return build(a, Opts::format, to_format_options(options));
  }
  template <class Index, class Opts>
    requires TypedOptionsStruct<Opts>
  static Matrix build(DeviceCsr<Value, Index> a, const Opts& options) {
    return build(std::move(a), Opts::format, to_format_options(options));
  }

  const FormatEntry& format() const { return *entry_; }
  std::string_view format_name() const { return entry_->name; }
  Backend backend() const { return impl_->backend(); }
  Shape shape() const { return impl_->shape(); }
  std::int64_t rows() const { return shape().rows; }
  std::int64_t cols() const { return shape().cols; }
  std::int64_t nnz() const { return shape().nnz; }
  std::size_t storage_bytes() const { return impl_->storage_bytes(); }
  std::size_t traffic_bytes(Op op, std::int64_t k = 1) const { return impl_->traffic_bytes(op, k); }
  bool supports(Op op) const { return entry_->caps.on(backend()).supports(op); }
  /// The plan followed by an "auto" or "tune" matrix (format per operation, predicted and
  /// measured times, the reason); null for a matrix built with a named format. A storage built
  /// on first use that refuses the matrix moves its operation to the next candidate, and the
  /// plan with it: read it after the operations you use have run or been prepared.
  const FormatPlan* plan() const { return impl_->plan(); }

  /// Per-operation setup (analysis, buffers) ahead of time; optional, except before capturing
  /// the operation into a CUDA graph: once prepared, the products of `op` (with this k and
  /// layout) neither allocate nor synchronize. Returns when the setup is complete on the
  /// current stream.
  void prepare(Op op, std::int64_t k = 1, DenseLayout layout = DenseLayout::row_major) const;
  /// An output overlapping its input throws DimensionMismatchError (spmv, spmv_t, spmm).
  /// y = alpha*A*x + beta*y   (x: cols, y: rows). beta == 0: y is not read.
  void spmv(std::span<const Value> x, std::span<Value> y, Value alpha = 1, Value beta = 0) const;
  /// y = alpha*Aᵀ*x + beta*y  (x: rows, y: cols), from the same storage.
  void spmv_t(std::span<const Value> x, std::span<Value> y, Value alpha = 1, Value beta = 0) const;
  /// C = alpha*A*B + beta*C   (B: cols×k, C: rows×k, dense in `layout`).
  void spmm(std::span<const Value> b, std::span<Value> c, std::int64_t k, DenseLayout layout,
            Value alpha = 1, Value beta = 0) const;
  /// alpha*A + beta*B in this format and backend (B must share both).
  Matrix add(const Matrix& b, Value alpha = 1, Value beta = 1) const;
  /// The stored matrix back as canonical CSR (exact round trip).
  Csr<Value, std::int64_t> to_csr() const { return impl_->to_csr(); }

  /// Replaces the values (nnz of them, in the order of to_csr(): canonical CSR order) without
  /// rebuilding the structure; later operations use them. `values` lives in `where` (host or
  /// device memory, whatever the backend). Copies of this Matrix share the storage and see the
  /// new values too. Throws DimensionMismatchError for a wrong count, UnsupportedError (naming
  /// the format and why) where the storage cannot take new values in place (docs/device-input.md
  /// lists the formats). On the CUDA backend, host values are copied before it returns; device
  /// values are read in the current stream's order (spmat/stream.hpp).
  void update_values(std::span<const Value> values, Memory where);
  /// The same with `values` in the backend's memory (like the vectors of spmv).
  void update_values(std::span<const Value> values) {
    update_values(values, backend() == Backend::cpu ? Memory::host : Memory::device);
  }


 private:
  friend MatrixImpl<Value>& detail::impl_of<Value>(const Matrix&);
  Matrix(const FormatEntry* e, std::shared_ptr<MatrixImpl<Value>> impl)
      : entry_(e), impl_(std::move(impl)) {}
  static const FormatEntry& checked_entry(std::string_view format, Backend backend,
                                          const FormatOptions& options);
  void require(Op op) const;
  const FormatEntry* entry_;
  std::shared_ptr<MatrixImpl<Value>> impl_;
};

template <class Value>
MatrixImpl<Value>& detail::impl_of(const Matrix<Value>& m) {
  return *m.impl_;
}

extern template class Matrix<float>;
extern template class Matrix<double>;

}  // namespace spmat
