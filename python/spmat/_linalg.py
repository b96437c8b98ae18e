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
                             "device='cpu' for a scipy LinearOperator")
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


def aslinearoperator(A):
    """``A`` (an spmat.Matrix, or ``A.T``) as a ``scipy.sparse.linalg.LinearOperator``.

    matvec, rmatvec, matmat and rmatmat run spmat's SpMV, SpMVᵀ and SpMM kernels, so the
    solvers of scipy.sparse.linalg run on spmat unchanged::

        from scipy.sparse.linalg import cg, lsqr
        A = spmat.Matrix(scipy_matrix)              # format "auto"
        x, info = cg(spmat.aslinearoperator(A), b)
        x = lsqr(spmat.aslinearoperator(A), b)[0]   # uses A x and Aᵀ x every iteration
    """
    return SpmatLinearOperator(A)
