#!/usr/bin/env python3
# bench/format_tables.py — writes the "## Measured results" section of format pages from bench JSON.
# SPDX-License-Identifier: MIT
"""usage: python3 bench/format_tables.py PAGE.md FORMAT[,FORMAT...] results.json [more.json ...]

Replaces everything from the page's "## Measured results" heading to the next "## " heading (or
the end) with a table per format: matrix, op, precision, median ms, % of copy bandwidth (CSR-floor
bytes), speedup vs the fastest cuSPARSE format, and refusals/errors — taken from the JSON files, so
the page never carries a number that is not in a committed result file.
"""
import json
import os
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    page, formats, files = argv[0], argv[1].split(","), argv[2:]
    lines = ["## Measured results", ""]
    for path in files:
        doc = json.load(open(path))
        dev = doc["device"]["name"]
        lines.append("From `%s` (%s, %s, commit %s; median of %s runs after warm-up, CUDA events):"
                     % (os.path.relpath(path), dev, doc["date"][:10], doc["commit"],
                        doc["results"][0]["repetitions"] if doc["results"] else "?"))
        lines.append("")
        lines.append("| format | matrix | op | prec | ms | % bw | vs cuSPARSE |")
        lines.append("|---|---|---|---|---:|---:|---:|")
        for r in doc["results"]:
            if r["format"] not in formats:
                continue
            op = r["op"] + ("(k=%s,%s)" % (r.get("k"), r.get("layout")) if r["op"] == "spmm" else "")
            if not r["completed"]:
                lines.append("| %s | %s | %s | %s | %s | | |" % (r["format"], r["matrix"]["name"], op,
                             r["precision"], "refused: " + r.get("error", "")[:70].replace("|", "/")))
                continue
            sp = r.get("speedup_vs_cusparse")
            lines.append("| %s | %s | %s | %s | %.4f | %.0f | %s |" % (
                r["format"], r["matrix"]["name"], op, r["precision"], r["time_ms"],
                100 * (r.get("bw_fraction") or 0), ("%.2fx" % sp) if sp else "-"))
        lines.append("")
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
