# SPDX-License-Identifier: MIT
"""spmat.aslinearoperator: spmat's kernels behind scipy.sparse.linalg's LinearOperator."""
import numpy as np
from scipy.sparse.linalg import LinearOperator

from ._matrix import Matrix, TransposedMatrix


class SpmatLinearOperator(LinearOperator):
    """A scipy LinearOperator whose products run on an spmat.Matrix (or its ``A.T`` view).

    Unlike ``Matrix`` itself, the operator converts what a solver hands it (a column of shape
    (n, 1), a float64 vector for a float32 matrix, a Fortran-ordered block) to the layout the
    kernels take, because solvers do not promise a layout.
    """

    def __init__(self, A):
        if not isinstance(A, (Matrix, TransposedMatrix)):
            raise TypeError(f"aslinearoperator takes an spmat.Matrix, got {type(A).__name__}")
        if A.device != "cpu":
            raise ValueError("scipy's solvers run on numpy arrays: build the matrix with "
                             "device='cpu' for a scipy LinearOperator (spmat.aslinearoperator "
                             "gives a cupyx one for device='cuda')")
        self.A = A
        super().__init__(dtype=A.dtype, shape=A.shape)

    def _vec(self, x):
        return np.ascontiguousarray(np.ravel(x), dtype=self.dtype)

    def _block(self, X):
        return np.ascontiguousarray(X, dtype=self.dtype)

    def _matvec(self, x):
        return self.A @ self._vec(x)

    def _rmatvec(self, x):
        return self.A.T @ self._vec(x)

    def _matmat(self, X):
        return self.A @ self._block(X)

    def _rmatmat(self, X):
        return self.A.T @ self._block(X)

    def _adjoint(self):
        # Real matrices: Aᴴ = Aᵀ, the transposed view of the same storage.
        return SpmatLinearOperator(self.A.T)

    _transpose = _adjoint


def _cupy_operator(A):
    """A cupyx.scipy.sparse.linalg.LinearOperator over a device='cuda' matrix."""
    try:
        import cupy
        from cupyx.scipy.sparse.linalg import LinearOperator as CupyLinearOperator
    except ImportError as e:
        raise ImportError(f"a LinearOperator for a device='cuda' matrix is a cupyx one, which "
                          f"needs CuPy ({e})") from None
    dtype = A.dtype

    # Solvers hand over whatever layout they have (an (n, 1) column, a float64 vector for a
    # float32 matrix): converted to what the kernels take, on the device.
    def vec(x):
        return cupy.ascontiguousarray(x.ravel(), dtype=dtype)

    def block(X):
        return cupy.ascontiguousarray(X, dtype=dtype)

    return CupyLinearOperator(
        A.shape, dtype=dtype,
        matvec=lambda x: A @ vec(x), rmatvec=lambda x: A.T @ vec(x),
        matmat=lambda X: A @ block(X), rmatmat=lambda X: A.T @ block(X))


def aslinearoperator(A):
    """``A`` (an spmat.Matrix, or ``A.T``) as a ``scipy.sparse.linalg.LinearOperator``, or for
    a device='cuda' matrix a ``cupyx.scipy.sparse.linalg.LinearOperator`` (CuPy vectors).

    matvec, rmatvec, matmat and rmatmat run spmat's SpMV, SpMVᵀ and SpMM kernels, so the
    solvers of scipy.sparse.linalg run on spmat unchanged::

        from scipy.sparse.linalg import cg, lsqr
        A = spmat.Matrix(scipy_matrix)              # format "auto"
        x, info = cg(spmat.aslinearoperator(A), b)
        x = lsqr(spmat.aslinearoperator(A), b)[0]   # uses A x and Aᵀ x every iteration

    On the GPU the solvers of cupyx.scipy.sparse.linalg that take an operator (cg, gmres,
    minres, lsmr, ...) run on it the same way, with CuPy vectors. (cupyx's ``lsqr`` is a
    direct QR solve that takes only a csr_matrix; its iterative least-squares solver is
    ``lsmr``.)
    """
    if not isinstance(A, (Matrix, TransposedMatrix)):
        raise TypeError(f"aslinearoperator takes an spmat.Matrix, got {type(A).__name__}")
    if A.device == "cuda":
        return _cupy_operator(A)
    return SpmatLinearOperator(A)
