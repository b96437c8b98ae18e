# SPDX-License-Identifier: MIT
"""Every format available on the CPU agrees with scipy's A @ x, A.T @ x and A @ X."""
import numpy as np
import pytest
import scipy.sparse as sp

import spmat
from conftest import MATRICES

FORMATS = spmat.formats("cpu")
TOL = 1e-12  # fp64, relative to ||scipy's result||


def rel_err(y, ref):
    scale = np.linalg.norm(ref)
    return np.linalg.norm(y - ref) / (scale if scale > 0 else 1.0)


def test_registry_lists_cpu_formats():
    assert "auto" in FORMATS and "csr" in FORMATS
    assert len(FORMATS) >= 10, FORMATS


def without_row_limits(fmt):
    """max_fill=inf and max_skew=inf where `fmt` declares them: the product tests run the long
    row of "one_long_row" through every kernel, which the ELL family refuses by default
    (test_long_rows_are_refused_by_default)."""
    names = {p[0] for p in spmat.format_info(fmt)["params"]}
    return {k: "inf" for k in ("max_fill", "max_skew") if k in names}


@pytest.fixture(scope="module")
def built():
    """(format, matrix name) -> spmat.Matrix, built once for the three product tests."""
    cache = {}

    def get(fmt, name):
        if (fmt, name) not in cache:
            cache[(fmt, name)] = spmat.Matrix(MATRICES[name], format=fmt, **without_row_limits(fmt))
        return cache[(fmt, name)]
    return get


@pytest.mark.parametrize("fmt", ["ell", "ellr", "sell", "bro-ell", "bro-csr"])
def test_long_rows_are_refused_by_default(fmt):
    # One row of 80 entries among rows of 0 or 1: padding 40x (ELL) or a thread walking 78
    # times the mean row. The message names the limit and what to use instead.
    S = MATRICES["one_long_row"]
    with pytest.raises(spmat.UnsupportedError, match=r"(max_fill|max_skew)=8.*csr"):
        spmat.Matrix(S, format=fmt)
    x = np.ones(S.shape[1])
    assert rel_err(spmat.Matrix(S, format=fmt, **without_row_limits(fmt)) @ x, S @ x) <= TOL
    assert rel_err(spmat.Matrix(S, format="hyb") @ x, S @ x) <= TOL


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("fmt", FORMATS)
def test_spmv(fmt, name, built):
    S = MATRICES[name]
    A = built(fmt, name)
    assert A.shape == S.shape and A.nnz == S.nnz and A.format == fmt
    x = np.random.default_rng(1).uniform(-1, 1, S.shape[1])
    assert rel_err(A @ x, S @ x) <= TOL


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("fmt", FORMATS)
def test_spmv_t(fmt, name, built):
    S = MATRICES[name]
    A = built(fmt, name)
    y = np.random.default_rng(2).uniform(-1, 1, S.shape[0])
    if not A.supports("spmv_t"):
        with pytest.raises(spmat.UnsupportedError, match="does not support spmv_t"):
            A.T @ y
        return
    assert rel_err(A.T @ y, S.T @ y) <= TOL
    assert rel_err(A.rmatvec(y), S.T @ y) <= TOL


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("fmt", FORMATS)
def test_spmm(fmt, name, built):
    S = MATRICES[name]
    A = built(fmt, name)
    X = np.random.default_rng(3).uniform(-1, 1, (S.shape[1], 5))
    assert rel_err(A @ X, S @ X) <= TOL


@pytest.mark.parametrize("fmt", FORMATS)
def test_to_scipy_round_trip(fmt):
    S = MATRICES["west0067"]
    back = spmat.Matrix(S, format=fmt).to_scipy()
    assert back.shape == S.shape
    assert np.array_equal(back.indptr, S.indptr)
    assert np.array_equal(back.indices, S.indices)
    assert np.array_equal(back.data, S.data)


def test_float32():
    S = MATRICES["1138_bus"].astype(np.float32)
    A = spmat.Matrix(S)
    assert A.dtype == np.float32
    x = np.random.default_rng(4).uniform(-1, 1, S.shape[1]).astype(np.float32)
    assert rel_err(A @ x, S @ x) <= 1e-5
    assert (A @ x).dtype == np.float32
    assert rel_err(A.T @ x, S.T @ x) <= 1e-5


def test_spmv_alpha_beta_in_place():
    S = MATRICES["nnc1374"]
    A = spmat.Matrix(S, format="csr")
    rng = np.random.default_rng(5)
    x, y0 = rng.uniform(-1, 1, S.shape[1]), rng.uniform(-1, 1, S.shape[0])
    y = y0.copy()
    ret = A.spmv(x, out=y, alpha=2.0, beta=-0.5)
    assert ret is y
    assert rel_err(y, 2.0 * (S @ x) - 0.5 * y0) <= TOL
    # Transposed, through the view.
    z0 = rng.uniform(-1, 1, S.shape[1])
    z = z0.copy()
    A.T.spmv(y0, out=z, alpha=0.5, beta=1.0)
    assert rel_err(z, 0.5 * (S.T @ y0) + z0) <= TOL


def test_beta_zero_ignores_nan_in_out():
    S = MATRICES["west0067"]
    A = spmat.Matrix(S)
    x = np.ones(S.shape[1])
    y = np.full(S.shape[0], np.nan)
    A.spmv(x, out=y)
    assert rel_err(y, S @ x) <= TOL


def test_transpose_view_shares_storage():
    S = MATRICES["random_60x90"]
    A = spmat.Matrix(S)
    At = A.T
    assert At.shape == (90, 60) and At.T is A and At.nnz == A.nnz
    X = np.random.default_rng(6).uniform(-1, 1, (60, 3))
    assert rel_err(At @ X, S.T @ X) <= TOL
    assert rel_err(At.matvec(X[:, 0].copy()), S.T @ X[:, 0]) <= TOL


def test_matvec_and_rmatmul():
    S = MATRICES["random_120x30"]
    A = spmat.Matrix(S)
    rng = np.random.default_rng(8)
    x, y = rng.uniform(-1, 1, 30), rng.uniform(-1, 1, 120)
    assert rel_err(A.matvec(x), S @ x) <= TOL
    assert rel_err(y @ A, y @ S) <= TOL
    Y = rng.uniform(-1, 1, (4, 120))
    assert rel_err(Y @ A, Y @ S) <= TOL


@pytest.mark.parametrize("source", ["coo", "csc", "csr_matrix", "int", "unsorted"])
def test_sources(source):
    S = MATRICES["west0067"]
    if source == "coo":
        a = sp.coo_array(S)
    elif source == "csc":
        a = sp.csc_array(S)
    elif source == "csr_matrix":
        a = sp.csr_matrix(S)
    elif source == "int":
        a = sp.csr_array((np.arange(1, S.nnz + 1), S.indices, S.indptr), shape=S.shape)
        S = a.astype(np.float64)
    else:
        # Reversed columns within rows plus a duplicate: spmat gets canonical CSR, and the
        # caller's matrix is left as it was.
        coo = sp.coo_array(S)
        r = np.concatenate([coo.row[::-1], [0]])
        c = np.concatenate([coo.col[::-1], [0]])
        v = np.concatenate([coo.data[::-1], [1.0]])
        a = sp.csr_array((v, (r, c)), shape=S.shape)
        a.has_canonical_format = False
        S = sp.csr_array((v, (r, c)), shape=S.shape)
    before = a.copy()
    A = spmat.Matrix(a)
    assert A.dtype == np.float64
    x = np.random.default_rng(9).uniform(-1, 1, S.shape[1])
    assert rel_err(A @ x, S @ x) <= TOL
    assert (a != before).nnz == 0


def test_generator_and_file_sources():
    A = spmat.Matrix("gen:lap2d:10")
    assert A.shape == (100, 100) and A.nnz == 460
    S = A.to_scipy()
    assert np.array_equal(S.diagonal(), np.full(100, 4.0))  # the 5-point Laplacian
    x = np.random.default_rng(12).uniform(-1, 1, 100)
    assert rel_err(A @ x, S @ x) <= TOL
    from conftest import BUNDLED
    B = spmat.Matrix(BUNDLED[0], format="csr")
    ref = MATRICES[BUNDLED[0].name.removesuffix(".mtx.gz")]
    x = np.random.default_rng(10).uniform(-1, 1, ref.shape[1])
    assert rel_err(B @ x, ref @ x) <= TOL
    C = spmat.Matrix(B, format="ell")  # rebuilt from another Matrix
    assert C.format == "ell" and rel_err(C @ x, ref @ x) <= TOL


def test_attributes_and_plan():
    A = spmat.Matrix(MATRICES["1138_bus"])
    assert A.format == "auto" and A.device == "cpu" and A.ndim == 2
    assert A.storage_bytes > 0
    plan = A.plan
    assert isinstance(plan, spmat.Plan)
    assert plan.reason and plan.description and str(plan) == plan.description
    assert "spmv" in plan.choices
    assert spmat.Matrix(MATRICES["1138_bus"], format="csr").plan is None
    assert "format='auto'" in repr(A)


def test_options_reach_the_format():
    S = MATRICES["1138_bus"]
    A = spmat.Matrix(S, format="sell", C=8, sigma=64)
    x = np.ones(S.shape[1])
    assert rel_err(A @ x, S @ x) <= TOL
    B = spmat.Matrix(S, ops=["spmv"], deterministic=True)
    assert list(B.plan.choices) == ["spmv"]


def test_add():
    S = MATRICES["1138_bus"]
    A, B = spmat.Matrix(S, format="csr"), spmat.Matrix(2 * S, format="csr")
    x = np.random.default_rng(11).uniform(-1, 1, S.shape[1])
    assert rel_err((A + B) @ x, 3 * (S @ x)) <= TOL
    assert rel_err((A - B) @ x, -(S @ x)) <= TOL
    assert rel_err((A + A) @ x, 2 * (S @ x)) <= TOL


def test_empty_matrix():
    A = spmat.Matrix(sp.csr_array((5, 3)))
    assert A.nnz == 0
    assert np.array_equal(A @ np.ones(3), np.zeros(5))
    assert A.to_scipy().nnz == 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_degenerate_shapes(fmt):
    # No vectors (k = 0) and a 0x0 matrix: empty results, no kernel reads out of bounds.
    A = spmat.Matrix(MATRICES["random_60x90"], format=fmt)
    assert (A @ np.ones((90, 0))).shape == (60, 0)
    assert (A.T @ np.ones((60, 0))).shape == (90, 0)
    E = spmat.Matrix(sp.csr_array((0, 0)), format=fmt)
    assert (E @ np.ones(0)).shape == (0,)
