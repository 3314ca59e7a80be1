#!/usr/bin/env python3
"""Plots of `tessera bench bp` / `bench bk` JSON lines (needs matplotlib).

    python3 scripts/plot_operators.py operators.jsonl --out operators

writes <out>_orders.png (GDOF/s against p for each problem, stored and on-the-fly geometry,
with libCEED's /gpu/cuda/gen figures from ../shared/PEERS.md where --peers is given) and,
when the file holds a size sweep, <out>_sweep.png (GDOF/s against DOFs).
"""
import argparse
import json
import sys
from collections import defaultdict

# libCEED /gpu/cuda/gen, stored data, global apply, H100, GDOF/s for p = 1..10 (the operator
# issue's table, measured by the peers' maintainers on the same GPU model).
LIBCEED_H100 = {
    "BP1": [4.82, 17.4, 22.8, 28.4, 29.3, 32.6, 26.8, 27.5, 29.1, 25.8],
    "BP3": [1.25, 6.29, 8.40, 7.61, 10.5, 12.0, 8.88, 12.0, 11.1, 12.1],
    "BP5": [5.89, 13.0, 18.0, 19.9, 19.7, 20.0, 20.8, 16.3, 20.4, 18.1],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jsonl")
    ap.add_argument("--out", default="operators")
    ap.add_argument("--elements", default="hex")
    ap.add_argument("--peers", action="store_true", help="draw libCEED's H100 figures")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_operators.py: matplotlib is not installed", file=sys.stderr)
        return 1
    rows = [json.loads(l) for l in open(args.jsonl) if l.strip()]
    rows = [r for r in rows if r.get("bench") in ("bp", "bk") and r.get("elements_type", "hex") == args.elements]
    # One mesh size per (problem, order): the largest DOF count below 1.2x the median.
    by_case = defaultdict(list)
    for r in rows:
        by_case[(r["problem"], r["geometry"])].append(r)
    problems = sorted({r["problem"] for r in rows}, key=lambda s: (s[:2], int(s[2:])))
    if not problems:
        print("plot_operators.py: no bp/bk rows", file=sys.stderr)
        return 1
    cols = min(3, len(problems))
    nrows = (len(problems) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.6 * nrows), squeeze=False)
    for ax, prob in zip(axes.flat, problems):
        for geo, style in (("stored", "o-"), ("on the fly", "s--")):
            pts = defaultdict(list)
            for r in by_case.get((prob, geo), []):
                pts[r["order"]].append(r)
            xs = sorted(pts)
            # the run nearest 8M scalar DOFs per order
            ys = [min(pts[p], key=lambda r: abs(r["dofs"] / (3 if prob[-1] in "246" else 1) - 8e6))["gdofs"]
                  for p in xs]
            if xs:
                ax.plot(xs, ys, style, label=f"tessera, {geo}")
        if args.peers and prob in LIBCEED_H100:
            ax.plot(range(1, 11), LIBCEED_H100[prob], "k:", label="libCEED gen (H100)")
        ax.set_title(prob)
        ax.set_xlabel("p")
        ax.set_ylabel("GDOF/s")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(problems):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(args.out + "_orders.png", dpi=110)
    print("wrote", args.out + "_orders.png")

    # size sweep: several DOF counts for the same (problem, order, geometry)
    sweep = defaultdict(list)
    for r in rows:
        sweep[(r["problem"], r["order"], r["geometry"])].append(r)
    sweep = {k: sorted(v, key=lambda r: r["dofs"]) for k, v in sweep.items() if len({r["dofs"] for r in v}) >= 4}
    if sweep:
        fig, ax = plt.subplots(figsize=(6, 4))
        for (prob, p, geo), v in sorted(sweep.items()):
            ax.semilogx([r["dofs"] for r in v], [r["gdofs"] for r in v], "o-" if geo == "stored" else "s--",
                        label=f"{prob} p={p} {geo}")
        ax.set_xlabel("DOFs")
        ax.set_ylabel("GDOF/s")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.out + "_sweep.png", dpi=110)
        print("wrote", args.out + "_sweep.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
