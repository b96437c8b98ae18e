# SPDX-License-Identifier: MIT
"""Argument checks for vector operands: every mistake becomes a TypeError or ValueError that
names the argument and says what was expected, before anything reaches the C++ kernels."""
import numpy as np


def _kind(x):
    """'numpy', 'cupy', 'torch' or None for an array type spmat accepts."""
    if isinstance(x, np.ndarray):
        return "numpy"
    module = type(x).__module__.split(".")[0]
    if module in ("cupy", "torch") and hasattr(x, "__dlpack__"):
        return module
    return None


def _dtype_name(x):
    # torch.float64 -> 'float64'; numpy and CuPy dtypes already print that way.
    return str(x.dtype).rsplit(".", 1)[-1]


def _c_contiguous(x, kind):
    if kind == "torch":
        return x.is_contiguous()
    return bool(x.flags.c_contiguous)


def _check_torch(x, name):
    # What torch's DLPack export refuses, said before the extension sees only a failed import.
    import torch
    if x.layout != torch.strided:
        raise TypeError(f"{name} is a sparse torch tensor ({x.layout}); pass a dense one "
                        f"({name}.to_dense())")
    if x.requires_grad:
        raise ValueError(f"{name} requires grad, which spmat does not track; pass "
                         f"{name}.detach()")
    if x.is_conj() or x.is_neg():
        raise ValueError(f"{name} is a lazily conjugated or negated view; pass "
                         f"{name}.resolve_conj().resolve_neg()")


def check_operand(x, name, dtype, rows, device, contiguous=True):
    """Checks an input vector (1-D, `rows` entries) or block of vectors (2-D, `rows` × k);
    returns the array's kind ('numpy', 'cupy', 'torch')."""
    # The common case first, in well under a microsecond: a product's Python overhead is
    # mostly these checks.
    if (type(x) is np.ndarray and x.dtype == dtype and 0 < x.ndim <= 2 and x.shape[0] == rows
            and (x.flags.c_contiguous or not contiguous)):
        return "numpy"
    kind = _kind(x)
    if kind == "torch":
        _check_torch(x, name)
    if kind is None:
        raise TypeError(
            f"{name} must be a numpy array, got {type(x).__name__}; "
            f"convert it with np.asarray({name}, dtype=np.{dtype.name})")
    if _dtype_name(x) != dtype.name:
        fix = (f"{name}.to(torch.{dtype.name})" if kind == "torch"
               else f"{name}.astype({'cupy' if kind == 'cupy' else 'np'}.{dtype.name})")
        raise TypeError(
            f"{name} has dtype {_dtype_name(x)} but the matrix is {dtype.name}; "
            f"convert it with {fix}")
    if x.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D (a vector) or 2-D (a block of vectors), "
                         f"got {x.ndim}-D with shape {tuple(x.shape)}")
    if x.shape[0] != rows:
        raise ValueError(f"{name} has shape {tuple(x.shape)}, its first dimension must be "
                         f"{rows} to match the matrix")
    if contiguous and not _c_contiguous(x, kind):
        fix = {"torch": f"{name}.contiguous()", "cupy": f"cupy.ascontiguousarray({name})"}.get(
            kind, f"np.ascontiguousarray({name})")
        raise ValueError(f"{name} is not C-contiguous (a strided view or a Fortran-ordered "
                         f"array); pass {fix}")
    if kind != "numpy" and device == "cpu":
        raise ValueError(f"{name} is a {kind} array but the matrix is on the CPU; "
                         f"build it with device='cuda' or pass a numpy array")
    return kind


def check_output(out, x, name, dtype, shape, device):
    """Checks an output array: exact shape, the matrix's dtype, writable, no overlap with x;
    returns its kind."""
    kind = check_operand(out, name, dtype, shape[0], device)
    if out.shape != shape:
        raise ValueError(f"{name} has shape {tuple(out.shape)}, expected {tuple(shape)}")
    if isinstance(out, np.ndarray):
        if not out.flags.writeable:
            raise ValueError(f"{name} is read-only")
        # Vectors: the extension module compares the address ranges of x and out on every
        # call. Blocks: some run column by column through copies, which it would not see.
        if out.ndim == 2 and isinstance(x, np.ndarray) and np.may_share_memory(x, out):
            raise ValueError(f"{name} overlaps the input in memory; the product needs a "
                             f"separate output array")
    elif out.ndim == 2 and kind in ("cupy", "torch") and _overlap(out, x):
        raise ValueError(f"{name} overlaps the input in memory; the product needs a "
                         f"separate output array")
    return kind


def _span(a):
    """(first byte, end) of a CuPy or torch array's memory; None for other arrays."""
    kind = _kind(a)
    if kind == "cupy":
        return a.data.ptr, a.data.ptr + a.nbytes
    if kind == "torch":
        return a.data_ptr(), a.data_ptr() + a.numel() * a.element_size()
    return None


def _overlap(a, b):
    sa, sb = _span(a), _span(b)
    return sa is not None and sb is not None and sa[0] < sb[1] and sb[0] < sa[1]


def empty_like_kind(x, shape, dtype):
    """An uninitialised result array of the same kind (and device) as the operand `x`."""
    if type(x) is np.ndarray:
        return np.empty(shape, dtype=dtype)
    kind = _kind(x)
    if kind == "cupy":
        import cupy
        with cupy.cuda.Device(x.device.id):
            return cupy.empty(shape, dtype=dtype)
    if kind == "torch":
        return x.new_empty(shape)
    return np.empty(shape, dtype=dtype)
