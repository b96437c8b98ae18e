// spmat/matrix_impl.hpp — the interface every (format, backend, value type) implements.
// SPDX-License-Identifier: MIT
//
// Users of the library never see this: they hold a Matrix<Value> (matrix.hpp), which does not
// hand it out (only spmat::detail::impl_of, for the library's own tests and tools). It stays an
// installed header because it is the extension interface: a format registered from outside
// the library implements it (or lets format_adapter.hpp wrap a storage struct and its kernels
// into one, as the built-in formats do).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/types.hpp"

namespace spmat {

struct FormatPlan;

/// One array of a storage, copied to host memory byte for byte (see MatrixImpl::stored_arrays).
struct StoredArray {
  std::string name;
  std::vector<std::byte> bytes;
};

struct Shape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
};

template <class Value>
class MatrixImpl {
 public:
  virtual ~MatrixImpl() = default;
  virtual Shape shape() const = 0;
  virtual Backend backend() const = 0;
  /// Exact bytes of the stored arrays (device bytes for the CUDA backend).
  virtual std::size_t storage_bytes() const = 0;
  /// Traffic model: the minimal bytes `op` must move with this storage — every stored array
  /// read once, x read once, y written once (k dense columns for spmm). Used for GB/s.
  virtual std::size_t traffic_bytes(Op op, std::int64_t k) const = 0;
  /// The stored matrix as canonical CSR (downloads from the device if needed).
  virtual Csr<Value, std::int64_t> to_csr() const = 0;
  /// The plan this matrix follows ("auto" and "tune" formats); null for a named format.
  virtual const FormatPlan* plan() const { return nullptr; }
  /// Wall-clock milliseconds the build spent copying its storage from the host to the device
  /// (a CUDA matrix built from a host CSR; 0 otherwise), which the benchmark reports apart
  /// from the build. Set by the registry's factory.
  double upload_ms() const { return upload_ms_; }
  void set_upload_ms(double ms) { upload_ms_ = ms; }

  /// One-time per-operation setup (analysis, work buffers); the benchmark times it as setup.
  /// Operations called without it prepare lazily.
  virtual void prepare(Op /*op*/, std::int64_t /*k*/, DenseLayout /*layout*/) const {}

  // Operations. Pointers live in this backend's memory; Matrix checked the sizes.
  // beta == 0 means y is write-only: its old contents (even NaN) never reach the result.
  virtual void spmv(const Value* /*x*/, Value* /*y*/, Value /*alpha*/, Value /*beta*/) const {
    throw UnsupportedError("spmv is not implemented by this format");
  }
  virtual void spmv_t(const Value* /*x*/, Value* /*y*/, Value /*alpha*/, Value /*beta*/) const {
    throw UnsupportedError("spmv_t is not implemented by this format");
  }
  /// C (rows×k) = alpha*A*B + beta*C with B (cols×k), both dense in `layout`.
  virtual void spmm(const Value* /*b*/, Value* /*c*/, std::int64_t /*k*/, DenseLayout /*layout*/,
                    Value /*alpha*/, Value /*beta*/) const {
    throw UnsupportedError("spmm is not implemented by this format");
  }
  /// alpha*A + beta*B, in this format and backend. `b` has the same format and backend.
  virtual std::unique_ptr<MatrixImpl> add(const MatrixImpl& /*b*/, Value /*alpha*/,
                                          Value /*beta*/) const {
    throw UnsupportedError("add is not implemented by this format");
  }

  /// Replaces the stored values by `values` (nnz of them, in the order of to_csr()), keeping
  /// the structure. `where`: the memory `values` lives in. Matrix checked nothing but nnz.
  virtual void update_values(const Value* /*values*/, Memory /*where*/) {
    throw UnsupportedError(
        "update_values is not implemented by this format (rebuild the matrix with the new "
        "values)");
  }

  /// The storage's arrays as stored (device arrays downloaded), named, in a fixed order: lets
  /// tests compare two ways of building the same storage byte for byte. Padding included.
  virtual std::vector<StoredArray> stored_arrays() const {
    throw UnsupportedError("stored_arrays is not implemented by this format");
  }

 private:
  double upload_ms_ = 0;
};

}  // namespace spmat
