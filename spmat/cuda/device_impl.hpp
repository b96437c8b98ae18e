// spmat/cuda/device_impl.hpp — CUDA backend of a format: host storage + its uploaded mirror
// (DeviceImpl), or the device storage alone when it was built from a CSR in device memory
// (DeviceOnlyImpl).
// SPDX-License-Identifier: MIT
//
// A format's _cuda.cu defines a device struct `Dev` with
//   static Dev upload(const HostFmt&);
// and free functions (ADL) launching on cuda::stream(), the caller's spmat::current_stream():
//   void spmv  (const Dev&, const Value* x, Value* y, Value alpha, Value beta);  // optional
//   void spmv_t(const Dev&, const Value* x, Value* y, Value alpha, Value beta);  // optional
//   void spmm  (const Dev&, const Value* b, Value* c, std::int64_t k, DenseLayout,
//               Value alpha, Value beta);                                        // optional
// then returns std::make_unique<cuda::DeviceImpl<HostFmt, Dev>>(std::move(host)) from its
// make_cuda_impl. The host copy serves to_csr and storage_bytes (same arrays as on device).
// A product must not allocate, free or synchronize once its operation was prepared (it may then
// be captured into a CUDA graph): a Dev whose products need scratch that upload does not size
// (it depends on k, say) gives the hook
//   void prepare(const Dev&, Op, std::int64_t k, DenseLayout);   // size the scratch (mutable)
// which Matrix::prepare reaches; an unprepared product still sizes it on first use.
// Other optional hooks:
//   void upload_values(Dev&, const HostFmt&);      // refresh the device values from the host
//                                                  // copy (with the host format's update_values)
//   std::vector<StoredArray> stored_arrays(const Dev&);  // the device arrays, downloaded
//
// A format with a device builder (docs/device-input.md) also gives Dev
//   Shape shape() const;  std::size_t storage_bytes() const;  HostFmt download() const;
// and the free function traffic_bytes(const Dev&, Op, std::int64_t k); DeviceOnlyImpl then
// holds the device storage with no host copy: to_csr downloads. Optional:
//   void update_values(Dev&, const Value* csr_values, Memory where);
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "spmat/cuda/device_csr.hpp"
#include "spmat/format_adapter.hpp"

namespace spmat {
namespace adl {
// Outside the impl classes, whose members of the same names would hide these free functions.
template <class D, class H>
concept HasUploadValues = requires(D& d, const H& h) { upload_values(d, h); };
template <class D, class H>
void do_upload_values(D& d, const H& h) { upload_values(d, h); }
template <class D>
concept HasStoredArrays = requires(const D& d) {
  { stored_arrays(d) } -> std::same_as<std::vector<StoredArray>>;
};
template <class D>
std::vector<StoredArray> do_stored_arrays(const D& d) { return stored_arrays(d); }
template <class D, class V>
concept HasDeviceUpdateValues = requires(D& d, const V* v, Memory m) { update_values(d, v, m); };
template <class D, class V>
void do_device_update_values(D& d, const V* v, Memory m) { update_values(d, v, m); }
template <class D>
concept HasDevicePrepare = requires(const D& d, Op op, std::int64_t k, DenseLayout l) {
  prepare(d, op, k, l);
};
template <class D>
void do_device_prepare(const D& d, Op op, std::int64_t k, DenseLayout l) { prepare(d, op, k, l); }
}  // namespace adl

namespace cuda {

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
  void prepare(Op op, std::int64_t k, DenseLayout layout) const override {
    if constexpr (adl::HasDevicePrepare<Dev>) adl::do_device_prepare(dev_, op, k, layout);
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
  /// The host copy takes the new values (the host format's update_values), then the device
  /// values are uploaded from it: both stay the same storage.
  void update_values(const Value* values, Memory where) override {
    if constexpr (adl::HasUpdateValues<HostFmt, Value> && adl::HasUploadValues<Dev, HostFmt>) {
      const std::vector<Value> h =
          host_values(values, static_cast<std::size_t>(host_.shape().nnz), where);
      adl::do_update_values(host_, h.data());
      adl::do_upload_values(dev_, host_);
    } else {
      MatrixImpl<Value>::update_values(values, where);
    }
  }
  std::vector<StoredArray> stored_arrays() const override {
    if constexpr (adl::HasStoredArrays<Dev>)
      return adl::do_stored_arrays(dev_);
    else
      return MatrixImpl<Value>::stored_arrays();
  }

 private:
  HostFmt host_;
  Dev dev_;
};

/// The device storage alone, built on the GPU from a device CSR: nothing of the matrix is kept
/// in host memory. to_csr downloads the arrays and converts them on the host.
template <class HostFmt, class Dev>
class DeviceOnlyImpl final : public MatrixImpl<typename HostFmt::value_type> {
 public:
  using Value = typename HostFmt::value_type;
  explicit DeviceOnlyImpl(Dev dev) : dev_(std::move(dev)) {}
  const Dev& device() const { return dev_; }

  Shape shape() const override { return dev_.shape(); }
  Backend backend() const override { return Backend::cuda; }
  std::size_t storage_bytes() const override { return dev_.storage_bytes(); }
  std::size_t traffic_bytes(Op op, std::int64_t k) const override {
    return adl::traffic(dev_, op, k);
  }
  Csr<Value, std::int64_t> to_csr() const override {
    return convert<Value, std::int64_t>(dev_.download().to_csr());
  }
  void prepare(Op op, std::int64_t k, DenseLayout layout) const override {
    if constexpr (adl::HasDevicePrepare<Dev>) adl::do_device_prepare(dev_, op, k, layout);
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
  void update_values(const Value* values, Memory where) override {
    if constexpr (adl::HasDeviceUpdateValues<Dev, Value>)
      adl::do_device_update_values(dev_, values, where);
    else
      MatrixImpl<Value>::update_values(values, where);
  }
  std::vector<StoredArray> stored_arrays() const override {
    if constexpr (adl::HasStoredArrays<Dev>)
      return adl::do_stored_arrays(dev_);
    else
      return MatrixImpl<Value>::stored_arrays();
  }

 private:
  Dev dev_;
};

}  // namespace cuda
}  // namespace spmat
