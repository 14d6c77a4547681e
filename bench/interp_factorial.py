"""The seed's "Python 3.13" factor taken apart (issue 54): a factorial over the CPython
variants perflab built (``perflab interpreters list``) — version (3.11, 3.13) × GIL (on,
off) × PGO (on, off), × the JIT where a JIT variant is built — on a Parsl HTEX noop program
and a CPU-bound threaded program, through perflab's own campaign and analysis.

    .venv/bin/python bench/interp_factorial.py --dry-run        # the cells, what is missing
    .venv/bin/python bench/interp_factorial.py --runs 6 --workloads noop threads \\
        --out bench/out/interp_factorial

The cells are every combination of the axes' levels that maps to one built variant
(``factors/kinds/pybuild.py``). 3.11 has no free-threaded build, so the design is nested:
the GIL is varied at 3.13 only. Its effect is the GIL's at 3.13, the version's is taken with
the GIL on, and version × GIL cannot be estimated (aliased): the tables say which effects
are estimable from the cells there are. A combination not built is left out and named, with
the command that builds it.

Each workload is one campaign (design ``explicit``: every cell names every axis, so each
runs a built variant, never perflab's own interpreter), ``--runs`` replicates, each a fresh
random order of the cells (interleaved), run by the local runner. Every run's Python
processes prove their variant through perflab's hook (interpreter, GIL, ``CONFIG_ARGS``), so
a run whose extension turned the GIL back on fails instead of counting. The analysis is
perflab's (``analysis.analyze``, statsmodels/scipy through ``analysis/``) on the runs with
each cell's treatments rewritten as two-level factors against the baseline 3.11, GIL on,
no PGO, no JIT (``py=3.13``, ``py_gil=off``, ``py_pgo=on``, ``py_jit=on``): main effects
and two-factor interactions with 95% intervals and Holm-corrected p, the nice path, and the
Shapley shares of the way from the baseline to the seed's bundle (every factor at once).

Metrics: ``us_per_task`` (the program's own figure: wall time of its timed batch ÷ tasks)
and ``cpu_us_per_task`` (user + system CPU of the whole command, start-up and warm-up
included, ÷ tasks). The noop program's venvs pin one pyzmq with a wheel for every variant
(``--pin``; docs/interpreters.md says why). Everything is written under ``--out``: the
store, the sets file, ``results.md`` (the tables printed) and ``results.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from perflab.analysis.data import StudyMeta, from_frame
from perflab.analysis.stats import mean_ci
from perflab.errors import PerflabError
from perflab.factors.catalog import CATEGORIES
from perflab.factors.kinds.pybuild import AXES, built_variants, pick_variant

ROOT = Path(__file__).resolve().parent.parent
#: The cell every effect is measured from: the seed's "before" (3.11 with the GIL, no
#: PGO, no JIT, as pyenv builds it).
BASELINE = {"py": "3.11", "py_gil": "on", "py_jit": "off", "py_pgo": "off"}
#: Axes varied when their variants are built (``py_jit`` only once a JIT variant is).
DESIGN_AXES = ("py", "py_gil", "py_pgo", "py_jit")
#: Each program runs in ``--out`` (Parsl's ``runinfo`` lands there, not in the checkout).
WORKLOADS = {
    "noop": ("python {bench}/interp_noop.py {tasks} 2", 2000),
    "threads": ("python {bench}/interp_threads.py {tasks} 20000 2", 200),
}
METRICS = ("us_per_task", "cpu_us_per_task")
DEFAULT_PIN = "pyzmq==27.1.0"


@dataclass(frozen=True)
class Cell:
    """One cell of the design: a level of every axis, and the variant it runs."""

    choice: tuple[tuple[str, str], ...]
    variant: str

    @property
    def treat(self) -> list[str]:
        """The campaign's set: every design axis named, so no cell is perflab's own
        interpreter."""
        return sorted(f"{a}={lvl}" for a, lvl in self.choice)

    @property
    def factors(self) -> list[str]:
        """The analysis' two-level factors this cell has (its levels off the baseline)."""
        return sorted(f"{a}={lvl}" for a, lvl in self.choice if lvl != BASELINE[a])


def design_axes(variants: list[dict[str, Any]]) -> list[str]:
    """The axes varied: version, GIL and PGO always, the JIT once a JIT variant is built."""
    jit = any("jit" in v.get("flags", []) for v in variants)
    return [a for a in DESIGN_AXES if a != "py_jit" or jit]


def design_cells(variants: list[dict[str, Any]]) -> tuple[list[Cell], list[str]]:
    """The cells there are variants for, and one line per combination left out (impossible,
    or not built: with the command that builds it)."""
    axes = design_axes(variants)
    cells: list[Cell] = []
    missing: list[str] = []
    for levels in itertools.product(*(AXES[a][0] for a in axes)):
        asked = dict(zip(axes, levels, strict=True))
        choice = {a: asked.get(a, default) for a, (_, default) in AXES.items()}
        try:
            variant = pick_variant(choice, variants)
        except PerflabError as exc:
            missing.append(f"{','.join(f'{a}={lvl}' for a, lvl in asked.items())}: {exc}")
            continue
        cells.append(Cell(tuple(asked.items()), str(variant["key"])))
    return cells, missing


def analysis_factors(cells: list[Cell]) -> list[str]:
    """The two-level factors that vary among the cells (an axis with one level built
    drops out)."""
    seen = sorted({f for c in cells for f in c.factors})
    return [f for f in seen if not all(f in c.factors for c in cells)]


def estimability(cells: list[Cell]) -> list[str]:
    """Which effects the cells can estimate: a factor's effect is taken where both its
    levels are there; a two-factor interaction needs all four combinations."""
    factors = analysis_factors(cells)
    sets = [set(c.factors) for c in cells]
    lines = []
    for f in factors:
        others = [g for g in factors if g != f]
        # f only ever with g: f's effect is g's level's; g only ever with f: f's is without g
        at = [g for g in others if all(g in s for s in sets if f in s)]
        off = [g for g in others if all(f in s for s in sets if g in s) and g not in at]
        where = [f"at {g}" for g in at] + [f"without {g}" for g in off]
        lines.append(f"{f}: estimable" + (f" ({', '.join(where)} only)" if where else ""))
    for a, b in itertools.combinations(factors, 2):
        combos = {(a in s, b in s) for s in sets}
        if len(combos) == 4:
            lines.append(f"{a} × {b}: estimable")
        else:
            pairs = itertools.product((True, False), repeat=2)
            sign = {True: "+", False: "-"}
            gone = [f"{sign[x]}{a}{sign[y]}{b}" for x, y in pairs if (x, y) not in combos]
            lines.append(f"{a} × {b}: aliased (no cell {', '.join(gone)}): not estimable")
    return lines


def analysis_frame(runs: pd.DataFrame, cells: list[Cell], tasks: int) -> pd.DataFrame:
    """The campaign's runs with each cell's treatments rewritten as its two-level factors
    (0/1 columns) and ``cpu_us_per_task`` added."""
    of = {",".join(c.treat): c for c in cells}
    factors = analysis_factors(cells)
    keep = [c for c in runs.columns if "=" not in c]  # the campaign's own factor columns out
    df = runs[keep].copy()
    own = [of.get(",".join(sorted(str(t).split(","))) if t else "") for t in df["treatments"]]
    if any(c is None for c in own):
        raise PerflabError("a run's treatments are not one of the design's cells")
    df["treatments"] = [",".join(c.factors) for c in own if c is not None]
    for f in factors:
        df[f] = [int(f in c.factors) for c in own if c is not None]
    cpu = df["cpu_user_s"].astype(float) + df["cpu_sys_s"].astype(float)
    df["cpu_us_per_task"] = cpu * 1e6 / tasks
    return df


def study_meta(cells: list[Cell]) -> StudyMeta:
    """The analysis' facts about the factors: all ``environment``; a factor seen only with
    another requires it (``py_gil=off`` requires ``py=3.13``), so no path passes a cell that
    cannot be built."""
    factors = analysis_factors(cells)
    sets = [set(c.factors) for c in cells]
    requires = {
        (f, g) for f in factors for g in factors if f != g and all(g in s for s in sets if f in s)
    }
    return StudyMeta(categories={f: "environment" for f in factors},
                     category_order=list(CATEGORIES), requires=requires)  # fmt: skip


def fmt(x: float | None, digits: int = 1) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.{digits}f}"


def cells_table(df: pd.DataFrame, cells: list[Cell], metric: str) -> str:
    """Each cell's variant, ok runs and mean with its 95% t interval."""
    lines = [f"| cell | variant | ok runs | {metric} mean | 95% CI |", "|---|---|---|---|---|"]
    for c in cells:
        label = ",".join(c.factors) or "baseline"
        vals = df[(df["treatments"] == ",".join(c.factors)) & (df["status"] == "ok")][metric]
        vals = vals.dropna().astype(float)
        if vals.empty:
            lines.append(f"| {label} | {c.variant} | 0 | — | — |")
            continue
        m, lo, hi = mean_ci(vals.to_numpy())
        lines.append(f"| {label} | {c.variant} | {len(vals)} | {fmt(m)} | {fmt(lo)} .. {fmt(hi)} |")
    return "\n".join(lines)


def effects_table(result: dict[str, Any]) -> str:
    """Main effects and two-factor interactions with intervals, Holm p and the claim."""
    lines = ["| effect | estimate | 95% CI | p (Holm) | claim |", "|---|---|---|---|---|"]
    rows = [(f, v) for f, v in result["factors"].items()]
    rows += [(f"{i['a']} × {i['b']}", i) for i in result.get("interactions", [])]
    for name, v in rows:
        ci = f"{fmt(v.get('ci_low'))} .. {fmt(v.get('ci_high'))}"
        p = "—" if v.get("p_adj") is None else f"{v['p_adj']:.2g}"
        lines.append(f"| {name} | {fmt(v.get('effect_us'))} | {ci} | {p} | {v.get('claim')} |")
    return "\n".join(lines)


def path_lines(result: dict[str, Any], name: str = "nice") -> list[str]:
    """The path's steps: the set reached and the predicted metric there."""
    out = []
    for step in result["paths"].get(name, []):
        where = ",".join(step["set"]) or "baseline"
        delta = f" ({step['delta_us']:+,.1f})" if step.get("delta_us") is not None else ""
        # the analysis' paths know no cell that cannot be built: such a step is the model's
        model = "" if step.get("measured", True) else " [not measured: the model's]"
        out.append(f"{where}: {fmt(step['us_per_task'])}{delta}{model}")
    return out


def analyse(df: pd.DataFrame, cells: list[Cell], metric: str) -> tuple[dict[str, Any], str]:
    """perflab's analysis of one metric (a main-effects and a pairwise model, corrected
    claims, paths, Shapley from the baseline to every factor at once) and its markdown."""
    from perflab.analysis import analyze

    factors = analysis_factors(cells)
    ds = from_frame(df, metric, factors, study_meta(cells))
    bundle = [f for f in factors if f in ds.factors]
    has_bundle = any(set(c.factors) == set(bundle) for c in cells)
    a = analyze(ds, to_set=bundle if has_bundle else None)
    r = a.to_json()
    text = [f"#### {metric}", "", cells_table(df, cells, metric), "", effects_table(r), ""]
    if r.get("interactions_note"):
        text += [f"*{r['interactions_note']}*", ""]
    text += ["Nice path: " + " → ".join(path_lines(r)), ""]
    shap = r.get("shapley") or {}
    if has_bundle and shap.get("values"):
        parts = ", ".join(f"{f} {v:+,.1f}" for f, v in shap["values"].items())
        text += [
            f"Shapley shares of the way baseline → {'+'.join(bundle)} (the seed's bundle, "
            f"{fmt(shap.get('total_us'))} in all): {parts}. {shap.get('note', '')}; a cell "
            "that cannot be built (3.11 without the GIL) is the model's.",
            "",
        ]
    return r, "\n".join(text)


def run_workload(name: str, cells: list[Cell], args: argparse.Namespace, store: Path) -> str:
    """One campaign of the workload over the cells, run; its name."""
    from perflab import api
    from perflab.spec import RunSpec

    form, default_tasks = WORKLOADS[name]
    tasks = args.tasks or default_tasks
    command = form.format(bench=ROOT / "bench", tasks=tasks)
    sets = Path(args.out) / f"sets-{name}.txt"
    sets.write_text("".join(",".join(c.treat) + "\n" for c in cells))
    campaign = f"interp_factorial_{name}_{args.tag}"
    pins = [args.pin] if name == "noop" and args.pin else []
    spec = RunSpec(command=command, cwd=str(Path(args.out).resolve()), metric="us_per_task",
                   timeout_s=args.timeout, packages=pins)  # fmt: skip
    factors = sorted({t for c in cells for t in c.treat})
    api.campaign_create(campaign, spec, factors, "explicit", {"file": str(sets)}, args.runs,
                        seed=args.seed, store=store)  # fmt: skip

    def said(record: Any, done: int, total: int) -> None:
        cause = "" if record.status == "ok" else f" ({(record.error or '').splitlines()[0][:160]})"
        print(f"  {name} {done}/{total}: {','.join(record.treatments)} {record.status}{cause}",
              flush=True)  # fmt: skip

    print(f"{name}: {len(cells)} cells × {args.runs} runs ({command})")
    api.campaign_run(campaign, on_result=said, store=store)
    return campaign


def report(name: str, campaign: str, cells: list[Cell], store: Path, tasks: int) -> tuple:
    """The workload's tables (markdown) and results (JSON-able), from the campaign's runs."""
    from perflab.campaign.source import open_source
    from perflab.campaign.store import Store

    src = open_source(campaign, str(store), "us_per_task")
    df = analysis_frame(src.runs, cells, tasks)
    records = Store(str(store)).records(campaign)
    errors = sorted({(r.error or "?").splitlines()[0][:200] for r in records if r.status != "ok"})
    ok = sum(r.status == "ok" for r in records)
    text = [f"### {name}", "", f"{ok} ok runs of {len(records)}."]
    text += [f"* failed: {e}" for e in errors]
    results: dict[str, Any] = {}
    for metric in METRICS:
        try:
            results[metric], md = analyse(df, cells, metric)
        except PerflabError as exc:
            results[metric], md = {"error": str(exc)}, f"#### {metric}\n\nnot analysed: {exc}\n"
        text += ["", md]
    return "\n".join(text), results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=int, default=6, help="Replicates of every cell.")
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "interp_factorial"))
    ap.add_argument("--tasks", type=int, default=0, help="Tasks a run (0: each one's default).")
    ap.add_argument("--pin", default=DEFAULT_PIN, help="The noop venvs' pyzmq ('' for none).")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tag", default=time.strftime("%Y%m%d%H%M"))
    ap.add_argument("--dry-run", action="store_true", help="Print the cells and stop.")
    args = ap.parse_args(argv)
    cells, missing = design_cells(built_variants())
    head = ["## The cells", ""] + [f"* {','.join(c.factors) or 'baseline'} ({', '.join(c.treat)}): "
                                   f"{c.variant}" for c in cells]  # fmt: skip
    head += [f"* left out: {m}" for m in missing] + ["", "## Estimable", ""]
    head += [f"* {line}" for line in estimability(cells)] + [""]
    print("\n".join(head), flush=True)
    if args.dry_run or len(analysis_factors(cells)) == 0:
        return 0 if args.dry_run else 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.environ.setdefault("PERFLAB_HOME", str(out / "home"))
    store = out / "store.db"
    md, results = list(head), {}
    for name in args.workloads:
        campaign = run_workload(name, cells, args, store)
        text, results[name] = report(name, campaign, cells, store, args.tasks or WORKLOADS[name][1])
        print(text, flush=True)
        md.append(text)
    load = os.getloadavg()
    md.append(f"\nLoad average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    (out / "results.md").write_text("\n".join(md) + "\n")
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    print(f"\nwritten: {out / 'results.md'}, {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except PerflabError as exc:  # bad input (a campaign of that tag exists …): one line
        print(f"interp_factorial: {exc}", file=sys.stderr)
        sys.exit(2)
