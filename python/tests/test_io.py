# SPDX-License-Identifier: MIT
"""spmat.mmread gives scipy.io.mmread's values bit for bit; mmwrite round-trips."""
import gzip
import shutil

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import spmat
from conftest import BUNDLED, MATRICES, MTX_DATA


def canonical(a):
    c = sp.csr_array(a, dtype=np.float64, copy=True)
    c.sum_duplicates()
    return c


def assert_identical(a, b):
    assert a.shape == b.shape
    assert np.array_equal(a.indptr, b.indptr)
    assert np.array_equal(a.indices, b.indices)
    # Bit-identical: compare the bytes, so that -0.0 vs 0.0 or NaN payloads would show.
    assert a.data.dtype == b.data.dtype
    assert a.data.tobytes() == b.data.tobytes()


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_mmread_bundled_matches_scipy(path):
    ours = spmat.mmread(path)
    assert isinstance(ours, sp.csr_array) and ours.dtype == np.float64
    assert_identical(ours, canonical(scipy.io.mmread(str(path))))


@pytest.mark.parametrize("path", MTX_DATA, ids=lambda p: p.name)
def test_mmread_test_files(path):
    # Mostly malformed files: spmat must refuse them with its own exception and a message
    # naming the file; where both readers accept one, the values must agree bit for bit.
    try:
        ours = spmat.mmread(path)
    except spmat.SpmatError as e:
        assert path.name in str(e), str(e)  # the message names the file (and the line)
        return
    try:
        ref = scipy.io.mmread(str(path))
    except Exception:  # scipy refuses what spmat accepts: nothing to compare with
        return
    if not sp.issparse(ref):
        ref = sp.csr_array(ref)  # an array-format file: scipy gives dense, zeros not stored
        ref.eliminate_zeros()
    assert_identical(ours, canonical(ref))


@pytest.mark.parametrize("field, symmetry", [
    ("real", "general"), ("real", "symmetric"), ("real", "skew-symmetric"),
    ("integer", "general"), ("integer", "symmetric"), ("pattern", "general"),
    ("pattern", "symmetric"),
])
def test_mmread_variants_match_scipy(tmp_path, field, symmetry):
    # Files of each field and symmetry, written by scipy, read back by both readers.
    rng = np.random.default_rng(4)
    a = sp.random_array((40, 40), density=0.1, format="coo", rng=rng)
    a = (a + a.T) if symmetry == "symmetric" else (a - a.T) if symmetry == "skew-symmetric" else a
    a = sp.coo_array(a)
    if field == "integer":
        a = sp.coo_array((np.round(a.data * 100).astype(np.int64), (a.row, a.col)), shape=a.shape)
    path = tmp_path / f"{field}-{symmetry}.mtx"
    scipy.io.mmwrite(str(path), a, field=field, symmetry=symmetry)
    assert_identical(spmat.mmread(path), canonical(scipy.io.mmread(str(path))))


@pytest.mark.parametrize("suffix", [".mtx", ".mtx.gz"])
def test_mmread_large_file_matches_scipy(tmp_path, suffix):
    # Several MiB of text, read on all threads: still scipy's values bit for bit.
    rng = np.random.default_rng(5)
    a = sp.random_array((20000, 20000), density=0.0005, format="coo", rng=rng)
    a = sp.coo_array(a + a.T)
    plain = tmp_path / "large.mtx"
    scipy.io.mmwrite(str(plain), a, symmetry="symmetric")
    assert plain.stat().st_size > 2 << 20
    path = plain
    if suffix == ".mtx.gz":
        path = tmp_path / "large.mtx.gz"
        with open(plain, "rb") as src, gzip.open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
    ours = spmat.mmread(path)
    assert ours.has_canonical_format  # said, not found by scipy scanning the arrays
    assert_identical(ours, canonical(scipy.io.mmread(str(plain))))


def test_mmread_refuses_more_entries_than_positions(tmp_path):
    # 10^5 copies of one entry of a 1 x 1 matrix: refused at the size line, before reading them.
    path = tmp_path / "duplicates.mtx.gz"
    with gzip.open(path, "wt") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n1 1 100000\n" + "1 1 1\n" * 100000)
    with pytest.raises(spmat.ParseError, match=r"duplicates\.mtx\.gz:2: .*only 1 position.*"
                                               r"lenient reading sums duplicate entries"):
        spmat.mmread(path)


def test_mmread_float32():
    a = spmat.mmread(BUNDLED[0], dtype=np.float32)
    assert a.dtype == np.float32
    with pytest.raises(TypeError):
        spmat.mmread(BUNDLED[0], dtype=np.int32)


def test_mmread_missing_file():
    with pytest.raises(spmat.ParseError, match="cannot open"):
        spmat.mmread("no/such/file.mtx")


@pytest.mark.parametrize("suffix", [".mtx", ".mtx.gz"])
def test_mmwrite_round_trip(tmp_path, suffix):
    S = MATRICES["1138_bus"]
    path = tmp_path / f"m{suffix}"
    spmat.mmwrite(path, S)
    assert_identical(spmat.mmread(path), S)
    assert_identical(canonical(scipy.io.mmread(str(path))), S)
    # From an spmat.Matrix, and float32 values printed with enough digits.
    spmat.mmwrite(path, spmat.Matrix(S, format="ell"))
    assert_identical(spmat.mmread(path), S)
    S32 = S.astype(np.float32)
    spmat.mmwrite(path, S32)
    assert_identical(spmat.mmread(path, dtype=np.float32), S32)


def test_mmwrite_refuses_dense(tmp_path):
    with pytest.raises(TypeError, match="scipy sparse"):
        spmat.mmwrite(tmp_path / "x.mtx", np.eye(3))
