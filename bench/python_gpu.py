#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python package on the GPU against CuPy and PyTorch, and its per-call overhead.

    python3 bench/python_gpu.py --out DIR [--mtx G3_circuit.mtx.gz] [--matrices SPEC ...]

Writes DIR/python_gpu.json (rewritten after each section, so a run cut short keeps what it
measured) and, when matplotlib is installed, DIR/python_gpu.png. Sections:

  spmv      A @ x: spmat (format "auto", built from a cupyx csr_matrix on the device) against
            cupyx.scipy.sparse.csr_matrix @ x and a torch sparse CSR tensor @ x, fp64 and fp32,
            on generated matrices (and --mtx). CUDA events around each call on the default
            stream after warm-up; median of --reps calls. Each result is checked against scipy.
  solver    cupyx's least-squares solvers with spmat.aslinearoperator(A) against cupyx's
            csr_matrix: time per iteration and the iterates' agreement. (cupyx's lsqr is a direct
            QR solve that takes only a csr_matrix, which the section records; its iterative
            solver, lsmr, uses A x and Aᵀ x every iteration.)
  overhead  A.spmv(x, out=y) and A @ x on a tiny matrix from Python against the same spmv loop
            run from C++ on the same matrix and arrays (Matrix.cpp_spmv_seconds), CPU and GPU:
            seconds per call over back-to-back calls (GPU: ending with a synchronize).
  mmread    spmat.mmread against scipy.io.mmread (and fast_matrix_market.mmread where that
            package is installed) on --mtx: wall time and a bit-identical comparison of the
            canonical CSR arrays.

A section whose requirements are missing (no CUDA build, no GPU, CuPy or PyTorch not installed,
no --mtx) records "skipped: <reason>" instead of failing.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
import traceback

import numpy as np
import scipy
import scipy.io
import scipy.sparse as sp

import spmat

DEFAULT_MATRICES = ["gen:lap2d:2000", "gen:rmat:21:16", "gen:banded:1000000:8"]


def _try_import(name):
    try:
        return __import__(name), None
    except Exception as e:  # ImportError, or a CUDA initialisation failure inside the package
        return None, f"{name} unavailable: {type(e).__name__}: {e}"


cupy, CUPY_MISSING = _try_import("cupy")
torch, TORCH_MISSING = _try_import("torch")
if torch is not None and not torch.cuda.is_available():
    torch, TORCH_MISSING = None, "torch sees no CUDA device"


def gpu_missing():
    if not spmat.cuda_available():
        return spmat.cuda_status()
    return None


def rel_err(y, ref):
    y = np.asarray(y, dtype=np.float64)
    return float(np.linalg.norm(y - ref) / max(np.linalg.norm(ref), 1e-300))


def to_host(y):
    if cupy is not None and isinstance(y, cupy.ndarray):
        return cupy.asnumpy(y)
    if torch is not None and isinstance(y, torch.Tensor):
        return y.detach().cpu().numpy()
    return np.asarray(y)


class EventTimer:
    """Per-call GPU time from a pair of CUDA events on the current (default) stream, through
    CuPy or, without it, PyTorch."""

    def __init__(self):
        if cupy is not None:
            self.new = lambda: cupy.cuda.Event()
            self.elapsed_ms = lambda a, b: cupy.cuda.get_elapsed_time(a, b)
            self.sync = lambda: cupy.cuda.Device().synchronize()
        else:
            self.new = lambda: torch.cuda.Event(enable_timing=True)
            self.elapsed_ms = lambda a, b: a.elapsed_time(b)
            self.sync = torch.cuda.synchronize

    def time(self, fn, reps, warmup=10, warmup_ms=25.0):
        # Warm-up: at least `warmup` calls and `warmup_ms` of wall time, so that clocks are up.
        self.sync()
        t0 = time.perf_counter()
        n = 0
        while n < warmup or (time.perf_counter() - t0) * 1e3 < warmup_ms:
            fn()
            n += 1
        self.sync()
        pairs = []
        for _ in range(reps):
            a, b = self.new(), self.new()
            a.record()
            fn()
            b.record()
            pairs.append((a, b))
        self.sync()
        ms = sorted(self.elapsed_ms(a, b) for a, b in pairs)
        return {"median_ms": statistics.median(ms), "min_ms": ms[0], "max_ms": ms[-1],
                "reps": reps}


class Report:
    def __init__(self, out_dir, args):
        self.path = os.path.join(out_dir, "python_gpu.json")
        self.data = {"tool": "bench/python_gpu.py", "args": vars(args),
                     "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     "environment": environment(), "sections": {}}

    def section(self, name, value):
        self.data["sections"][name] = value
        self.write()

    def write(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1, default=str)
        os.replace(tmp, self.path)


def environment():
    env = {"python": platform.python_version(), "numpy": np.__version__,
           "scipy": scipy.__version__, "spmat": spmat.__version__,
           "spmat_cuda": spmat.cuda_status(), "host": platform.node(),
           "cupy": getattr(cupy, "__version__", CUPY_MISSING),
           "torch": getattr(torch, "__version__", TORCH_MISSING)}
    if cupy is not None and spmat.cuda_available():
        try:
            props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
            env["device"] = props["name"].decode() if isinstance(props["name"], bytes) \
                else props["name"]
        except Exception as e:
            env["device"] = f"unknown ({e})"
    elif torch is not None:
        env["device"] = torch.cuda.get_device_name()
    return env


# --- (a) A @ x -----------------------------------------------------------------------------------
def host_matrix(spec):
    """A generator spec or a Matrix Market path as a scipy csr_array (float64), read once."""
    if spec.endswith((".mtx", ".mtx.gz")):
        return spmat.mmread(spec)
    return spmat.Matrix(spec, format="csr").to_scipy()


def baseline(row, key, lib, missing, measure):
    """row[key] = measure() (which may add keys of its own), or why it has no timing: the
    library is missing (lib None; `missing` says why) or measure raised."""
    if lib is None:
        row[key] = f"skipped: {missing}"
        return
    try:
        row[key] = measure()
    except Exception as e:
        row[key] = f"failed: {type(e).__name__}: {e}"


def bench_spmv(args, timer, report):
    results = []
    for spec in args.matrices + ([args.mtx] if args.mtx else []):
        t0 = time.perf_counter()
        S64 = host_matrix(spec)
        load_s = time.perf_counter() - t0
        for dtype in (np.float64, np.float32):
            S = S64.astype(dtype)
            rng = np.random.default_rng(1)
            x_host = rng.uniform(-1, 1, S.shape[1]).astype(dtype)
            ref = S64 @ x_host.astype(np.float64)
            row = {"matrix": os.path.basename(spec), "rows": S.shape[0], "cols": S.shape[1],
                   "nnz": int(S.nnz), "precision": "fp64" if dtype == np.float64 else "fp32",
                   "load_s": load_s}
            tol = 1e-10 if dtype == np.float64 else 1e-4
            # spmat, from a cupyx matrix on the device when CuPy is there (else from scipy).
            try:
                if cupy is not None:
                    import cupyx.scipy.sparse as csp
                    src = csp.csr_matrix(sp.csr_matrix(S))
                    x = cupy.asarray(x_host)
                else:
                    src, x = S, torch.from_numpy(x_host).cuda()
                t0 = time.perf_counter()
                A = spmat.Matrix(src, device="cuda")
                row["spmat_build_s"] = time.perf_counter() - t0
                row["spmat_plan"] = A.plan.choices if A.plan else None
                y = A @ x
                row["spmat_rel_err"] = rel_err(to_host(y), ref)
                row["spmat_correct"] = row["spmat_rel_err"] <= tol
                out = A @ x
                row["spmat"] = timer.time(lambda: A @ x, args.reps)
                row["spmat_out"] = timer.time(lambda: A.spmv(x, out=out), args.reps)
                del A, src, out
            except Exception as e:
                row["spmat"] = f"failed: {type(e).__name__}: {e}"
            # cupyx csr_matrix @ x
            def cupyx_spmv():
                import cupyx.scipy.sparse as csp
                C = csp.csr_matrix(sp.csr_matrix(S))
                x = cupy.asarray(x_host)
                row["cupyx_rel_err"] = rel_err(cupy.asnumpy(C @ x), ref)
                return timer.time(lambda: C @ x, args.reps)
            baseline(row, "cupyx", cupy, CUPY_MISSING, cupyx_spmv)
            # torch sparse CSR @ x
            def torch_spmv():
                T = torch.sparse_csr_tensor(
                    torch.from_numpy(S.indptr.astype(np.int64)),
                    torch.from_numpy(S.indices.astype(np.int64)),
                    torch.from_numpy(S.data), size=S.shape).cuda()
                xt = torch.from_numpy(x_host).cuda()
                row["torch_rel_err"] = rel_err((T @ xt).cpu().numpy(), ref)
                return timer.time(lambda: T @ xt, args.reps)
            baseline(row, "torch", torch, TORCH_MISSING, torch_spmv)
            for other in ("cupyx", "torch"):
                if isinstance(row.get("spmat"), dict) and isinstance(row.get(other), dict):
                    # > 1: spmat is faster.
                    row[f"speedup_vs_{other}"] = (row[other]["median_ms"]
                                                  / row["spmat"]["median_ms"])
            print(json.dumps({k: v for k, v in row.items() if k != "spmat_plan"}), flush=True)
            results.append(row)
            report.section("spmv", {"results": results, "partial": True})
            if cupy is not None:
                cupy.get_default_memory_pool().free_all_blocks()
            if torch is not None:
                torch.cuda.empty_cache()
    return results


# --- (b) least squares ---------------------------------------------------------------------------
def bench_solver(args):
    import cupyx.scipy.sparse as csp
    from cupyx.scipy.sparse.linalg import lsmr, lsqr
    S = host_matrix(args.solver_matrix)
    A = spmat.Matrix(csp.csr_matrix(sp.csr_matrix(S)), device="cuda")
    op = spmat.aslinearoperator(A)
    C = csp.csr_matrix(sp.csr_matrix(S))
    b = cupy.asarray(np.random.default_rng(2).uniform(-1, 1, S.shape[0]))
    res = {"matrix": args.solver_matrix, "rows": S.shape[0], "nnz": int(S.nnz),
           "precision": "fp64", "spmat_plan": A.plan.choices if A.plan else None}
    try:
        lsqr(op, b)
        res["lsqr_with_operator"] = "ran"
    except Exception as e:
        res["lsqr_with_operator"] = (f"refused: {type(e).__name__}: {e} (cupyx's lsqr is a "
                                     f"direct QR solve on a csr_matrix; lsmr is measured)")
    runs = []
    for iters in args.solver_iters:
        entry = {"maxiter": iters}
        xs = {}
        for name, M in (("spmat", op), ("cupyx", C)):
            lsmr(M, b, atol=0, btol=0, maxiter=3)  # warm-up (kernels, plans, pools)
            cupy.cuda.Device().synchronize()
            t0 = time.perf_counter()
            out = lsmr(M, b, atol=0, btol=0, maxiter=iters)
            cupy.cuda.Device().synchronize()
            dt = time.perf_counter() - t0
            xs[name] = out[0]
            entry[name] = {"seconds": dt, "iterations": int(out[2]), "istop": int(out[1]),
                           "ms_per_iteration": dt * 1e3 / max(int(out[2]), 1),
                           "normr": float(out[3])}
        diff = float(cupy.linalg.norm(xs["spmat"] - xs["cupyx"])
                     / max(float(cupy.linalg.norm(xs["cupyx"])), 1e-300))
        entry["iterate_rel_diff"] = diff
        entry["iterates_agree"] = diff <= args.solver_tol
        entry["same_iterations"] = entry["spmat"]["iterations"] == entry["cupyx"]["iterations"]
        entry["speedup_vs_cupyx"] = (entry["cupyx"]["ms_per_iteration"]
                                     / entry["spmat"]["ms_per_iteration"])
        print(json.dumps(entry), flush=True)
        runs.append(entry)
    res["lsmr"] = runs
    res["tolerance"] = args.solver_tol
    return res


# --- (c) Python call overhead --------------------------------------------------------------------
def per_call(fn, calls, sync=None):
    fn()
    if sync:
        sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    if sync:
        sync()
    return (time.perf_counter() - t0) / calls


def overhead_case(A, x, y, calls, repeats, sync):
    cpp = [A._h.cpp_spmv_seconds(x, y, calls) for _ in range(repeats)]
    py_out = [per_call(lambda: A.spmv(x, out=y), calls, sync) for _ in range(repeats)]
    py_mat = [per_call(lambda: A @ x, calls, sync) for _ in range(repeats)]
    c, po, pm = (statistics.median(v) * 1e6 for v in (cpp, py_out, py_mat))
    return {"cpp_us": c, "python_spmv_out_us": po, "python_matmul_us": pm,
            "overhead_spmv_out_us": po - c, "overhead_matmul_us": pm - c,
            "calls": calls, "repeats": repeats}


def bench_overhead(args):
    S = host_matrix(args.tiny)
    rng = np.random.default_rng(3)
    res = {"matrix": args.tiny, "rows": S.shape[0], "nnz": int(S.nnz),
           "method": "seconds per call over back-to-back calls (median of repeats); C++: the "
                     "same Matrix::spmv loop on the same arrays; GPU runs end with a "
                     "synchronize", "cpu": {}, "cuda": {}}
    x = rng.uniform(-1, 1, S.shape[1])
    for fmt in ("csr", "auto"):
        A = spmat.Matrix(S, format=fmt)
        res["cpu"][fmt] = overhead_case(A, x, np.empty(S.shape[0]), args.calls, 7, None)
    missing = gpu_missing() or (None if cupy or torch else f"{CUPY_MISSING}; {TORCH_MISSING}")
    if missing:
        res["cuda"] = f"skipped: {missing}"
        return res
    for fmt in ("csr", "auto"):
        A = spmat.Matrix(S, format=fmt, device="cuda")
        if cupy is not None:
            xd, yd = cupy.asarray(x), cupy.empty(S.shape[0])
            sync = cupy.cuda.Device().synchronize
            lib = "cupy"
        else:
            xd = torch.from_numpy(x).cuda()
            yd = torch.empty(S.shape[0], dtype=torch.float64, device="cuda")
            sync = torch.cuda.synchronize
            lib = "torch"
        res["cuda"][fmt] = overhead_case(A, xd, yd, args.calls, 7, sync)
        res["cuda"][fmt]["arrays"] = lib
    return res


# --- (d) mmread ----------------------------------------------------------------------------------
def canonical(a):
    c = sp.csr_array(a)
    c.sum_duplicates()
    return c


def bench_mmread(args):
    path = args.mtx
    res = {"file": os.path.basename(path), "bytes": os.path.getsize(path)}
    readers = [("scipy", scipy.io.mmread), ("spmat", spmat.mmread)]
    fmm, why = _try_import("fast_matrix_market")  # optional: bench/requirements.txt
    if fmm is not None:
        readers.append(("fast_matrix_market", fmm.mmread))
        res["fast_matrix_market_version"] = getattr(fmm, "__version__", "")
    else:
        res["fast_matrix_market"] = "skipped: " + why
    times = {name: [] for name, _ in readers}
    got = {}
    for _ in range(args.mmread_runs):  # alternated, the first of each warms the file cache
        for name, read in readers:
            t0 = time.perf_counter()
            m = read(path)
            times[name].append(time.perf_counter() - t0)
            got[name] = m
            del m
    ref = canonical(got["scipy"])
    res["seconds"] = {k: min(v) for k, v in times.items()}
    res["all_seconds"] = times
    res["speedup_vs_scipy"] = res["seconds"]["scipy"] / res["seconds"]["spmat"]
    if "fast_matrix_market" in times:
        res["speedup_vs_fast_matrix_market"] = (res["seconds"]["fast_matrix_market"] /
                                                res["seconds"]["spmat"])
    res["nnz"] = int(ref.nnz)
    res["bit_identical"] = _same_csr(canonical(got["spmat"]), ref)
    if "fast_matrix_market" in got:
        res["fast_matrix_market_bit_identical_to_scipy"] = _same_csr(
            canonical(got["fast_matrix_market"]), ref)
    return res


def _same_csr(a, b):
    """Same shape, structure and values bit for bit (canonical CSR arrays)."""
    return bool(a.shape == b.shape and a.nnz == b.nnz
                and np.array_equal(a.indptr.astype(np.int64), b.indptr.astype(np.int64))
                and np.array_equal(a.indices.astype(np.int64), b.indices.astype(np.int64))
                and a.data.dtype == b.data.dtype
                and np.array_equal(a.data.view(np.uint64), b.data.view(np.uint64)))


def run_section(report, name, missing, fn):
    if missing:
        report.section(name, f"skipped: {missing}")
        print(f"{name}: skipped: {missing}", flush=True)
        return
    t0 = time.perf_counter()
    try:
        value = fn()
    except Exception as e:
        value = {"failed": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        print(value["traceback"], file=sys.stderr, flush=True)
    if isinstance(value, dict):
        value["section_seconds"] = time.perf_counter() - t0
    else:
        value = {"results": value, "section_seconds": time.perf_counter() - t0}
    report.section(name, value)
    print(f"{name}: done in {time.perf_counter() - t0:.1f} s", flush=True)


def plot(report, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "skipped: matplotlib not installed"
    sec = report.data["sections"].get("spmv")
    rows = sec.get("results") if isinstance(sec, dict) else None
    if not rows:
        return "skipped: no spmv results"
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, prec in zip(axes, ("fp64", "fp32")):
        sel = [r for r in rows if r["precision"] == prec]
        labels = [r["matrix"] for r in sel]
        for i, lib in enumerate(("spmat", "cupyx", "torch")):
            vals = [r[lib]["median_ms"] if isinstance(r.get(lib), dict) else 0 for r in sel]
            ax.bar(np.arange(len(sel)) + (i - 1) * 0.27, vals, 0.27, label=lib)
        ax.set_xticks(np.arange(len(sel)))
        ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("A @ x, median ms")
        ax.set_title(f"{prec} ({report.data['environment'].get('device', 'GPU')})")
        ax.legend()
    fig.tight_layout()
    path = os.path.join(out_dir, "python_gpu.png")
    fig.savefig(path, dpi=120)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="output folder (created)")
    p.add_argument("--mtx", help="a Matrix Market file (G3_circuit.mtx.gz): mmread section, "
                                 "and one more matrix for the spmv section")
    p.add_argument("--matrices", nargs="*", default=DEFAULT_MATRICES,
                   help="generator specs or files for the spmv section")
    p.add_argument("--reps", type=int, default=100, help="timed calls per spmv measurement")
    p.add_argument("--solver-matrix", default="gen:lap2d:1000")
    p.add_argument("--solver-iters", type=int, nargs="*", default=[10, 100, 300])
    p.add_argument("--solver-tol", type=float, default=1e-8,
                   help="largest relative difference of the iterates called agreement")
    p.add_argument("--tiny", default="gen:lap2d:10", help="the overhead section's matrix")
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--mmread-runs", type=int, default=2)
    p.add_argument("--sections", nargs="*", default=["spmv", "solver", "overhead", "mmread"])
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    report = Report(args.out, args)
    gpu = gpu_missing()
    any_lib = None if (cupy or torch) else f"{CUPY_MISSING}; {TORCH_MISSING}"
    # The quick sections first: a run cut short loses the longest one only.
    if "overhead" in args.sections:
        run_section(report, "overhead", None, lambda: bench_overhead(args))
    if "mmread" in args.sections:
        run_section(report, "mmread", None if args.mtx else "no --mtx file given",
                    lambda: bench_mmread(args))
    if "solver" in args.sections:
        run_section(report, "solver", gpu or (CUPY_MISSING if cupy is None else None),
                    lambda: bench_solver(args))
    if "spmv" in args.sections:
        run_section(report, "spmv", gpu or any_lib,
                    lambda: bench_spmv(args, EventTimer(), report))
    report.data["plot"] = plot(report, args.out)
    report.write()
    print(f"wrote {report.path}")


if __name__ == "__main__":
    main()
