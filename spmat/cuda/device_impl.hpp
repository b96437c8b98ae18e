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
// then defines its make_cuda_impl (a DeviceImpl<HostFmt, Dev>) with
// SPMAT_DEFINE_CUDA_IMPL(HostFmt, Dev), below, which also defines cuda_ops (the registry's CUDA
// products, derived from the products Dev has). The host copy serves to_csr and traffic_bytes.
//
// storage_bytes of both backends is every device byte the matrix holds while alive: the stored
// arrays, the device-only plan arrays, value maps made by update_values, and the scratch that
// upload or prepare() allocates (once prepare(op) returned, a product allocates nothing, so the
// scratch is held from then on and counts; a buffer grown by a later, larger prepare counts at
// its new size). It is what spmat::device_memory_usage() rises by when the matrix is built and
// prepared (tests/gpu_storage_bytes_test.cpp). Not counted: memory spmat does not allocate (the
// CUDA context) and the stream's temporaries a product frees before it returns. A Dev gives
//   std::size_t storage_bytes() const;   // the bytes of every DeviceBuffer / DeviceArray it holds
// or, where its arrays are listed (spmat/cuda/array_list.hpp) and it holds nothing else, it is
// derived from the list.
// A product must not allocate, free or synchronize once its operation was prepared (it may then
// be captured into a CUDA graph): a Dev whose products need scratch that upload does not size
// (it depends on k, say) gives the hook
//   void prepare(const Dev&, Op, std::int64_t k, DenseLayout);   // size the scratch (mutable)
// which Matrix::prepare reaches; an unprepared product still sizes it on first use.
// Other optional hooks:
//   void upload_values(Dev&, const HostFmt&);      // refresh the device values from the host
//                                                  // copy (with the host format's update_values);
//                                                  // derived from a Dev that lists its arrays
//   std::vector<StoredArray> stored_arrays(const Dev&);  // the device arrays, downloaded;
//                                                  // derived from a Dev that lists its arrays
//                                                  // (spmat/cuda/array_list.hpp)
//
// A format with a device builder (docs/device-input.md) also gives Dev
//   Shape shape() const;  std::size_t storage_bytes() const;  HostFmt download() const;
// and the free function traffic_bytes(const Dev&, Op, std::int64_t k) (default_traffic of the
// bytes of its listed arrays, else of its storage_bytes, when absent); DeviceOnlyImpl then
// holds the device storage with no host copy (its make_cuda_impl(Dev&&):
// SPMAT_DEFINE_DEVICE_ONLY_IMPL(HostFmt, Dev)): to_csr downloads. Optional:
//   void update_values(Dev&, const Value* csr_values, Memory where);
#pragma once
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/format_adapter.hpp"
#include "spmat/model/traffic.hpp"

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
template <class D>
concept HasDeviceTraffic = requires(const D& d, Op op, std::int64_t k) {
  { traffic_bytes(d, op, k) } -> std::convertible_to<std::size_t>;
};
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

/// Every device byte `d` holds (see the file comment): its storage_bytes(), or the bytes of its
/// listed arrays where it has no such member.
template <class Dev>
std::size_t device_bytes(const Dev& d) {
  if constexpr (requires { { d.storage_bytes() } -> std::convertible_to<std::size_t>; })
    return d.storage_bytes();
  else if constexpr (ListedArrays<Dev>)
    return cuda::storage_bytes(Dev::arrays(d));
  else
    static_assert(sizeof(Dev) == 0,
                  "a device struct needs storage_bytes() or a list of its arrays");
}

/// The bytes of the stored arrays alone (what a product reads): the listed arrays where `Dev`
/// lists them, else its storage_bytes().
template <class Dev>
std::size_t stored_bytes(const Dev& d) {
  if constexpr (requires { Dev::arrays(d); })
    return cuda::storage_bytes(Dev::arrays(d));
  else
    return device_bytes(d);
}

template <class Value>
Value value_of(const MatrixImpl<Value>*);

/// The products of a CUDA implementation class `Impl`: for the backends of a device struct
/// (DeviceProducts: product_storage()), the products that struct has; for a class written by
/// hand, the MatrixImpl products it overrides. add: overridden (the device-struct backends have
/// none).
template <class Impl>
BackendOps products_of() {
  using Value = decltype(value_of(static_cast<const Impl*>(nullptr)));
  using Base = MatrixImpl<Value>;
  constexpr bool add = !std::is_same_v<decltype(&Impl::add), decltype(&Base::add)>;
  if constexpr (requires(const Impl& m) { m.product_storage(); }) {
    using Dev = std::remove_cvref_t<decltype(std::declval<const Impl&>().product_storage())>;
    return {adl::HasSpmv<Dev, Value>, adl::HasSpmvT<Dev, Value>, adl::HasSpmm<Dev, Value>, add};
  } else {
    return {!std::is_same_v<decltype(&Impl::spmv), decltype(&Base::spmv)>,
            !std::is_same_v<decltype(&Impl::spmv_t), decltype(&Base::spmv_t)>,
            !std::is_same_v<decltype(&Impl::spmm), decltype(&Base::spmm)>, add};
  }
}

/// What both CUDA backends of a device storage `Dev` (Derived::product_storage()) share: the
/// products (StorageProducts), prepare and stored_arrays forwarded to Dev's optional hooks.
template <class Derived, class Dev, class Value>
class DeviceProducts : public StorageProducts<Derived, Dev, Value> {
 public:
  Backend backend() const override { return Backend::cuda; }
  void prepare(Op op, std::int64_t k, DenseLayout layout) const override {
    if constexpr (adl::HasDevicePrepare<Dev>) adl::do_device_prepare(dev(), op, k, layout);
  }
  std::vector<StoredArray> stored_arrays() const override {
    if constexpr (adl::HasStoredArrays<Dev>)
      return adl::do_stored_arrays(dev());
    else if constexpr (ListedArrays<Dev>)
      return cuda::stored_arrays(dev());
    else
      return MatrixImpl<Value>::stored_arrays();
  }

 private:
  const Dev& dev() const { return static_cast<const Derived&>(*this).product_storage(); }
};

template <class HostFmt, class Dev>
class DeviceImpl final
    : public DeviceProducts<DeviceImpl<HostFmt, Dev>, Dev, format_value_t<HostFmt>> {
 public:
  using Value = format_value_t<HostFmt>;
  explicit DeviceImpl(HostFmt host) : host_(std::move(host)), dev_(Dev::upload(host_)) {}
  const HostFmt& host() const { return host_; }
  const Dev& device() const { return dev_; }
  const Dev& product_storage() const { return dev_; }

  Shape shape() const override { return host_.shape(); }
  /// Every device byte held (see the file comment), not the host copy's.
  std::size_t storage_bytes() const override { return device_bytes(dev_); }
  std::size_t traffic_bytes(Op op, std::int64_t k) const override {
    return adl::traffic(host_, op, k);
  }
  Csr<Value, std::int64_t> to_csr() const override {
    return convert<Value, std::int64_t>(host_.to_csr());
  }
  /// The host copy takes the new values (the host format's update_values), then the device
  /// values are uploaded from it: both stay the same storage.
  void update_values(const Value* values, Memory where) override {
    if constexpr (adl::HasUpdateValues<HostFmt, Value> &&
                  (adl::HasUploadValues<Dev, HostFmt> || ListedArrays<Dev>)) {
      const std::vector<Value> h =
          host_values(values, static_cast<std::size_t>(host_.shape().nnz), where);
      adl::do_update_values(host_, h.data());
      if constexpr (adl::HasUploadValues<Dev, HostFmt>)
        adl::do_upload_values(dev_, host_);
      else
        upload_value_arrays<Value>(Dev::arrays(dev_), Dev::host_arrays(host_));
    } else {
      MatrixImpl<Value>::update_values(values, where);
    }
  }

 private:
  HostFmt host_;
  Dev dev_;
};

/// The device storage alone, built on the GPU from a device CSR: nothing of the matrix is kept
/// in host memory. to_csr downloads the arrays and converts them on the host.
template <class HostFmt, class Dev>
class DeviceOnlyImpl final
    : public DeviceProducts<DeviceOnlyImpl<HostFmt, Dev>, Dev, format_value_t<HostFmt>> {
 public:
  using Value = format_value_t<HostFmt>;
  explicit DeviceOnlyImpl(Dev dev) : dev_(std::move(dev)) {}
  const Dev& device() const { return dev_; }
  const Dev& product_storage() const { return dev_; }

  Shape shape() const override { return dev_.shape(); }
  std::size_t storage_bytes() const override { return device_bytes(dev_); }
  std::size_t traffic_bytes(Op op, std::int64_t k) const override {
    if constexpr (adl::HasDeviceTraffic<Dev>)
      return adl::traffic(dev_, op, k);
    else  // the stored arrays read once per product
      return default_traffic(stored_bytes(dev_), op, dev_.shape(), k, sizeof(Value));
  }
  Csr<Value, std::int64_t> to_csr() const override {
    return convert<Value, std::int64_t>(dev_.download().to_csr());
  }
  void update_values(const Value* values, Memory where) override {
    if constexpr (adl::HasDeviceUpdateValues<Dev, Value>)
      adl::do_device_update_values(dev_, values, where);
    else
      MatrixImpl<Value>::update_values(values, where);
  }

 private:
  Dev dev_;
};

}  // namespace cuda

/// Declared in format_adapter.hpp. cuda_impl_of, found by argument-dependent lookup where the
/// format's SPMAT_DEFINE_CUDA_OPS instantiates this, names the implementation class.
template <class Host>
BackendOps cuda_ops(std::type_identity<Host> host) {
  return cuda::products_of<typename decltype(cuda_impl_of(host))::type>();
}

}  // namespace spmat

// make_cuda_impl of a format, for every type pair of SPMAT_FOR_EACH_TYPE_PAIR
// (spmat/core/types.hpp). Expand it inside namespace spmat of the .cu file that defines the
// device storage's products: DeviceImpl finds spmv, spmv_t, spmm and the hooks by
// argument-dependent lookup where it is instantiated, and an instantiation where they are not
// declared would quietly fall back to MatrixImpl's defaults.
//   SPMAT_DEFINE_CUDA_IMPL(Host, Dev):         make_cuda_impl(Host<V, I>&&), a DeviceImpl
//                                              (the host storage and its upload), and
//                                              cuda_ops(std::type_identity<Host<V, I>>), the
//                                              registry's CUDA products (from Dev's products);
//   SPMAT_DEFINE_DEVICE_ONLY_IMPL(Host, Dev):  make_cuda_impl(Dev<V, I>&&), a DeviceOnlyImpl
//                                              (the device storage of a device builder; same
//                                              products, so no cuda_ops of its own);
//   SPMAT_DEFINE_CUDA_OPS(Host, Impl):         cuda_ops of a format whose make_cuda_impl makes a
//                                              class of its own, `Impl` (a type naming Value
//                                              and Index): the products it overrides.
#define SPMAT_DEFINE_CUDA_IMPL(Host, Dev)                                                        \
  SPMAT_DEFINE_MAKE_CUDA_IMPL_(Host,                                                             \
                               ::spmat::cuda::DeviceImpl<Host<Value, Index>, Dev<Value, Index>>) \
  SPMAT_DEFINE_CUDA_OPS(Host, ::spmat::cuda::DeviceImpl<Host<Value, Index>, Dev<Value, Index>>)

#define SPMAT_DEFINE_DEVICE_ONLY_IMPL(Host, Dev) \
  SPMAT_DEFINE_MAKE_CUDA_IMPL_(                  \
      Dev, ::spmat::cuda::DeviceOnlyImpl<Host<Value, Index>, Dev<Value, Index>>)

// make_cuda_impl(Arg<V, I>&&), an `Impl` (a type naming Value and Index) made from the
// argument, and its explicit instantiations. Variadic: `Impl` has commas.
#define SPMAT_DEFINE_MAKE_CUDA_IMPL_(Arg, ...)                                     \
  template <class Value, class Index>                                              \
  std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(Arg<Value, Index>&& a) {       \
    return std::make_unique<__VA_ARGS__>(std::move(a));                            \
  }                                                                                \
  SPMAT_INSTANTIATE_MAKE_CUDA_IMPL_(Arg)

// The implementation class of Host's CUDA backend, for cuda_ops (declared only: it is used in
// decltype), then cuda_ops instantiated for the four type pairs. Variadic: `Impl` has commas.
#define SPMAT_DEFINE_CUDA_OPS(Host, ...)                                                      \
  template <class Value, class Index>                                                        \
  std::type_identity<__VA_ARGS__> cuda_impl_of(std::type_identity<Host<Value, Index>>);      \
  template BackendOps cuda_ops(std::type_identity<Host<float, std::int32_t>>);               \
  template BackendOps cuda_ops(std::type_identity<Host<float, std::int64_t>>);               \
  template BackendOps cuda_ops(std::type_identity<Host<double, std::int32_t>>);              \
  template BackendOps cuda_ops(std::type_identity<Host<double, std::int64_t>>);

// The explicit instantiations of make_cuda_impl(Arg<V, I>&&); the pairs of
// SPMAT_FOR_EACH_TYPE_PAIR, which takes no extra argument to pass `Arg` along.
#define SPMAT_INSTANTIATE_MAKE_CUDA_IMPL_(Arg)                                             \
  template std::unique_ptr<MatrixImpl<float>> make_cuda_impl(Arg<float, std::int32_t>&&);   \
  template std::unique_ptr<MatrixImpl<float>> make_cuda_impl(Arg<float, std::int64_t>&&);   \
  template std::unique_ptr<MatrixImpl<double>> make_cuda_impl(Arg<double, std::int32_t>&&); \
  template std::unique_ptr<MatrixImpl<double>> make_cuda_impl(Arg<double, std::int64_t>&&);
