#!/usr/bin/env python3
# bench/format_tables.py — writes the "## Measured results" section of a format page from bench JSON.
# SPDX-License-Identifier: MIT
"""usage: python3 bench/format_tables.py PAGE.md FORMAT[,FORMAT...] results.json [more.json ...]
              [--experiment NAME]
       python3 bench/format_tables.py --print FORMAT[,FORMAT...] results.json [more.json ...]

Replaces everything from the page's "## Measured results" heading to the next "## " heading (or
the end) with ONE table: per format, matrix and operation, the median ms, % of copy bandwidth
(CSR-floor bytes) and speedup against the fastest cuSPARSE format, one column group per
precision; refusals and errors are shown in the ms cell. Every number comes from the JSON files
given, so the page never carries a number that is not in a committed result file. Where the same
case was measured in several files, the run with the latest date is shown. --experiment names
the `bench/reproduce` experiment that writes the files. --print writes the table to stdout.
"""
import json
import os
import sys


def op_label(r):
    if r["op"] == "spmm":
        return "spmm (k=%s, %s)" % (r.get("k"), r.get("layout"))
    return r["op"]


def table(formats, files, experiment=None, page=None):
    docs = []
    for path in files:
        doc = json.load(open(path))
        docs.append((doc.get("date", ""), path, doc))
    cases, order = {}, []  # (format, matrix, op) -> {precision: (date, result)}
    for date, path, doc in docs:
        for r in doc["results"]:
            if r["format"] not in formats:
                continue
            key = (r["format"], r["matrix"]["name"], op_label(r))
            if key not in cases:
                cases[key] = {}
                order.append(key)
            old = cases[key].get(r["precision"])
            if old is None or date >= old[0]:
                cases[key][r["precision"]] = (date, r)
    precs = sorted({p for c in cases.values() for p in c}, key=lambda p: p != "fp64")
    used = sorted({d for c in cases.values() for d, _ in c.values()})
    src = [(path, doc) for date, path, doc in docs if date in used]
    devices = sorted({doc["device"]["name"] for _, doc in src})
    reps = sorted({r["repetitions"] for c in cases.values() for _, r in c.values()
                   if r.get("repetitions")})
    lines = ["## Measured results", ""]
    lines.append("%s, %s; median of %s CUDA-event runs after warm-up. *ms* = median time; *%% bw* = "
                 "the bytes of 32-bit CSR per second against the device's copy bandwidth measured "
                 "in the same run; *×* = the fastest cuSPARSE format's time / this time."
                 % (", ".join(devices), ", ".join(sorted({d[:10] for d in used})),
                    "/".join(str(x) for x in reps) or "?"))
    if experiment:
        lines.append("Reproduce on a GPU machine (real matrices in `data/` or `$SPMAT_MATRIX_DIR`): "
                     "`bench/reproduce %s`, then `python3 bench/format_tables.py %s %s out/%s/*.json`."
                     % (experiment, page or "PAGE.md", ",".join(formats), experiment))
    lines.append("Data: " + ", ".join("`%s` (commit %s)" % (os.path.relpath(p), str(d["commit"]).split()[0])
                                      for p, d in src) + ".")
    lines.append("")
    head = ["format", "matrix", "op"]
    for p in precs:
        head += ["%s ms" % p, "% bw", "×"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---|---|---|" + "---:|---:|---:|" * len(precs))
    for key in order:
        cells = list(key)
        for p in precs:
            if p not in cases[key]:
                cells += ["", "", ""]
                continue
            r = cases[key][p][1]
            if not r["completed"]:
                err = r.get("error", "").replace("|", "/")
                cells += ["refused: " + (err[:48] + "…" if len(err) > 48 else err), "", ""]
                continue
            sp = r.get("speedup_vs_cusparse")
            cells += ["%.4f" % r["time_ms"], "%.0f" % (100 * (r.get("bw_fraction") or 0)),
                      ("%.2f" % sp) if sp else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def main(argv):
    experiment = None
    if "--experiment" in argv:
        i = argv.index("--experiment")
        experiment = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) >= 3 and argv[0] == "--print":
        print("\n".join(table(argv[1].split(","), argv[2:], experiment)))
        return 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    page, formats, files = argv[0], argv[1].split(","), argv[2:]
    lines = table(formats, files, experiment, page)
    text = open(page).read()
    start = text.find("## Measured results")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines)
    else:
        nxt = text.find("\n## ", start + 5)
        text = text[:start] + "\n".join(lines) + ("\n" + text[nxt + 1:] if nxt >= 0 else "")
    open(page, "w").write(text.rstrip("\n") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
