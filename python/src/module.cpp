// python/src/module.cpp — spmat._spmat: the nanobind layer under the Python package spmat.
// SPDX-License-Identifier: MIT
//
// Thin on purpose: the Python package (python/spmat) checks arguments and turns them into the
// plain forms this module takes (canonical CSR arrays, contiguous vectors of the matrix's
// dtype); this module re-checks what would otherwise crash (device, dimensions, overlap) and
// maps spmat's C++ exceptions to Python ones with the message kept.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/gen/generators.hpp"
#include "spmat/io/load.hpp"
#include "spmat/io/matrix_market.hpp"
#include "spmat/matrix.hpp"
#include "spmat/plan/plan.hpp"
#include "spmat/registry.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#endif

namespace nb = nanobind;

namespace {

// --- exceptions ---------------------------------------------------------------------------------
// Python classes for spmat's C++ errors. Each also derives from the builtin a Python user would
// catch for that kind of problem (ValueError for bad input, MemoryError, ...), so
// `except ValueError` works as well as `except spmat.ParseError`.
struct PyErrorClass {
  std::type_index type;  ///< the C++ error type (a leaf of spmat::Error)
  PyObject* cls;
};
PyObject* g_base_error = nullptr;           ///< spmat.SpmatError, for spmat::Error itself
std::vector<PyErrorClass> g_error_classes;  ///< one per leaf type of spmat::Error

PyObject* new_error(nb::module_& m, const char* name, PyObject* base, PyObject* builtin,
                    const char* doc) {
  PyObject* bases = builtin ? PyTuple_Pack(2, base, builtin) : PyTuple_Pack(1, base);
  const std::string qualified = std::string("spmat.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  Py_DECREF(bases);
  if (!cls) throw nb::python_error();
  m.attr(name) = nb::handle(cls);
  return cls;
}

/// The Python class of e: its type's (the types are leaves, so typeid names it), else SpmatError.
PyObject* python_class(const spmat::Error& e) {
  for (const PyErrorClass& c : g_error_classes)
    if (c.type == std::type_index(typeid(e))) return c.cls;
  return g_base_error;
}

void register_errors(nb::module_& m) {
  g_base_error = PyErr_NewExceptionWithDoc("spmat.SpmatError", "Base of every error spmat raises.",
                                           PyExc_RuntimeError, nullptr);
  if (!g_base_error) throw nb::python_error();
  m.attr("SpmatError") = nb::handle(g_base_error);
  struct Leaf {
    std::type_index type;
    const char* name;
    PyObject* builtin;
    const char* doc;
  };
  const Leaf leaves[] = {
      {typeid(spmat::ParseError), "ParseError", PyExc_ValueError,
       "Malformed input: a Matrix Market file, a generator spec, an option."},
      {typeid(spmat::InvalidMatrixError), "InvalidMatrixError", PyExc_ValueError,
       "A structural problem in a matrix's arrays."},
      {typeid(spmat::IndexOverflowError), "IndexOverflowError", PyExc_OverflowError,
       "Dimensions or nnz too large for the index type."},
      {typeid(spmat::UnsupportedError), "UnsupportedError", PyExc_ValueError,
       "A format, operation or device that is not available."},
      {typeid(spmat::DimensionMismatchError), "DimensionMismatchError", PyExc_ValueError,
       "Operand sizes that do not match the matrix."},
      {typeid(spmat::CudaError), "CudaError", nullptr, "A CUDA runtime or library call failed."},
      {typeid(spmat::OutOfMemoryError), "OutOfMemoryError", PyExc_MemoryError,
       "Device or host memory exhausted."},
  };
  for (const Leaf& l : leaves)
    g_error_classes.push_back({l.type, new_error(m, l.name, g_base_error, l.builtin, l.doc)});

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const spmat::Error& e) {
      PyErr_SetString(python_class(e), e.what());
    }
  });
}

// --- arrays -------------------------------------------------------------------------------------
template <class T>
using Vec1 = nb::ndarray<nb::numpy, T, nb::ndim<1>>;

/// A numpy array that owns `v` (moved, not copied).
template <class T>
Vec1<T> to_numpy(std::vector<T>&& v) {
  auto* heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  static T empty{};  // numpy wants a non-null pointer even for zero elements
  T* data = heap->empty() ? &empty : heap->data();
  return Vec1<T>(data, {heap->size()}, owner);
}

template <class T>
using In1 = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <class T>
std::vector<T> copy_of(const In1<T>& a) {
  return std::vector<T>(a.data(), a.data() + a.shape(0));
}

/// The shape of CSR arrays for a rows x cols matrix, host or device: a ValueError otherwise.
void check_csr_shape(std::int64_t rows, std::int64_t cols, std::size_t indptr_len,
                     std::size_t indices_len, std::size_t data_len) {
  if (rows < 0 || cols < 0)
    throw nb::value_error(("negative shape (" + std::to_string(rows) + ", " +
                           std::to_string(cols) + ")").c_str());
  if (indptr_len != static_cast<std::size_t>(rows) + 1)
    throw nb::value_error(("indptr has " + std::to_string(indptr_len) +
                           " entries, expected rows + 1 = " + std::to_string(rows + 1)).c_str());
  if (indices_len != data_len)
    throw nb::value_error(("indices has " + std::to_string(indices_len) + " entries but data has " +
                           std::to_string(data_len)).c_str());
}

template <class Value, class Index>
spmat::Csr<Value, Index> csr_from_arrays(std::int64_t rows, std::int64_t cols,
                                         const In1<Index>& indptr, const In1<Index>& indices,
                                         const In1<Value>& data) {
  spmat::check_index_range<Index>(rows, cols, static_cast<std::int64_t>(indices.shape(0)));
  check_csr_shape(rows, cols, indptr.shape(0), indices.shape(0), data.shape(0));
  spmat::Csr<Value, Index> a;
  a.rows = static_cast<Index>(rows);
  a.cols = static_cast<Index>(cols);
  a.row_ptr = copy_of(indptr);
  a.col_idx = copy_of(indices);
  a.values = copy_of(data);
  return a;
}

spmat::Backend parse_device(const std::string& device) {
  if (device == "cpu") return spmat::Backend::cpu;
  if (device == "cuda") return spmat::Backend::cuda;
  throw nb::value_error(("device must be 'cpu' or 'cuda', got '" + device + "'").c_str());
}

// --- the matrix handle --------------------------------------------------------------------------
/// One built matrix. Calls on one handle are serialised: formats prepare per-operation state
/// lazily on first use, and the GIL is released while a kernel runs.
template <class Value>
struct Handle {
  explicit Handle(spmat::Matrix<Value> m) : mat(std::move(m)) {
#if SPMAT_WITH_CUDA
    if (mat.backend() == spmat::Backend::cuda) SPMAT_CUDA_CHECK(cudaGetDevice(&device));
#endif
  }
  spmat::Matrix<Value> mat;
  std::mutex mutex;
  int device = -1;  ///< the CUDA device that holds the storage (device='cuda'), else -1
  std::uintptr_t stream = 0;  ///< the stream of the latest product (with used_stream)
  bool used_stream = false;
};

template <class Value, class Index>
Handle<Value>* build_from_csr(std::int64_t rows, std::int64_t cols, const In1<Index>& indptr,
                              const In1<Index>& indices, const In1<Value>& data,
                              const std::string& format, const std::string& device,
                              const std::string& options) {
  auto a = csr_from_arrays<Value, Index>(rows, cols, indptr, indices, data);
  const auto backend = parse_device(device);
  const auto opts = spmat::FormatOptions::parse(options);
  nb::gil_scoped_release unlocked;
  return new Handle<Value>(spmat::Matrix<Value>::build(a, format, backend, opts));
}

template <class Value>
Handle<Value>* build_from_spec(const std::string& spec, const std::string& format,
                               const std::string& device, const std::string& options) {
  const auto backend = parse_device(device);
  const auto opts = spmat::FormatOptions::parse(options);
  nb::gil_scoped_release unlocked;
  try {
    // 32-bit indices when they fit (less memory traffic); the loaders refuse a too-large
    // matrix from its header, before reading the entries.
    auto a = spmat::io::load_matrix<Value, std::int32_t>(spec);
    return new Handle<Value>(spmat::Matrix<Value>::build(a, format, backend, opts));
  } catch (const spmat::IndexOverflowError&) {
    auto a = spmat::io::load_matrix<Value, std::int64_t>(spec);
    return new Handle<Value>(spmat::Matrix<Value>::build(a, format, backend, opts));
  }
}

template <class T>
using DevIn1 = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cuda>;

/// Builds on the CUDA backend from canonical CSR arrays already in GPU memory (CuPy, PyTorch),
/// without a host round trip (docs/device-input.md). `keep` holds the Python objects that own
/// the arrays: the matrix holds a reference to it for as long as its storage reads them (csr
/// adopts them; formats that copy let go when the build returns). The caller's `stream` is
/// synchronised first, so that arrays it is still writing are complete.
template <class Value, class Index>
Handle<Value>* build_from_device(std::int64_t rows, std::int64_t cols, const DevIn1<Index>& indptr,
                                 const DevIn1<Index>& indices, const DevIn1<Value>& data,
                                 const std::string& format, const std::string& options,
                                 nb::object keep, std::uintptr_t stream) {
  check_csr_shape(rows, cols, indptr.shape(0), indices.shape(0), data.shape(0));
  const auto opts = spmat::FormatOptions::parse(options);
#if SPMAT_WITH_CUDA
  int dev = 0;
  SPMAT_CUDA_CHECK(cudaGetDevice(&dev));
  for (int id : {indptr.device_id(), indices.device_id(), data.device_id()})
    if (id != dev)
      throw nb::value_error(("the matrix's arrays are on CUDA device " + std::to_string(id) +
                             " but the current device is " + std::to_string(dev) +
                             " (select it first, e.g. `with cupy.cuda.Device(" +
                             std::to_string(id) + "):`)").c_str());
  const auto nnz = static_cast<std::int64_t>(indices.shape(0));
  const spmat::DeviceCsrView<Value, Index> view{rows, cols, nnz, indptr.data(),
                                                nnz ? indices.data() : nullptr,
                                                nnz ? data.data() : nullptr};
  // Released under the GIL whichever thread drops the last reference (the build runs
  // without it).
  auto* held = new nb::object(std::move(keep));
  std::shared_ptr<const void> owner(static_cast<const void*>(held), [](const void* p) {
    nb::gil_scoped_acquire gil;
    delete static_cast<const nb::object*>(p);
  });
  nb::gil_scoped_release unlocked;
  if (stream > 1) SPMAT_CUDA_CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)));
  auto m = spmat::Matrix<Value>::build(spmat::DeviceCsr<Value, Index>(view, owner), format, opts);
  // A format that copies may have queued kernels still reading the arrays when build returns;
  // they must finish before `owner` lets the arrays go back to the caller's memory pool.
  SPMAT_CUDA_CHECK(cudaDeviceSynchronize());
  auto* handle = new Handle<Value>(std::move(m));
  owner.reset();
  return handle;
#else
  (void)keep, (void)stream, (void)format, (void)opts;
  throw spmat::UnsupportedError("this spmat module was built without CUDA: "
                                "device arrays cannot be used");
#endif
}

/// A vector operand as the matrix's backend sees it: the caller's memory where it already lives
/// there, else a device copy (numpy vectors with a CUDA matrix), written back by `finish`.
template <class Value, class Array>
class Operand {
 public:
  Operand(const Array& a, spmat::Backend backend, bool input, bool output, const char* name)
      : a_(a), output_(output) {
    const int dev = a.device_type();
    if (backend == spmat::Backend::cpu) {
      if (dev != nb::device::cpu::value)
        throw nb::value_error((std::string(name) +
                               " is in GPU memory but the matrix is on the CPU (device='cpu')")
                                  .c_str());
      ptr_ = const_cast<Value*>(a.data());
      return;
    }
#if SPMAT_WITH_CUDA
    if (dev == nb::device::cuda::value || dev == nb::device::cuda_managed::value) {
      ptr_ = const_cast<Value*>(a.data());
    } else if (dev == nb::device::cpu::value) {
      std::span<const Value> host(a.data(), a.size());
      staged_ = input ? spmat::cuda::DeviceBuffer<Value>(host, name)
                      : spmat::cuda::DeviceBuffer<Value>(host.size(), name);
      ptr_ = staged_.data();
    } else {
      throw nb::value_error((std::string(name) + " is neither in host nor in CUDA memory").c_str());
    }
#else
    (void)input;
    throw nb::value_error("this spmat module was built without CUDA");
#endif
  }
  Value* data() const { return ptr_; }
  std::size_t size() const { return a_.size(); }
  /// Copies a staged output back to the caller's host array.
  void finish() {
#if SPMAT_WITH_CUDA
    if (output_ && staged_.size() != 0)
      spmat::cuda::copy_to_host(const_cast<Value*>(a_.data()), staged_.data(), staged_.size());
#endif
  }

 private:
  const Array& a_;
  bool output_;
  Value* ptr_ = nullptr;
#if SPMAT_WITH_CUDA
  spmat::cuda::DeviceBuffer<Value> staged_;
#endif
};

#if SPMAT_WITH_CUDA
/// One event per device and thread for follow_stream. Never destroyed: at thread exit the CUDA
/// context may already be gone, and a handful of events per thread cost nothing.
cudaEvent_t order_event() {
  thread_local std::vector<cudaEvent_t> events;
  int dev = 0;
  SPMAT_CUDA_CHECK(cudaGetDevice(&dev));
  if (events.size() <= static_cast<std::size_t>(dev)) events.resize(dev + 1, nullptr);
  if (!events[dev]) SPMAT_CUDA_CHECK(cudaEventCreateWithFlags(&events[dev], cudaEventDisableTiming));
  return events[dev];
}
#endif

/// A product runs on the caller's current CUDA stream (`stream`, its handle as an integer: 0
/// the legacy default stream, 1 cudaStreamLegacy, 2 cudaStreamPerThread, else a stream object),
/// made spmat's with a StreamScope for the call: the kernels, and the copies of operands staged
/// from host memory, run in the caller's stream order, and the call returns once they are
/// queued. A matrix keeps scratch space that its products write, so a product on another stream
/// than the matrix's previous one first waits for what that stream has queued (one event, only
/// when the stream changes). Called with the handle's mutex held.
template <class Value>
void follow_stream(Handle<Value>& h, std::uintptr_t stream) {
#if SPMAT_WITH_CUDA
  if (h.used_stream && h.stream != stream) {
    const cudaEvent_t ev = order_event();
    SPMAT_CUDA_CHECK(cudaEventRecord(ev, reinterpret_cast<cudaStream_t>(h.stream)));
    SPMAT_CUDA_CHECK(cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(stream), ev, 0));
  }
  h.used_stream = true;
  h.stream = stream;
#else
  (void)h, (void)stream;
#endif
}

inline spmat::StreamHandle stream_handle(std::uintptr_t stream) {
  return reinterpret_cast<spmat::StreamHandle>(stream);
}

template <class Array>
bool in_gpu_memory(const Array& a) {
  return a.device_type() == nb::device::cuda::value ||
         a.device_type() == nb::device::cuda_managed::value;
}

/// A GPU operand must live on the matrix's device (kernels cannot read another device's
/// memory without peer access, and would fault rather than fail cleanly).
template <class Value, class Array>
void check_device(const Handle<Value>& h, const Array& a, const char* name) {
  if (in_gpu_memory(a) && h.device >= 0 && a.device_id() != h.device)
    throw nb::value_error((std::string(name) + " is on CUDA device " +
                           std::to_string(a.device_id()) + " but the matrix is on device " +
                           std::to_string(h.device))
                              .c_str());
}

template <class A, class B>
void check_no_overlap(const A& x, const B& y, const char* xn, const char* yn) {
  if (x.device_type() != y.device_type() || x.size() == 0 || y.size() == 0) return;
  const auto* x0 = reinterpret_cast<const char*>(x.data());
  const auto* y0 = reinterpret_cast<const char*>(y.data());
  if (x0 < y0 + y.nbytes() && y0 < x0 + x.nbytes())
    throw nb::value_error((std::string(yn) + " overlaps " + xn +
                           " in memory; the product needs a separate output array")
                              .c_str());
}

template <class T>
using VecIn = nb::ndarray<const T, nb::ndim<1>, nb::c_contig>;
template <class T>
using VecOut = nb::ndarray<T, nb::ndim<1>, nb::c_contig>;
template <class T>
using MatIn = nb::ndarray<const T, nb::ndim<2>, nb::c_contig>;
template <class T>
using MatOut = nb::ndarray<T, nb::ndim<2>, nb::c_contig>;

/// x and out of a product: not overlapping, and on the matrix's device when in GPU memory.
template <class Value, class In, class Out>
void check_operands(const Handle<Value>& h, const In& x, const Out& out, const char* x_name) {
  check_no_overlap(x, out, x_name, "out");
  check_device(h, x, x_name);
  check_device(h, out, "out");
}

/// Runs product() with the GIL released and the matrix locked, after the work queued so far on
/// `stream` (which the caller's StreamScope made current).
template <class Value, class Product>
void run_locked(Handle<Value>& h, std::uintptr_t stream, Product&& product) {
  nb::gil_scoped_release unlocked;
  std::lock_guard<std::mutex> lock(h.mutex);
  follow_stream(h, stream);
  product();
}

/// y = alpha·op(A)·x + beta·y with op(A) = Aᵀ when transpose, else A.
template <class Value>
void spmv_op(spmat::Matrix<Value>& a, std::span<const Value> x, std::span<Value> y, Value alpha,
             Value beta, bool transpose) {
  if (transpose)
    a.spmv_t(x, y, alpha, beta);
  else
    a.spmv(x, y, alpha, beta);
}

template <class Value>
void spmv(Handle<Value>& h, const VecIn<Value>& x, const VecOut<Value>& y, Value alpha,
          Value beta, bool transpose, std::uintptr_t stream) {
  check_operands(h, x, y, "x");
  const auto backend = h.mat.backend();
  spmat::StreamScope on(stream_handle(stream));
  Operand<Value, VecIn<Value>> xo(x, backend, true, false, "x");
  Operand<Value, VecOut<Value>> yo(y, backend, beta != Value(0), true, "out");
  run_locked(h, stream, [&] {
    spmv_op(h.mat, std::span<const Value>(xo.data(), xo.size()),
            std::span<Value>(yo.data(), yo.size()), alpha, beta, transpose);
    yo.finish();
  });
}

template <class Value>
void spmm(Handle<Value>& h, const MatIn<Value>& b, const MatOut<Value>& c, Value alpha,
          Value beta, std::uintptr_t stream) {
  check_operands(h, b, c, "X");
  const auto& m = h.mat;
  const auto k = static_cast<std::int64_t>(b.shape(1));
  if (static_cast<std::int64_t>(b.shape(0)) != m.cols() ||
      static_cast<std::int64_t>(c.shape(0)) != m.rows() ||
      static_cast<std::int64_t>(c.shape(1)) != k)
    throw spmat::DimensionMismatchError(
        "spmm: A is " + std::to_string(m.rows()) + "x" + std::to_string(m.cols()) + ", X is " +
        std::to_string(b.shape(0)) + "x" + std::to_string(b.shape(1)) + ", out is " +
        std::to_string(c.shape(0)) + "x" + std::to_string(c.shape(1)));
  const auto backend = m.backend();
  spmat::StreamScope on(stream_handle(stream));
  Operand<Value, MatIn<Value>> bo(b, backend, true, false, "X");
  Operand<Value, MatOut<Value>> co(c, backend, beta != Value(0), true, "out");
  run_locked(h, stream, [&] {
    m.spmm(std::span<const Value>(bo.data(), bo.size()), std::span<Value>(co.data(), co.size()),
           k, spmat::DenseLayout::row_major, alpha, beta);
    co.finish();
  });
}

/// spmv on raw device addresses: the Python layer's fast path for CuPy and PyTorch vectors,
/// taken only after it has checked kind, dtype, length, contiguity and device (see
/// spmat/_device.py: device_vector_ptrs). The general `spmv` checks all that itself through
/// the array protocols, which costs several microseconds a call on the GPU.
template <class Value>
void spmv_device_ptrs(Handle<Value>& h, std::uintptr_t x, std::uintptr_t y, Value alpha,
                      Value beta, bool transpose, std::uintptr_t stream) {
#if SPMAT_WITH_CUDA
  if (h.mat.backend() != spmat::Backend::cuda)
    throw nb::value_error("device vectors need a matrix on the GPU (device='cuda')");
  const auto nx = static_cast<std::size_t>(transpose ? h.mat.rows() : h.mat.cols());
  const auto ny = static_cast<std::size_t>(transpose ? h.mat.cols() : h.mat.rows());
  if (nx && ny && x < y + ny * sizeof(Value) && y < x + nx * sizeof(Value))
    throw nb::value_error("out overlaps x in memory; the product needs a separate output array");
  spmat::StreamScope on(stream_handle(stream));
  run_locked(h, stream, [&] {
    spmv_op(h.mat, std::span<const Value>(reinterpret_cast<const Value*>(x), nx),
            std::span<Value>(reinterpret_cast<Value*>(y), ny), alpha, beta, transpose);
  });
#else
  (void)h, (void)x, (void)y, (void)alpha, (void)beta, (void)transpose, (void)stream;
  throw spmat::UnsupportedError("this spmat module was built without CUDA");
#endif
}

/// Seconds per call of `calls` back-to-back spmv calls made from C++ on the caller's arrays
/// (in the matrix's memory), wall clock; on the GPU from a synchronised device to the end of
/// the last kernel. The reference against which bench/python_gpu.py measures what a call from
/// Python adds.
template <class Value>
double cpp_spmv_seconds(Handle<Value>& h, const VecIn<Value>& x, const VecOut<Value>& y,
                        int calls) {
  const bool gpu = h.mat.backend() == spmat::Backend::cuda;
  if (in_gpu_memory(x) != gpu || in_gpu_memory(y) != gpu)
    throw nb::value_error("cpp_spmv_seconds: x and y must be in the matrix's memory");
  if (calls < 1) throw nb::value_error("cpp_spmv_seconds: calls must be positive");
  check_no_overlap(x, y, "x", "y");
  nb::gil_scoped_release unlocked;
  std::lock_guard<std::mutex> lock(h.mutex);
  std::span<const Value> xs(x.data(), x.size());
  std::span<Value> ys(y.data(), y.size());
  h.mat.spmv(xs, ys);  // untimed: per-operation state is prepared on first use
#if SPMAT_WITH_CUDA
  if (gpu) SPMAT_CUDA_CHECK(cudaDeviceSynchronize());
#endif
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) h.mat.spmv(xs, ys);
#if SPMAT_WITH_CUDA
  if (gpu) SPMAT_CUDA_CHECK(cudaDeviceSynchronize());
#endif
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  return dt.count() / calls;
}

template <class Value>
nb::tuple csr_tuple(spmat::Csr<Value, std::int64_t>&& a) {
  const std::int64_t rows = a.rows, cols = a.cols;
  return nb::make_tuple(rows, cols, to_numpy(std::move(a.row_ptr)), to_numpy(std::move(a.col_idx)),
                        to_numpy(std::move(a.values)));
}

template <class Value, class Index>
nb::tuple csr_tuple_any(spmat::Csr<Value, Index>&& a) {
  const std::int64_t rows = a.rows, cols = a.cols;
  return nb::make_tuple(rows, cols, to_numpy(std::move(a.row_ptr)), to_numpy(std::move(a.col_idx)),
                        to_numpy(std::move(a.values)));
}

nb::object plan_dict(const spmat::FormatPlan* p) {
  if (!p) return nb::none();
  nb::dict d;
  d["level"] = p->level == spmat::PlanLevel::tune ? "tune" : "auto";
  d["description"] = p->describe();
  d["reason"] = p->reason;
  d["precision"] = p->precision;
  d["plan_ms"] = p->plan_ms;
  d["tune_ms"] = p->tune_ms;
  d["from_cache"] = p->from_cache;
  nb::list choices;
  for (const auto& c : p->choices) {
    nb::dict cd;
    cd["op"] = std::string(spmat::to_string(c.op));
    cd["format"] = c.format;
    cd["transposed"] = c.transposed;
    cd["predicted_ms"] = c.predicted_ms;
    cd["measured_ms"] = c.measured_ms;
    choices.append(cd);
  }
  d["choices"] = choices;
  return d;
}

template <class Value>
void bind_handle(nb::module_& m, const char* name, const char* dtype) {
  using H = Handle<Value>;
  nb::class_<H>(m, name)
      .def_prop_ro("rows", [](const H& h) { return h.mat.rows(); })
      .def_prop_ro("cols", [](const H& h) { return h.mat.cols(); })
      .def_prop_ro("nnz", [](const H& h) { return h.mat.nnz(); })
      .def_prop_ro("format", [](const H& h) { return std::string(h.mat.format_name()); })
      .def_prop_ro("device", [](const H& h) { return std::string(spmat::to_string(h.mat.backend())); })
      .def_prop_ro("dtype", [dtype](const H&) { return std::string(dtype); })
      .def_prop_ro("storage_bytes", [](const H& h) { return h.mat.storage_bytes(); })
      .def_prop_ro("plan", [](const H& h) { return plan_dict(h.mat.plan()); })
      .def("supports", [](const H& h, const std::string& op) {
        return h.mat.supports(spmat::parse_op(op));
      })
      .def("spmv", &spmv<Value>, nb::arg("x").noconvert(), nb::arg("y").noconvert(),
           nb::arg("alpha"), nb::arg("beta"), nb::arg("transpose"), nb::arg("stream") = 0)
      .def("spmv_device_ptrs", &spmv_device_ptrs<Value>, nb::arg("x"), nb::arg("y"),
           nb::arg("alpha"), nb::arg("beta"), nb::arg("transpose"), nb::arg("stream"))
      .def_prop_ro("device_id", [](const H& h) { return h.device; })
      .def("spmm", &spmm<Value>, nb::arg("b").noconvert(), nb::arg("c").noconvert(),
           nb::arg("alpha"), nb::arg("beta"), nb::arg("stream") = 0)
      .def("cpp_spmv_seconds", &cpp_spmv_seconds<Value>, nb::arg("x").noconvert(),
           nb::arg("y").noconvert(), nb::arg("calls"))
      .def("add", [](H& a, H& b, Value alpha, Value beta) {
             nb::gil_scoped_release unlocked;
             if (&a == &b) {  // A + A: one mutex, locked once
               std::lock_guard<std::mutex> lock(a.mutex);
               return new H(a.mat.add(b.mat, alpha, beta));
             }
             std::scoped_lock lock(a.mutex, b.mutex);
             return new H(a.mat.add(b.mat, alpha, beta));
           }, nb::arg("b"), nb::arg("alpha"), nb::arg("beta"), nb::rv_policy::take_ownership)
      .def("to_csr", [](H& h) {
        spmat::Csr<Value, std::int64_t> a;
        {
          nb::gil_scoped_release unlocked;
          std::lock_guard<std::mutex> lock(h.mutex);
          a = h.mat.to_csr();
        }
        return csr_tuple(std::move(a));
      });
}

template <class Value, class Index>
void bind_build(nb::module_& m, const char* name) {
  m.def(name, &build_from_csr<Value, Index>, nb::arg("rows"), nb::arg("cols"),
        nb::arg("indptr").noconvert(), nb::arg("indices").noconvert(),
        nb::arg("data").noconvert(), nb::arg("format"), nb::arg("device"), nb::arg("options"),
        nb::rv_policy::take_ownership);
}

template <class Value, class Index>
void bind_build_device(nb::module_& m, const char* name) {
  m.def(name, &build_from_device<Value, Index>, nb::arg("rows"), nb::arg("cols"),
        nb::arg("indptr").noconvert(), nb::arg("indices").noconvert(),
        nb::arg("data").noconvert(), nb::arg("format"), nb::arg("options"), nb::arg("keep"),
        nb::arg("stream"), nb::rv_policy::take_ownership);
}

template <class Value>
nb::tuple mmread(const std::string& path) {
  try {
    spmat::Csr<Value, std::int32_t> a;
    {
      nb::gil_scoped_release unlocked;
      a = spmat::io::read_matrix_market<Value, std::int32_t>(path);
    }
    return csr_tuple_any(std::move(a));
  } catch (const spmat::IndexOverflowError&) {
    spmat::Csr<Value, std::int64_t> a;
    {
      nb::gil_scoped_release unlocked;
      a = spmat::io::read_matrix_market<Value, std::int64_t>(path);
    }
    return csr_tuple_any(std::move(a));
  }
}

template <class Value, class Index>
void mmwrite(const std::string& path, std::int64_t rows, std::int64_t cols,
             const In1<Index>& indptr, const In1<Index>& indices, const In1<Value>& data) {
  auto a = csr_from_arrays<Value, Index>(rows, cols, indptr, indices, data);
  nb::gil_scoped_release unlocked;
  a.validate(path);
  spmat::io::write_matrix_market(path, a);
}

/// The overload of mmwrite for one (Value, Index) pair.
template <class Value, class Index>
void bind_mmwrite(nb::module_& m) {
  m.def("mmwrite", &mmwrite<Value, Index>, nb::arg("path"), nb::arg("rows"), nb::arg("cols"),
        nb::arg("indptr").noconvert(), nb::arg("indices").noconvert(),
        nb::arg("data").noconvert());
}

nb::dict caps_dict(const spmat::BackendCaps& c) {
  nb::dict d;
  d["available"] = c.available;
  d["spmv"] = c.available && c.spmv;
  d["spmv_t"] = c.available && c.spmv_t;
  d["spmm"] = c.available && c.spmm;
  d["add"] = c.available && c.add;
  d["deterministic_spmv"] = c.deterministic_spmv;
  d["deterministic_spmv_t"] = c.deterministic_spmv_t;
  return d;
}

}  // namespace

NB_MODULE(_spmat, m) {
  m.doc() = "spmat's C++ core; use the package spmat, not this module.";
  register_errors(m);
  m.attr("__version__") = SPMAT_PY_VERSION;

  bind_handle<double>(m, "HandleF64", "float64");
  bind_handle<float>(m, "HandleF32", "float32");
  bind_build<double, std::int32_t>(m, "build_f64");
  bind_build<double, std::int64_t>(m, "build_f64");
  bind_build<float, std::int32_t>(m, "build_f32");
  bind_build<float, std::int64_t>(m, "build_f32");
  bind_build_device<double, std::int32_t>(m, "build_device_f64");
  bind_build_device<double, std::int64_t>(m, "build_device_f64");
  bind_build_device<float, std::int32_t>(m, "build_device_f32");
  bind_build_device<float, std::int64_t>(m, "build_device_f32");
  m.def("load_f64", &build_from_spec<double>, nb::arg("spec"), nb::arg("format"),
        nb::arg("device"), nb::arg("options"), nb::rv_policy::take_ownership);
  m.def("load_f32", &build_from_spec<float>, nb::arg("spec"), nb::arg("format"),
        nb::arg("device"), nb::arg("options"), nb::rv_policy::take_ownership);

  m.def("mmread_f64", &mmread<double>, nb::arg("path"));
  m.def("mmread_f32", &mmread<float>, nb::arg("path"));
  bind_mmwrite<double, std::int32_t>(m);
  bind_mmwrite<double, std::int64_t>(m);
  bind_mmwrite<float, std::int32_t>(m);
  bind_mmwrite<float, std::int64_t>(m);

  m.def("formats", [] {
    nb::list out;
    for (const auto& e : spmat::registry()) {
      nb::dict d;
      d["name"] = e.name;
      d["summary"] = e.summary;
      d["cpu"] = caps_dict(e.caps.cpu);
      d["cuda"] = caps_dict(e.caps.cuda);
      nb::list params;
      for (const auto& p : e.params) params.append(nb::make_tuple(p.name, p.default_value, p.help));
      d["params"] = params;
      out.append(d);
    }
    return out;
  });
  m.def("cuda_compiled", &spmat::cuda_compiled);
  m.def("cuda_available", &spmat::cuda_available);
  m.def("generators", &spmat::gen::describe);
}
