"""Terminal rendering (rich): run records, factor lists, analysis summaries (a campaign's
progress and status: ``campaign_text``).

The CLI prints through these; the same functions work in a Jupyter cell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from perflab.display import decimals
from perflab.run.record import RunRecord, metric_unit

err_console = Console(stderr=True)


def fmt(value: Any, unit: str = "", scale: float = 1.0, digits: int = 1) -> str:
    """A number for a table cell (``-`` when missing)."""
    if value is None:
        return "-"
    return f"{value * scale:,.{digits}f}{unit}"


ROWS: list[tuple[str, Callable[[RunRecord], str]]] = [
    ("µs/task", lambda r: fmt(r.us_per_task)),
    ("tasks/s", lambda r: fmt(r.tasks_per_s)),
    ("tasks", lambda r: fmt(r.tasks, digits=0)),
    ("wall", lambda r: fmt(r.wall_s, " s", digits=3)),
    ("submit", lambda r: fmt(r.submit_s, " s", digits=3)),
    ("first result", lambda r: fmt(r.first_result_s, " s", digits=4)),
    ("cpu user", lambda r: fmt(r.cpu_user_s, " s", digits=2)),
    ("cpu sys", lambda r: fmt(r.cpu_sys_s, " s", digits=2)),
    ("utilisation", lambda r: fmt(r.utilization, " %", 100.0)),
    ("peak RSS", lambda r: fmt(r.peak_rss_bytes, " MiB", 1 / 2**20)),
    ("ctx switches", lambda r: fmt(r.ctx_switches, digits=0)),
    ("written", lambda r: fmt(r.write_bytes, " KiB", 1 / 1024)),
    ("log files", lambda r: fmt(r.log_bytes, " KiB", 1 / 1024)),
    ("ideal", lambda r: fmt(r.measurement.get("ideal_s"), " s", digits=3)),
    ("efficiency", lambda r: fmt(r.measurement.get("efficiency"), " %", 100.0)),
]


def print_records(records: list[RunRecord], summary: dict[str, Any] | None) -> None:
    """One column per run, one row per metric; failures and leftover processes on stderr."""
    console = Console()
    first = records[0]
    title = f"{first.target}" + (f" / {first.workload}" if first.workload else "")
    if first.treatments:
        title += "  " + escape(f"[{', '.join(first.treatments)}]")
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    for i, r in enumerate(records, 1):
        table.add_column(f"run {i}" if len(records) > 1 else r.status, justify="right")
    table.add_row("status", *[r.status for r in records])
    for label, cell in ROWS:
        table.add_row(label, *[cell(r) for r in records])
    console.print(table)
    taken = first.measurement.get("score_from")
    if taken:  # a command's: perflab's own measurement, or the number it printed
        console.print(escape(f"score: {taken}"))
    if summary and summary.get("n_ok", 0) >= 2:
        unit = metric_unit(summary.get("metric", "us_per_task"))
        console.print(
            f"median {summary['median']:,.4g} {unit} over {summary['n_ok']} runs, "
            f"CV {summary['cv'] * 100:.1f} %"
        )
    for r in records:
        if r.status != "ok":
            err_console.print(f"[red]run {r.run_id} {r.status}[/red]: {escape(r.error or '')}")
            if r.measurement.get("run_dir"):
                err_console.print(f"  run directory kept: {r.measurement['run_dir']}")
        for p in r.measurement.get("outlived", []):
            err_console.print(
                f"[yellow]warning[/yellow]: pid {p['pid']} ({escape(p['name'])}) outlived run "
                f"{r.run_id} and was killed: {escape(p['cmdline'][:100])}"
            )


def print_factors(factors: list[Any]) -> None:
    """A table of catalog factors (``perflab factors list``)."""
    table = Table(title="treatment factors", title_justify="left")
    for col in ("name", "category", "kinds", "levels"):
        table.add_column(col, no_wrap=True)
    table.add_column("description")
    for f in factors:
        levels = ", ".join(map(str, f.levels)) if f.levels else ""
        table.add_row(f.name, f.category, ", ".join(f.kinds()), levels, escape(f.description))
    Console().print(table)


def ci_text(v: dict[str, Any], digits: int = 1) -> str:
    if v["ci_low"] is None or v["ci_high"] is None:
        return "n/a (aliased)" if v.get("aliases") else "n/a (not assessable)"
    return f"{v['ci_low']:,.{digits}f} .. {v['ci_high']:,.{digits}f}"


def num(v: float | None, fmt: str = ",.1f") -> str:
    return "n/a" if v is None else format(v, fmt)


def _digits(a: dict[str, Any]) -> int:
    """The decimals of an analysis's numbers: from its metric's level (the best set's)."""
    return decimals(a.get("best_us"))


def summary_lines(a: dict[str, Any]) -> list[tuple[str, str]]:
    """The headline as (label, text): the analysis' own ``summary`` wording, which the HTML
    page and the JSON carry too (an analysis JSON from before it: none)."""
    sm = a.get("summary")
    return list(sm["lines"].items()) if sm else []


@dataclass
class Col:
    """A column of a fitted table: ``drop`` orders what goes first when the terminal is
    too narrow (None: never dropped); ``no_wrap`` keeps a cell on one line (names, numbers),
    other cells wrap between words, never inside one."""

    header: str
    justify: Literal["left", "right"] = "left"
    drop: int | None = None
    no_wrap: bool = False


def _widths(col: Col, cells: list[str]) -> tuple[int, int]:
    """(narrowest, natural) width of a column: a no-wrap cell whole, else its longest word."""
    from rich.cells import cell_len

    texts = [col.header, *cells]
    natural = max(cell_len(t) for t in texts)
    if col.no_wrap:
        return max(cell_len(col.header), natural), natural
    return max(cell_len(w) for t in texts for w in (t.split() or [""])), natural


def fitted_table(
    console: Console, title: str, cols: list[Col], rows: list[list[str]], wide: bool
) -> tuple[Table, list[str], int | None]:
    """A table that fits the console without cutting a name or a word: droppable columns go,
    least important first, until the narrowest layout fits; ``wide`` keeps every column at
    its natural width. Returns the table, the headers left out and the width to print it
    at (None: the console's).

    The widths are set here, not by rich: rich narrows an over-wide table by shrinking its
    wrapping columns to nothing and then every column evenly, cutting names."""
    droppable = sorted((c for c in cols if c.drop is not None), key=lambda c: c.drop or 0)
    left_out: list[str] = []
    while True:
        shown = [i for i, c in enumerate(cols) if c.header not in left_out]
        spans = [_widths(cols[i], [r[i] for r in rows]) for i in shown]
        frame = 3 * len(shown) + 1  # a border and one space of padding each side
        if wide:
            widths = [hi for _, hi in spans]
            break
        room = console.width - frame
        if sum(lo for lo, _ in spans) <= room or len(left_out) == len(droppable):
            widths = [lo for lo, _ in spans]
            spare = room - sum(widths)
            # the columns that need least to be whole first, so one long column does not
            # take the room several short ones need
            for k in sorted(range(len(spans)), key=lambda k: spans[k][1] - spans[k][0]):
                grow = max(0, min(spans[k][1] - widths[k], spare))
                widths[k] += grow
                spare -= grow
            break
        left_out.append(droppable[len(left_out)].header)
    table = Table(title=title, title_justify="left")
    for i, w in zip(shown, widths, strict=True):
        c = cols[i]
        table.add_column(c.header, justify=c.justify, no_wrap=c.no_wrap, width=w)
    for r in rows:
        table.add_row(*[r[i] for i in shown])
    return table, left_out, (max(console.width, sum(widths) + frame) if wide else None)


def _print_fitted(
    console: Console, title: str, cols: list[Col], rows: list[list[str]], wide: bool
) -> None:
    table, left_out, width = fitted_table(console, title, cols, rows, wide)
    # wider than the terminal on request: a console of that width (print's own width
    # argument is capped at the console's)
    (Console(width=width) if width else console).print(table)
    if left_out:
        console.print(
            f"[dim](left out to fit {console.width} columns: {', '.join(left_out)}; "
            "--wide shows every column)[/dim]"
        )


def print_analysis(a: dict[str, Any], wide: bool = False) -> None:
    """The terminal summary of an analysis: every claim with its interval, and labelled
    "significant after correction" or "exploratory". Tables fit the terminal without
    cutting a factor's name (less important columns are left out and named); ``wide``
    shows every column."""
    console = Console()
    d = a["dataset"]
    console.print(
        f"[bold]{d['runs']} ok runs[/bold] ({d['failed']} failed), {d['sets']} treatment sets, "
        f"{len(d['factors'])} factors"
        + (f"; without {', '.join(d['without'])}" if d["without"] else "")
    )
    for label, text in summary_lines(a):
        console.print(f"[bold]{label}[/bold]: " + escape(text))
    for f in a.get("best_state_dependent", []):
        console.print(
            f"[yellow]state dependence[/yellow]: {f} helps slow sets and hurts fast ones "
            "(its benefit may not hold near the optimum)"
        )
    _effects_table(console, a, wide)
    dd = _digits(a)
    if "headline" in a:
        console.print(escape(a["headline"]["text"]))
    assessable = [r for r in a["interactions"] if r["effect_us"] is not None]
    if assessable:
        _print_fitted(
            console,
            "strongest interactions: T(X+a+b) - T(X+a) - T(X+b) + T(X)",
            [
                # one column, wrapping between the names: two long names side by side
                # leave no room for the numbers
                Col("pair"),
                Col("effect", "right", no_wrap=True),
                Col("95% CI", "right", drop=1),
                Col("claim"),
            ],
            [
                [
                    f"{r['a']} × {r['b']}",
                    num(r["effect_us"], f",.{dd}f"),
                    ci_text(r, dd),
                    r.get("claim", ""),
                ]  # fmt: skip
                for r in assessable[:5]
            ],
            wide,
        )
    elif not a.get("interactions_note"):  # a note is the headline already
        console.print("interactions: none assessable (the pairwise model has no residual df)")
    sh = a["shapley"]
    unit = metric_unit(a.get("metric", "us_per_task"))
    console.print(
        f"Shapley attribution of {sh['total_us']:,.{dd}f} {unit} "
        f"({sh['measured_sets']}/{sh['sets']} subsets measured, the rest modelled):"
    )
    for f, v in sorted(sh["values"].items(), key=lambda kv: kv[1]):
        console.print(f"  {f:32s} {v:10,.{dd}f}")
    m = a["models"]
    console.print(
        f"models (R², CV RMSE {unit}, folds over sets): "
        + ", ".join(
            f"{k} {num(v['r2'], '.3f')}/{num(v['cv_rmse_us'], f',.{dd}f')}" for k, v in m.items()
        )  # fmt: skip
        + f"; predictions from: {a['better_model']}"
    )
    if a["noise"]["noisy_sets"]:
        console.print(
            f"[yellow]noise[/yellow]: {len(a['noise']['noisy_sets'])} sets vary significantly "
            "more or less than the others between replicates (F test on log scale, Holm)"
        )


def _effects_table(console: Console, a: dict[str, Any], wide: bool = False) -> None:
    cols = [
        Col("factor", no_wrap=True),
        Col("category", drop=0, no_wrap=True),
        Col("effect", "right", no_wrap=True),
        Col("95% CI", "right"),
        Col("p (Holm)", "right", drop=2, no_wrap=True),
        Col("claim"),
        Col("mean delta", "right", drop=1, no_wrap=True),
    ]
    dd = _digits(a)
    rows = [
        [
            f,
            v["category"],
            num(v["effect_us"], f",.{dd}f"),
            ci_text(v, dd),
            num(v.get("p_adj"), ".3g"),
            claim_text(v),
            num(v["mean_delta_us"], f",.{dd}f"),
        ]
        for f, v in sorted(a["factors"].items(), key=lambda kv: num_key(kv[1]["effect_us"]))
    ]
    unit = metric_unit(a.get("metric", "us_per_task"))
    _print_fitted(console, f"per-factor effects ({unit}; negative = faster)", cols, rows, wide)


def claim_text(v: dict[str, Any]) -> str:
    """A factor's claim as every output words it (the terminal table and the HTML page both
    call this): the chain it cannot be told apart from when it is aliased, for "n/a (not
    assessable)" alone did not say why, nor which factor to vary apart."""
    aliases = v.get("aliases") or []
    if not aliases:
        return str(v.get("claim", ""))
    # not estimable: no claim of any kind ("exploratory" would suggest a number to explore)
    return f"aliased with {', '.join(n.replace(':', ' x ') for n in aliases)}"


def num_key(v: float | None) -> float:
    """Sort key that puts an unknown value last."""
    return float("inf") if v is None else v
