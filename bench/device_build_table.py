#!/usr/bin/env python3
"""Device-build times against one SpMV, from `spmat bench --build-from device` JSON.

    python3 bench/device_build_table.py RUN.json [--baseline OTHER.json --label-baseline TEXT]
        [--repeat AGAIN.json ...] [--summary OUT.json] [--markdown]

For every (matrix, format) of RUN.json: the median device build (`device_build_ms`), the first
build, the SpMV of the built format in the same run, their ratio, `update_values` over SpMV,
and the build from the host CSR (`build_ms`, with its upload). The `cusparse-csr` rows give
cuSPARSE's SpMV preparation (`prepare_ms`: buffer size and preprocess) over its own SpMV.
--baseline adds the same build times from another run of the same matrices and formats (the
same binary with a setting changed, say) as `baseline_device_build_ms`. --repeat adds the ratios
of later runs of the same binary (some of the formats, each ratio against that run's own SpMV)
and, per row, the median ratio over all the runs. --summary writes the rows and a per-format
digest as JSON; --markdown prints the table of docs/device-input.md.
"""
import argparse
import json
import math
import statistics
import sys

VENDOR = "cusparse-csr"


def short(name):
    return name[4:] if name.startswith("gen:") else name


def rows_of(run, baseline=None):
    base = {}
    if baseline:
        for r in baseline["results"]:
            base[(r["matrix"]["name"], r["format"])] = r.get("device_build_ms")
    vendor = {r["matrix"]["name"]: r for r in run["results"] if r["format"] == VENDOR}
    out = []
    for r in run["results"]:
        if r["format"] == VENDOR:
            continue
        m = r["matrix"]["name"]
        spmv, build = r.get("time_ms"), r.get("device_build_ms")
        upd = r.get("update_values_ms")
        v = vendor.get(m, {})
        row = {
            "matrix": m,
            "nnz": r["matrix"].get("nnz"),
            "format": r["format"],
            "spmv_ms": spmv,
            "device_build_ms": build,
            "device_build_first_ms": r.get("device_build_first_ms"),
            "build_over_spmv": build / spmv if build and spmv else None,
            "update_values_ms": upd,
            "update_over_spmv": upd / spmv if upd and spmv else None,
            "host_build_and_upload_ms": r.get("build_ms") if r.get("completed") else None,
            "cusparse_spmv_preprocess_ms": v.get("prepare_ms"),
            "cusparse_spmv_ms": v.get("time_ms"),
        }
        if not r.get("completed"):
            row["refused"] = r.get("error") or r.get("device_build_error")
        if baseline:
            row["baseline_device_build_ms"] = base.get((m, r["format"]))
        out.append(row)
    return out


def add_repeats(rows, repeats):
    """Each row's build/SpMV ratio in the repeat runs and the median over all the runs."""
    for rep in repeats:
        ratio = {(x["matrix"], x["format"]): x["build_over_spmv"] for x in rows_of(rep)}
        for r in rows:
            if r["build_over_spmv"] is None or ratio.get((r["matrix"], r["format"])) is None:
                continue
            r.setdefault("repeat_build_over_spmv", []).append(ratio[(r["matrix"], r["format"])])
    for r in rows:
        if r.get("repeat_build_over_spmv"):
            r["median_build_over_spmv"] = statistics.median([r["build_over_spmv"]] + r["repeat_build_over_spmv"])


def digest(rows):
    per = {}
    for r in rows:
        f = per.setdefault(r["format"], {"matrices": 0, "max_build_over_spmv": None, "within_20x": 0,
                                         "max_update_over_spmv": None})
        if r["build_over_spmv"] is None:
            continue
        f["matrices"] += 1
        f["within_20x"] += r["build_over_spmv"] <= 20
        f["max_build_over_spmv"] = max(f["max_build_over_spmv"] or 0, r["build_over_spmv"])
        if r["update_over_spmv"] is not None:
            f["max_update_over_spmv"] = max(f["max_update_over_spmv"] or 0, r["update_over_spmv"])
        if r.get("median_build_over_spmv") is not None:
            f["max_median_build_over_spmv"] = max(f.get("max_median_build_over_spmv") or 0,
                                                  r["median_build_over_spmv"])
            f["runs"] = 1 + len(r["repeat_build_over_spmv"])
    return per


def fmt(x, digits=2):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def markdown(rows):
    print("| matrix (nnz) | format | device build ms | × SpMV (repeats) | first build ms | host build + upload ms | update_values × SpMV |")
    print("|---|---|---:|---:|---:|---:|---:|")
    last = None
    vendor = {}
    for r in rows:
        m = r["matrix"]
        if m != last:
            if last is not None and vendor.get(last):
                print(vendor[last])
            head = f"{short(m)} ({r['nnz'] / 1e6:.1f} M)"
            last = m
        else:
            head = ""
        if r.get("refused"):
            print(f"| {head} | {r['format']} | refused (row limits) | | | | |")
        else:
            upd = fmt(r["update_over_spmv"], 1) if r["update_over_spmv"] is not None else "—"
            host = r["host_build_and_upload_ms"]
            again = " / ".join(fmt(x, 1) for x in r.get("repeat_build_over_spmv", []))
            ratio = fmt(r["build_over_spmv"], 1) + (f" ({again})" if again else "")
            print(f"| {head} | {r['format']} | {fmt(r['device_build_ms'])} | {ratio} | "
                  f"{fmt(r['device_build_first_ms'])} | {fmt(host, 0)} | {upd} |")
        p, s = r["cusparse_spmv_preprocess_ms"], r["cusparse_spmv_ms"]
        if p and s:
            vendor[m] = f"|  | cuSPARSE SpMV preprocess | {fmt(p)} | {fmt(p / s, 1)} | | | |"
    if last is not None and vendor.get(last):
        print(vendor[last])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--baseline")
    ap.add_argument("--label-baseline", default="")
    ap.add_argument("--repeat", action="append", default=[])
    ap.add_argument("--summary")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    run = json.load(open(a.run))
    baseline = json.load(open(a.baseline)) if a.baseline else None
    rows = rows_of(run, baseline)
    add_repeats(rows, [json.load(open(f)) for f in a.repeat])
    if a.summary:
        out = {"device": run["device"]["name"] if isinstance(run["device"], dict) else run["device"],
               "commit": run.get("commit"), "date": run.get("date"),
               "method": "device_build_ms: the median of up to 9 builds from the CSR already in device memory "
                         "after a first one (device_build_first_ms), each ended by a device synchronize, wall "
                         "clock; spmv_ms: median of 10 CUDA-event samples; update_values_ms: median with device "
                         "values after one untimed call; cusparse_spmv_preprocess_ms: cusparse-csr's prepare "
                         "(buffer size + cusparseSpMV_preprocess) in the same run.",
               "per_format": digest(rows), "rows": rows}
        if baseline:
            out["baseline"] = {"commit": baseline.get("commit"), "what": a.label_baseline}
        if a.repeat:
            out["repeats"] = [{"file": f.split("/")[-1], "commit": json.load(open(f)).get("commit")} for f in a.repeat]
        json.dump(out, open(a.summary, "w"), indent=1)
    if a.markdown:
        markdown(rows)
    if not a.summary and not a.markdown:
        json.dump(digest(rows), sys.stdout, indent=1)


if __name__ == "__main__":
    main()
