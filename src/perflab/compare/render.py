"""How comparisons, calibrations and histories read: terminal tables and Markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from perflab.compare.calibrate import Calibration
from perflab.compare.gate import Comparison
from perflab.compare.history import History
from perflab.compare.stats import HIGHER_IS_BETTER
from perflab.display import CSP_META, number

ICON = {"faster": "✅", "slower": "❌", "no difference": "➖", "inconclusive": "❔", "failed": "💥"}


def _pct(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f} %"


def side_label(summary: dict[str, Any]) -> str:
    """What a side is, in a few words: its treatments, command, interpreter, packages."""
    parts = []
    if summary.get("command"):
        parts.append(f"`{summary['command']}`")
    parts += summary.get("treatments") or []
    env = summary.get("env") or {}
    venv = env.get("venv") or {}
    if venv.get("requirements"):
        parts += [r for r in venv["requirements"] if r != "psutil" and not r.startswith("psutil")]
    if env.get("python") and (venv or env.get("python_executable")):
        parts.append(f"Python {env['python']}")
    return ", ".join(parts) or "untreated"


def p_text(p: float | None) -> str:
    """A decision's p; exact data (no test) say so."""
    return f"p = {p:.2g}" if p is not None else "exact data: no test"


def headline(c: Comparison) -> str:
    d = c.decision
    if c.failed is not None:
        return f"a run failed: {c.failed.error or c.failed.status}"
    if d is None:
        return "no decision"
    better = "higher" if c.metric in HIGHER_IS_BETTER else "lower"
    return (
        f"B is {d.verdict}: {c.metric} B/A = {d.ratio:.3f} ({_pct(d.ratio)}), "
        f"{d.confidence:.1%} CI [{d.ci_low:.3f}, {d.ci_high:.3f}], {p_text(d.p_value)}; "
        f"threshold ±{d.threshold:.0%}, {better} is better"
    )


def print_comparison(c: Comparison, console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=f"compare ({c.metric})", title_justify="left")
    for col in ("side", "what", "n", "geo. mean", "95% CI", "median", "CV"):
        table.add_column(col, justify="right" if col not in ("side", "what") else "left")
    for side in (c.a, c.b):
        s = side.summary()
        table.add_row(
            side.label,
            escape(side_label(s)),
            str(s["n"]),
            number(s.get("geo_mean")),
            f"{number(s.get('ci_low'))} – {number(s.get('ci_high'))}" if s.get("ci_low") else "-",
            number(s.get("median")),
            f"{s['cv']:.1%}" if s.get("cv") is not None else "-",
        )
    console.print(table)
    verdict = "failed" if c.failed else (c.decision.verdict if c.decision else "inconclusive")
    console.print(f"{ICON.get(verdict, '')} {escape(headline(c))}")
    console.print(
        f"[dim]{c.test}-test, {len(c.looks)} look(s), at most {c.n_max} runs per side "
        f"({c.n_source}); "
        f"{c.elapsed_s:.0f} s[/dim]"
    )
    for note in c.notes:
        console.print(f"[yellow]note[/yellow]: {escape(note)}")


def markdown(c: Comparison) -> str:
    """A summary fit for a PR comment or a CI step summary."""
    verdict = "failed" if c.failed else (c.decision.verdict if c.decision else "inconclusive")
    lines = [
        f"### perflab compare: {ICON.get(verdict, '')} **{verdict}**",
        "",
        headline(c),
        "",
        f"| side | what | n | geo. mean {c.metric} | 95% CI | CV |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for side in (c.a, c.b):
        s = side.summary()
        ci = f"{number(s.get('ci_low'))} – {number(s.get('ci_high'))}" if s.get("ci_low") else "-"
        cv = f"{s['cv']:.1%}" if s.get("cv") is not None else "-"
        what = side_label(s).replace("|", "\\|")
        lines.append(
            f"| {side.label} | {what} | {s['n']} | {number(s.get('geo_mean'))} | {ci} | {cv} |"
        )
    lines += [
        "",
        f"Runs interleaved ABBA, {c.test}-test, {len(c.looks)} look(s), at most {c.n_max} per "
        f"side ({c.n_source}); false-alarm rate ≤ {c.alpha:.0%} over all looks (Bonferroni). "
        "Regression = B slower beyond the threshold.",
        *[f"> note: {n}" for n in c.notes],
        "",
    ]
    return "\n".join(lines)


def print_calibration(cal: Calibration, path: Path, console: Console | None = None) -> None:
    console = console or Console()
    lo, hi = cal.false_alarm_ci
    dlo, dhi = cal.detection_ci
    console.print(
        f"{len(cal.values)} identical runs of {cal.metric}: CV {cal.cv:.1%}, sd(log) "
        f"{cal.sigma_log:.3f}, lag-1 autocorrelation {cal.lag1:+.2f}; sd of a neighbouring "
        f"pair's log difference (what the paired gate sees) {cal.sigma_pair_log:.3f}"
    )
    console.print(
        f"recommended runs per side: {cal.recommended_n} (to detect {cal.effect:.0%} with 80 % "
        f"power at alpha {cal.alpha:g}, threshold {cal.threshold:.0%})"
    )
    console.print(
        f"gate replayed on these runs ({cal.simulations} A/A comparisons): false alarms "
        f"{cal.false_alarms} = {cal.false_alarm_rate:.1%} (95% CI {lo:.1%}–{hi:.1%}); "
        f"{cal.effect:.0%} slowdown detected {cal.detection_rate:.1%} (95% CI {dlo:.1%}–{dhi:.1%})"
    )
    console.print(f"[dim]stored in {escape(str(path))}[/dim]")


def history_rows(h: History) -> list[tuple[str, ...]]:
    """One row per release: version, n, failed, geometric mean, 95 % CI, change vs previous,
    and the cause of its failed runs (shortened; failure_lines has it whole)."""
    rows: list[tuple[str, ...]] = []
    prev = None
    for rel in h.releases:
        s = rel.summary()
        gm = s.get("geo_mean")
        change = _pct(gm / prev) if gm and prev else ""
        ci = f"{number(s['ci_low'])} – {number(s['ci_high'])}" if "ci_low" in s else "-"
        cause = rel.cause()
        cause = cause if len(cause) <= 70 else cause[:69] + "…"
        rows.append((rel.version, str(s["n"]), str(s["failed"]), number(gm), ci, change, cause))
        prev = gm or prev
    return rows


HISTORY_COLUMNS = ("release", "n", "failed", "geo. mean", "95% CI", "vs previous", "cause")


def failure_lines(h: History) -> list[str]:
    """Each release with failed runs: how many of how many, what that leaves of its level,
    and the cause (the last line of its last error: a traceback's last line names what went
    wrong, e.g. a module the release's venv lacks)."""
    out = []
    for rel in h.releases:
        if not rel.failed:
            continue
        n = len(rel.values)
        left = (
            "no value"
            if not n
            else f"its level is from the {n} measured"
            if rel.usable
            else f"{n} measured, too few for the gate: left out of the change-point search"
        )
        cause = rel.cause() or f"no positive {h.metric}"
        runs = f"{rel.failed} of {n + rel.failed} runs failed"
        out.append(f"{rel.version}: {runs}; {left}; cause: {cause}")
    return out


def change_point_lines(h: History) -> list[str]:
    """Each proposed change point, named by the releases around it, with the gate's verdict."""
    if sum(r.usable for r in h.releases) < 2:  # "none proposed" would be a claim
        return ["no change point sought: fewer than two releases measured in 2 runs or more"]
    if not h.change_points:
        return ["no change point proposed"]
    out = []
    steps = (h.precision or {}).get("steps", [])
    looked = {(s["before"], s["after"]) for s in steps if s["decision"]}
    for cp in h.change_points:
        d = cp.decision
        state = "confirmed" if cp.confirmed else "not confirmed"
        # with --precision a step is judged by its own looks, at the level of the last one
        # (a step across a release left out had none: the gate judged it)
        by = f"its looks (at level {d.alpha:.2g})" if (cp.before, cp.after) in looked else (
            "the gate")  # fmt: skip
        out.append(
            f"change point between {cp.before} and {cp.after}: {state} by {by} — "
            f"{cp.after} is {d.verdict}, ratio {d.ratio:.3f} [{d.ci_low:.3f}, {d.ci_high:.3f}], "
            f"{p_text(d.p_value)}"
        )
        if cp.confirmed:  # the next question: which change inside the step
            out.append(f"  explain it: {h.explain_command(cp)}")
            out.append(f"  find its commits: {h.bisect_command(cp)}")
    return out


def print_history(h: History, console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=f"{h.package}: {h.metric} per release", title_justify="left")
    for col in HISTORY_COLUMNS:
        table.add_column(col, justify="left" if col == "release" else "right")
    for row in history_rows(h):
        table.add_row(*row)
    console.print(table)
    for line in failure_lines(h):
        console.print(f"[red]{escape(line)}[/red]")
    for line in change_point_lines(h):
        console.print(escape(line))


def history_markdown(h: History) -> str:
    """The history table and its change points, for a PR comment or a CI step summary."""
    lines = [
        f"### perflab history: {h.package}, {h.metric} per release",
        "",
        "| " + " | ".join(HISTORY_COLUMNS) + " |",
        "|---|" + "---:|" * (len(HISTORY_COLUMNS) - 1),
        *["| " + " | ".join(row) + " |" for row in history_rows(h)],
        "",
        *[f"* {line}" for line in failure_lines(h) + change_point_lines(h)],
        # --precision: runs used against the plan, each step's stop, the error spent
        *[f"* {line}" for line in (h.precision or {}).get("lines", [])],
        "",
        f"Geometric means with 95 % BCa intervals; change points from PELT, each checked by "
        f"the compare gate on the two releases around it (α {h.alpha:g} over all pairs, "
        f"threshold {h.threshold:.0%}).",
        "",
    ]
    return "\n".join(lines)


def history_html(h: History, png: bytes | None) -> str:
    """One offline page: the figure inlined, the table, the change points."""
    import base64
    import html

    e = html.escape
    head = "".join(f"<th>{e(c)}</th>" for c in HISTORY_COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>" for row in history_rows(h)
    )
    figure = (
        f'<figure><img alt="{e(h.package)} {e(h.metric)} per release" '
        f'src="data:image/png;base64,{base64.b64encode(png).decode()}"></figure>'
        if png
        else ""
    )
    points = "".join(f"<li>{e(line)}</li>" for line in failure_lines(h) + change_point_lines(h))
    title = f"perflab history: {h.package}, {h.metric} per release"
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">{CSP_META}'
        f"<title>{e(title)}</title>"
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
        "td,th{padding:.2em .8em;text-align:right}td:first-child{text-align:left}"
        "img{max-width:100%}</style></head><body>"
        f"<h1>{e(title)}</h1>{figure}<table><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table><ul>{points}</ul>"
        f"<p>Geometric means with 95 % BCa intervals. Change points: PELT candidates, each "
        f"checked by the compare gate on the two releases around it (α {h.alpha:g} over all "
        f"pairs, threshold {h.threshold:.0%}); solid red lines are confirmed, dashed grey are "
        f"not.</p></body></html>\n"
    )
