#!/usr/bin/env python3
"""bench/tiled_model_regen.py — recompute the model's predictions for measured tiled cases with
the CURRENT model (spmat model runs on the CPU), into a new folder, without touching the
committed ones.

For every DIR/model/*.json (written by an earlier `spmat model`, whose chosen_options say which
row-wise configuration the measured run used), runs
    spmat model <matrix> --k K --precision P --layout L --device h100 --as-run <chosen_options>
        --json OUT/<same name>
so the new JSON holds the new model's own decision AND its prediction of the configuration that
was measured (key as_run; bench/tiled_model_eval.py --model-dir OUT compares against that).

usage: python3 bench/tiled_model_regen.py DIR OUT [--spmat build/cpu/spmat] [--jobs 1]
Matrices named gen:... are generated; others are looked up as MATRIX_DIR/<name>.mtx.gz
(--matrix-dir, default $SPMAT_MATRIX_DIR, else data).
"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import subprocess
import sys


def job(spmat, path, out, matrix_dir):
    with open(path) as f:
        m = json.load(f)
    name = m["matrix"]["name"]
    spec = name if name.startswith("gen:") else os.path.join(matrix_dir, name + ".mtx.gz")
    dst = os.path.join(out, os.path.basename(path))
    cmd = [spmat, "model", spec, "--k", str(m["k"]), "--precision", m["precision"], "--index", m.get("index", "int32"),
           "--layout", m["layout"], "--device", "h100", "--l2-mib", str(m["device"]["l2_bytes"] / 1048576.0),
           "--sms", str(m["device"]["sm_count"]), "--as-run", m["chosen_options"], "--json", dst]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return "FAILED %s: %s" % (" ".join(cmd), r.stderr.strip())
    return "wrote %s" % dst


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("out")
    ap.add_argument("--spmat", default="build/cpu/spmat")
    ap.add_argument("--matrix-dir", default=os.environ.get("SPMAT_MATRIX_DIR") or "data")
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    paths = sorted(glob.glob(os.path.join(a.dir, "model", "*.json")))
    bad = 0
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        for msg in ex.map(lambda p: job(a.spmat, p, a.out, a.matrix_dir), paths):
            print(msg, file=sys.stderr)
            bad += msg.startswith("FAILED")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
