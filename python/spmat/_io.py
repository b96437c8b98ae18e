# SPDX-License-Identifier: MIT
"""Matrix Market files through spmat's reader and writer."""
import os

import numpy as np
import scipy.sparse as sp

from . import _spmat
from ._matrix import Matrix, TransposedMatrix, canonical_csr


def mmread(path, dtype=np.float64):
    """Reads a Matrix Market file (``.mtx``, or gzip-compressed ``.mtx.gz``) with spmat's
    parallel reader; returns a ``scipy.sparse.csr_array``.

    The result is canonical: columns sorted within each row, duplicates summed, explicit zeros
    of coordinate files kept. Symmetric, skew-symmetric and hermitian (real) files are expanded
    to full storage, pattern entries get the value 1, and integer fields are read as floating
    point; the values are those scipy.io.mmread gives, in CSR form. Complex files raise
    ``spmat.UnsupportedError``; a malformed file raises ``spmat.ParseError`` naming the line,
    as does a size line declaring more entries than the matrix has positions (the surplus
    could only be duplicates). A file of more than 1 MiB of text is parsed on all OpenMP
    threads (``OMP_NUM_THREADS``), with the same result to the bit.

    dtype: numpy.float64 (default) or numpy.float32.
    """
    dt = np.dtype(dtype)
    if dt == np.float64:
        read = _spmat.mmread_f64
    elif dt == np.float32:
        read = _spmat.mmread_f32
    else:
        raise TypeError(f"dtype must be float32 or float64, got {dt}")
    rows, cols, indptr, indices, data = read(os.fspath(path))
    # The arrays are the reader's own (not copied); they are canonical, which scipy would
    # otherwise find out again by scanning them.
    a = sp.csr_array((data, indices, indptr), shape=(rows, cols))
    a.has_canonical_format = True
    return a


def mmwrite(path, a):
    """Writes ``a`` (a scipy sparse matrix or array, or an spmat.Matrix) as a Matrix Market
    ``coordinate real general`` file; gzip-compressed when the path ends in ``.gz``.

    Values are printed with enough digits to read back exactly (17 for float64, 9 for
    float32); float32 matrices stay float32, other types are written as float64. The file
    appears at once (written aside, then renamed).
    """
    if isinstance(a, (Matrix, TransposedMatrix)):
        a = a.to_scipy()
    if not sp.issparse(a):
        raise TypeError(f"mmwrite takes a scipy sparse matrix or an spmat.Matrix, "
                        f"got {type(a).__name__}")
    dt = np.dtype(np.float32) if a.dtype == np.float32 else np.dtype(np.float64)
    if a.dtype.kind == "c":
        raise TypeError("complex matrices are not supported (spmat stores real values)")
    _spmat.mmwrite(os.fspath(path), *canonical_csr(a, dt))
