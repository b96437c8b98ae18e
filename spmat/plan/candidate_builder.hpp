// spmat/plan/candidate_builder.hpp — building the storages a plan names (A or Aᵀ in a format)
// from one host CSR: on the GPU with the formats' device builders from one upload of A (and
// one device transpose for storages of Aᵀ), on the host otherwise.
// SPDX-License-Identifier: MIT
//
// A host build of tens of millions of nonzeros takes 0.4–5 s; an upload and a device build take
// a few dozen milliseconds. `auto` builds its choice this way, and `tune` every candidate it
// times. The device copies of A and Aᵀ live as long as the builder (csr adopts A's arrays and
// keeps them alive past it).
#pragma once
#include <memory>
#include <string>

#include "spmat/core/csr.hpp"
#include "spmat/core/types.hpp"
#include "spmat/matrix_impl.hpp"

namespace spmat {

template <class Value, class Index>
class CandidateBuilder {
 public:
  CandidateBuilder(const Csr<Value, Index>& a, Backend backend);
  ~CandidateBuilder();
  CandidateBuilder(const CandidateBuilder&) = delete;
  CandidateBuilder& operator=(const CandidateBuilder&) = delete;

  /// Whether `format` (a FormatSpec) builds on the device here: the CUDA backend, a format with
  /// a device builder, and no device build has run out of memory (then every build goes to the
  /// host).
  bool on_device(const std::string& format) const;
  /// Estimated time of what build(format, transposed) must do before the format's own build:
  /// the upload of A and the transpose (on the device or the host), where not done yet.
  double preparation_ms(const std::string& format, bool transposed) const;
  /// Whether A equals Aᵀ (values included), compared on the GPU where A is built there.
  bool symmetric();
  /// `format` (a FormatSpec: a name, with options where given) built from A, or from Aᵀ when
  /// `transposed`; complete on return.
  /// A device build that runs out of memory frees the device copies and builds on the host.
  std::shared_ptr<MatrixImpl<Value>> build(const std::string& format, bool transposed);

 private:
  struct DeviceCopies;
  /// The device copies of A, and of Aᵀ when `transposed`, made if not yet.
  void upload(bool transposed);
  /// After a device out-of-memory error: frees the device copies of A (and Aᵀ), which may be
  /// what did not fit, and builds the way that needs none from then on.
  void stop_device_builds();
  std::shared_ptr<MatrixImpl<Value>> build_on_host(const std::string& format, bool transposed);
  std::shared_ptr<MatrixImpl<Value>> build_on_device(const std::string& format, bool transposed);
  const Csr<Value, Index>& a_;
  Backend backend_;
  bool device_failed_ = false;
  std::unique_ptr<Csr<Value, Index>> host_transpose_;
  std::unique_ptr<DeviceCopies> device_;
};

}  // namespace spmat
