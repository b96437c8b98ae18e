// tests/support/device_ops.hpp — run a Matrix operation on its own backend from host vectors.
// SPDX-License-Identifier: MIT
//
// The conformance suite (and any format test) calls these with host vectors whatever the
// backend: for Backend::cuda the operands are uploaded to spmat::cuda::DeviceBuffer, the output
// is poisoned on the device with fill_bytes(0xFF) (= NaN in fp32 and fp64) unless a starting
// value is given, and the result is downloaded. For Backend::cpu the output starts as NaN.
//
//   std::vector<double> y = spmat::testing::apply_spmv(A, Op::spmv, x);          // y = A x
//   std::vector<double> z = spmat::testing::apply_spmv(A, Op::spmv_t, y, &z0, 0.5, -2.0);
#pragma once
#include <cstdint>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat::testing {

#if SPMAT_WITH_CUDA
/// The device output of an operation, n entries: `start` uploaded, or NaN poison (0xFF bytes)
/// where there is none.
template <class Value>
cuda::DeviceBuffer<Value> device_output(std::int64_t n, const std::vector<Value>* start,
                                        const char* what) {
  cuda::DeviceBuffer<Value> out(static_cast<std::size_t>(n), what);
  if (start)
    out.upload(*start);
  else
    out.fill_bytes(0xFF);
  return out;
}
#endif

/// y = alpha*op(A)*x + beta*y0 for op ∈ {spmv, spmv_t}. y0 == nullptr: y starts as NaN poison.
template <class Value>
std::vector<Value> apply_spmv(const Matrix<Value>& a, Op op, const std::vector<Value>& x,
                              const std::vector<Value>* y0 = nullptr, Value alpha = 1,
                              Value beta = 0) {
  const std::int64_t n_out = op == Op::spmv ? a.rows() : a.cols();
  if (a.backend() == Backend::cpu) {
    std::vector<Value> y = y0 ? *y0 : poisoned<Value>(n_out);
    if (op == Op::spmv)
      a.spmv(x, y, alpha, beta);
    else
      a.spmv_t(x, y, alpha, beta);
    return y;
  }
#if SPMAT_WITH_CUDA
  cuda::DeviceBuffer<Value> dx(x, "test x");
  cuda::DeviceBuffer<Value> dy = device_output(n_out, y0, "test y");
  if (op == Op::spmv)
    a.spmv(std::span<const Value>(dx.span()), dy.span(), alpha, beta);
  else
    a.spmv_t(std::span<const Value>(dx.span()), dy.span(), alpha, beta);
  cuda::synchronize();
  return dy.download();
#else
  throw UnsupportedError("apply_spmv: spmat was built without CUDA");
#endif
}

/// C = alpha*A*B + beta*C0 (B: cols×k, C: rows×k in `layout`). c0 == nullptr: C starts as NaN.
template <class Value>
std::vector<Value> apply_spmm(const Matrix<Value>& a, const std::vector<Value>& b, std::int64_t k,
                              DenseLayout layout, const std::vector<Value>* c0 = nullptr,
                              Value alpha = 1, Value beta = 0) {
  const std::int64_t n_out = a.rows() * k;
  if (a.backend() == Backend::cpu) {
    std::vector<Value> c = c0 ? *c0 : poisoned<Value>(n_out);
    a.spmm(b, c, k, layout, alpha, beta);
    return c;
  }
#if SPMAT_WITH_CUDA
  cuda::DeviceBuffer<Value> db(b, "test B");
  cuda::DeviceBuffer<Value> dc = device_output(n_out, c0, "test C");
  a.spmm(std::span<const Value>(db.span()), dc.span(), k, layout, alpha, beta);
  cuda::synchronize();
  return dc.download();
#else
  throw UnsupportedError("apply_spmm: spmat was built without CUDA");
#endif
}

}  // namespace spmat::testing
