# SPDX-License-Identifier: MIT
"""spmat: sparse-matrix storage formats and kernels for NVIDIA GPUs and multicore CPUs.

    import numpy as np, scipy.sparse as sp, spmat
    A = spmat.Matrix(sp.random(1000, 1000, density=0.01, format="csr"))  # format "auto"
    y = A @ np.ones(1000)          # SpMV;  A.T @ y: SpMVᵀ from the same storage
    print(A.plan)                  # which format the planner chose, and why

On the GPU (a CUDA build): Matrix(cupyx_or_torch_sparse) builds from the arrays in device
memory, CuPy arrays and torch tensors are multiplied in place, to_cupy / to_torch convert back,
and aslinearoperator gives a cupyx LinearOperator.

Main entry points: Matrix (build, multiply), aslinearoperator (scipy.sparse.linalg solvers),
mmread / mmwrite (Matrix Market files), formats / format_info (what this build offers),
cuda_status (whether the GPU backend is usable here).
"""
from . import _spmat
from ._spmat import (
    CudaError,
    DimensionMismatchError,
    IndexOverflowError,
    InvalidMatrixError,
    OutOfMemoryError,
    ParseError,
    SpmatError,
    UnsupportedError,
)
from ._matrix import Matrix, Plan, TransposedMatrix
from ._linalg import SpmatLinearOperator, aslinearoperator
from ._io import mmread, mmwrite

__version__ = _spmat.__version__

__all__ = [
    "Matrix", "TransposedMatrix", "Plan", "aslinearoperator", "SpmatLinearOperator",
    "mmread", "mmwrite", "formats", "format_info", "generators", "cuda_compiled",
    "cuda_available", "cuda_status", "SpmatError", "ParseError", "InvalidMatrixError",
    "IndexOverflowError", "UnsupportedError", "DimensionMismatchError", "CudaError",
    "OutOfMemoryError",
]


def formats(device="cpu"):
    """Names of the formats this build can store on `device` ("cpu" or "cuda"), in the
    registry's order ("auto" and "tune" first). Empty for "cuda" in a CPU-only build."""
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    if device == "cuda" and not _spmat.cuda_compiled():
        return []
    return [f["name"] for f in _spmat.formats() if f[device]["available"]]


def format_info(name=None):
    """The registry entry of format `name` as a dict: summary, per-device capabilities
    (spmv, spmv_t, spmm, add, determinism) and build options (name, default, meaning).
    Without a name: every entry, in the registry's order."""
    entries = _spmat.formats()
    if name is None:
        return entries
    for e in entries:
        if e["name"] == name:
            return e
    raise UnsupportedError(f"unknown format {name!r} (known formats: "
                           f"{', '.join(e['name'] for e in entries)})")


def generators():
    """The matrix generators usable as ``Matrix("gen:...")``: one line each, grammar and
    an example."""
    return _spmat.generators()


def cuda_compiled():
    """Whether this module was built with the CUDA backend (says nothing about a GPU)."""
    return _spmat.cuda_compiled()


def cuda_available():
    """Whether device='cuda' works here: CUDA compiled in and a usable GPU present."""
    return _spmat.cuda_compiled() and _spmat.cuda_available()


def cuda_status():
    """One sentence on the GPU backend: built without CUDA, no GPU found, or available."""
    if not _spmat.cuda_compiled():
        return ("built without CUDA: device='cuda' is unavailable "
                "(rebuild with `SPMAT_CUDA=ON pip install .` for the GPU backend)")
    if not _spmat.cuda_available():
        return "built with CUDA, but no usable GPU found: device='cuda' is unavailable"
    return "CUDA GPU available: device='cuda' works"
