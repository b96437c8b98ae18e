# SPDX-License-Identifier: MIT
"""scipy.sparse.linalg solvers run unchanged on spmat's operator and agree with scipy."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import cg, gmres, lsqr

import spmat
from conftest import MATRICES


def test_operator_products():
    S = MATRICES["random_60x90"]
    op = spmat.aslinearoperator(spmat.Matrix(S))
    assert op.shape == S.shape and op.dtype == np.float64
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, 90), rng.uniform(-1, 1, 60)
    np.testing.assert_allclose(op.matvec(x), S @ x, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(op.matvec(x[:, None]).ravel(), S @ x, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(op.rmatvec(y), S.T @ y, rtol=1e-12, atol=1e-14)
    X = np.asfortranarray(rng.uniform(-1, 1, (90, 4)))  # solvers do not promise a layout
    np.testing.assert_allclose(op.matmat(X), S @ X, rtol=1e-12, atol=1e-14)
    Y = rng.uniform(-1, 1, (60, 2))
    np.testing.assert_allclose(op.rmatmat(Y), S.T @ Y, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(op.T.matvec(y), S.T @ y, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(op.H.matvec(y), S.T @ y, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fmt", ["auto", "csr"])
def test_cg_matches_scipy(fmt):
    S = MATRICES["1138_bus"]  # symmetric positive definite
    b = np.random.default_rng(2).uniform(-1, 1, S.shape[0])
    op = spmat.aslinearoperator(spmat.Matrix(S, format=fmt))
    x, info = cg(op, b, rtol=1e-10, maxiter=5000)
    x_ref, info_ref = cg(S, b, rtol=1e-10, maxiter=5000)
    assert info == 0 and info_ref == 0
    np.testing.assert_allclose(x, x_ref, rtol=1e-6, atol=1e-8)
    assert np.linalg.norm(S @ x - b) <= 1e-9 * np.linalg.norm(b)


def test_lsqr_matches_scipy():
    S = MATRICES["random_120x30"]  # overdetermined: least squares, uses A x and Aᵀ x
    b = np.random.default_rng(3).uniform(-1, 1, S.shape[0])
    op = spmat.aslinearoperator(spmat.Matrix(S))
    res = lsqr(op, b, atol=1e-12, btol=1e-12, iter_lim=1000)
    ref = lsqr(S, b, atol=1e-12, btol=1e-12, iter_lim=1000)
    assert res[2] == ref[2]  # the same number of iterations
    np.testing.assert_allclose(res[0], ref[0], rtol=1e-8, atol=1e-10)


def test_gmres_matches_scipy():
    S = MATRICES["west0067"]
    S = (S + 10 * sp.eye_array(67)).tocsr()  # diagonally dominant: gmres converges
    b = np.ones(67)
    x, info = gmres(spmat.aslinearoperator(spmat.Matrix(S)), b, rtol=1e-10)
    x_ref, info_ref = gmres(S, b, rtol=1e-10)
    assert info == 0 and info_ref == 0
    np.testing.assert_allclose(x, x_ref, rtol=1e-8, atol=1e-10)


def test_float32_operator_takes_float64_vectors():
    S = MATRICES["1138_bus"].astype(np.float32)
    op = spmat.aslinearoperator(spmat.Matrix(S))
    assert op.dtype == np.float32
    y = op.matvec(np.ones(S.shape[1]))
    assert y.dtype == np.float32


def test_operator_refuses_non_matrix():
    with pytest.raises(TypeError, match="spmat.Matrix"):
        spmat.aslinearoperator(MATRICES["west0067"])
