// spmat/cuda/device_impl.hpp — CUDA backend of a format: host storage + its uploaded mirror.
// SPDX-License-Identifier: MIT
//
// A format's _cuda.cu defines a device struct `Dev` with
//   static Dev upload(const HostFmt&);
// and free functions (ADL) launching on the default stream:
//   void spmv  (const Dev&, const Value* x, Value* y, Value alpha, Value beta);  // optional
//   void spmv_t(const Dev&, const Value* x, Value* y, Value alpha, Value beta);  // optional
//   void spmm  (const Dev&, const Value* b, Value* c, std::int64_t k, DenseLayout,
//               Value alpha, Value beta);                                        // optional
// then returns std::make_unique<cuda::DeviceImpl<HostFmt, Dev>>(std::move(host)) from its
// make_cuda_impl. The host copy serves to_csr and storage_bytes (same arrays as on device).
#pragma once
#include <memory>
#include <utility>

#include "spmat/format_adapter.hpp"

namespace spmat::cuda {

template <class HostFmt, class Dev>
class DeviceImpl final : public MatrixImpl<typename HostFmt::value_type> {
 public:
  using Value = typename HostFmt::value_type;
  explicit DeviceImpl(HostFmt host) : host_(std::move(host)), dev_(Dev::upload(host_)) {}
  const HostFmt& host() const { return host_; }
  const Dev& device() const { return dev_; }

  Shape shape() const override { return host_.shape(); }
  Backend backend() const override { return Backend::cuda; }
  std::size_t storage_bytes() const override { return host_.storage_bytes(); }
  std::size_t traffic_bytes(Op op, std::int64_t k) const override {
    return adl::traffic(host_, op, k);
  }
  Csr<Value, std::int64_t> to_csr() const override {
    return convert<Value, std::int64_t>(host_.to_csr());
  }
  void spmv(const Value* x, Value* y, Value alpha, Value beta) const override {
    if constexpr (adl::HasSpmv<Dev, Value>)
      adl::do_spmv(dev_, x, y, alpha, beta);
    else
      MatrixImpl<Value>::spmv(x, y, alpha, beta);
  }
  void spmv_t(const Value* x, Value* y, Value alpha, Value beta) const override {
    if constexpr (adl::HasSpmvT<Dev, Value>)
      adl::do_spmv_t(dev_, x, y, alpha, beta);
    else
      MatrixImpl<Value>::spmv_t(x, y, alpha, beta);
  }
  void spmm(const Value* b, Value* c, std::int64_t k, DenseLayout layout, Value alpha,
            Value beta) const override {
    if constexpr (adl::HasSpmm<Dev, Value>)
      adl::do_spmm(dev_, b, c, k, layout, alpha, beta);
    else
      MatrixImpl<Value>::spmm(b, c, k, layout, alpha, beta);
  }

 private:
  HostFmt host_;
  Dev dev_;
};

}  // namespace spmat::cuda
