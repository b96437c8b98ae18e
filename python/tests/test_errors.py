# SPDX-License-Identifier: MIT
"""Wrong arguments raise a Python exception that says what is wrong; nothing crashes."""
import pathlib

import numpy as np
import pytest
import scipy.sparse as sp

import spmat
from conftest import MATRICES, REPO


@pytest.fixture(scope="module")
def A():
    return spmat.Matrix(MATRICES["nnc1374"], format="csr")


def test_error_hierarchy():
    assert issubclass(spmat.ParseError, spmat.SpmatError)
    assert issubclass(spmat.ParseError, ValueError)
    assert issubclass(spmat.UnsupportedError, ValueError)
    assert issubclass(spmat.DimensionMismatchError, ValueError)
    assert issubclass(spmat.OutOfMemoryError, MemoryError)
    assert issubclass(spmat.IndexOverflowError, OverflowError)
    assert issubclass(spmat.SpmatError, RuntimeError)


@pytest.mark.parametrize("x, exc, match", [
    (np.ones(1374, dtype=np.float32), TypeError, "dtype float32 but the matrix is float64"),
    (np.ones(1374, dtype=np.int64), TypeError, "dtype int64"),
    (np.ones(1374, dtype=np.complex128), TypeError, "dtype complex128"),
    ([1.0] * 1374, TypeError, "must be a numpy array"),
    (np.ones(1373), ValueError, r"shape \(1373,\)"),
    (np.ones((1374, 2, 2)), ValueError, "3-D"),
    (np.ones(2748)[::2], ValueError, "not C-contiguous"),
    (np.asfortranarray(np.ones((1374, 3))), ValueError, "not C-contiguous"),
    (np.float64(1.0), TypeError, "must be a numpy array"),
])
def test_bad_operand(A, x, exc, match):
    with pytest.raises(exc, match=match):
        A @ x


def test_bad_out(A):
    x = np.ones(1374)
    with pytest.raises(ValueError, match="overlaps"):
        A.spmv(x, out=x)
    buf = np.ones(1374 + 10)
    with pytest.raises(ValueError, match="overlaps"):
        A.spmv(buf[:1374], out=buf[10:])
    with pytest.raises(ValueError, match=r"shape \(1373,\)"):
        A.spmv(x, out=np.empty(1373))
    with pytest.raises(TypeError, match="dtype float32"):
        A.spmv(x, out=np.empty(1374, dtype=np.float32))
    ro = np.empty(1374)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        A.spmv(x, out=ro)
    with pytest.raises(ValueError, match="pass out=y"):
        A.spmv(x, beta=1.0)
    with pytest.raises(ValueError, match="not C-contiguous"):
        A.spmv(x, out=np.empty(2748)[::2])
    with pytest.raises(ValueError, match="overlaps"):
        A.T.spmv(x, out=x)


def test_core_rechecks_what_python_checked(A):
    # The extension module's own checks, reached without the Python layer.
    with pytest.raises(spmat.DimensionMismatchError, match="spmv: x has 3 entries"):
        A._h.spmv(np.ones(3), np.empty(1374), 1.0, 0.0, False)
    with pytest.raises(ValueError, match="overlaps"):
        x = np.ones(1374)
        A._h.spmv(x, x, 1.0, 0.0, False)
    with pytest.raises(TypeError):
        A._h.spmv(np.ones(1374, dtype=np.float32), np.empty(1374), 1.0, 0.0, False)
    with pytest.raises(TypeError):
        A._h.spmv(np.ones(2748)[::2], np.empty(1374), 1.0, 0.0, False)
    with pytest.raises(spmat.DimensionMismatchError, match="spmm: A is 1374x1374"):
        A._h.spmm(np.ones((1374, 2)), np.empty((1374, 3)), 1.0, 0.0)


def test_sparse_times_sparse_refused(A):
    with pytest.raises(TypeError, match="sparse @ sparse"):
        A @ MATRICES["nnc1374"]
    with pytest.raises(TypeError, match="sparse @ sparse"):
        A @ A


def test_bad_format_and_options():
    S = MATRICES["west0067"]
    with pytest.raises(spmat.UnsupportedError, match="unknown format 'nope'.*known formats"):
        spmat.Matrix(S, format="nope")
    with pytest.raises(spmat.ParseError, match="format 'csr' has no option 'C'"):
        spmat.Matrix(S, format="csr", C=32)
    with pytest.raises(spmat.ParseError):
        spmat.Matrix(S, ops="spmv+frobnicate")
    with pytest.raises(ValueError, match="may not contain"):
        spmat.Matrix(S, format="sell", C="3,2")


def test_bad_sources():
    with pytest.raises(TypeError, match="dense array"):
        spmat.Matrix(np.eye(3))
    with pytest.raises(TypeError, match="scipy.sparse matrix"):
        spmat.Matrix(42)
    with pytest.raises(TypeError, match="complex"):
        spmat.Matrix(sp.csr_array(np.eye(3, dtype=np.complex128)))
    with pytest.raises(TypeError, match="float32 or float64"):
        spmat.Matrix(sp.csr_array(np.eye(3)), dtype=np.int32)
    with pytest.raises(spmat.ParseError, match="cannot open"):
        spmat.Matrix("no/such/file.mtx")
    with pytest.raises(spmat.ParseError, match="gen:"):
        spmat.Matrix("gen:nosuchgenerator:3")
    bad = REPO / "tests" / "data" / "mtx" / "bad_banner.mtx"
    with pytest.raises(spmat.ParseError, match="bad_banner.mtx:1"):
        spmat.Matrix(bad)


def test_device():
    S = MATRICES["west0067"]
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda'"):
        spmat.Matrix(S, device="tpu")
    if spmat.cuda_available():
        pytest.skip("a GPU is usable here")
    with pytest.raises(spmat.UnsupportedError, match="without CUDA|no usable CUDA GPU"):
        spmat.Matrix(S, device="cuda")
    status = spmat.cuda_status()
    assert "without CUDA" in status or "no usable GPU" in status
    if not spmat.cuda_compiled():
        assert spmat.formats("cuda") == []


def test_help_texts():
    assert "Matrix Market" in spmat.Matrix.__doc__
    assert "LinearOperator" in spmat.aslinearoperator.__doc__
    assert "gen:" in spmat.generators() or "lap2d" in spmat.generators()
    info = spmat.format_info("sell")
    assert any(p[0] == "C" for p in info["params"])
    with pytest.raises(spmat.UnsupportedError, match="unknown format"):
        spmat.format_info("nope")
