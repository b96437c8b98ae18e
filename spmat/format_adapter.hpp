// spmat/format_adapter.hpp — turns a storage struct and its kernels into a registry entry.
// SPDX-License-Identifier: MIT
//
// A format `Fmt<Value, Index>` (a plain struct of arrays) provides:
//   static Fmt build(const Csr<Value, Index>&, const FormatOptions&);
//   Csr<Value, Index> to_csr() const;
//   std::size_t storage_bytes() const;
//   Shape shape() const;
// and free functions found by argument-dependent lookup (declare them in the format's header):
//   std::size_t traffic_bytes(const Fmt&, Op, std::int64_t k);            // required
//   void spmv  (const Fmt&, const Value* x, Value* y, Value alpha, Value beta);   // CPU, optional
//   void spmv_t(const Fmt&, const Value* x, Value* y, Value alpha, Value beta);   // CPU, optional
//   void spmm  (const Fmt&, const Value* b, Value* c, std::int64_t k, DenseLayout,
//               Value alpha, Value beta);                                        // CPU, optional
//   Fmt  add   (const Fmt& a, const Fmt& b, Value alpha, Value beta);             // CPU, optional
//   std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(Fmt&& host);   // CUDA backend, optional,
//                                                 // defined in the format's _cuda.cu file
//   void update_values(Fmt&, const Value* csr_values);  // optional: new values in CSR order
//   std::unique_ptr<MatrixImpl<Value>> build_cuda_from_host(   // CUDA, optional: the device
//       std::type_identity<Fmt>, const Csr<Value, Index>&,      // storage uploaded from the
//       const FormatOptions&);                                   // input, no host copy kept
// `make_entry<Fmt>(entry, declared)` fills the four factories of `entry` and its capabilities:
// which products each backend has is derived from the functions above (CPU: the concepts below
// on the four type pairs, which must agree; CUDA: cuda_ops, from the device struct's products,
// see spmat/cuda/device_impl.hpp), and `available` from whether the backend exists in this
// build. What the types cannot tell is declared, once per format (DeclaredCaps): whether the
// chosen kernels are deterministic, and entries that leave a backend or a product out on
// purpose (an entry that fixes a GPU kernel with its preset). The conformance suite checks the
// result against behaviour both ways.
#pragma once
#include <chrono>
#include <concepts>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "spmat/config.hpp"
#include "spmat/registry.hpp"

namespace spmat {

namespace adl {
// Free-function calls live here, outside HostImpl, because inside the class the member names
// (spmv, add, ...) would hide the format's free functions from argument-dependent lookup.
template <class F, class V>
concept HasSpmv = requires(const F& f, const V* x, V* y, V a) { spmv(f, x, y, a, a); };
template <class F, class V>
concept HasSpmvT = requires(const F& f, const V* x, V* y, V a) { spmv_t(f, x, y, a, a); };
template <class F, class V>
concept HasSpmm = requires(const F& f, const V* b, V* c, std::int64_t k, DenseLayout l, V a) {
  spmm(f, b, c, k, l, a, a);
};
template <class F, class V>
concept HasAdd = requires(const F& f, V a) {
  { add(f, f, a, a) } -> std::same_as<F>;
};
template <class F>
std::size_t traffic(const F& f, Op op, std::int64_t k) { return traffic_bytes(f, op, k); }
template <class F, class V>
void do_spmv(const F& f, const V* x, V* y, V a, V b) { spmv(f, x, y, a, b); }
template <class F, class V>
void do_spmv_t(const F& f, const V* x, V* y, V a, V b) { spmv_t(f, x, y, a, b); }
template <class F, class V>
void do_spmm(const F& f, const V* b, V* c, std::int64_t k, DenseLayout l, V al, V be) {
  spmm(f, b, c, k, l, al, be);
}
template <class F, class V>
F do_add(const F& f, const F& g, V a, V b) { return add(f, g, a, b); }
template <class F, class V>
concept HasUpdateValues = requires(F& f, const V* v) { update_values(f, v); };
template <class F, class V>
void do_update_values(F& f, const V* v) { update_values(f, v); }
}  // namespace adl

/// spmv, spmv_t and spmm of a MatrixImpl whose storage struct `S` (Derived::product_storage())
/// gives them as free functions, or MatrixImpl's defaults (unsupported) where it does not. The
/// host backend and both CUDA backends (spmat/cuda/device_impl.hpp) forward their products this
/// way; CRTP, so that the call stays direct (no virtual call to reach the storage).
template <class Derived, class S, class Value>
class StorageProducts : public MatrixImpl<Value> {
 public:
  void spmv(const Value* x, Value* y, Value alpha, Value beta) const override {
    if constexpr (adl::HasSpmv<S, Value>)
      adl::do_spmv(operand(), x, y, alpha, beta);
    else
      MatrixImpl<Value>::spmv(x, y, alpha, beta);
  }
  void spmv_t(const Value* x, Value* y, Value alpha, Value beta) const override {
    if constexpr (adl::HasSpmvT<S, Value>)
      adl::do_spmv_t(operand(), x, y, alpha, beta);
    else
      MatrixImpl<Value>::spmv_t(x, y, alpha, beta);
  }
  void spmm(const Value* b, Value* c, std::int64_t k, DenseLayout layout, Value alpha,
            Value beta) const override {
    if constexpr (adl::HasSpmm<S, Value>)
      adl::do_spmm(operand(), b, c, k, layout, alpha, beta);
    else
      MatrixImpl<Value>::spmm(b, c, k, layout, alpha, beta);
  }

 private:
  const S& operand() const { return static_cast<const Derived&>(*this).product_storage(); }
};

/// Host (OpenMP) backend of a storage struct.
template <class Fmt>
class HostImpl final
    : public StorageProducts<HostImpl<Fmt>, Fmt, format_value_t<Fmt>> {
 public:
  using Value = format_value_t<Fmt>;
  explicit HostImpl(Fmt a) : a_(std::move(a)) {}
  const Fmt& storage() const { return a_; }
  const Fmt& product_storage() const { return a_; }

  Shape shape() const override { return a_.shape(); }
  Backend backend() const override { return Backend::cpu; }
  std::size_t storage_bytes() const override { return a_.storage_bytes(); }
  std::size_t traffic_bytes(Op op, std::int64_t k) const override { return adl::traffic(a_, op, k); }
  Csr<Value, std::int64_t> to_csr() const override {
    return convert<Value, std::int64_t>(a_.to_csr());
  }
  std::unique_ptr<MatrixImpl<Value>> add(const MatrixImpl<Value>& b, Value alpha,
                                         Value beta) const override {
    if constexpr (adl::HasAdd<Fmt, Value>) {
      auto* other = dynamic_cast<const HostImpl*>(&b);
      if (!other)
        throw UnsupportedError("add: both operands must have the same format and backend");
      return std::make_unique<HostImpl>(adl::do_add(a_, other->a_, alpha, beta));
    } else {
      return MatrixImpl<Value>::add(b, alpha, beta);
    }
  }
  /// Host memory only: Matrix::update_values downloads device values for the CPU backend.
  void update_values(const Value* values, Memory where) override {
    if constexpr (adl::HasUpdateValues<Fmt, Value>)
      adl::do_update_values(a_, values);
    else
      MatrixImpl<Value>::update_values(values, where);
  }

 private:
  Fmt a_;
};

/// The products of the CUDA backend of host storage `Host`, from its kernels: declared here,
/// defined in spmat/cuda/device_impl.hpp and instantiated for the four type pairs by the
/// format's SPMAT_DEFINE_CUDA_IMPL (or SPMAT_DEFINE_CUDA_OPS) in its _cuda.cu, where the device
/// struct and its products are known. Only called for a format whose make_cuda_impl exists, in
/// CUDA builds.
template <class Host>
BackendOps cuda_ops(std::type_identity<Host>);

/// What a registry entry states about one backend because the types cannot tell it.
struct DeclaredBackend {
  /// false: the entry leaves this backend out (e.g. an entry whose preset picks a GPU kernel
  /// registers no CPU backend; the plain entry has it).
  bool offered = true;
  /// Whether the products the entry's default options choose give bitwise-identical results
  /// from run to run (no floating-point atomics into the result, a fixed order of additions).
  /// CPU kernels are; every CUDA backend states both.
  bool deterministic_spmv = true;
  bool deterministic_spmv_t = true;
  /// Products the backend has but this entry turns off on purpose (its preset).
  BackendOps without{};
};

/// The declared part of an entry's capabilities; make_entry derives the rest.
struct DeclaredCaps {
  DeclaredBackend cpu;
  DeclaredBackend cuda;
};

/// The declared caps of an entry that offers both backends, whose CPU kernels are deterministic
/// (as every CPU kernel is) and whose CUDA products are deterministic as stated.
constexpr DeclaredCaps cuda_determinism(bool spmv, bool spmv_t) {
  return {.cuda = {.deterministic_spmv = spmv, .deterministic_spmv_t = spmv_t}};
}

/// The same for an entry that fixes a GPU kernel with its preset: it registers no CPU backend
/// (the CPU kernels are those of the format's main entry).
constexpr DeclaredCaps gpu_kernel_only(bool spmv, bool spmv_t) {
  return {.cpu = {.offered = false},
          .cuda = {.deterministic_spmv = spmv, .deterministic_spmv_t = spmv_t}};
}

namespace detail {

template <class F>
constexpr BackendOps host_ops_of() {
  using V = format_value_t<F>;
  return {adl::HasSpmv<F, V>, adl::HasSpmvT<F, V>, adl::HasSpmm<F, V>, adl::HasAdd<F, V>};
}

/// The CPU products of format template `Fmt`; the same for the four type pairs (a kernel
/// declared for one value type only would make the caps wrong for the others).
template <template <class, class> class Fmt>
constexpr BackendOps host_ops() {
  constexpr BackendOps ops = host_ops_of<Fmt<float, std::int32_t>>();
  static_assert(ops == host_ops_of<Fmt<float, std::int64_t>>() &&
                    ops == host_ops_of<Fmt<double, std::int32_t>>() &&
                    ops == host_ops_of<Fmt<double, std::int64_t>>(),
                "the CPU products of a format differ between its type pairs");
  return ops;
}

template <class Host>
concept HasCudaBackend = requires(Host&& h) { make_cuda_impl(std::move(h)); };

/// The CUDA products of format template `Fmt`, or nothing where it has no CUDA backend in this
/// build. Throws std::logic_error (when the registry is first built) if the type pairs disagree.
template <template <class, class> class Fmt>
std::optional<BackendOps> device_ops(const std::string& name) {
  if constexpr (kCudaCompiled && HasCudaBackend<Fmt<float, std::int32_t>>) {
    const BackendOps ops = cuda_ops(std::type_identity<Fmt<float, std::int32_t>>{});
    if (ops != cuda_ops(std::type_identity<Fmt<float, std::int64_t>>{}) ||
        ops != cuda_ops(std::type_identity<Fmt<double, std::int32_t>>{}) ||
        ops != cuda_ops(std::type_identity<Fmt<double, std::int64_t>>{}))
      throw std::logic_error("format '" + name +
                             "': the CUDA products differ between its type pairs");
    return ops;
  } else {
    (void)name;
    return std::nullopt;
  }
}

/// The caps of one backend: `ops` the products that exist (nullopt: no such backend in this
/// build), `declared` what the entry states. A backend that is not there is unavailable with no
/// products, and keeps the declared determinism: what the entry's kernels promise does not
/// depend on whether this build compiled them.
inline BackendCaps backend_caps(std::optional<BackendOps> ops, const DeclaredBackend& declared) {
  if (!ops || !declared.offered)
    return {.deterministic_spmv = declared.deterministic_spmv,
            .deterministic_spmv_t = declared.deterministic_spmv_t};
  return {.available = true,
          .spmv = ops->spmv && !declared.without.spmv,
          .spmv_t = ops->spmv_t && !declared.without.spmv_t,
          .spmm = ops->spmm && !declared.without.spmm,
          .add = ops->add && !declared.without.add,
          .deterministic_spmv = declared.deterministic_spmv,
          .deterministic_spmv_t = declared.deterministic_spmv_t};
}

/// `upload()` (which makes a CUDA matrix from host data) with its wall-clock time recorded in
/// the matrix (MatrixImpl::upload_ms). Host-to-device copies from pageable memory are complete
/// when they return, so no synchronization is added.
template <class Upload>
auto timed_upload(Upload&& upload) {
  const auto t0 = std::chrono::steady_clock::now();
  auto m = upload();
  m->set_upload_ms(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return m;
}

template <template <class, class> class Fmt, class Value, class Index>
Factory<Value, Index> make_factory(FormatOptions preset) {
  return [preset](const Csr<Value, Index>& a, const FormatOptions& user,
                  Backend backend) -> std::unique_ptr<MatrixImpl<Value>> {
    FormatOptions opts = user;
    for (const auto& [k, v] : preset.all()) opts.set(k, v);
    // A format that uploads straight from the input (build_cuda_from_host) keeps no host copy
    // of the matrix: the host then never holds the input and a storage copy at once.
    if constexpr (kCudaCompiled && requires {
                    build_cuda_from_host(std::type_identity<Fmt<Value, Index>>{}, a, opts);
                  }) {
      if (backend == Backend::cuda)  // all of it counts as the upload (its plan included)
        return timed_upload([&] {
          return build_cuda_from_host(std::type_identity<Fmt<Value, Index>>{}, a, opts);
        });
    }
    Fmt<Value, Index> host = Fmt<Value, Index>::build(a, opts);
    if (backend == Backend::cpu) return std::make_unique<HostImpl<Fmt<Value, Index>>>(std::move(host));
    if constexpr (kCudaCompiled && HasCudaBackend<Fmt<Value, Index>>)
      return timed_upload([&] { return make_cuda_impl(std::move(host)); });
    else
      throw UnsupportedError("this format has no CUDA backend in this build");
  };
}

template <template <class, class> class Fmt, class Value, class Index>
DeviceFactory<Value, Index> make_device_factory(FormatOptions preset) {
  if constexpr (kCudaCompiled &&
                requires(const DeviceCsr<Value, Index>& a, const FormatOptions& o) {
                  build_cuda_from_device(std::type_identity<Fmt<Value, Index>>{}, a, o);
                }) {
    return [preset](const DeviceCsr<Value, Index>& a,
                    const FormatOptions& user) -> std::unique_ptr<MatrixImpl<Value>> {
      FormatOptions opts = user;
      for (const auto& [k, v] : preset.all()) opts.set(k, v);
      return build_cuda_from_device(std::type_identity<Fmt<Value, Index>>{}, a, opts);
    };
  } else {
    return {};
  }
}

template <template <class, class> class Fmt, class Value, class Index>
void set_factories(FormatEntry& entry, const FormatOptions& preset) {
  entry.factory<Value, Index>() = make_factory<Fmt, Value, Index>(preset);
  entry.device_factory<Value, Index>() = make_device_factory<Fmt, Value, Index>(preset);
}
}  // namespace detail

/// Fills the factories and the capabilities of `entry` for format template `Fmt` (any caps
/// `entry` brings are replaced): the products of each backend derived from its kernels, the
/// rest from `declared`. `preset` options are forced on every build (for registry entries that
/// are one storage with a fixed kernel choice).
///
/// The entry also gets the device builder of `Fmt` where the format has one, declared in its
/// header and defined in its _device_build.cu:
///   std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(
///       std::type_identity<Fmt<Value, Index>>, const DeviceCsr<Value, Index>&, const FormatOptions&);
/// It must build the same device arrays as Fmt::build followed by the upload. Without one (or
/// without CUDA) the entry builds from a device CSR through the host.
template <template <class, class> class Fmt>
FormatEntry make_entry(FormatEntry entry, const DeclaredCaps& declared,
                       const FormatOptions& preset = {}) {
  entry.caps.cpu = detail::backend_caps(detail::host_ops<Fmt>(), declared.cpu);
  entry.caps.cuda = detail::backend_caps(detail::device_ops<Fmt>(entry.name), declared.cuda);
  detail::set_factories<Fmt, float, std::int32_t>(entry, preset);
  detail::set_factories<Fmt, float, std::int64_t>(entry, preset);
  detail::set_factories<Fmt, double, std::int32_t>(entry, preset);
  detail::set_factories<Fmt, double, std::int64_t>(entry, preset);
  return entry;
}

}  // namespace spmat
