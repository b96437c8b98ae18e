# SPDX-License-Identifier: MIT
"""GPU interop: CuPy (cupyx.scipy.sparse) and PyTorch sparse matrices in, CSR back out, and the
caller's current CUDA stream.

Sparse inputs become canonical CSR (rows in order, columns sorted and unique within each row)
on the device, with CuPy or PyTorch operations: nothing passes through host memory. An input
already canonical, with 32-bit indices and the requested value type, is used as it is: the
matrix then reads the caller's arrays (format csr adopts them) or copies them on the device.
"""
import numpy as np

_INT32_MAX = np.iinfo(np.int32).max


def _module_root(obj):
    return type(obj).__module__.split(".")[0]


def is_cupy_sparse(a):
    """A cupyx.scipy.sparse matrix (without importing CuPy when the caller has not)."""
    if not type(a).__module__.startswith("cupyx.scipy.sparse"):
        return False
    import cupyx.scipy.sparse as csp
    return csp.issparse(a)


def is_torch_tensor(a):
    return _module_root(a) == "torch" and type(a).__name__ in ("Tensor", "Parameter")


def is_torch_sparse(a):
    if not is_torch_tensor(a):
        return False
    import torch
    return a.layout != torch.strided


# --- streams -----------------------------------------------------------------------------------
def cupy_stream():
    """The handle of CuPy's current stream as an integer (0: the legacy default stream)."""
    import cupy
    return cupy.cuda.get_current_stream().ptr


def _torch_stream_getter():
    import torch
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:  # an int, without building a torch.cuda.Stream object per call
        return raw
    return lambda index: torch.cuda.current_stream(index).cuda_stream


_torch_raw_stream = None


def torch_stream(t):
    """The handle of PyTorch's current stream on tensor `t`'s device as an integer."""
    global _torch_raw_stream
    if _torch_raw_stream is None:
        _torch_raw_stream = _torch_stream_getter()
    return _torch_raw_stream(t.device.index)


def stream_of(x, kind):
    """The caller's current stream for the operand `x` of kind 'cupy' or 'torch'; 0 otherwise."""
    if kind == "cupy":
        return cupy_stream()
    if kind == "torch" and x.is_cuda:
        return torch_stream(x)
    return 0


# --- the product's fast path ----------------------------------------------------------------------
def device_vector_ptrs(x, out, dtype, n_in, n_out, device_id):
    """(out, x address, out address, stream) when x (n_in entries) and out (n_out entries; None:
    allocated here) are contiguous 1-D CuPy arrays, or CUDA torch tensors, of `dtype` on device
    `device_id`; None otherwise, and the general path then checks the operands and says what is
    wrong. The stream is the caller's current one.

    Cheaper than the array protocols, which cost several microseconds a call: with an
    allocation, this is most of what a product on a small matrix costs from Python."""
    module = type(x).__module__.partition(".")[0]
    if module == "cupy":
        if (x.dtype != dtype or x.shape != (n_in,) or not x.flags.c_contiguous
                or x.device.id != device_id):
            return None
        if out is None:
            import cupy
            if cupy.cuda.runtime.getDevice() != device_id:
                return None
            out = cupy.empty(n_out, dtype)
        elif (type(out) is not type(x) or out.dtype != dtype or out.shape != (n_out,)
                or not out.flags.c_contiguous or out.device.id != device_id):
            return None
        return out, x.data.ptr, out.data.ptr, cupy_stream()
    if module == "torch" and type(x).__name__ == "Tensor":
        if not _plain_cuda_vector(x, dtype, n_in, device_id):
            return None
        if out is None:
            out = x.new_empty(n_out)
        elif type(out) is not type(x) or not _plain_cuda_vector(out, dtype, n_out, device_id):
            return None
        return out, x.data_ptr(), out.data_ptr(), torch_stream(x)
    return None


_TORCH_DTYPES = {}


def _plain_cuda_vector(t, dtype, n, device_id):
    """A dense, contiguous, 1-D CUDA tensor of `dtype` and n entries on `device_id`, without
    autograd or lazy conjugation / negation (what the general path refuses or handles)."""
    tdt = _TORCH_DTYPES.get(dtype)
    if tdt is None:
        import torch
        tdt = _TORCH_DTYPES.setdefault(dtype, getattr(torch, np.dtype(dtype).name))
    return (t.dtype == tdt and t.is_cuda and t.dim() == 1 and t.shape[0] == n
            and t.device.index == device_id and t.is_contiguous() and t.layout is _strided()
            and not t.requires_grad and not t.is_conj() and not t.is_neg())


_STRIDED = None


def _strided():
    global _STRIDED
    if _STRIDED is None:
        import torch
        _STRIDED = torch.strided
    return _STRIDED


# --- sparse inputs -----------------------------------------------------------------------------
def _index_type(rows, cols, nnz):
    # 32-bit indices whenever they fit: half the index traffic of every product.
    return np.int32 if max(rows, cols, nnz) <= _INT32_MAX else np.int64


def _sorted_within_rows(xp, indptr, indices, nnz):
    """Whether the columns of every row are strictly increasing (sorted, no duplicates), by a
    few element-wise kernels and one reduction on the device. `xp`: the module cupy or torch."""
    if nnz < 2:
        return True
    # Entry k (k ≥ 1) either starts a row or must exceed its predecessor.
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < nnz)]
    if xp.__name__ == "torch":
        starts = starts.long()  # index tensors: int64 in every torch version
        first = xp.zeros(nnz, dtype=xp.bool, device=indices.device)
    else:
        first = xp.zeros(nnz, dtype=bool)
    first[starts] = True
    ok = (indices[1:] > indices[:-1]) | first[1:]
    return bool(ok.all())


def cupy_csr_arrays(a, dtype):
    """(rows, cols, indptr, indices, data, keep, stream) for a cupyx.scipy.sparse matrix:
    canonical CSR on its device. `keep`: the objects owning the arrays."""
    import cupy
    if a.dtype.kind == "c":
        raise TypeError("complex matrices are not supported (spmat stores real values)")
    with a.data.device:
        # csc, coo (and dia) are converted on the device into a new matrix; csr is used as it
        # is when canonical. CuPy's own flag is set only by its operations, so a matrix made
        # from arrays is checked here. The caller's matrix is never modified: a copy is made
        # canonical instead.
        csr = a if a.format == "csr" else a.tocsr()
        if not (csr.has_canonical_format
                or _sorted_within_rows(cupy, csr.indptr, csr.indices, csr.nnz)):
            if csr is a:
                csr = csr.copy()
            csr.sum_duplicates()
        rows, cols = csr.shape
        itype = _index_type(rows, cols, csr.nnz)
        indptr = cupy.ascontiguousarray(csr.indptr.astype(itype, copy=False))
        indices = cupy.ascontiguousarray(csr.indices.astype(itype, copy=False))
        data = cupy.ascontiguousarray(csr.data.astype(dtype, copy=False))
        return rows, cols, indptr, indices, data, (a, csr, indptr, indices, data), cupy_stream()


def torch_csr_arrays(t, dtype):
    """(rows, cols, indptr, indices, data, keep, stream) for a PyTorch sparse CSR or COO tensor
    on a CUDA device: canonical CSR on that device."""
    import torch
    if not t.is_cuda:
        raise ValueError("the torch sparse tensor is on the CPU; device='cuda' takes one on a "
                         "CUDA device (t.cuda()), or pass scipy.sparse.csr_array of its arrays")
    if t.requires_grad:
        t = t.detach()
    if t.dim() != 2 or t.dense_dim() != 0:
        raise ValueError(f"spmat.Matrix takes a 2-D sparse tensor with scalar values, got "
                         f"shape {tuple(t.shape)} ({t.sparse_dim()} sparse and "
                         f"{t.dense_dim()} dense dimensions)")
    if t.dtype.is_complex:
        raise TypeError("complex matrices are not supported (spmat stores real values)")
    tdt = torch.float64 if np.dtype(dtype) == np.float64 else torch.float32
    with torch.cuda.device(t.device):
        if t.layout == torch.sparse_csr:
            crow, col, val = t.crow_indices(), t.col_indices(), t.values()
            if not _sorted_within_rows(torch, crow, col, col.numel()):
                # Through COO made from the arrays: torch's own CSR-to-COO conversion marks its
                # result coalesced, so coalesce() would keep the unsorted order.
                row = torch.repeat_interleave(
                    torch.arange(t.shape[0], device=t.device), crow.diff().long())
                c = torch.sparse_coo_tensor(torch.stack([row, col.long()]), val, t.shape,
                                            is_coalesced=False).coalesce().to_sparse_csr()
                crow, col, val = c.crow_indices(), c.col_indices(), c.values()
        elif t.layout == torch.sparse_coo:
            # coalesce: entries sorted by (row, column), duplicates summed.
            c = t.coalesce().to_sparse_csr()
            crow, col, val = c.crow_indices(), c.col_indices(), c.values()
        else:
            raise TypeError(f"torch sparse layout {t.layout} is not supported; convert it with "
                            f"t.to_sparse_csr()")
        rows, cols = t.shape
        itype = torch.int32 if _index_type(rows, cols, col.numel()) == np.int32 else torch.int64
        indptr = crow.to(itype).contiguous()
        indices = col.to(itype).contiguous()
        data = val.to(tdt).contiguous()
        return (int(rows), int(cols), indptr, indices, data, (t, indptr, indices, data),
                torch_stream(indptr))


# --- CSR out -----------------------------------------------------------------------------------
def to_cupy(csr):
    """A scipy csr_array as a cupyx.scipy.sparse.csr_matrix on the current CUDA device."""
    try:
        import cupy
        import cupyx.scipy.sparse as csp
    except ImportError as e:
        raise ImportError(f"to_cupy needs CuPy ({e})") from None
    data, indices, indptr = (cupy.asarray(v) for v in (csr.data, csr.indices, csr.indptr))
    return csp.csr_matrix((data, indices, indptr), shape=csr.shape)


def to_torch(csr, device):
    """A scipy csr_array as a torch sparse CSR tensor on `device`."""
    try:
        import torch
    except ImportError as e:
        raise ImportError(f"to_torch needs PyTorch ({e})") from None
    args = (torch.from_numpy(csr.indptr), torch.from_numpy(csr.indices),
            torch.from_numpy(csr.data))
    return torch.sparse_csr_tensor(*args, size=csr.shape, device=device)
