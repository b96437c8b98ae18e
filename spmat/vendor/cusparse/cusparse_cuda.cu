// spmat/vendor/cusparse/cusparse_cuda.cu — cuSPARSE's SpMV/SpMM/csrgeam2 behind MatrixImpl.
// SPDX-License-Identifier: MIT
//
// One CusparseImpl<Value, Index> per built matrix: the device arrays (CSR or COO), and per
// operation a sparse-matrix descriptor, dense descriptors and a work buffer, created by
// prepare(op, k, layout) (timed as setup: bufferSize + preprocess) or lazily on first use.
// Each operation owns its own SpMat descriptor, so a preprocess for op N never has to coexist
// with one for op T on the same descriptor. All calls go to cuda::stream() (the caller's
// spmat::current_stream()) with host pointer mode (alpha/beta on the host), like spmat's own
// kernels. After prepare, a product makes no allocation and no synchronization (graph capture).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/model/traffic.hpp"
#include "spmat/vendor/cusparse/cusparse.hpp"

namespace spmat {
namespace vendor {

void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line) {
  const std::string msg = std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                          ": " + cusparseGetErrorString(status) + " (status " +
                          std::to_string(static_cast<int>(status)) + ")";
  switch (status) {
    case CUSPARSE_STATUS_NOT_SUPPORTED: throw UnsupportedError(msg);
    case CUSPARSE_STATUS_ALLOC_FAILED:
    case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES: throw OutOfMemoryError(msg);
    default: throw CudaError(msg);
  }
}

namespace {

// --- type mapping and RAII ------------------------------------------------------------------

template <class Value>
constexpr cudaDataType value_type() {
  return std::is_same_v<Value, float> ? CUDA_R_32F : CUDA_R_64F;
}
template <class Index>
constexpr cusparseIndexType_t index_type() {
  return std::is_same_v<Index, std::int32_t> ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
}

/// The process-wide handle (cusparseCreate costs milliseconds; one handle serves every matrix).
/// Deliberately never destroyed: destruction at exit could run after the CUDA context is gone.
cusparseHandle_t shared_handle() {
  static cusparseHandle_t h = [] {
    cusparseHandle_t created = nullptr;
    SPMAT_CUSPARSE_CHECK(cusparseCreate(&created));
    SPMAT_CUSPARSE_CHECK(cusparseSetPointerMode(created, CUSPARSE_POINTER_MODE_HOST));
    return created;
  }();
  return h;
}

/// The shared handle set to cuda::stream() for one call: `cusparseSpMV(handle(), ...)` holds a
/// lock from cusparseSetStream until the call has been queued (the temporary lives to the end
/// of the full expression), so that host threads driving different streams never queue on each
/// other's. Recursive: a thread may nest calls.
class BoundHandle {
 public:
  BoundHandle() : lock_(mutex()) {
    SPMAT_CUSPARSE_CHECK(cusparseSetStream(shared_handle(), cuda::stream()));
  }
  operator cusparseHandle_t() const { return shared_handle(); }  // NOLINT: used as the handle

 private:
  static std::recursive_mutex& mutex() {
    static std::recursive_mutex m;
    return m;
  }
  std::unique_lock<std::recursive_mutex> lock_;
};
BoundHandle handle() { return BoundHandle{}; }

struct SpMatDeleter {
  void operator()(cusparseSpMatDescr* p) const { cusparseDestroySpMat(p); }
};
struct DnVecDeleter {
  void operator()(cusparseDnVecDescr* p) const { cusparseDestroyDnVec(p); }
};
struct DnMatDeleter {
  void operator()(cusparseDnMatDescr* p) const { cusparseDestroyDnMat(p); }
};
struct MatDescrDeleter {
  void operator()(cusparseMatDescr* p) const { cusparseDestroyMatDescr(p); }
};
using SpMat = std::unique_ptr<cusparseSpMatDescr, SpMatDeleter>;
using DnVec = std::unique_ptr<cusparseDnVecDescr, DnVecDeleter>;
using DnMat = std::unique_ptr<cusparseDnMatDescr, DnMatDeleter>;
using MatDescr = std::unique_ptr<cusparseMatDescr, MatDescrDeleter>;

DnVec make_dn_vec(std::int64_t n, void* values, cudaDataType type) {
  cusparseDnVecDescr_t v = nullptr;
  SPMAT_CUSPARSE_CHECK(cusparseCreateDnVec(&v, n, values, type));
  return DnVec(v);
}
DnMat make_dn_mat(std::int64_t rows, std::int64_t cols, DenseLayout layout, void* values,
                  cudaDataType type) {
  cusparseDnMatDescr_t m = nullptr;
  const bool row = layout == DenseLayout::row_major;
  SPMAT_CUSPARSE_CHECK(cusparseCreateDnMat(&m, rows, cols, row ? cols : rows, values, type,
                                           row ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL));
  return DnMat(m);
}

const char* kind_name(CusparseKind k) {
  switch (k) {
    case CusparseKind::csr_alg1: return "cusparse-csr";
    case CusparseKind::csr_alg2: return "cusparse-csr-alg2";
    case CusparseKind::coo: return "cusparse-coo";
  }
  return "cusparse";
}

cusparseSpMMAlg_t parse_spmm_alg(const FormatOptions& o, CusparseKind kind) {
  const std::string s = o.get_string("spmm_alg", "default");
  if (s == "default") return CUSPARSE_SPMM_ALG_DEFAULT;
  if (kind == CusparseKind::coo) {
    if (s == "1") return CUSPARSE_SPMM_COO_ALG1;
    if (s == "2") return CUSPARSE_SPMM_COO_ALG2;
    if (s == "3") return CUSPARSE_SPMM_COO_ALG3;
    if (s == "4") return CUSPARSE_SPMM_COO_ALG4;
    throw UnsupportedError(std::string(kind_name(kind)) + ": spmm_alg=" + s +
                           " is not one of default, 1, 2, 3, 4 (CUSPARSE_SPMM_COO_ALGn)");
  }
  if (s == "1") return CUSPARSE_SPMM_CSR_ALG1;
  if (s == "2") return CUSPARSE_SPMM_CSR_ALG2;
  if (s == "3") return CUSPARSE_SPMM_CSR_ALG3;
  throw UnsupportedError(std::string(kind_name(kind)) + ": spmm_alg=" + s +
                         " is not one of default, 1, 2, 3 (CUSPARSE_SPMM_CSR_ALGn)");
}

struct ParsedOptions {
  cusparseSpMMAlg_t spmm_alg;
  bool transposed;
};
/// The build options of every kind: spmm_alg, and transposed (csr kinds only).
ParsedOptions parse_options(const FormatOptions& o, CusparseKind kind) {
  const std::string t = o.get_string("transposed", "0");
  if (t != "0" && t != "1")
    throw ParseError(std::string(kind_name(kind)) + ": transposed=" + t + " is not 0 or 1");
  if (t == "1" && kind == CusparseKind::coo)
    throw UnsupportedError("cusparse-coo: transposed=1 is not supported (csr kinds only)");
  return {parse_spmm_alg(o, kind), t == "1"};
}

const char* spmm_alg_name(cusparseSpMMAlg_t a) {
  switch (a) {
    case CUSPARSE_SPMM_ALG_DEFAULT: return "CUSPARSE_SPMM_ALG_DEFAULT";
    case CUSPARSE_SPMM_CSR_ALG1: return "CUSPARSE_SPMM_CSR_ALG1";
    case CUSPARSE_SPMM_CSR_ALG2: return "CUSPARSE_SPMM_CSR_ALG2";
    case CUSPARSE_SPMM_CSR_ALG3: return "CUSPARSE_SPMM_CSR_ALG3";
    case CUSPARSE_SPMM_COO_ALG1: return "CUSPARSE_SPMM_COO_ALG1";
    case CUSPARSE_SPMM_COO_ALG2: return "CUSPARSE_SPMM_COO_ALG2";
    case CUSPARSE_SPMM_COO_ALG3: return "CUSPARSE_SPMM_COO_ALG3";
    case CUSPARSE_SPMM_COO_ALG4: return "CUSPARSE_SPMM_COO_ALG4";
    default: return "cusparseSpMMAlg_t(?)";
  }
}

template <class From, class To>
__global__ void convert_kernel(std::int64_t n, const From* __restrict__ from, To* __restrict__ to) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    to[i] = static_cast<To>(from[i]);
}

/// Device copy of n indices converted to To (n may be 0: returns a 1-element buffer).
template <class To, class From>
cuda::DeviceBuffer<To> convert_indices(const From* from, std::int64_t n, const char* what) {
  cuda::DeviceBuffer<To> to(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)), what);
  if (n > 0) {
    convert_kernel<<<cuda::grid_for(n, 256), 256, 0, cuda::stream()>>>(n, from, to.data());
    SPMAT_CUDA_CHECK_LAUNCH("convert_kernel");
  }
  return to;
}

// csrgeam2 has one entry point per value type.
cusparseStatus_t geam_buffer_size(cusparseHandle_t h, int m, int n, const float* alpha,
                                  cusparseMatDescr_t d, int nnz_a, const float* va, const int* pa,
                                  const int* ca, const float* beta, int nnz_b, const float* vb,
                                  const int* pb, const int* cb, const int* pc, std::size_t* bytes) {
  return cusparseScsrgeam2_bufferSizeExt(h, m, n, alpha, d, nnz_a, va, pa, ca, beta, d, nnz_b, vb,
                                         pb, cb, d, nullptr, pc, nullptr, bytes);
}
cusparseStatus_t geam_buffer_size(cusparseHandle_t h, int m, int n, const double* alpha,
                                  cusparseMatDescr_t d, int nnz_a, const double* va, const int* pa,
                                  const int* ca, const double* beta, int nnz_b, const double* vb,
                                  const int* pb, const int* cb, const int* pc, std::size_t* bytes) {
  return cusparseDcsrgeam2_bufferSizeExt(h, m, n, alpha, d, nnz_a, va, pa, ca, beta, d, nnz_b, vb,
                                         pb, cb, d, nullptr, pc, nullptr, bytes);
}
cusparseStatus_t geam(cusparseHandle_t h, int m, int n, const float* alpha, cusparseMatDescr_t d,
                      int nnz_a, const float* va, const int* pa, const int* ca, const float* beta,
                      int nnz_b, const float* vb, const int* pb, const int* cb, float* vc, int* pc,
                      int* cc, void* buf) {
  return cusparseScsrgeam2(h, m, n, alpha, d, nnz_a, va, pa, ca, beta, d, nnz_b, vb, pb, cb, d, vc,
                           pc, cc, buf);
}
cusparseStatus_t geam(cusparseHandle_t h, int m, int n, const double* alpha, cusparseMatDescr_t d,
                      int nnz_a, const double* va, const int* pa, const int* ca,
                      const double* beta, int nnz_b, const double* vb, const int* pb,
                      const int* cb, double* vc, int* pc, int* cc, void* buf) {
  return cusparseDcsrgeam2(h, m, n, alpha, d, nnz_a, va, pa, ca, beta, d, nnz_b, vb, pb, cb, d, vc,
                           pc, cc, buf);
}

// --- the MatrixImpl ---------------------------------------------------------------------------

template <class Value, class Index>
class CusparseImpl final : public MatrixImpl<Value> {
 public:
  /// Uploads `a` as CSR (or COO for CusparseKind::coo).
  /// transposed = true (option transposed=1, csr kinds): the stored arrays are `a`, the logical
  /// matrix is aᵀ; products swap op N/T and add transposes with cusparseCsr2cscEx2 (timed).
  CusparseImpl(const Csr<Value, Index>& a, CusparseKind kind, cusparseSpMMAlg_t spmm_alg,
               bool transposed = false)
      : kind_(kind), spmm_alg_(spmm_alg), rows_(a.rows), cols_(a.cols), nnz_(a.nnz()),
        lazy_t_(transposed) {
    // cuSPARSE descriptors want non-null arrays: every buffer holds at least one element.
    auto padded = [](auto v) {
      if (v.empty()) v.resize(1);
      return v;
    };
    if (kind == CusparseKind::coo) {
      std::vector<Index> row_idx(static_cast<std::size_t>(nnz_));
      for (Index r = 0; r < a.rows; ++r)
        for (Index k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) row_idx[k] = r;
      ptr_ = cuda::DeviceBuffer<Index>(padded(std::move(row_idx)), "cusparse coo row_idx");
    } else {
      ptr_ = cuda::DeviceBuffer<Index>(a.row_ptr, "cusparse csr row_ptr");
    }
    col_ = cuda::DeviceBuffer<Index>(padded(a.col_idx), "cusparse col_idx");
    val_ = cuda::DeviceBuffer<Value>(padded(a.values), "cusparse values");
  }

  /// Copies a validated device CSR device to device (COO: row_ptr expanded to row indices): the
  /// arrays equal those of the host constructor, with no host round trip.
  CusparseImpl(const DeviceCsrView<Value, Index>& a, CusparseKind kind, cusparseSpMMAlg_t spmm_alg,
               bool transposed)
      : kind_(kind), spmm_alg_(spmm_alg), rows_(a.rows), cols_(a.cols), nnz_(a.nnz),
        lazy_t_(transposed) {
    const auto nz = static_cast<std::size_t>(nnz_);
    const std::size_t n = std::max<std::size_t>(nz, 1);  // as padded() above
    if (kind == CusparseKind::coo) {
      ptr_ = cuda::DeviceBuffer<Index>(n, "cusparse coo row_idx");
      cuda::expand_rows(a.row_ptr, a.rows, a.nnz, ptr_.data());
    } else {
      ptr_ = cuda::DeviceBuffer<Index>(static_cast<std::size_t>(rows_) + 1, "cusparse csr row_ptr");
      cuda::copy_device(ptr_.data(), a.row_ptr, static_cast<std::size_t>(rows_) + 1);
    }
    col_ = cuda::DeviceBuffer<Index>(n, "cusparse col_idx");
    val_ = cuda::DeviceBuffer<Value>(n, "cusparse values");
    cuda::copy_device(col_.data(), a.col_idx, nz);
    cuda::copy_device(val_.data(), a.values, nz);
    if (nz == 0) {  // the one padding element, zero as the host constructor's
      cuda::fill_bytes_async(ptr_.data(), 0, kind == CusparseKind::coo ? sizeof(Index) : 0);
      cuda::fill_bytes_async(col_.data(), 0, sizeof(Index));
      cuda::fill_bytes_async(val_.data(), 0, sizeof(Value));
    }
  }

  /// Adopts device CSR arrays (the result of add).
  CusparseImpl(std::int64_t rows, std::int64_t cols, std::int64_t nnz, CusparseKind kind,
               cusparseSpMMAlg_t spmm_alg, cuda::DeviceBuffer<Index> row_ptr,
               cuda::DeviceBuffer<Index> col_idx, cuda::DeviceBuffer<Value> values)
      : kind_(kind), spmm_alg_(spmm_alg), rows_(rows), cols_(cols), nnz_(nnz),
        ptr_(std::move(row_ptr)), col_(std::move(col_idx)), val_(std::move(values)) {}

  Shape shape() const override {
    return lazy_t_ ? Shape{cols_, rows_, nnz_} : Shape{rows_, cols_, nnz_};
  }
  Backend backend() const override { return Backend::cuda; }
  /// Every device byte spmat holds for this matrix (spmat/cuda/device_impl.hpp's rule): the
  /// arrays as allocated (at least one element each) and the SpMV / SpMM work buffers that
  /// prepare sized. The memory cuSPARSE allocates itself (handle, descriptors) is not spmat's
  /// and not counted (spmat/core/device_memory.hpp).
  std::size_t storage_bytes() const override {
    return ptr_.bytes() + col_.bytes() + val_.bytes() + mv_[0].buf.bytes() + mv_[1].buf.bytes() +
           mm_.buf.bytes();
  }
  /// The stored arrays read once per product (without padding or work buffers).
  std::size_t traffic_bytes(Op op, std::int64_t k) const override {
    const std::size_t idx = kind_ == CusparseKind::coo ? 2 * static_cast<std::size_t>(nnz_)
                                                       : static_cast<std::size_t>(rows_ + 1 + nnz_);
    const std::size_t arrays = idx * sizeof(Index) + static_cast<std::size_t>(nnz_) * sizeof(Value);
    return default_traffic(arrays, op, shape(), k, sizeof(Value));
  }

  Csr<Value, std::int64_t> to_csr() const override {
    Csr<Value, std::int64_t> c;
    c.rows = rows_;
    c.cols = cols_;
    const auto nz = static_cast<std::size_t>(nnz_);
    auto ptr = ptr_.download(), col = col_.download();
    auto val = val_.download();
    c.col_idx.assign(col.begin(), col.begin() + nz);
    c.values.assign(val.begin(), val.begin() + nz);
    c.row_ptr.assign(static_cast<std::size_t>(rows_) + 1, 0);
    if (kind_ == CusparseKind::coo) {
      for (std::size_t k = 0; k < nz; ++k) ++c.row_ptr[static_cast<std::size_t>(ptr[k]) + 1];
      for (std::int64_t r = 0; r < rows_; ++r) c.row_ptr[r + 1] += c.row_ptr[r];
    } else {
      for (std::int64_t r = 0; r <= rows_; ++r) c.row_ptr[r] = ptr[r];
    }
    return lazy_t_ ? transpose(c) : c;
  }

  void prepare(Op op, std::int64_t k, DenseLayout layout) const override {
    if (trivial()) return;
    switch (op) {
      case Op::spmv: prepare_mv(lazy_t_, nullptr, nullptr); break;
      case Op::spmv_t: prepare_mv(!lazy_t_, nullptr, nullptr); break;
      case Op::spmm:
        if (k > 0) prepare_mm(k, layout, nullptr, nullptr);
        break;
      case Op::add: break;
    }
  }

  void spmv(const Value* x, Value* y, Value alpha, Value beta) const override {
    apply_mv(lazy_t_, x, y, alpha, beta);
  }
  void spmv_t(const Value* x, Value* y, Value alpha, Value beta) const override {
    apply_mv(!lazy_t_, x, y, alpha, beta);
  }

  void spmm(const Value* b, Value* c, std::int64_t k, DenseLayout layout, Value alpha,
            Value beta) const override {
    if (lazy_t_)
      throw UnsupportedError(std::string(kind_name(kind_)) +
                             ": spmm of a matrix built with transposed=1 is not supported");
    if (k == 0 || rows_ == 0) return;
    if (trivial()) {
      cuda::scale_async(c, rows_ * k, beta);
      return;
    }
    prepare_mm(k, layout, b, c);
    SPMAT_CUSPARSE_CHECK(cusparseDnMatSetValues(mm_.b.get(), const_cast<Value*>(b)));
    SPMAT_CUSPARSE_CHECK(cusparseDnMatSetValues(mm_.c.get(), c));
    SPMAT_CUSPARSE_CHECK(cusparseSpMM(handle(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mm_.mat.get(),
                                      mm_.b.get(), &beta, mm_.c.get(), value_type<Value>(),
                                      spmm_alg_, mm_.buf.data()));
  }

  std::unique_ptr<MatrixImpl<Value>> add(const MatrixImpl<Value>& other, Value alpha,
                                         Value beta) const override;

  /// New values in CSR order (also COO's order). The descriptors keep pointing at the same
  /// array, but the analysis of a preprocess may have read the old values, so the prepared
  /// states are dropped and made again on the next prepare or call.
  void update_values(const Value* values, Memory where) override {
    if (lazy_t_)
      throw UnsupportedError("built with transposed=1, the values are stored in the transpose's "
                             "order (rebuild the matrix with the new values)");
    if (nnz_ == 0) return;
    cuda::copy_values(val_.data(), values, static_cast<std::size_t>(nnz_), where);
    mv_[0] = MvState{};
    mv_[1] = MvState{};
    mm_ = MmState{};
  }

  std::vector<StoredArray> stored_arrays() const override {
    return {cuda::stored(kind_ == CusparseKind::coo ? "row_idx" : "row_ptr", ptr_.data(), ptr_.size()),
            cuda::stored("col_idx", col_.data(), col_.size()),
            cuda::stored("values", val_.data(), val_.size()),
            cuda::stored_scalars("rows, cols, nnz, transposed", {rows_, cols_, nnz_, lazy_t_})};
  }

 private:
  struct MvState {
    SpMat mat;
    DnVec x, y;
    cuda::DeviceBuffer<char> buf;
  };
  struct MmState {
    SpMat mat;
    DnMat b, c;
    cuda::DeviceBuffer<char> buf;
    std::int64_t k = -1;
    DenseLayout layout = DenseLayout::row_major;
  };

  bool trivial() const { return rows_ == 0 || cols_ == 0 || nnz_ == 0; }

  /// A 32-bit CSR view of an operand's logical matrix, owning whatever it had to create.
  struct Csr32 {
    cuda::DeviceBuffer<int> p32, c32, tp, tc;
    cuda::DeviceBuffer<Value> tv;
    cuda::DeviceBuffer<char> buf;
    const int *p = nullptr, *c = nullptr;
    const Value* v = nullptr;
  };
  /// Stored arrays as 32-bit CSR; when x.lazy_t_, transposed with cusparseCsr2cscEx2 (async on
  /// cuda::stream(): the caller synchronizes before the view is destroyed).
  static Csr32 logical32(const CusparseImpl& x) {
    Csr32 out;
    if constexpr (std::is_same_v<Index, int>) {
      out.p = x.ptr_.data();
      out.c = x.col_.data();
    } else {
      out.p32 = convert_indices<int>(x.ptr_.data(), x.rows_ + 1, "csrgeam2 int32 row_ptr");
      out.c32 = convert_indices<int>(x.col_.data(), x.nnz_, "csrgeam2 int32 col_idx");
      out.p = out.p32.data();
      out.c = out.c32.data();
    }
    out.v = x.val_.data();
    if (!x.lazy_t_) return out;
    const int ms = static_cast<int>(x.rows_), ns = static_cast<int>(x.cols_);
    const int nz = static_cast<int>(x.nnz_);
    out.tp = cuda::DeviceBuffer<int>(static_cast<std::size_t>(ns) + 1, "csr2csc col_ptr");
    out.tc = cuda::DeviceBuffer<int>(static_cast<std::size_t>(std::max(nz, 1)), "csr2csc row_idx");
    out.tv = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(std::max(nz, 1)), "csr2csc values");
    if (nz == 0 || ms == 0) {
      cuda::fill_bytes_async(out.tp.data(), 0, out.tp.bytes());
    } else {
      std::size_t bytes = 0;
      SPMAT_CUSPARSE_CHECK(cusparseCsr2cscEx2_bufferSize(
          handle(), ms, ns, nz, out.v, out.p, out.c, out.tv.data(), out.tp.data(), out.tc.data(),
          value_type<Value>(), CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
          CUSPARSE_CSR2CSC_ALG1, &bytes));
      out.buf = cuda::DeviceBuffer<char>(std::max<std::size_t>(bytes, 1), "csr2csc buffer");
      SPMAT_CUSPARSE_CHECK(cusparseCsr2cscEx2(
          handle(), ms, ns, nz, out.v, out.p, out.c, out.tv.data(), out.tp.data(), out.tc.data(),
          value_type<Value>(), CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
          CUSPARSE_CSR2CSC_ALG1, out.buf.data()));
    }
    out.p = out.tp.data();
    out.c = out.tc.data();
    out.v = out.tv.data();
    return out;
  }

  cusparseSpMVAlg_t spmv_alg() const {
    switch (kind_) {
      case CusparseKind::csr_alg1: return CUSPARSE_SPMV_CSR_ALG1;
      case CusparseKind::csr_alg2: return CUSPARSE_SPMV_CSR_ALG2;
      case CusparseKind::coo: return CUSPARSE_SPMV_COO_ALG1;
    }
    return CUSPARSE_SPMV_ALG_DEFAULT;
  }

  SpMat make_mat() const {
    cusparseSpMatDescr_t m = nullptr;
    if (kind_ == CusparseKind::coo) {
      SPMAT_CUSPARSE_CHECK(cusparseCreateCoo(&m, rows_, cols_, nnz_, const_cast<Index*>(ptr_.data()),
                                             const_cast<Index*>(col_.data()),
                                             const_cast<Value*>(val_.data()), index_type<Index>(),
                                             CUSPARSE_INDEX_BASE_ZERO, value_type<Value>()));
    } else {
      SPMAT_CUSPARSE_CHECK(cusparseCreateCsr(&m, rows_, cols_, nnz_, const_cast<Index*>(ptr_.data()),
                                             const_cast<Index*>(col_.data()),
                                             const_cast<Value*>(val_.data()), index_type<Index>(),
                                             index_type<Index>(), CUSPARSE_INDEX_BASE_ZERO,
                                             value_type<Value>()));
    }
    return SpMat(m);
  }

  /// bufferSize + preprocess for op N (transpose = false) or op T. x/y may be null (prepare()
  /// without operands): transient scratch vectors stand in for the descriptors, which are
  /// re-pointed at the real vectors on every call.
  void prepare_mv(bool transpose, const Value* x, Value* y) const {
    MvState& s = mv_[transpose ? 1 : 0];
    if (s.mat) return;
    const std::int64_t nx = transpose ? rows_ : cols_, ny = transpose ? cols_ : rows_;
    cuda::DeviceBuffer<Value> sx, sy;
    if (!x) sx = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(nx), "cusparse spmv scratch x");
    if (!y) sy = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(ny), "cusparse spmv scratch y");
    MvState n;
    n.mat = make_mat();
    n.x = make_dn_vec(nx, x ? const_cast<Value*>(x) : sx.data(), value_type<Value>());
    n.y = make_dn_vec(ny, y ? y : sy.data(), value_type<Value>());
    const Value one = 1, zero = 0;
    const auto op = transpose ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
    std::size_t bytes = 0;
    SPMAT_CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle(), op, &one, n.mat.get(), n.x.get(), &zero,
                                                 n.y.get(), value_type<Value>(), spmv_alg(),
                                                 &bytes));
    n.buf = cuda::DeviceBuffer<char>(std::max<std::size_t>(bytes, 1), "cusparse spmv buffer");
    // Preprocessing is optional; where cuSPARSE has none for this algorithm it may say so.
    const cusparseStatus_t st =
        cusparseSpMV_preprocess(handle(), op, &one, n.mat.get(), n.x.get(), &zero, n.y.get(),
                                value_type<Value>(), spmv_alg(), n.buf.data());
    if (st != CUSPARSE_STATUS_NOT_SUPPORTED)
      check_cusparse(st, "cusparseSpMV_preprocess", __FILE__, __LINE__);
    if (!x || !y) cuda::synchronize_stream();  // before the scratch is freed
    s = std::move(n);
  }

  void apply_mv(bool transpose, const Value* x, Value* y, Value alpha, Value beta) const {
    const std::int64_t ny = transpose ? cols_ : rows_;
    if (ny == 0) return;
    if (trivial()) {
      cuda::scale_async(y, ny, beta);
      return;
    }
    prepare_mv(transpose, x, y);
    MvState& s = mv_[transpose ? 1 : 0];
    SPMAT_CUSPARSE_CHECK(cusparseDnVecSetValues(s.x.get(), const_cast<Value*>(x)));
    SPMAT_CUSPARSE_CHECK(cusparseDnVecSetValues(s.y.get(), y));
    const auto op = transpose ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
    SPMAT_CUSPARSE_CHECK(cusparseSpMV(handle(), op, &alpha, s.mat.get(), s.x.get(), &beta,
                                      s.y.get(), value_type<Value>(), spmv_alg(), s.buf.data()));
  }

  void prepare_mm(std::int64_t k, DenseLayout layout, const Value* b, Value* c) const {
    if (mm_.mat && mm_.k == k && mm_.layout == layout) return;
    cuda::DeviceBuffer<Value> sb, sc;
    if (!b) sb = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(cols_ * k), "cusparse spmm scratch B");
    if (!c) sc = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(rows_ * k), "cusparse spmm scratch C");
    MmState n;
    n.k = k;
    n.layout = layout;
    n.mat = make_mat();
    n.b = make_dn_mat(cols_, k, layout, b ? const_cast<Value*>(b) : sb.data(), value_type<Value>());
    n.c = make_dn_mat(rows_, k, layout, c ? c : sc.data(), value_type<Value>());
    const Value one = 1, zero = 0;
    std::size_t bytes = 0;
    const cusparseStatus_t st = cusparseSpMM_bufferSize(
        handle(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
        n.mat.get(), n.b.get(), &zero, n.c.get(), value_type<Value>(), spmm_alg_, &bytes);
    if (st == CUSPARSE_STATUS_NOT_SUPPORTED || st == CUSPARSE_STATUS_INVALID_VALUE)
      throw UnsupportedError(
          std::string(kind_name(kind_)) + ": cuSPARSE SpMM with " + spmm_alg_name(spmm_alg_) +
          " does not support this case (" + std::string(to_string(layout)) + " dense operands, " +
          std::string(index_name<Index>()) + " indices, " +
          std::string(precision_name<Value>()) + ", k = " + std::to_string(k) +
          "): cusparseSpMM_bufferSize returned " + cusparseGetErrorString(st) +
          "; choose another spmm_alg (option spmm_alg=default|1|2|3)");
    check_cusparse(st, "cusparseSpMM_bufferSize", __FILE__, __LINE__);
    n.buf = cuda::DeviceBuffer<char>(std::max<std::size_t>(bytes, 1), "cusparse spmm buffer");
    const cusparseStatus_t pst = cusparseSpMM_preprocess(
        handle(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
        n.mat.get(), n.b.get(), &zero, n.c.get(), value_type<Value>(), spmm_alg_, n.buf.data());
    if (pst != CUSPARSE_STATUS_NOT_SUPPORTED)
      check_cusparse(pst, "cusparseSpMM_preprocess", __FILE__, __LINE__);
    if (!b || !c) cuda::synchronize_stream();  // before the scratch is freed
    mm_ = std::move(n);
  }

  CusparseKind kind_;
  cusparseSpMMAlg_t spmm_alg_;
  std::int64_t rows_, cols_, nnz_;  ///< stored shape (the logical one swaps when lazy_t_)
  bool lazy_t_ = false;            ///< option transposed=1: logical matrix = stored arrays ᵀ
  cuda::DeviceBuffer<Index> ptr_;  ///< CSR: row_ptr (rows+1); COO: row_idx (max(nnz,1))
  cuda::DeviceBuffer<Index> col_;  ///< max(nnz,1)
  cuda::DeviceBuffer<Value> val_;  ///< max(nnz,1)
  mutable MvState mv_[2];
  mutable MmState mm_;
};

/// C = alpha*A + beta*B with cusparse<S|D>csrgeam2 (32-bit indices only: int64 matrices are
/// converted on the device when every size fits int32). The result pattern is the union of
/// both patterns (cancellations stay as explicit zeros), like spmat's csr_add.
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> CusparseImpl<Value, Index>::add(const MatrixImpl<Value>& other,
                                                                  Value alpha, Value beta) const {
  const auto* b = dynamic_cast<const CusparseImpl*>(&other);
  if (!b || b->kind_ != kind_)
    throw UnsupportedError("add: both operands must be the same cuSPARSE format");
  if (kind_ == CusparseKind::coo)
    throw UnsupportedError("cusparse-coo: add is not supported (csrgeam2 takes CSR operands)");
  const std::int64_t lim = std::numeric_limits<int>::max();
  if (rows_ > lim || cols_ > lim || nnz_ + b->nnz_ > lim)
    throw UnsupportedError(std::string(kind_name(kind_)) +
                           ": add uses cusparse csrgeam2, which takes 32-bit indices; this "
                           "problem (rows " + std::to_string(rows_) + ", cols " +
                           std::to_string(cols_) + ", nnz " + std::to_string(nnz_) + " + " +
                           std::to_string(b->nnz_) + ") does not fit int32");
  const Shape sh = shape();  // logical (Matrix::add checked that b's is the same)
  const int m = static_cast<int>(sh.rows), n = static_cast<int>(sh.cols);
  if (m == 0 || n == 0 || nnz_ + b->nnz_ == 0) {  // empty pattern: row_ptr of zeros
    Csr<Value, Index> empty;
    empty.rows = static_cast<Index>(sh.rows);
    empty.cols = static_cast<Index>(sh.cols);
    empty.row_ptr.assign(static_cast<std::size_t>(sh.rows) + 1, 0);
    return std::make_unique<CusparseImpl>(empty, kind_, spmm_alg_);
  }
  // 32-bit logical CSR views of both operands. An operand built with transposed=1 is transposed
  // here with cusparseCsr2cscEx2 — part of the timed operation (A + Aᵀ "with conversion").
  Csr32 va = logical32(*this), vb = logical32(*b);
  const int *pa = va.p, *ca = va.c, *pb = vb.p, *cb = vb.c;
  const Value *xa = va.v, *xb = vb.v;
  cusparseMatDescr_t raw = nullptr;
  SPMAT_CUSPARSE_CHECK(cusparseCreateMatDescr(&raw));  // general, base zero
  const MatDescr descr(raw);
  const int nnz_a = static_cast<int>(nnz_), nnz_b = static_cast<int>(b->nnz_);
  cuda::DeviceBuffer<int> pc(static_cast<std::size_t>(m) + 1, "csrgeam2 row_ptr C");
  std::size_t bytes = 0;
  SPMAT_CUSPARSE_CHECK(geam_buffer_size(handle(), m, n, &alpha, raw, nnz_a, xa, pa, ca, &beta,
                                        nnz_b, xb, pb, cb, pc.data(), &bytes));
  cuda::DeviceBuffer<char> work(std::max<std::size_t>(bytes, 1), "csrgeam2 buffer");
  int nnz_c = 0;
  SPMAT_CUSPARSE_CHECK(cusparseXcsrgeam2Nnz(handle(), m, n, raw, nnz_a, pa, ca, raw, nnz_b, pb, cb,
                                            raw, pc.data(), &nnz_c, work.data()));
  cuda::DeviceBuffer<int> cc(static_cast<std::size_t>(std::max(nnz_c, 1)), "csrgeam2 col_idx C");
  cuda::DeviceBuffer<Value> vc(static_cast<std::size_t>(std::max(nnz_c, 1)), "csrgeam2 values C");
  SPMAT_CUSPARSE_CHECK(geam(handle(), m, n, &alpha, raw, nnz_a, xa, pa, ca, &beta, nnz_b, xb, pb,
                            cb, vc.data(), pc.data(), cc.data(), work.data()));
  cuda::synchronize_stream();  // before `work` and the int32 views are freed
  if constexpr (std::is_same_v<Index, int>) {
    return std::make_unique<CusparseImpl>(sh.rows, sh.cols, nnz_c, kind_, spmm_alg_, std::move(pc),
                                          std::move(cc), std::move(vc));
  } else {
    auto p64 = convert_indices<Index>(pc.data(), sh.rows + 1, "csrgeam2 row_ptr C");
    auto c64 = convert_indices<Index>(cc.data(), nnz_c, "csrgeam2 col_idx C");
    cuda::synchronize_stream();  // before the int32 result arrays are freed
    return std::make_unique<CusparseImpl>(sh.rows, sh.cols, nnz_c, kind_, spmm_alg_, std::move(p64),
                                          std::move(c64), std::move(vc));
  }
}

template <class Value, class Index>
Factory<Value, Index> factory(CusparseKind kind) {
  return [kind](const Csr<Value, Index>& a, const FormatOptions& o,
                Backend backend) -> std::unique_ptr<MatrixImpl<Value>> {
    if (backend != Backend::cuda)
      throw UnsupportedError(std::string(kind_name(kind)) + " runs on the cuda backend only");
    return make_cusparse_impl<Value, Index>(a, kind, o);
  };
}

template <class Value, class Index>
DeviceFactory<Value, Index> device_factory(CusparseKind kind) {
  return [kind](const DeviceCsr<Value, Index>& a,
                const FormatOptions& o) -> std::unique_ptr<MatrixImpl<Value>> {
    const auto [spmm_alg, transposed] = parse_options(o, kind);
    return std::make_unique<CusparseImpl<Value, Index>>(a.view(), kind, spmm_alg, transposed);
  };
}

FormatEntry entry(CusparseKind kind, std::string summary, BackendCaps gpu,
                  std::vector<ParamInfo> params) {
  FormatEntry e{.name = kind_name(kind), .summary = std::move(summary), .caps = {{}, gpu},
                .params = std::move(params)};
  e.factory<float, std::int32_t>() = factory<float, std::int32_t>(kind);
  e.factory<float, std::int64_t>() = factory<float, std::int64_t>(kind);
  e.factory<double, std::int32_t>() = factory<double, std::int32_t>(kind);
  e.factory<double, std::int64_t>() = factory<double, std::int64_t>(kind);
  e.device_factory<float, std::int32_t>() = device_factory<float, std::int32_t>(kind);
  e.device_factory<float, std::int64_t>() = device_factory<float, std::int64_t>(kind);
  e.device_factory<double, std::int32_t>() = device_factory<double, std::int32_t>(kind);
  e.device_factory<double, std::int64_t>() = device_factory<double, std::int64_t>(kind);
  return e;
}

}  // namespace

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cusparse_impl(const Csr<Value, Index>& a, CusparseKind kind,
                                                      const FormatOptions& options) {
  const auto [spmm_alg, transposed] = parse_options(options, kind);
  return std::make_unique<CusparseImpl<Value, Index>>(a, kind, spmm_alg, transposed);
}

#define SPMAT_INSTANTIATE(V, I)                                                                \
  template std::unique_ptr<MatrixImpl<V>> make_cusparse_impl(const Csr<V, I>&, CusparseKind, \
                                                             const FormatOptions&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace vendor

std::vector<FormatEntry> cusparse_entries() {
  using vendor::CusparseKind;
  // Declared caps, not derived (format_adapter.hpp's make_entry): these entries wrap a vendor
  // library, not a storage template with kernels found by argument-dependent lookup; the
  // conformance suite checks the declaration against behaviour.
  // Determinism per the cuSPARSE documentation: SpMV CSR_ALG1 and COO_ALG1 "may produce slightly
  // different results during different runs"; CSR_ALG2 is bit-wise deterministic for op N only
  // (op T falls back to ALG1); every transpose product may differ from run to run.
  BackendCaps csr1{.available = true, .spmv = true, .spmv_t = true, .spmm = true, .add = true,
                   .deterministic_spmv = false, .deterministic_spmv_t = false};
  BackendCaps csr2 = csr1;
  csr2.add = false;
  csr2.deterministic_spmv = true;
  BackendCaps coo = csr1;
  coo.add = false;
  const std::vector<ParamInfo> csr_params{
      {"spmm_alg", "default", "cuSPARSE SpMM algorithm: default, 1, 2, 3 (CUSPARSE_SPMM_CSR_ALGn)"},
      {"transposed", "0", "1: the logical matrix is the transpose of the input; add transposes "
                          "it with cusparseCsr2cscEx2 inside the (timed) operation"}};
  const std::vector<ParamInfo> coo_params{
      {"spmm_alg", "default", "cuSPARSE SpMM algorithm: default, 1..4 (CUSPARSE_SPMM_COO_ALGn)"}};
  std::vector<FormatEntry> v;
  v.push_back(vendor::entry(CusparseKind::csr_alg1,
                            "cuSPARSE CSR, SpMV CSR_ALG1 (the vendor yardstick); add via csrgeam2",
                            csr1, csr_params));
  v.push_back(vendor::entry(CusparseKind::csr_alg2,
                            "cuSPARSE CSR, SpMV CSR_ALG2 (deterministic for op N)", csr2,
                            csr_params));
  v.push_back(vendor::entry(CusparseKind::coo, "cuSPARSE COO, SpMV COO_ALG1", coo, coo_params));
  return v;
}

}  // namespace spmat
