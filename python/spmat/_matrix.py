# SPDX-License-Identifier: MIT
"""spmat.Matrix: a sparse matrix stored in one of spmat's formats, multiplied by numpy vectors."""
import os

import numpy as np
import scipy.sparse as sp

from . import _spmat
from . import _device
from ._arrays import check_operand, check_output, empty_like_kind

_BUILD = {np.dtype(np.float64): _spmat.build_f64, np.dtype(np.float32): _spmat.build_f32}
_LOAD = {np.dtype(np.float64): _spmat.load_f64, np.dtype(np.float32): _spmat.load_f32}
_BUILD_DEVICE = {np.dtype(np.float64): _spmat.build_device_f64,
                 np.dtype(np.float32): _spmat.build_device_f32}
_INT32_MAX = np.iinfo(np.int32).max


def _value_dtype(requested, source):
    """float32 or float64: `requested` if given, else the source's (integers become float64)."""
    dt = np.dtype(requested) if requested is not None else source
    if dt is None:
        return np.dtype(np.float64)
    dt = np.dtype(dt)
    if dt in (np.float32, np.float64):
        return dt
    if dt.kind == "c":
        raise TypeError("complex matrices are not supported (spmat stores real values)")
    if requested is None and dt.kind in "biuf":
        return np.dtype(np.float64)
    raise TypeError(f"dtype must be float32 or float64, got {dt}")


def _options_text(options):
    """{'C': 32, 'sigma': 256} -> 'C=32,sigma=256' (booleans as 1/0, lists joined with '+')."""
    parts = []
    for key, value in options.items():
        if isinstance(value, bool):
            value = "1" if value else "0"
        elif isinstance(value, (list, tuple)):
            value = "+".join(str(v) for v in value)
        value = str(value)
        if "," in value or "=" in value:
            raise ValueError(f"option {key}={value!r}: values may not contain ',' or '='")
        parts.append(f"{key}={value}")
    return ",".join(parts)


def canonical_csr(a, dtype):
    """A scipy sparse matrix as canonical CSR arrays (sorted columns, duplicates summed,
    explicit zeros kept) of `dtype` values and the smallest index type that fits.
    The caller's matrix is never modified."""
    csr = sp.csr_array(a, dtype=dtype, copy=True)
    csr.sum_duplicates()  # also sorts the column indices of every row
    rows, cols = csr.shape
    big = max(rows, cols, csr.nnz) > _INT32_MAX
    itype = np.int64 if big else np.int32
    return (rows, cols, np.ascontiguousarray(csr.indptr, dtype=itype),
            np.ascontiguousarray(csr.indices, dtype=itype),
            np.ascontiguousarray(csr.data, dtype=dtype))


def _source_dtype(a):
    """The value type of a CuPy or PyTorch sparse matrix as a numpy dtype (None when numpy has
    no such type, e.g. bfloat16: it then becomes float64 like integers)."""
    try:
        return np.dtype(str(a.dtype).rsplit(".", 1)[-1])
    except TypeError:
        return None


def _check_device(device):
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    if device == "cuda":
        if not _spmat.cuda_compiled():
            raise _spmat.UnsupportedError(
                "device='cuda': this spmat module was built without CUDA (CPU only); "
                "rebuild it with `SPMAT_CUDA=ON pip install .` where the CUDA toolkit is "
                "installed")
        if not _spmat.cuda_available():
            raise _spmat.UnsupportedError(
                "device='cuda': no usable CUDA GPU found (spmat was built with CUDA, "
                "but no GPU answers)")


class Plan:
    """Why an "auto" (or "tune") matrix uses the formats it uses.

    Attributes: ``description`` (several lines: the choice per operation, the ranked
    candidates with predicted times), ``reason`` (one line), ``level`` ("auto" or "tune"),
    ``choices`` (operation -> format, e.g. ``{"spmv": "csr", ...}``; a stored transpose shows
    as ``"csr (transposed copy)"``, a format built with options as
    ``"tiled:k=64,layout=row"``), ``measured_ms`` (operation -> the time "tune" measured
    for the chosen format, NaN for "auto"), ``plan_ms`` and ``tune_ms`` (what planning and the
    timing took), ``from_cache`` ("tune": the decision came from the on-disk plan cache).
    ``str(plan)`` is the description.
    """

    def __init__(self, d):
        self.description = d["description"]
        self.reason = d["reason"]
        self.level = d["level"]
        self.precision = d["precision"]
        self.plan_ms = d["plan_ms"]
        self.tune_ms = d["tune_ms"]
        self.from_cache = d["from_cache"]
        self.measured_ms = {c["op"]: c["measured_ms"] for c in d["choices"]}
        self.choices = {
            c["op"]: c["format"] + (" (transposed copy)" if c["transposed"] else "")
            for c in d["choices"]}

    def __str__(self):
        return self.description

    def __repr__(self):
        return f"<spmat.Plan {self.choices}: {self.reason}>"



def _handle_property(name, doc):
    """A read-only property that reads the native matrix handle's attribute ``name``."""
    return property(lambda self: getattr(self._h, name), doc=doc)

class Matrix:
    """A sparse matrix in one of spmat's storage formats, on the CPU or a CUDA GPU.

    ``Matrix(a, format="auto", device=None, dtype=None, **options)``

    ``a`` is one of
      * a scipy.sparse matrix or array (csr, csc, coo, or any other scipy format),
      * a cupyx.scipy.sparse matrix (csr, csc, coo) or a torch sparse CSR or COO tensor on a
        CUDA device: built on the GPU from its arrays, without passing through host memory
        (``device`` defaults to "cuda" for these; a torch sparse tensor on the CPU is taken
        like a scipy matrix),
      * a path to a Matrix Market file (``.mtx`` or ``.mtx.gz``) or a binary cache (``.smc``),
      * a generator spec such as ``"gen:lap2d:100"`` (``spmat.generators()`` lists them),
      * another ``spmat.Matrix`` (rebuilt in the requested format, on its device unless
        ``device`` says otherwise).

    ``device`` is "cpu" or "cuda"; by default "cuda" for CuPy and PyTorch inputs (and for a
    Matrix on the GPU), "cpu" for the others.

    ``format`` names a storage format (``spmat.formats()`` lists those available on the
    device); the default ``"auto"`` lets the planner choose from the matrix's statistics,
    and ``plan`` tells what it chose and why. ``options`` are the format's build options
    (``C=32, sigma=256`` for sell; ``ops="spmv", calls=100`` for auto), see
    ``spmat.format_info(name)``. ``dtype`` is float64 or float32 (default: the input's,
    float64 for files, generators and integer matrices).

    The matrix is multiplied by arrays of its dtype: numpy arrays, and for device="cuda" also
    CuPy arrays and torch tensors on the GPU, used in place (numpy operands of a GPU matrix are
    copied to the device and the result back)::

        y = A @ x            # SpMV (x 1-D) or SpMM (X 2-D, C-contiguous)
        z = A.T @ y          # Aᵀy from the same storage: A.T is a view, nothing is copied
        A.spmv(x, out=y, alpha=2.0, beta=1.0)   # y = 2 A x + y, in place

    Vectors of the wrong dtype raise TypeError; a wrong shape, a non-contiguous array or an
    output overlapping its input raise ValueError. Nothing is converted silently.

    On the GPU, a product with CuPy or torch operands runs on the caller's current CUDA stream
    (CuPy's, or torch's on the operand's device) and returns once its kernels are queued, as
    CuPy's and torch's own operations do; with numpy operands it runs on the default stream and
    returns with the result copied back. A matrix used on another stream than its previous
    product's first waits for that stream's queued work. A build from CuPy or torch arrays
    synchronises the caller's stream, then the device.
    ``to_scipy()``, ``to_cupy()`` and ``to_torch()`` give the matrix back as CSR.
    """

    __array_priority__ = 100  # numpy defers `x @ A` to Matrix.__rmatmul__

    def __init__(self, a, format="auto", device=None, dtype=None, **options):
        torch_input = _device.is_torch_sparse(a)
        if torch_input and not a.is_cuda:
            a = _torch_to_scipy(a)  # a CPU tensor: the host path, as for scipy
            torch_input = False
        gpu_input = torch_input or _device.is_cupy_sparse(a)
        if device is None:
            on_gpu = isinstance(a, (Matrix, TransposedMatrix)) and a.device == "cuda"
            device = "cuda" if gpu_input or on_gpu else "cpu"
        _check_device(device)
        opts = _options_text(options)
        if isinstance(a, (Matrix, TransposedMatrix)):
            a = a.to_scipy()
        if gpu_input and device == "cpu":
            # Asked for explicitly: the arrays come to host memory.
            a = _torch_to_scipy(a) if torch_input else a.get()
            gpu_input = False
        if gpu_input:
            dt = _value_dtype(dtype, _source_dtype(a))
            convert = _device.torch_csr_arrays if torch_input else _device.cupy_csr_arrays
            rows, cols, indptr, indices, data, keep, stream = convert(a, dt)
            self._h = _BUILD_DEVICE[dt](rows, cols, indptr, indices, data, format, opts, keep,
                                        stream)
        elif isinstance(a, (str, os.PathLike)):
            dt = _value_dtype(dtype, None)
            self._h = _LOAD[dt](os.fspath(a), format, device, opts)
        elif sp.issparse(a):
            dt = _value_dtype(dtype, a.dtype)
            rows, cols, indptr, indices, data = canonical_csr(a, dt)
            self._h = _BUILD[dt](rows, cols, indptr, indices, data, format, device, opts)
        elif isinstance(a, np.ndarray) or _device.is_torch_tensor(a) or hasattr(
                a, "__cuda_array_interface__"):
            raise TypeError("spmat.Matrix takes a sparse matrix; for a dense array use "
                            "spmat.Matrix(scipy.sparse.csr_array(a)) (CuPy: "
                            "cupyx.scipy.sparse.csr_matrix(a); PyTorch: a.to_sparse_csr())")
        else:
            raise TypeError(f"spmat.Matrix takes a scipy.sparse matrix, a cupyx.scipy.sparse "
                            f"matrix, a torch sparse CSR/COO tensor, a Matrix Market path or "
                            f"a generator spec ('gen:lap2d:100'), got {type(a).__name__}")
        self._cache()

    @classmethod
    def _wrap(cls, handle):
        m = cls.__new__(cls)
        m._h = handle
        m._cache()
        return m

    def _cache(self):
        # Fixed for the matrix's lifetime; read on every product, so kept as plain attributes.
        h = self._h
        self._shape = (h.rows, h.cols)
        self._dtype = np.dtype(h.dtype)
        self._device = h.device
        self._device_id = h.device_id  # the CUDA device holding the storage; -1 on the CPU

    # --- what it is ------------------------------------------------------------------------
    @property
    def shape(self):
        """(rows, cols)."""
        return self._shape

    @property
    def ndim(self):
        """Always 2."""
        return 2

    nnz = _handle_property("nnz", """Stored entries (explicit zeros included).""")

    @property
    def dtype(self):
        """numpy.float64 or numpy.float32."""
        return self._dtype

    format = _handle_property("format",
                              """The format it was built with ("auto", "csr", "sell", ...).""")

    @property
    def device(self):
        """'cpu' or 'cuda'."""
        return self._device

    storage_bytes = _handle_property(
        "storage_bytes", """Exact bytes of the stored arrays (on the device for device='cuda').""")

    @property
    def plan(self):
        """The planner's decision (a ``spmat.Plan``) for format "auto" or "tune", else None."""
        d = self._h.plan
        return None if d is None else Plan(d)

    @property
    def T(self):
        """Aᵀ as a view: ``A.T @ y`` runs the format's transposed kernel on the same storage."""
        return TransposedMatrix(self)

    def supports(self, op):
        """Whether this format runs `op` ("spmv", "spmv_t", "spmm", "add") on its device."""
        return self._h.supports(op)

    def __repr__(self):
        if not hasattr(self, "_shape"):  # the constructor raised before the matrix existed
            return "<spmat.Matrix (not built)>"
        r, c = self.shape
        return (f"<spmat.Matrix {r}x{c}, nnz={self.nnz}, {self.dtype.name}, "
                f"format={self.format!r}, device={self.device!r}>")

    # --- conversions -----------------------------------------------------------------------
    def to_scipy(self):
        """The stored matrix as a ``scipy.sparse.csr_array`` (canonical, exact round trip)."""
        rows, cols, indptr, indices, data = self._h.to_csr()
        if max(rows, cols, len(indices)) <= _INT32_MAX:
            indptr, indices = indptr.astype(np.int32), indices.astype(np.int32)
        return sp.csr_array((data, indices, indptr), shape=(rows, cols))

    def to_cupy(self):
        """The stored matrix as a ``cupyx.scipy.sparse.csr_matrix`` on the current CUDA device
        (canonical CSR; the arrays pass through host memory: spmat's formats convert back to
        CSR on the host)."""
        return _device.to_cupy(self.to_scipy())

    def to_torch(self, device="cuda"):
        """The stored matrix as a torch sparse CSR tensor on `device` (default "cuda"; the
        arrays pass through host memory, as for to_cupy)."""
        return _device.to_torch(self.to_scipy(), device)

    def toarray(self):
        """The matrix as a dense numpy array."""
        return self.to_scipy().toarray()

    # --- products --------------------------------------------------------------------------
    def spmv(self, x, out=None, alpha=1.0, beta=0.0, transpose=False):
        """``out = alpha * A @ x + beta * out`` (``A.T`` with transpose=True); returns out.

        x: 1-D array of the matrix's dtype (cols entries; rows with transpose=True).
        out: 1-D array of the result's size, written in place; needed when beta != 0 (it is
        read then), allocated when omitted. Must not overlap x. 2-D x and out (C-contiguous,
        one column per vector) run SpMM instead.
        """
        rows, cols = self._shape
        n_in, n_out = (rows, cols) if transpose else (cols, rows)
        if self._device_id >= 0 and type(x) is not np.ndarray and (out is not None or beta == 0):
            fast = _device.device_vector_ptrs(x, out, self._dtype, n_in, n_out, self._device_id)
            if fast is not None:
                out, x_ptr, out_ptr, stream = fast
                self._h.spmv_device_ptrs(x_ptr, out_ptr, float(alpha), float(beta), transpose,
                                         stream)
                return out
        kind = check_operand(x, "x", self._dtype, n_in, self._device)
        out_shape = (n_out,) if x.ndim == 1 else (n_out, x.shape[1])
        if out is None:
            if beta != 0:
                raise ValueError("beta != 0 reads out (y = alpha*A@x + beta*y): pass out=y")
            out = empty_like_kind(x, out_shape, self._dtype)
            out_kind = kind
        else:
            out_kind = check_output(out, x, "out", self._dtype, out_shape, self._device)
        # The caller's current CUDA stream, that of a GPU operand (the output's first): the
        # kernels run on it.
        stream = 0
        if out_kind != "numpy":
            stream = _device.stream_of(out, out_kind)
        elif kind != "numpy":
            stream = _device.stream_of(x, kind)
        if x.ndim == 1:
            self._h.spmv(x, out, float(alpha), float(beta), transpose, stream)
        elif not transpose and self._h.supports("spmm"):
            self._h.spmm(x, out, float(alpha), float(beta), stream)
        else:
            self._columns(x, out, float(alpha), float(beta), transpose, stream)
        return out

    def _columns(self, x, out, alpha, beta, transpose, stream):
        # Formats without SpMM, and Aᵀ·X (there is no transposed SpMM kernel): one SpMV per
        # column, through contiguous copies of the columns.
        n_out = out.shape[0]
        for j in range(x.shape[1]):
            xj = _column_copy(x, j)
            yj = _column_copy(out, j) if beta != 0 else empty_like_kind(x, (n_out,), self.dtype)
            self._h.spmv(xj, yj, alpha, beta, transpose, stream)
            out[:, j] = yj

    def matvec(self, x):
        """``A @ x`` for a 1-D x (scipy LinearOperator naming)."""
        return self.spmv(x)

    def rmatvec(self, x):
        """``A.T @ x`` for a 1-D x, from the same storage (real matrices: Aᴴ = Aᵀ)."""
        return self.spmv(x, transpose=True)

    def __matmul__(self, x):
        """``A @ x``: SpMV for a 1-D x, SpMM for a 2-D C-contiguous X (one vector per column)."""
        if isinstance(x, (Matrix, TransposedMatrix)) or sp.issparse(x):
            raise TypeError("sparse @ sparse is not supported; multiply by a dense numpy array")
        return self.spmv(x)

    def __rmatmul__(self, x):
        """``x @ A`` = ``(A.T @ x.T).T``: a row vector, or each row of a block, times A."""
        # x @ A = (Aᵀ xᵀ)ᵀ: a row vector, or each row of a C-contiguous block, times A.
        if isinstance(x, np.ndarray) and x.ndim == 2:
            if x.shape[1] != self.shape[0]:
                raise ValueError(f"x has shape {x.shape}, its second dimension must be "
                                 f"{self.shape[0]} to match the matrix")
            check_operand(x.T, "x.T", self.dtype, self.shape[0], self.device, contiguous=False)
            out = np.empty((x.shape[0], self.shape[1]), dtype=self.dtype)
            for i in range(x.shape[0]):  # each row of x is a vector of Aᵀ·
                self._h.spmv(np.ascontiguousarray(x[i]), out[i], 1.0, 0.0, True, 0)
            return out
        return self.spmv(x, transpose=True)

    def __add__(self, other):
        """``A + B`` (same format, device and dtype); see add."""
        return self.add(other)

    def __sub__(self, other):
        """``A - B`` (same format, device and dtype); see add."""
        return self.add(other, beta=-1.0)

    def add(self, other, alpha=1.0, beta=1.0):
        """``alpha * A + beta * B`` as a new Matrix; B must have the same format, device and
        dtype (build it with the same arguments)."""
        if not isinstance(other, Matrix):
            raise TypeError(f"can only add an spmat.Matrix, got {type(other).__name__}")
        if other.dtype != self.dtype:
            raise TypeError(f"dtypes differ: {self.dtype.name} + {other.dtype.name}")
        return Matrix._wrap(self._h.add(other._h, float(alpha), float(beta)))


def _column_copy(a, j):
    """Column j of a 2-D numpy, CuPy or torch array as a new contiguous 1-D array."""
    col = a[:, j]
    if _device.is_torch_tensor(a):
        import torch  # clone keeps a dense view's strides unless asked for contiguous ones
        return col.clone(memory_format=torch.contiguous_format)
    return col.copy()


def _torch_to_scipy(t):
    """A torch sparse CSR or COO tensor (any device) as a scipy csr_array, through the host."""
    import torch
    if t.dim() != 2 or t.dense_dim() != 0:
        raise ValueError(f"spmat.Matrix takes a 2-D sparse tensor with scalar values, got "
                         f"shape {tuple(t.shape)} ({t.sparse_dim()} sparse and "
                         f"{t.dense_dim()} dense dimensions)")
    if t.layout == torch.sparse_coo:
        t = t.coalesce().to_sparse_csr()
    elif t.layout != torch.sparse_csr:
        raise TypeError(f"torch sparse layout {t.layout} is not supported; convert it with "
                        f"t.to_sparse_csr()")
    t = t.detach().cpu()
    return sp.csr_array((t.values().numpy(), t.col_indices().numpy(), t.crow_indices().numpy()),
                        shape=tuple(t.shape))


class TransposedMatrix:
    """Aᵀ of an spmat.Matrix, as a view (``A.T``): products run the format's transposed kernel
    (SpMVᵀ) on A's storage; nothing is copied or rebuilt. ``A.T.T`` is A."""

    __array_priority__ = 100

    def __init__(self, base):
        self._base = base

    @property
    def shape(self):
        r, c = self._base.shape
        return (c, r)

    ndim = 2
    nnz = property(lambda self: self._base.nnz)
    dtype = property(lambda self: self._base.dtype)
    format = property(lambda self: self._base.format)
    device = property(lambda self: self._base.device)

    @property
    def T(self):
        return self._base

    def __repr__(self):
        return f"<transposed view of {self._base!r}>"

    def spmv(self, x, out=None, alpha=1.0, beta=0.0):
        """``out = alpha * Aᵀ @ x + beta * out``; see Matrix.spmv."""
        return self._base.spmv(x, out=out, alpha=alpha, beta=beta, transpose=True)

    def matvec(self, x):
        return self._base.spmv(x, transpose=True)

    def rmatvec(self, x):
        return self._base.spmv(x)

    def __matmul__(self, x):
        if isinstance(x, (Matrix, TransposedMatrix)) or sp.issparse(x):
            raise TypeError("sparse @ sparse is not supported; multiply by a dense numpy array")
        return self._base.spmv(x, transpose=True)

    def to_scipy(self):
        """Aᵀ as a ``scipy.sparse.csr_array`` (this one is a copy)."""
        return self._base.to_scipy().T.tocsr()

    def to_cupy(self):
        """Aᵀ as a ``cupyx.scipy.sparse.csr_matrix`` (a copy)."""
        return _device.to_cupy(self.to_scipy())

    def to_torch(self, device="cuda"):
        """Aᵀ as a torch sparse CSR tensor on `device` (a copy)."""
        return _device.to_torch(self.to_scipy(), device)

    def toarray(self):
        return self._base.toarray().T
