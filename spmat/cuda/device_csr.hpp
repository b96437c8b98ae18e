// spmat/cuda/device_csr.hpp — the CUDA side of device CSR input: handing DeviceBuffers over as a
// DeviceCsr, the validation kernel, downloads, arrays that are owned or borrowed, and the value
// scatter behind update_values.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/device_csr.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/matrix_impl.hpp"

namespace spmat::cuda {

/// Hands three DeviceBuffers over as an exclusive DeviceCsr: the matrices built from it own
/// them (they are freed with the last one) and may update the values in place. Throws
/// DimensionMismatchError when the lengths disagree (row_ptr: rows+1, values: col_idx's).
template <class Value, class Index>
DeviceCsr<Value, Index> adopt_csr(std::int64_t rows, std::int64_t cols,
                                  DeviceBuffer<Index>&& row_ptr, DeviceBuffer<Index>&& col_idx,
                                  DeviceBuffer<Value>&& values) {
  if (rows < 0 || cols < 0)
    throw DimensionMismatchError("adopt_csr: negative dimensions " + std::to_string(rows) + "x" +
                                 std::to_string(cols));
  if (row_ptr.size() != static_cast<std::size_t>(rows) + 1)
    throw DimensionMismatchError("adopt_csr: row_ptr has " + std::to_string(row_ptr.size()) +
                                 " entries, expected rows+1 = " + std::to_string(rows + 1));
  if (values.size() != col_idx.size())
    throw DimensionMismatchError("adopt_csr: values has " + std::to_string(values.size()) +
                                 " entries but col_idx has " + std::to_string(col_idx.size()));
  struct Arrays {
    DeviceBuffer<Index> row_ptr, col_idx;
    DeviceBuffer<Value> values;
  };
  auto arrays = std::make_shared<Arrays>(Arrays{std::move(row_ptr), std::move(col_idx), std::move(values)});
  DeviceCsrView<Value, Index> v{rows, cols, static_cast<std::int64_t>(arrays->col_idx.size()),
                                arrays->row_ptr.data(), arrays->col_idx.data(),
                                arrays->values.data()};
  return DeviceCsr<Value, Index>(v, std::shared_ptr<const void>(std::move(arrays)), true);
}

/// Uploads a host CSR as an exclusive DeviceCsr (tests and benchmarks start from one).
template <class Value, class Index>
DeviceCsr<Value, Index> upload_csr(const Csr<Value, Index>& a) {
  return adopt_csr<Value, Index>(a.rows, a.cols, DeviceBuffer<Index>(a.row_ptr, "csr row_ptr"),
                                 DeviceBuffer<Index>(a.col_idx, "csr col_idx"),
                                 DeviceBuffer<Value>(a.values, "csr values"));
}

/// Checks `a` against the canonical form with one kernel and one small download: the pointers
/// are device (or managed) memory, row_ptr[0] = 0, row_ptr non-decreasing, row_ptr[rows] = nnz,
/// every column in [0, cols), strictly increasing within each row. Throws InvalidMatrixError
/// naming `what` and the first violation (in that order of checks), as Csr::validate does.
template <class Value, class Index>
void validate(const DeviceCsrView<Value, Index>& a, std::string_view what);

/// Aᵀ of a validated device CSR written as CSR arrays (A's CSC): t_ptr (cols+1 entries), t_idx
/// and t_val (nnz each). A stable radix sort of the entries by column keeps each column's
/// entries in ascending rows, so the arrays equal those of the host transpose(), byte for byte.
/// On stream(); the scratch is released in stream order.
template <class Value, class Index>
void transpose_into(const DeviceCsrView<Value, Index>& a, Index* t_ptr, Index* t_idx, Value* t_val);

/// Aᵀ of a validated device CSR as an exclusive DeviceCsr (transpose_into).
template <class Value, class Index>
DeviceCsr<Value, Index> transpose(const DeviceCsrView<Value, Index>& a);

/// Whether two device CSRs hold the same matrix: dimensions, row pointers, column indices and
/// values (compared with ==, as Csr's operator== does). Synchronizes the stream.
template <class Value, class Index>
bool equal(const DeviceCsrView<Value, Index>& a, const DeviceCsrView<Value, Index>& b);

/// The view's arrays copied to a host Csr (for the formats built on the host).
template <class Value, class Index>
Csr<Value, Index> download(const DeviceCsrView<Value, Index>& a);

/// A device array that the storage either owns (a DeviceBuffer) or borrows from a caller (a
/// pointer plus whatever keeps it alive). Kernels read both the same way through data().
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(DeviceBuffer<T>&& own)  // NOLINT: implicit, so `arr = DeviceBuffer<T>(...)` works
      : own_(std::move(own)), p_(own_.data()), n_(own_.size()), writable_(true) {}
  /// `keep` (may be null: the caller guarantees the lifetime) is held as long as the array is.
  /// `writable`: overwrite() may write into the borrowed memory itself.
  static DeviceArray borrow(const T* p, std::size_t n, std::shared_ptr<const void> keep,
                            bool writable) {
    DeviceArray a;
    a.p_ = p;
    a.n_ = n;
    a.keep_ = std::move(keep);
    a.writable_ = writable;
    return a;
  }

  const T* data() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  bool borrowed() const { return p_ != nullptr && own_.data() == nullptr; }

  /// A pointer through which all size() entries are about to be overwritten: the array itself
  /// when owned or writable, otherwise a new owned buffer that replaces the borrowed one (the
  /// caller's memory is never written; its old contents are not copied, being overwritten).
  T* overwrite(const char* what) {
    if (writable_) return const_cast<T*>(p_);
    own_ = DeviceBuffer<T>(n_, what);
    p_ = own_.data();
    keep_.reset();
    writable_ = true;
    return own_.data();
  }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    copy_to_host(h.data(), p_, n_);
    return h;
  }

 private:
  DeviceBuffer<T> own_;
  const T* p_ = nullptr;
  std::size_t n_ = 0;
  std::shared_ptr<const void> keep_;
  bool writable_ = false;
};

/// `values` (n entries in `where`) as a device pointer: itself when already on the device,
/// else uploaded into `staging` (complete on return). The caller waits for the stream
/// (synchronize_stream) before `staging` is freed.
template <class Value>
const Value* device_values(const Value* values, std::size_t n, Memory where,
                           DeviceBuffer<Value>& staging) {
  if (where == Memory::device) return values;
  staging = DeviceBuffer<Value>(n, "update_values staging");
  copy_to_device(staging.data(), values, n);
  return staging.data();
}

/// `values` (n entries in `where`) copied to host memory.
template <class Value>
std::vector<Value> host_values(const Value* values, std::size_t n, Memory where) {
  if (where == Memory::host) return std::vector<Value>(values, values + n);
  std::vector<Value> h(n);
  copy_to_host(h.data(), values, n);
  return h;
}

/// dst[0..n) = values[0..n) in `where`: from the host, complete on return; from the device,
/// queued on stream() (products queued after it see the new values).
template <class Value>
void copy_values(Value* dst, const Value* values, std::size_t n, Memory where) {
  if (where == Memory::host)
    copy_to_device(dst, values, n);
  else
    copy_device(dst, values, n);
}

/// row_of[k] = the row of nonzero k (rows+1 offsets `row_ptr`, nnz nonzeros; on stream()):
/// CSR's row_ptr expanded to COO row indices along the merge path (one search per 16 items), so
/// that no row, however long, serializes a thread.
template <class Index>
void expand_rows(const Index* row_ptr, std::int64_t rows, std::int64_t nnz, Index* row_of);

/// positions = 0..n-1 stably sorted by `keys` (each in [0, key_bound)), keys_sorted = the keys
/// in that order (CUB radix sort over the bits key_bound needs; on stream(), complete on return).
template <class Index>
void sorted_positions(const Index* keys, std::int64_t n, std::int64_t key_bound,
                      Index* keys_sorted, Index* positions);

/// ptr[s] = the number of `sorted_keys` below s, for s = 0..segments (segments+1 entries): the
/// offsets of a compressed format from its sorted segment ids (the inverse of expand_rows).
template <class Index>
void compress_rows(const Index* sorted_keys, std::int64_t n, std::int64_t segments, Index* ptr);

/// dst[map[k]] = src[k] for k < n, on stream(): the value update of storages whose
/// values array is a permutation (with padding) of the CSR values. map entries are distinct.
template <class Value, class Map>
void scatter_values(Value* dst, const Map* map, const Value* src, std::int64_t n);
/// dst[k] = src[map[k]] for k < n, on stream() (the inverse direction).
template <class Value, class Map>
void gather_values(Value* dst, const Map* map, const Value* src, std::int64_t n);
/// inverse[perm[k]] = k for k < n, on stream(): the inverse of a permutation of 0..n-1.
template <class Index>
void invert_permutation(const Index* perm, std::int64_t n, Index* inverse);

/// update_values of a storage `d` whose values array holds the CSR values permuted: the map from
/// its slots to CSR positions (d.value_map) is made by `make_map()` on the first update and
/// kept for the next ones; each update gathers the d.nnz new values (from `where`; a host array
/// is uploaded first) through it. A gather writes the slots in order and reads the CSR values
/// in the storage's order, which follows the rows closely on most matrices; a scatter through
/// the inverse map would write 8-byte pieces of scattered sectors, measured 2-4 times slower.
/// Returns with the values queued on stream() when they were on the device, complete when
/// they came from the host.
template <class Dev, class Value, class MakeMap>
void update_mapped_values(Dev& d, const Value* values, Memory where, MakeMap&& make_map) {
  if (d.nnz == 0) return;
  if (d.value_map.size() == 0) d.value_map = make_map();
  DeviceBuffer<Value> staging;
  const Value* src = device_values(values, static_cast<std::size_t>(d.nnz), where, staging);
  gather_values(d.values.data(), d.value_map.data(), src, d.nnz);
  if (staging.size()) synchronize_stream();  // staging is freed on return
}

/// A device array's bytes as a StoredArray (for MatrixImpl::stored_arrays).
template <class T>
StoredArray stored(std::string name, const T* p, std::size_t n) {
  StoredArray a{std::move(name), std::vector<std::byte>(n * sizeof(T))};
  copy_to_host(a.bytes.data(), reinterpret_cast<const std::byte*>(p), n * sizeof(T));
  return a;
}

/// Scalars of a storage (sizes, kernel choices) as a StoredArray, compared like the arrays.
inline StoredArray stored_scalars(std::string name, const std::vector<std::int64_t>& values) {
  StoredArray a{std::move(name), std::vector<std::byte>(values.size() * sizeof(std::int64_t))};
  if (!values.empty()) std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

}  // namespace spmat::cuda
