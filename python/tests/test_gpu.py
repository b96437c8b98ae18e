# SPDX-License-Identifier: MIT
"""device='cuda': runs where spmat was built with CUDA and a GPU answers; skips otherwise
(CuPy and PyTorch tests also skip when those packages are not installed)."""
import numpy as np
import pytest

import spmat
from conftest import MATRICES

pytestmark = pytest.mark.skipif(not spmat.cuda_available(), reason=spmat.cuda_status())

TOL = 1e-12


def rel_err(y, ref):
    return np.linalg.norm(y - ref) / max(np.linalg.norm(ref), 1e-300)


@pytest.mark.parametrize("fmt", spmat.formats("cuda") if spmat.cuda_compiled() else [])
def test_numpy_vectors_with_gpu_matrix(fmt):
    # numpy operands are copied to the device and the result back, per call.
    S = MATRICES["1138_bus"]
    A = spmat.Matrix(S, format=fmt, device="cuda")
    assert A.device == "cuda"
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, S.shape[1]), rng.uniform(-1, 1, S.shape[0])
    if A.supports("spmv"):
        assert rel_err(A @ x, S @ x) <= TOL
    if A.supports("spmv_t"):
        assert rel_err(A.T @ y, S.T @ y) <= TOL
    if A.supports("spmm"):
        X = rng.uniform(-1, 1, (S.shape[1], 4))
        assert rel_err(A @ X, S @ X) <= TOL


def test_cupy_vectors_in_place():
    cupy = pytest.importorskip("cupy")
    S = MATRICES["nnc1374"]
    A = spmat.Matrix(S, device="cuda")
    x = np.random.default_rng(2).uniform(-1, 1, S.shape[1])
    y = A @ cupy.asarray(x)
    assert isinstance(y, cupy.ndarray)
    assert rel_err(cupy.asnumpy(y), S @ x) <= TOL


def test_torch_vectors_in_place():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    S = MATRICES["nnc1374"]
    A = spmat.Matrix(S, device="cuda")
    x = np.random.default_rng(3).uniform(-1, 1, S.shape[1])
    y = A @ torch.from_numpy(x).cuda()
    assert y.is_cuda
    assert rel_err(y.cpu().numpy(), S @ x) <= TOL
