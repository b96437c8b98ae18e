// spmat/matrix.cpp — Matrix<Value>: argument checks and dispatch to the registered format.
// SPDX-License-Identifier: MIT
#include "spmat/matrix.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "spmat/config.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/device_csr.hpp"
#endif

namespace spmat {

namespace {
// The operand of operation `op` that a message names ("spmv: x"), built only for the message.
std::string operand_name(const char* op, const char* operand) {
  return std::string(op) + ": " + operand;
}

void check_size(const char* op, const char* operand, std::size_t got, std::int64_t want) {
  if (static_cast<std::int64_t>(got) != want)
    throw DimensionMismatchError(operand_name(op, operand) + " has " + std::to_string(got) +
                                 " entries, expected " + std::to_string(want));
}

// The kernels read the input while writing the output (y = alpha*A*x + beta*y reads x[j] after
// y[i] was written): an output sharing memory with the input gives wrong results, not an error.
// Compared as addresses, so device pointers are checked the same way.
template <class Value>
void check_no_overlap(const char* op, const char* operand, std::span<const Value> in,
                      std::span<Value> out) {
  if (in.empty() || out.empty()) return;
  const auto a = reinterpret_cast<std::uintptr_t>(in.data()), b = reinterpret_cast<std::uintptr_t>(out.data());
  if (a < b + out.size_bytes() && b < a + in.size_bytes())
    throw DimensionMismatchError(operand_name(op, operand) +
                                 ": the output overlaps the input; expected separate arrays (the "
                                 "result would be wrong)");
}

/// The operands of product `op`: `in` of in_len entries, `out` of out_len, not overlapping.
template <class Value>
void check_product_operands(const char* op, std::span<const Value> in, const char* in_name,
                            std::int64_t in_len, std::span<Value> out, const char* out_name,
                            std::int64_t out_len) {
  check_size(op, in_name, in.size(), in_len);
  check_size(op, out_name, out.size(), out_len);
  check_no_overlap(op, out_name, in, out);
}

// Builds, add, prepare and updates from host memory queue GPU work on the current stream
// (kernels, memsets) that nothing else waits for; waiting here completes the matrix, so that
// it may be used on any stream afterwards and a later graph capture finds nothing pending
// (spmat/stream.hpp). Products do not come here: they stay asynchronous.
void finish_gpu_work(Backend backend) {
#if SPMAT_WITH_CUDA
  if (backend == Backend::cuda) cuda::synchronize_stream();
#else
  (void)backend;
#endif
}
}  // namespace

template <class Value>
const FormatEntry& Matrix<Value>::checked_entry(std::string_view format, Backend backend,
                                                const FormatOptions& options) {
  const FormatEntry& e = find_format(format);
  if (backend == Backend::cuda && !cuda_compiled())
    throw UnsupportedError("format '" + e.name +
                           "': spmat was built without CUDA, backend cuda is not available");
  if (!e.caps.on(backend).available) {
    throw UnsupportedError("format '" + e.name + "' has no " + std::string(to_string(backend)) +
                           " backend");
  }
  if (backend == Backend::cuda && !cuda_available())
    throw UnsupportedError("format '" + e.name +
                           "': no usable CUDA GPU found, backend cuda is not available");
  for (const auto& [key, value] : options.all()) {
    bool known = false;
    for (const auto& p : e.params) known = known || p.name == key;
    if (!known) {
      std::string names;
      for (const auto& p : e.params) names += (names.empty() ? "" : ", ") + p.name;
      throw ParseError("format '" + e.name + "' has no option '" + key + "' (options: " +
                       (names.empty() ? "none" : names) + ")");
    }
  }
  return e;
}

template <class Value>
template <class Index>
Matrix<Value> Matrix<Value>::build(const Csr<Value, Index>& a, std::string_view format,
                                   Backend backend, const FormatOptions& options) {
  const FormatEntry& e = checked_entry(format, backend, options);
  a.validate();
  check_index_range<Index>(a.rows, a.cols, a.nnz(), "format '" + e.name + "'");
  auto impl = e.factory<Value, Index>()(a, options, backend);
  finish_gpu_work(backend);
  return Matrix(&e, std::shared_ptr<MatrixImpl<Value>>(std::move(impl)));
}

template <class Value>
template <class Index>
Matrix<Value> Matrix<Value>::build(const DeviceCsrView<Value, Index>& a, std::string_view format,
                                   const FormatOptions& options) {
  return build(DeviceCsr<Value, Index>(a, nullptr), format, options);
}

template <class Value>
template <class Index>
Matrix<Value> Matrix<Value>::build(DeviceCsr<Value, Index> a, std::string_view format,
                                   const FormatOptions& options) {
  const FormatEntry& e = checked_entry(format, Backend::cuda, options);
  check_index_range<Index>(a.rows(), a.cols(), a.nnz(), "format '" + e.name + "'");
#if SPMAT_WITH_CUDA
  cuda::validate(a.view(), "device CSR");
  std::unique_ptr<MatrixImpl<Value>> impl;
  if (const auto& device_factory = e.device_factory<Value, Index>()) {
    impl = device_factory(a, options);
  } else {
    // No device builder: the host builder on a downloaded copy, then the usual upload.
    impl = e.factory<Value, Index>()(cuda::download(a.view()), options, Backend::cuda);
  }
  finish_gpu_work(Backend::cuda);
  return Matrix(&e, std::shared_ptr<MatrixImpl<Value>>(std::move(impl)));
#else
  throw UnsupportedError("format '" + e.name +
                         "': spmat was built without CUDA, device CSR input is not available");
#endif
}

template <class Value>
void Matrix<Value>::update_values(std::span<const Value> values, Memory where) {
  check_size("update_values", "values", values.size(), nnz());
  const bool from_host = where == Memory::host;
  const Value* p = values.data();
  std::vector<Value> host;
  if (where == Memory::device && backend() == Backend::cpu) {
#if SPMAT_WITH_CUDA
    host = cuda::host_values(p, values.size(), where);
    p = host.data();
    where = Memory::host;
#else
    throw UnsupportedError("update_values: device values, but spmat was built without CUDA");
#endif
  }
  try {
    impl_->update_values(p, where);
  } catch (const UnsupportedError& err) {
    throw UnsupportedError("format '" + entry_->name + "' on " + std::string(to_string(backend())) +
                           ": " + err.what());
  }
  // The caller may reuse a host array at once; device values stay ordered on the stream.
  if (from_host) finish_gpu_work(backend());
}

template <class Value>
void Matrix<Value>::require(Op op) const {
  if (!supports(op))
    throw UnsupportedError("format '" + entry_->name + "' does not support " +
                           std::string(to_string(op)) + " on " +
                           std::string(to_string(backend())));
}

template <class Value>
void Matrix<Value>::prepare(Op op, std::int64_t k, DenseLayout layout) const {
  require(op);
  impl_->prepare(op, k, layout);
  finish_gpu_work(backend());
}

template <class Value>
void Matrix<Value>::spmv(std::span<const Value> x, std::span<Value> y, Value alpha,
                         Value beta) const {
  require(Op::spmv);
  check_product_operands("spmv", x, "x", cols(), y, "y", rows());
  impl_->spmv(x.data(), y.data(), alpha, beta);
}

template <class Value>
void Matrix<Value>::spmv_t(std::span<const Value> x, std::span<Value> y, Value alpha,
                           Value beta) const {
  require(Op::spmv_t);
  check_product_operands("spmv_t", x, "x", rows(), y, "y", cols());
  impl_->spmv_t(x.data(), y.data(), alpha, beta);
}

template <class Value>
void Matrix<Value>::spmm(std::span<const Value> b, std::span<Value> c, std::int64_t k,
                         DenseLayout layout, Value alpha, Value beta) const {
  require(Op::spmm);
  if (k < 0) throw DimensionMismatchError("spmm: k = " + std::to_string(k) + " is negative");
  check_product_operands("spmm", b, "B", cols() * k, c, "C", rows() * k);
  impl_->spmm(b.data(), c.data(), k, layout, alpha, beta);
}

template <class Value>
Matrix<Value> Matrix<Value>::add(const Matrix& b, Value alpha, Value beta) const {
  require(Op::add);
  if (b.entry_ != entry_ || b.backend() != backend())
    throw UnsupportedError("add: operands must share format and backend ('" + entry_->name +
                           "' on " + std::string(to_string(backend())) + " vs '" +
                           b.entry_->name + "' on " + std::string(to_string(b.backend())) + ")");
  if (b.rows() != rows() || b.cols() != cols())
    throw DimensionMismatchError("add: shapes differ (" + std::to_string(rows()) + "x" +
                                 std::to_string(cols()) + " vs " + std::to_string(b.rows()) +
                                 "x" + std::to_string(b.cols()) + ")");
  auto sum = std::shared_ptr<MatrixImpl<Value>>(impl_->add(*b.impl_, alpha, beta));
  finish_gpu_work(backend());
  return Matrix(entry_, std::move(sum));
}

template class Matrix<float>;
template class Matrix<double>;
#define SPMAT_INSTANTIATE(V, I)                                                             \
  template Matrix<V> Matrix<V>::build<I>(const Csr<V, I>&, std::string_view, Backend,     \
                                         const FormatOptions&);                           \
  template Matrix<V> Matrix<V>::build<I>(const DeviceCsrView<V, I>&, std::string_view,    \
                                         const FormatOptions&);                           \
  template Matrix<V> Matrix<V>::build<I>(DeviceCsr<V, I>, std::string_view, const FormatOptions&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
