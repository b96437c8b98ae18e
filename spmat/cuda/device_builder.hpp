// spmat/cuda/device_builder.hpp — the entry point of a format's device builder, defined once for
// the formats whose device storage `Dev` is made by build_on_device(view, options).
// SPDX-License-Identifier: MIT
//
// The host format declares build_cuda_from_device (docs/device-input.md); the header of Dev
// expands SPMAT_DECLARE_DEVICE_BUILT_STORAGE(Dev); its _device_build.cu defines, with internal
// linkage (static, or in an unnamed namespace), Dev<Value, Index> build_on_device(
// const DeviceCsrView<Value, Index>&, const FormatOptions&), and update_values(Dev&, ...), then
// expands, inside namespace spmat,
//   SPMAT_DEFINE_DEVICE_BUILDER(Host, Dev)
//   #define SPMAT_INSTANTIATE(V, I) SPMAT_INSTANTIATE_DEVICE_BUILDER(Host, Dev, V, I)
//   SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
// make_cuda_impl(Dev&&) (the device-only matrix, SPMAT_DEFINE_DEVICE_ONLY_IMPL) is defined with
// the kernels.
#pragma once
#include <omp.h>

#include <cstdint>
#include <memory>
#include <type_traits>

#include "spmat/core/csr.hpp"
#include "spmat/core/device_csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/types.hpp"
#include "spmat/matrix_impl.hpp"

namespace spmat::cuda {

/// The host storage `Host` built from an empty matrix: its options parsed and checked by the host
/// builder, with the host builder's messages, for a device builder to read them from. On one
/// OpenMP thread: an empty build has nothing to share, and a parallel region of it (tiled's panel
/// pass, sell's and bccoo-gpu's) would wake the whole team, whose workers then spin on every core
/// through the device build that follows, taking the CPU from its launches. Measured on an H100
/// host (16 cores) against the team: tiled builds 15–29% faster, sell's 2× on lap2d:1000, csr's
/// 3–8% (bench/results/2026-11-27-h100/device-build-options).
template <class Host>
Host parsed_options(const FormatOptions& o) {
  struct OneThread {
    int saved = omp_get_max_threads();
    OneThread() { omp_set_num_threads(1); }
    ~OneThread() { omp_set_num_threads(saved); }
  } one_thread;
  return Host::build(Csr<format_value_t<Host>, format_index_t<Host>>{}, o);
}

}  // namespace spmat::cuda

/// Declares, in the header of a device storage `Dev` with a device builder, the functions that
/// its builder and its kernels define: update_values(Dev&, ...) (the builder; DeviceOnlyImpl
/// reaches it) and make_cuda_impl(Dev&&) (the device-only matrix, with the kernels).
#define SPMAT_DECLARE_DEVICE_BUILT_STORAGE(Dev)                                  \
  template <class Value, class Index>                                            \
  void update_values(Dev<Value, Index>& d, const Value* values, Memory where);   \
  template <class Value, class Index>                                            \
  std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(Dev<Value, Index>&& d);

/// build_cuda_from_device for the host storage `Host`: the device-only matrix over
/// build_on_device<Value, Index>(a.view(), o) (which parses and checks the options as the host
/// builder does).
#define SPMAT_DEFINE_DEVICE_BUILDER(Host, Dev)                                                \
  template <class Value, class Index>                                                        \
  std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(                                 \
      std::type_identity<Host<Value, Index>>, const DeviceCsr<Value, Index>& a,              \
      const FormatOptions& o) {                                                              \
    return make_cuda_impl(build_on_device<Value, Index>(a.view(), o));                        \
  }

/// The explicit instantiations, for every type pair, of the device builder of a format that
/// takes no value updates (its layout depends on the values): build_cuda_from_device only.
#define SPMAT_INSTANTIATE_DEVICE_BUILDER_WITHOUT_UPDATES(Host)                                 \
  SPMAT_INSTANTIATE_BUILD_FROM_DEVICE(Host, float, std::int32_t)                              \
  SPMAT_INSTANTIATE_BUILD_FROM_DEVICE(Host, float, std::int64_t)                              \
  SPMAT_INSTANTIATE_BUILD_FROM_DEVICE(Host, double, std::int32_t)                             \
  SPMAT_INSTANTIATE_BUILD_FROM_DEVICE(Host, double, std::int64_t)
#define SPMAT_INSTANTIATE_BUILD_FROM_DEVICE(Host, V, I)                                       \
  template std::unique_ptr<MatrixImpl<V>> build_cuda_from_device(                            \
      std::type_identity<Host<V, I>>, const DeviceCsr<V, I>&, const FormatOptions&);

/// The explicit instantiations of a device builder for one type pair: build_cuda_from_device
/// (with it build_on_device) and the value update.
#define SPMAT_INSTANTIATE_DEVICE_BUILDER(Host, Dev, V, I)                                     \
  SPMAT_INSTANTIATE_BUILD_FROM_DEVICE(Host, V, I)                                             \
  template void update_values(Dev<V, I>&, const V*, Memory);
