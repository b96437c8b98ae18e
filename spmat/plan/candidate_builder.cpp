// spmat/plan/candidate_builder.cpp — see candidate_builder.hpp.
// SPDX-License-Identifier: MIT
#include "spmat/plan/candidate_builder.hpp"

#include <optional>

#include "spmat/config.hpp"
#include "spmat/plan/model.hpp"
#include "spmat/registry.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#endif

namespace spmat {

template <class Value, class Index>
struct CandidateBuilder<Value, Index>::DeviceCopies {
#if SPMAT_WITH_CUDA
  std::optional<DeviceCsr<Value, Index>> a, at;
#endif
};

template <class Value, class Index>
CandidateBuilder<Value, Index>::CandidateBuilder(const Csr<Value, Index>& a, Backend backend)
    : a_(a), backend_(backend), device_(std::make_unique<DeviceCopies>()) {}

template <class Value, class Index>
CandidateBuilder<Value, Index>::~CandidateBuilder() = default;

template <class Value, class Index>
bool CandidateBuilder<Value, Index>::on_device(const std::string& format) const {
  // The csr formats adopt the arrays they are built from. With 64-bit indices they narrow the
  // column indices into an array of their own, and adopting the builder's upload would keep its
  // 64-bit column indices alive unused: they upload their own, as their host path does.
  const std::string name = FormatSpec::parse(format).name;
  const bool adopts_and_narrows = sizeof(Index) == 8 && (name == "csr" || name.rfind("csr-", 0) == 0);
  return kCudaCompiled && backend_ == Backend::cuda && !device_failed_ && !adopts_and_narrows &&
         find_format(name).builds_on_device();
}

template <class Value, class Index>
double CandidateBuilder<Value, Index>::preparation_ms(const std::string& format,
                                                      bool transposed) const {
  double ms = 0;
  if (on_device(format)) {
#if SPMAT_WITH_CUDA
    const std::size_t csr_bytes =
        a_.row_ptr.size() * sizeof(Index) +
        static_cast<std::size_t>(a_.nnz()) * (sizeof(Index) + sizeof(Value));
    if (!device_->a) ms += plan_model::estimated_upload_ms(csr_bytes);
    if (transposed && !device_->at) ms += plan_model::estimated_device_transpose_ms(csr_bytes);
#endif
  } else if (transposed && !host_transpose_) {
    ms += plan_model::estimated_transpose_ms(a_.nnz(), a_.rows);
  }
  return ms;
}

template <class Value, class Index>
std::shared_ptr<MatrixImpl<Value>> CandidateBuilder<Value, Index>::build(const std::string& format,
                                                                         bool transposed) {
  if (on_device(format)) {
    try {
      return build_on_device(format, transposed);
    } catch (const OutOfMemoryError&) {
      stop_device_builds();
    }
  }
  return build_on_host(format, transposed);
}

template <class Value, class Index>
void CandidateBuilder<Value, Index>::stop_device_builds() {
  device_ = std::make_unique<DeviceCopies>();
  device_failed_ = true;
}

template <class Value, class Index>
void CandidateBuilder<Value, Index>::upload(bool transposed) {
#if SPMAT_WITH_CUDA
  if (!device_->a) device_->a.emplace(cuda::upload_csr(a_));
  if (transposed && !device_->at) device_->at.emplace(cuda::transpose(device_->a->view()));
#else
  (void)transposed;
  throw UnsupportedError("device builds need spmat built with CUDA");
#endif
}

template <class Value, class Index>
bool CandidateBuilder<Value, Index>::symmetric() {
  if (a_.rows != a_.cols) return false;
#if SPMAT_WITH_CUDA
  if (kCudaCompiled && backend_ == Backend::cuda && !device_failed_) {
    try {
      upload(true);
      return cuda::equal(device_->a->view(), device_->at->view());
    } catch (const OutOfMemoryError&) {
      stop_device_builds();
    }
  }
#endif
  if (!host_transpose_) host_transpose_ = std::make_unique<Csr<Value, Index>>(transpose(a_));
  return *host_transpose_ == a_;
}

template <class Value, class Index>
std::shared_ptr<MatrixImpl<Value>> CandidateBuilder<Value, Index>::build_on_host(
    const std::string& format, bool transposed) {
  const FormatSpec spec = FormatSpec::parse(format);
  const auto& factory = find_format(spec.name).factory<Value, Index>();
  if (!transposed) return std::shared_ptr<MatrixImpl<Value>>(factory(a_, spec.options, backend_));
  if (!host_transpose_) host_transpose_ = std::make_unique<Csr<Value, Index>>(transpose(a_));
  return std::shared_ptr<MatrixImpl<Value>>(factory(*host_transpose_, spec.options, backend_));
}

template <class Value, class Index>
std::shared_ptr<MatrixImpl<Value>> CandidateBuilder<Value, Index>::build_on_device(
    const std::string& format, bool transposed) {
#if SPMAT_WITH_CUDA
  upload(transposed);
  const DeviceCsr<Value, Index>& source = transposed ? *device_->at : *device_->a;
  const FormatSpec spec = FormatSpec::parse(format);
  const auto& factory = find_format(spec.name).device_factory<Value, Index>();
  std::shared_ptr<MatrixImpl<Value>> m(factory(source, spec.options));
  cuda::synchronize_stream();  // complete on return: callers time the build
  return m;
#else
  (void)format;
  (void)transposed;
  throw UnsupportedError("device builds need spmat built with CUDA");
#endif
}

#define SPMAT_INSTANTIATE(V, I) template class CandidateBuilder<V, I>;
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
