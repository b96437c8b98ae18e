# SPDX-License-Identifier: MIT
"""device='cuda': runs where spmat was built with CUDA and a GPU answers; skips otherwise
(CuPy and PyTorch tests also skip when those packages are not installed).

The shared real matrices (G3_circuit and the like: every .mtx.gz in $SPMAT_MATRIX_DIR, else
data/ and data/real/) are checked too when present; without them that test skips with a
message."""
import gc
import os

import numpy as np
import pytest
import scipy.sparse as sp

import spmat
from conftest import MATRICES, REPO

pytestmark = pytest.mark.skipif(not spmat.cuda_available(), reason=spmat.cuda_status())

TOL = 1e-12
GPU_FORMATS = spmat.formats("cuda") if spmat.cuda_compiled() else []


def rel_err(y, ref):
    return np.linalg.norm(y - ref) / max(np.linalg.norm(ref), 1e-300)


def _cupy():
    return pytest.importorskip("cupy")


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


def _shared_real_matrices():
    env = os.environ.get("SPMAT_MATRIX_DIR")
    dirs = [env] if env else [REPO / "data", REPO / "data" / "real"]
    found = []
    for d in dirs:
        if d and os.path.isdir(d):
            found += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".mtx.gz"))
    return found


SHARED = _shared_real_matrices()


def without_row_limits(fmt):
    """max_fill=inf and max_skew=inf where `fmt` declares them, so that the ELL family runs the
    long rows of the test matrices instead of refusing them (as in test_products.py)."""
    names = {p[0] for p in spmat.format_info(fmt)["params"]}
    return {k: "inf" for k in ("max_fill", "max_skew") if k in names}


def _build_or_skip(S, fmt, **options):
    try:
        return spmat.Matrix(S, format=fmt, device="cuda", **options)
    except (spmat.UnsupportedError, spmat.IndexOverflowError) as e:
        # Formats with structural limits (padding, index widths) refuse some matrices by
        # design, with a message naming the limit.
        pytest.skip(f"{fmt} refuses this matrix: {e}")


def _check_products(A, S, seed=1):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1, 1, S.shape[1]), rng.uniform(-1, 1, S.shape[0])
    checked = 0
    if A.supports("spmv"):
        assert rel_err(A @ x, S @ x) <= TOL
        checked += 1
    if A.supports("spmv_t"):
        assert rel_err(A.T @ y, S.T @ y) <= TOL
        checked += 1
    return checked


# --- every GPU format against scipy --------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("fmt", GPU_FORMATS)
def test_gpu_formats_agree_with_scipy(fmt, name):
    # numpy operands: copied to the device and the result back, per call.
    S = MATRICES[name]
    A = _build_or_skip(S, fmt, **without_row_limits(fmt))
    assert A.device == "cuda"
    _check_products(A, S)
    if A.supports("spmm"):
        X = np.random.default_rng(2).uniform(-1, 1, (S.shape[1], 4))
        assert rel_err(A @ X, S @ X) <= TOL


@pytest.mark.skipif(not SHARED, reason="no shared real matrices (*.mtx.gz in $SPMAT_MATRIX_DIR, "
                    "else data/ or data/real/): copy G3_circuit.mtx.gz there to check them")
@pytest.mark.parametrize("path", SHARED, ids=[os.path.basename(p) for p in SHARED])
@pytest.mark.parametrize("fmt", GPU_FORMATS)
def test_gpu_formats_on_shared_real_matrices(fmt, path):
    S = _SHARED_CACHE.get(path)
    if S is None:
        S = _SHARED_CACHE.setdefault(path, spmat.mmread(path))
    # Row limits lifted: the ELL family refuses the skewed ones by default (tested elsewhere),
    # and here every format must agree with scipy on every matrix.
    A = _build_or_skip(S, fmt, **without_row_limits(fmt))
    _check_products(A, S)


_SHARED_CACHE = {}


def test_device_vector_fast_path_matches_and_refuses_like_the_general_path():
    # CuPy / torch vectors take a shorter route to the kernels (raw addresses after checks in
    # Python); the results and the refusals must be those of the general route.
    cupy = _cupy()
    S = MATRICES["nnc1374"]
    A = spmat.Matrix(S, device="cuda")
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, S.shape[1])
    y = rng.uniform(-1, 1, S.shape[0])
    dx, dy = cupy.asarray(x), cupy.asarray(y)
    out = cupy.asarray(y)
    A.spmv(dx, out=out, alpha=0.5, beta=-2.0)
    assert rel_err(cupy.asnumpy(out), 0.5 * (S @ x) - 2 * y) <= TOL
    assert rel_err(cupy.asnumpy(A.T @ dy), S.T @ y) <= TOL
    assert rel_err(cupy.asnumpy(A.spmv(dy, transpose=True)), S.T @ y) <= TOL
    with pytest.raises(ValueError, match="overlap"):
        A.spmv(dx, out=dx[: S.shape[0]])
    with pytest.raises(ValueError, match="C-contiguous"):
        A @ cupy.asarray(np.repeat(x, 2))[::2]
    with pytest.raises(TypeError, match="dtype"):
        A @ dx.astype(cupy.float32)
    with pytest.raises(ValueError, match="beta"):
        A.spmv(dx, beta=1.0)
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        tx = torch.as_tensor(x, device="cuda")
        assert rel_err((A @ tx).cpu().numpy(), S @ x) <= TOL
        tout = torch.as_tensor(y, device="cuda")
        A.spmv(tx, out=tout, alpha=2.0, beta=1.0)
        assert rel_err(tout.cpu().numpy(), 2 * (S @ x) + y) <= TOL
        with pytest.raises(ValueError, match="requires grad"):
            A @ tx.clone().requires_grad_(True)


def test_cupy_vectors_in_place():
    cupy = _cupy()
    S = MATRICES["nnc1374"]
    A = spmat.Matrix(S, device="cuda")
    x = np.random.default_rng(2).uniform(-1, 1, S.shape[1])
    y = A @ cupy.asarray(x)
    assert isinstance(y, cupy.ndarray)
    assert rel_err(cupy.asnumpy(y), S @ x) <= TOL
    out = cupy.ones(S.shape[0])
    A.spmv(cupy.asarray(x), out=out, alpha=2.0, beta=1.0)
    assert rel_err(cupy.asnumpy(out), 2 * (S @ x) + 1) <= TOL
    X = np.random.default_rng(3).uniform(-1, 1, (S.shape[1], 3))
    assert rel_err(cupy.asnumpy(A @ cupy.asarray(X)), S @ X) <= TOL
    assert rel_err(cupy.asnumpy(A.T @ cupy.asarray(X)), S.T @ X) <= TOL


def test_torch_vectors_in_place():
    torch = _torch()
    S = MATRICES["nnc1374"]
    A = spmat.Matrix(S, device="cuda")
    x = np.random.default_rng(3).uniform(-1, 1, S.shape[1])
    y = A @ torch.from_numpy(x).cuda()
    assert y.is_cuda
    assert rel_err(y.cpu().numpy(), S @ x) <= TOL
    X = np.random.default_rng(4).uniform(-1, 1, (S.shape[1], 3))
    Y = A.T @ torch.from_numpy(X).cuda()  # column by column (no transposed SpMM)
    assert rel_err(Y.cpu().numpy(), S.T @ X) <= TOL


# --- sparse matrices from CuPy and PyTorch -------------------------------------------------------
def _messy(S):
    """S's entries as shuffled COO triplets, every third one split into two halves (a
    duplicate pair summing exactly to the original value)."""
    coo = sp.coo_array(S)
    dup = np.arange(0, coo.nnz, 3)
    data = coo.data.copy()
    data[dup] /= 2
    rows = np.concatenate([coo.row, coo.row[dup]])
    cols = np.concatenate([coo.col, coo.col[dup]])
    data = np.concatenate([data, data[dup]])
    p = np.random.default_rng(5).permutation(len(data))
    return rows[p], cols[p], data[p]


@pytest.mark.parametrize("fmt", ["auto", "csr", "coo", "sell"])
@pytest.mark.parametrize("kind", ["csr", "csr_unsorted", "csc", "coo"])
def test_cupyx_input(kind, fmt):
    cupy = _cupy()
    import cupyx.scipy.sparse as csp
    S = MATRICES["1138_bus"]
    if kind == "csr":
        a = csp.csr_matrix(sp.csr_matrix(S))
    elif kind == "csc":
        a = csp.csc_matrix(sp.csc_matrix(S))
    elif kind == "coo":
        r, c, v = _messy(S)
        a = csp.coo_matrix((cupy.asarray(v), (cupy.asarray(r), cupy.asarray(c))),
                           shape=S.shape)
    else:
        a = _unsorted_cupy_csr(cupy, csp, S)
    def arrays(m):
        return [cupy.asnumpy(v) for v in ((m.data, m.row, m.col) if m.format == "coo"
                                          else (m.data, m.indices, m.indptr))]
    saved = arrays(a)
    A = spmat.Matrix(a, format=fmt)
    assert A.device == "cuda" and A.shape == S.shape and A.nnz == S.nnz
    # The caller's matrix is left as it was.
    assert all(np.array_equal(u, v) for u, v in zip(saved, arrays(a)))
    del a
    gc.collect()
    _check_products(A, S)


def _unsorted_cupy_csr(cupy, csp, S):
    """S as a cupyx csr_matrix whose columns are reversed within each row (valid, unsorted)."""
    S = sp.csr_array(S)
    indices, data = S.indices.copy(), S.data.copy()
    for i in range(S.shape[0]):
        lo, hi = S.indptr[i], S.indptr[i + 1]
        indices[lo:hi], data[lo:hi] = indices[lo:hi][::-1], data[lo:hi][::-1]
    return csp.csr_matrix((cupy.asarray(data), cupy.asarray(indices), cupy.asarray(S.indptr)),
                          shape=S.shape)


def test_cupyx_csr_adopted_arrays_outlive_the_caller():
    # format csr reads the caller's arrays at every product: the matrix keeps them alive.
    cupy = _cupy()
    import cupyx.scipy.sparse as csp
    S = MATRICES["nnc1374"]
    a = csp.csr_matrix(S)
    A = spmat.Matrix(a, format="csr")
    del a
    gc.collect()
    junk = [cupy.full(S.nnz, 7.0) for _ in range(8)]  # would reuse freed memory
    _check_products(A, S)
    del junk


def test_cupyx_float32_and_dtype_request():
    cupy = _cupy()
    import cupyx.scipy.sparse as csp
    S = MATRICES["1138_bus"]
    A = spmat.Matrix(csp.csr_matrix(S.astype(np.float32)))
    assert A.dtype == np.float32
    x = np.random.default_rng(6).uniform(-1, 1, S.shape[1]).astype(np.float32)
    y = cupy.asnumpy(A @ cupy.asarray(x))
    assert rel_err(y, S.astype(np.float32) @ x) <= 1e-5
    B = spmat.Matrix(csp.csr_matrix(S), dtype=np.float32)
    assert B.dtype == np.float32


@pytest.mark.parametrize("fmt", ["auto", "csr", "coo", "csc"])
@pytest.mark.parametrize("kind", ["csr64", "csr32", "csr_unsorted", "coo"])
def test_torch_sparse_input(kind, fmt):
    torch = _torch()
    S = sp.csr_array(MATRICES["1138_bus"])
    if kind in ("csr64", "csr32"):
        it = torch.int64 if kind == "csr64" else torch.int32
        t = torch.sparse_csr_tensor(torch.from_numpy(S.indptr).to(it),
                                    torch.from_numpy(S.indices).to(it),
                                    torch.from_numpy(S.data), size=S.shape, device="cuda")
    elif kind == "csr_unsorted":
        u = _unsorted_scipy(S)
        t = torch.sparse_csr_tensor(torch.from_numpy(u.indptr).long(),
                                    torch.from_numpy(u.indices).long(),
                                    torch.from_numpy(u.data), size=S.shape, device="cuda")
    else:
        r, c, v = _messy(S)
        t = torch.sparse_coo_tensor(torch.from_numpy(np.stack([r, c])).long(),
                                    torch.from_numpy(v), size=S.shape, device="cuda")
    A = spmat.Matrix(t, format=fmt)
    assert A.device == "cuda" and A.nnz == S.nnz
    del t
    gc.collect()
    _check_products(A, S)


def _unsorted_scipy(S):
    indices, data = S.indices.copy(), S.data.copy()
    for i in range(S.shape[0]):
        lo, hi = S.indptr[i], S.indptr[i + 1]
        indices[lo:hi], data[lo:hi] = indices[lo:hi][::-1], data[lo:hi][::-1]
    u = sp.csr_array((data, indices, S.indptr.copy()), shape=S.shape)
    u.has_sorted_indices = False
    return u


def test_torch_requires_grad_and_float32():
    torch = _torch()
    S = sp.csr_array(MATRICES["nnc1374"])
    t = torch.sparse_csr_tensor(torch.from_numpy(S.indptr), torch.from_numpy(S.indices),
                                torch.from_numpy(S.data).float(), size=S.shape,
                                device="cuda", requires_grad=True)
    A = spmat.Matrix(t)
    assert A.dtype == np.float32


def test_gpu_input_to_cpu_matrix():
    cupy = _cupy()
    import cupyx.scipy.sparse as csp
    S = MATRICES["1138_bus"]
    A = spmat.Matrix(csp.csr_matrix(S), device="cpu")  # asked for: through host memory
    assert A.device == "cpu"
    _check_products(A, S)
    del cupy


# --- conversions back ----------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csr", "coo", "sell", "auto"])
def test_to_cupy_round_trip(fmt):
    cupy = _cupy()
    import cupyx.scipy.sparse as csp
    S = sp.csr_array(MATRICES["1138_bus"])
    A = spmat.Matrix(csp.csr_matrix(S), format=fmt)
    c = A.to_cupy()
    assert isinstance(c, csp.csr_matrix)
    back = c.get()
    assert (abs(back - S) > 0).nnz == 0 and back.nnz == S.nnz
    assert (abs(A.T.to_cupy().get() - S.T) > 0).nnz == 0
    B = spmat.Matrix(c, format=fmt)  # and in again
    assert (abs(B.to_scipy() - S) > 0).nnz == 0
    del cupy


@pytest.mark.parametrize("fmt", ["csr", "coo", "auto"])
def test_to_torch_round_trip(fmt):
    torch = _torch()
    S = sp.csr_array(MATRICES["1138_bus"])
    A = spmat.Matrix(S, format=fmt, device="cuda")
    t = A.to_torch()
    assert t.layout == torch.sparse_csr and t.is_cuda and tuple(t.shape) == S.shape
    assert np.array_equal(t.to_dense().cpu().numpy(), S.toarray())
    B = spmat.Matrix(t, format=fmt)
    assert (abs(B.to_scipy() - S) > 0).nnz == 0
    assert A.to_torch("cpu").device.type == "cpu"


def test_to_scipy_of_device_built_matrix():
    cupy = _cupy()
    import cupyx.scipy.sparse as csp
    S = sp.csr_array(MATRICES["bcsstk19"] if "bcsstk19" in MATRICES else MATRICES["1138_bus"])
    for fmt in ("csr", "coo", "csc", "ell", "sell", "hyb"):
        try:
            A = spmat.Matrix(csp.csr_matrix(S), format=fmt)
        except spmat.UnsupportedError:
            continue
        assert (abs(A.to_scipy() - S) > 0).nnz == 0, fmt
    del cupy


# --- streams -------------------------------------------------------------------------------------
def test_cupy_non_default_stream():
    # x is written, and y read, on a non-blocking stream of the caller's: spmat's kernels run
    # on that stream, between them.
    cupy = _cupy()
    S = MATRICES["nnc1374"]
    A = spmat.Matrix(S, device="cuda")
    x_host = np.random.default_rng(7).uniform(-1, 1, S.shape[1])
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        for _ in range(20):
            big = cupy.ones(1 << 24)
            big = cupy.sqrt(big * big)  # queue work ahead of x's copy
        x = cupy.asarray(x_host) * big[0]
        y = A @ x
        z = y * 1.0
        w = A.T @ z
    stream.synchronize()
    assert rel_err(cupy.asnumpy(z), S @ x_host) <= TOL
    assert rel_err(cupy.asnumpy(w), S.T @ (S @ x_host)) <= 1e-11


def test_one_matrix_on_two_streams_in_turn():
    # The matrix keeps scratch space (sell's, csr's long-row partial sums): a product on a
    # second stream waits for the first stream's product, so results stay right when the
    # caller alternates streams without synchronising.
    cupy = _cupy()
    S = MATRICES["nnc1374"]
    rng = np.random.default_rng(9)
    xs = [rng.uniform(-1, 1, S.shape[1]) for _ in range(6)]
    for fmt in ("csr", "coo", "auto"):
        A = spmat.Matrix(S, format=fmt, device="cuda")
        streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(2)]
        outs = []
        for i, x in enumerate(xs):
            with streams[i % 2]:
                outs.append(A @ cupy.asarray(x))
        for s_ in streams:
            s_.synchronize()
        for x, y in zip(xs, outs):
            assert rel_err(cupy.asnumpy(y), S @ x) <= TOL, fmt


def test_torch_non_default_stream():
    torch = _torch()
    S = MATRICES["nnc1374"]
    A = spmat.Matrix(S, device="cuda")
    x_host = np.random.default_rng(8).uniform(-1, 1, S.shape[1])
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        big = torch.ones(1 << 24, device="cuda", dtype=torch.float64)
        for _ in range(20):
            big = torch.sqrt(big * big)
        x = torch.from_numpy(x_host).cuda() * big[0]
        y = A @ x
        z = y * 1.0
    s.synchronize()
    assert rel_err(z.cpu().numpy(), S @ x_host) <= TOL


# --- solvers -------------------------------------------------------------------------------------
def test_cupyx_solver_on_spmat_operator():
    cupy = _cupy()
    import cupyx.scipy.sparse as csp
    from cupyx.scipy.sparse.linalg import cg, lsmr
    L = spmat.Matrix("gen:lap2d:40", device="cuda")
    Ls = csp.csr_matrix(L.to_scipy())
    b = cupy.ones(L.shape[0])
    op = spmat.aslinearoperator(L)
    # 20 iterations: far from CG's stopping test on this matrix, so both run all of them.
    x1, _ = cg(op, b, maxiter=20)
    x2, _ = cg(Ls, b, maxiter=20)
    assert float(cupy.linalg.norm(x1 - x2) / cupy.linalg.norm(x2)) <= 1e-8
    r1 = lsmr(op, b, atol=0, btol=0, maxiter=30)
    r2 = lsmr(Ls, b, atol=0, btol=0, maxiter=30)
    assert r1[2] == r2[2]
    assert float(cupy.linalg.norm(r1[0] - r2[0]) / cupy.linalg.norm(r2[0])) <= 1e-8


# --- errors --------------------------------------------------------------------------------------
def test_vector_errors_cupy():
    cupy = _cupy()
    S = MATRICES["nnc1374"]
    A = spmat.Matrix(S, device="cuda")
    n = S.shape[1]
    with pytest.raises(TypeError, match="dtype float32 but the matrix is float64"):
        A @ cupy.ones(n, dtype=cupy.float32)
    with pytest.raises(ValueError, match="first dimension must be"):
        A @ cupy.ones(n + 1)
    with pytest.raises(ValueError, match="not C-contiguous"):
        A @ cupy.ones((n, 2))[:, 0]
    with pytest.raises(ValueError, match="not C-contiguous"):
        A @ cupy.asfortranarray(cupy.ones((n, 3)))
    with pytest.raises(ValueError, match="1-D .* or 2-D"):
        A @ cupy.ones((n, 2, 2))
    with pytest.raises(ValueError, match="overlaps"):
        x = cupy.ones(2 * n)
        A.spmv(x[:n], out=x[n - 5:2 * n - 5])
    C = spmat.Matrix(S)  # CPU matrix, GPU vector
    with pytest.raises(ValueError, match="matrix is on the CPU"):
        C @ cupy.ones(n)


def test_vector_errors_torch():
    torch = _torch()
    S = MATRICES["nnc1374"]
    A = spmat.Matrix(S, device="cuda")
    n = S.shape[1]
    with pytest.raises(TypeError, match=r"dtype float32 .* x.to\(torch.float64\)"):
        A @ torch.ones(n, device="cuda")
    with pytest.raises(ValueError, match="requires grad"):
        A @ torch.ones(n, device="cuda", dtype=torch.float64, requires_grad=True)
    with pytest.raises(TypeError, match="sparse torch tensor"):
        A @ torch.ones(n, device="cuda", dtype=torch.float64).to_sparse()
    with pytest.raises(ValueError, match="not C-contiguous"):
        A @ torch.ones((2, n), device="cuda", dtype=torch.float64).T
    C = spmat.Matrix(S)
    with pytest.raises(ValueError, match="matrix is on the CPU"):
        C @ torch.ones(n, device="cuda", dtype=torch.float64)


def test_sparse_input_errors():
    torch = _torch()
    S = sp.csr_array(MATRICES["nnc1374"])
    crow, col = torch.from_numpy(S.indptr).long(), torch.from_numpy(S.indices).long()
    val = torch.from_numpy(S.data)
    # A CPU tensor takes the host path (and stays on the CPU unless asked).
    cpu_t = torch.sparse_csr_tensor(crow, col, val, size=S.shape)
    assert spmat.Matrix(cpu_t).device == "cpu"
    _check_products(spmat.Matrix(cpu_t, device="cuda"), S)
    bad = col.clone()
    bad[-1] = S.shape[1] + 3  # a column out of range: the device validation names it
    with pytest.raises(spmat.InvalidMatrixError):
        spmat.Matrix(torch.sparse_csr_tensor(crow, bad, val, size=S.shape, device="cuda"),
                     format="csr")
    t3 = torch.zeros((2, 3, 4), device="cuda").to_sparse()
    with pytest.raises(ValueError, match="2-D sparse tensor"):
        spmat.Matrix(t3)
    with pytest.raises(TypeError, match="sparse matrix"):
        spmat.Matrix(torch.ones((3, 3), device="cuda"))


def test_tune_on_gpu_times_candidates_then_plans_from_the_cache():
    cupy = _cupy()
    a = MATRICES["nnc1374"]
    x = np.random.default_rng(7).uniform(-1, 1, a.shape[1])
    first = spmat.Matrix(a, format="tune", device="cuda")
    assert first.plan.level == "tune"
    assert rel_err(cupy.asnumpy(first @ cupy.asarray(x)), a @ x) <= TOL
    second = spmat.Matrix(a, format="tune", device="cuda")
    assert second.plan.from_cache
    assert second.plan.choices == first.plan.choices
