#!/usr/bin/env python3
"""Plots of `tessera bench tensor` results in the style of the seed's Figures 2 and 3.

    python3 scripts/plot_tensor.py out/tensor_cpu.jsonl out/tensor_gpu.jsonl --out docs/benchmarks/tensor

Each panel is one statement: effective bandwidth BW_eff (GB/s) against the grid size N,
one solid line per backend/device for the tensor statement, a dotted line for the
hand-written fused loop, and a dashed line for the copy bandwidth of the same run.
Writes <out>_simple.png (Eq. 10-18) and <out>_complex.png (contractions, Eq. 21, Eq. 6, GH).
"""
import argparse
import collections
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SIMPLE = [["eq10", "eq11", "eq12"], ["eq13", "eq14", "eq15"], ["eq16", "eq17", "eq18"]]
COMPLEX = [["contract1", "eq19", "eq20"], ["eq21", "eq6", "gh"]]
TITLES = {
    "eq10": "(10) $A_i=B_i$", "eq11": "(11) $A_{ij}=B_{ij}$", "eq12": "(12) $A_{ijk}=B_{ijk}$",
    "eq13": "(13) $A_i=B_i+C_i$", "eq14": "(14) $+D_i$", "eq15": "(15) $+D_i+E_i$",
    "eq16": "(16) $A_{ij}=B_iC_j$", "eq17": "(17) $A_{ijk}=B_iC_jD_k$", "eq18": "(18) $A_{ijkl}=B_iC_jD_kE_l$",
    "contract1": "Contract1 $A_{ijkl}=B_i^mE_{mjkl}$", "eq19": "(19) two contractions",
    "eq20": "(20) three contractions", "eq21": r"(21) $K_{ij}=2\alpha g_{ij}+\beta_i\beta_j$",
    "eq6": r"(6) $\Gamma^i_{jk}$", "gh": "GH right-hand side",
}


def load(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    j = json.loads(line)
                    if j.get("bench") == "tensor":
                        rows.append(j)
    return rows


def panel_grid(rows, layout, path):
    by = collections.defaultdict(list)
    for r in rows:
        by[(r["case"].split(" ")[0], r["device"], r["case"])].append(r)
    nr, nc = len(layout), len(layout[0])
    fig, axes = plt.subplots(nr, nc, figsize=(4.2 * nc, 3.3 * nr), squeeze=False)
    for i, line in enumerate(layout):
        for k, name in enumerate(line):
            ax = axes[i][k]
            copies = {}
            for (case, dev, full), rs in sorted(by.items()):
                if case != name:
                    continue
                rs = sorted(rs, key=lambda r: r["n"])
                n = [r["n"] for r in rs]
                label = dev + (" graph" if "graph" in full else "")
                ax.plot(n, [r["bw_eff_gbs"] for r in rs], "-o", ms=3, label=label)
                hand = [(r["n"], r["hand_bw_gbs"]) for r in rs if "hand_bw_gbs" in r]
                if hand:
                    ax.plot(*zip(*hand), ":", label=dev + " hand loop")
                copies[dev] = (n, [r["copy_gbs"] for r in rs])
            for dev, (n, c) in copies.items():
                ax.plot(n, c, "--", color="gray", lw=1, label=dev + " copy" if i == 0 and k == 0 else None)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(TITLES.get(name, name), fontsize=9)
            ax.grid(True, which="both", lw=0.3)
            if k == 0:
                ax.set_ylabel("BW_eff (GB/s)")
            if i == nr - 1:
                ax.set_xlabel("grid size N")
    handles, labels = [], []
    for row in axes:
        for ax in row:
            for h, l in zip(*ax.get_legend_handles_labels()):
                if l not in labels:
                    handles.append(h)
                    labels.append(l)
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=8)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=120)
    print("wrote", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl", nargs="+", help="JSON-lines files written by tessera bench tensor --json")
    ap.add_argument("--out", default="tensor", help="output prefix (default: tensor)")
    a = ap.parse_args()
    rows = load(a.jsonl)
    if not rows:
        print("no tensor benchmark rows found", file=sys.stderr)
        return 1
    panel_grid(rows, SIMPLE, a.out + "_simple.png")
    panel_grid(rows, COMPLEX, a.out + "_complex.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
