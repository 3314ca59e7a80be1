#!/usr/bin/env python3
"""Plot `tessera bench interpolate` JSON lines: time per launch against elements per block,
one panel per geometry, one line per (order, components, kind); forward kernels only.

    python3 scripts/plot_interpolate.py out/bench_interpolate.jsonl docs/benchmarks/interpolate.png
"""
import collections
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    series = collections.defaultdict(dict)
    device = ""
    with open(src) as f:
        for line in f:
            r = json.loads(line)
            if r.get("bench") != "interpolate" or r.get("row") != "sweep" or r.get("transpose"):
                continue
            if r["order"] > 3:
                continue
            device = r.get("device", device)
            key = (r["geometry"], r["order"], r["components"], r["what"])
            series[key][r["epb"]] = r["median_ms"] * 1e3
    geoms = [g for g in ("triangle", "quadrilateral", "tetrahedron", "hexahedron") if any(k[0] == g for k in series)]
    if not geoms:
        sys.exit("no forward sweep rows with p <= 3 in " + src)
    fig, axes = plt.subplots(1, len(geoms), figsize=(4.2 * len(geoms), 4), squeeze=False)
    for ax, g in zip(axes[0], geoms):
        for key in sorted(k for k in series if k[0] == g):
            pts = sorted(series[key].items())
            style = "-" if key[2] == 1 else "--"
            ax.plot([e for e, _ in pts], [t for _, t in pts], style, marker=".", label=f"p={key[1]} c={key[2]} {key[3]}")
        ax.set_title(g)
        ax.set_xlabel("elements per block")
        ax.set_ylabel("µs per launch")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=5)
    fig.suptitle(f"tessera interpolate, ~1M elements — {device}", fontsize=9)
    fig.tight_layout()
    fig.savefig(dst, dpi=130)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
