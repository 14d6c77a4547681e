"""The figure of a bisection stage (a PNG, drawn with matplotlib's Agg canvas, no pyplot): the
metric of every point the search measured, relative to the good end, with its interval; the
culprits found as red lines, the ranges that stayed undecided shaded, skipped points marked.

A point's level is not measured alone: each comparison gives the ratio of its two points, so
a point's level relative to the good end is the product of the ratios along the comparisons
that reach it (log ratios add), and its interval adds the comparisons' log half-widths. Each
comparison's interval is at its share of the search's alpha, so by the union bound all the
chained intervals hold together with at least 1 − alpha."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any


def levels(st: dict[str, Any]) -> dict[int, tuple[float, float]]:
    """Point index → (log level relative to the good end, log half-width of its interval),
    chained through the stage's comparisons (the narrowest chain wins)."""
    out: dict[int, tuple[float, float]] = {0: (0.0, 0.0)}
    steps = [
        s for s in st["steps"]
        if s["ratio"] > 0 and all(math.isfinite(s[k]) and s[k] > 0 for k in ("low", "high"))
    ]  # fmt: skip
    for _ in range(len(steps) + 1):  # a chain is at most as long as the comparisons
        changed = False
        for s in steps:
            r = math.log(s["ratio"])
            hw = max(math.log(s["high"]) - r, r - math.log(s["low"]))
            for known, other, sign in ((s["a"], s["b"], 1), (s["b"], s["a"], -1)):
                if known not in out:
                    continue
                lvl = (out[known][0] + sign * r, out[known][1] + hw)
                if other not in out or lvl[1] < out[other][1] - 1e-12:
                    out[other], changed = lvl, True
        if not changed:
            break
    return out


def _label(p: dict[str, Any]) -> str:
    return str(p["sha"])[:8] if p.get("sha") else str(p.get("version", p["key"]))


def draw(st: dict[str, Any], metric: str, path: Path) -> Path | None:
    """Write the stage's figure to ``path`` (PNG); None when no comparison has an interval."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    lv = levels(st)
    if len(lv) < 2:
        return None
    n = len(st["points"])
    fig = Figure(figsize=(min(14.0, max(7.0, 4 + 0.25 * n)), 4.4), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xs = sorted(lv)
    ys = [math.exp(lv[i][0]) for i in xs]
    lo = [y - math.exp(lv[i][0] - lv[i][1]) for i, y in zip(xs, ys, strict=True)]
    hi = [math.exp(lv[i][0] + lv[i][1]) - y for i, y in zip(xs, ys, strict=True)]
    ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o", color="#2c3e50", capsize=3, label="measured")
    ax.axhline(1.0, color="#999", lw=0.8)
    for u in st.get("undecided", []):
        ax.axvspan(u["a"], u["b"], color="#f39c12", alpha=0.2, lw=0)
    for c in st["culprits"]:
        x = (c["step"]["a"] + c["index"]) / 2  # between the culprit and the last point before it
        ax.axvline(x, color="#c0392b", ls="--", lw=1.2)
        ax.annotate(f"{_label(st['points'][c['index']])}: {c['step']['ratio']:.3f}×,\n"
                    f"share {c['share']:.0%}", (x, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(3, -3), textcoords="offset points", va="top", fontsize=8,
                    color="#c0392b")  # fmt: skip
    skipped = [s["index"] for s in st["skipped"]]
    if skipped:
        ax.plot(skipped, [1.0] * len(skipped), "x", color="#7f8c8d", label="skipped")
    every = max(1, n // 40)
    ax.set_xticks(range(0, n, every))
    ax.set_xticklabels([_label(st["points"][i]) for i in range(0, n, every)], rotation=60,
                       fontsize=7, ha="right")  # fmt: skip
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylabel(f"{metric} relative to the good end (×)")
    ax.set_title(f"{st['axis']}: {metric} along the axis (intervals hold together at "
                 f"1 − {st['alpha']:g})\nred: culprits; shaded: undecided ranges",
                 fontsize=9)  # fmt: skip
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path
