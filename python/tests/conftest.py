# SPDX-License-Identifier: MIT
"""Shared fixtures: the repository's bundled real matrices and a few generated ones."""
import os
import pathlib
import shutil
import tempfile

import numpy as np
import scipy.io
import scipy.sparse as sp

REPO = pathlib.Path(__file__).resolve().parents[2]
BUNDLED = sorted((REPO / "bench" / "matrices").glob("*.mtx.gz"))
MTX_DATA = sorted((REPO / "tests" / "data" / "mtx").glob("*.mtx*"))


def pytest_configure(config):
    # Format "tune" caches its decisions on disk; keep that out of the user's home.
    config._spmat_cache_dir = tempfile.mkdtemp(prefix="spmat-plan-cache-")
    os.environ["SPMAT_CACHE_DIR"] = config._spmat_cache_dir


def pytest_unconfigure(config):
    shutil.rmtree(getattr(config, "_spmat_cache_dir", ""), ignore_errors=True)


def _generated():
    rng = np.random.default_rng(7)
    rect = sp.random_array((60, 90), density=0.08, format="csr", rng=rng)
    tall = sp.random_array((120, 30), density=0.1, format="coo", rng=rng)
    # Empty rows and columns, one long row: the shapes formats get wrong first.
    skew = sp.lil_array((80, 80))
    skew[3, :] = rng.standard_normal(80)
    skew[10, 5] = 2.0
    skew[79, 79] = -1.0
    return {"random_60x90": rect.tocsr(), "random_120x30": tall.tocsr(),
            "one_long_row": skew.tocsr()}


def load_matrices():
    """name -> scipy csr_array (float64): the bundled real matrices and generated ones."""
    out = {p.name.removesuffix(".mtx.gz"): sp.csr_array(scipy.io.mmread(str(p)), dtype=np.float64)
           for p in BUNDLED}
    out.update(_generated())
    return out


MATRICES = load_matrices()
