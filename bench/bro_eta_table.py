#!/usr/bin/env python3
# bench/bro_eta_table.py — Markdown η tables (paper Tables 3, 4, 5 beside ours)
# from the JSON of `spmat compress` (schema spmat-compress/1).
# SPDX-License-Identifier: MIT
#
# usage: bro_eta_table.py bench/results/2026-11-22-cpu/bro-eta/paper_coding.json > table.md
# (written by `bench/reproduce bro-eta`)
# Paper figures are copied from Tang et al., SC'13, Tables 3 (BRO-ELL before BAR), 5 (after
# BAR) and 4 (BRO-HYB: % of nnz in BRO-ELL, η).
import json
import os
import sys

T3 = {"cage12": 78.0, "cant": 85.9, "consph": 85.3, "e40r5000": 92.5, "epb3": 83.2, "lhr71": 92.1,
      "mc2depi": 50.7, "pdb1HYS": 89.2, "qcd5_4": 87.7, "rim": 92.7, "rma10": 90.8,
      "shipsec1": 92.9, "stomach": 70.7, "torso3": 75.9, "venkat01": 90.2, "xenon2": 74.0}
T5 = {"cage12": 81.1, "cant": 92.7, "consph": 91.7, "e40r5000": 95.4, "epb3": 83.2, "lhr71": 95.7,
      "mc2depi": 50.7, "pdb1HYS": 90.8, "qcd5_4": 88.9, "rim": 96.0, "rma10": 94.9,
      "shipsec1": 94.8, "stomach": 82.3, "torso3": 83.6, "venkat01": 92.3, "xenon2": 87.3}
T4 = {"bcsstk32": (96.6, 60.4), "cop20k_A": (82.3, 46.7), "ct20stif": (90.7, 55.9),
      "gupta2": (50.0, 43.8), "hvdc2": (86.9, 45.5), "mac_econ_fwd500": (81.1, 51.6),
      "ohne2": (96.5, 49.5), "pwtk": (99.4, 78.7), "rail4284": (0.85, 45.2),
      "rajat30": (68.1, 34.5), "scircuit": (78.2, 36.6), "sme3Da": (83.6, 55.6),
      "twotone": (61.8, 48.8), "webbase-1M": (64.2, 13.4)}


def pct(v, key):
    if not v or key not in v or v[key] is None:
        return "—"
    return f"{100 * v[key]:.1f}"


def paper_rows(ms, table, part):
    """(m, part before BAR, part after BAR) for each matrix of ms that a paper table names."""
    for m in ms:
        if m["label"] in table:
            r = m[part]
            yield m, r.get("before_bar", {}), r.get("after_bar", {})


def main(path):
    doc = json.load(open(path))
    ms = [m for m in doc["matrices"] if "error" not in m]
    p = doc["params"]
    print(f"h = {p['h']}, sym_len = {p['sym_len']}, BRO-COO interval = {p['interval']}, "
          f"{p['index']} indices, BAR `{p['bar_algo']}` (window {p['bar_window']}); "
          "η in %; *+m* = metadata counted; *nnz* = against unpadded nnz·4 B.\n")
    print("**Set 1 — BRO-ELL (paper Tables 3 and 5).** O = ELLPACK rows·k·4 B.\n")
    print("| paper matrix | ours: matrix | rows | nnz | μ | σ | paper η T3 | ours η | +m | nnz | "
          "paper η T5 (BAR) | ours η BAR | +m | nnz | BAR |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m, b, a in paper_rows(ms, T3, "bro_ell"):
        print(f"| {m['label']} | `{os.path.basename(m['matrix'])}` | {m['rows']} | "
              f"{m['nnz']} | {m['row_len_mean']:.1f} | {m['row_len_std']:.1f} | {T3[m['label']]} | "
              f"{pct(b, 'eta')} | {pct(b, 'eta_meta')} | {pct(b, 'eta_nnz')} | {T5[m['label']]} | "
              f"{pct(a, 'eta')} | {pct(a, 'eta_meta')} | {pct(a, 'eta_nnz')} | {a.get('bar_algo', '—')} |")
    print("\n**Set 2 — BRO-HYB (paper Table 4).** O = HYB rows·K·4 + 2·nnz_coo·4 B; "
          "%ELL = share of nnz in the BRO-ELL part.\n")
    print("| paper matrix | ours: matrix | rows | nnz | μ | σ | paper %ELL | ours %ELL | K | "
          "paper η | ours η | +m | ours η BAR | +m |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m, b, a in paper_rows(ms, T4, "bro_hyb"):
        pe, pη = T4[m["label"]]
        print(f"| {m['label']} | `{m['matrix']}` | {m['rows']} | {m['nnz']} | "
              f"{m['row_len_mean']:.1f} | {m['row_len_std']:.1f} | {pe} | {pct(b, 'ell_fraction')} | "
              f"{b.get('ell_width', '—')} | {pη} | {pct(b, 'eta')} | {pct(b, 'eta_meta')} | "
              f"{pct(a, 'eta')} | {pct(a, 'eta_meta')} |")
    print("\n**All matrices — every format** (η / η+m; BRO-COO O = 2·nnz·4 B; no paper figures).\n")
    print("| matrix | rows | nnz | BRO-ELL | BRO-ELL BAR | BRO-COO | BRO-HYB | BRO-HYB BAR | BRO-CSR | "
          "BRO-ELL h=32 first=slice |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m in ms:
        e, h, c = m["bro_ell"], m["bro_hyb"], m["bro_coo"]
        def two(v):
            if not v:
                return "—"
            if "skipped" in v:
                return "skipped"
            return f"{pct(v, 'eta')} / {pct(v, 'eta_meta')}"
        print(f"| {m['label']} | {m['rows']} | {m['nnz']} | {two(e.get('before_bar'))} | "
              f"{two(e.get('after_bar'))} | {two(c)} | {two(h.get('before_bar'))} | "
              f"{two(h.get('after_bar'))} | {two(m.get('bro_csr'))} | {two(m.get('bro_ell_h32_slice'))} |")


if __name__ == "__main__":
    main(sys.argv[1])
