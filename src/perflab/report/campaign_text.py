"""Terminal rendering of campaigns (rich): the progress of ``campaign run``, its counts,
``campaign status`` and ``campaign list``; the CLI prints through these."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from perflab.report import terminal
from perflab.report.terminal import fmt
from perflab.run.record import RunRecord


@contextmanager
def campaign_progress(
    name: str, planned: int, done: int
) -> Iterator[
    tuple[Callable[[], None], Callable[[RunRecord, int, int], None], Callable[[int], None]]
]:
    """A progress bar with ETA and the fastest run so far; yields (start, the per-run
    callback, less: n planned runs are not needed, so the total drops by n). The bar shows
    from ``start`` (once the campaign's lease is held: a driver refused by another shows no
    bar) or the first result."""
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]  # fmt: skip
    best: list[float] = []
    progress = Progress(*columns, console=terminal.err_console)
    task = progress.add_task(name, total=planned, completed=done)

    def on_result(rec: RunRecord, i: int, n: int) -> None:
        progress.start()  # idempotent
        if rec.status == "ok" and rec.us_per_task:
            best.append(rec.us_per_task)
        fastest = f"fastest {min(best):,.1f} µs/task" if best else "no ok run yet"
        progress.update(task, advance=1, description=f"{name}  {fastest}")
        if rec.status != "ok":
            progress.console.print(
                f"[red]{rec.status}[/red] {escape(','.join(rec.treatments) or '-')}: "
                f"{escape((rec.error or '').splitlines()[0][:120] if rec.error else '')}"
            )

    total = [planned]

    def less(n: int) -> None:
        total[0] = max(0, total[0] - n)
        progress.update(task, total=total[0])

    try:
        yield progress.start, on_result, less
    finally:
        progress.stop()


def print_counts(name: str, counts: dict[str, int], stopped: Sequence[dict[str, Any]] = ()) -> None:
    """``campaign run``'s last lines: the counts, and why each set stopped early."""
    console = Console()
    console.print(
        f"{escape(name)}: {counts['done']}/{counts['planned']} done "
        f"({counts['ok']} ok, {counts['failed']} failed, {counts['timeout']} timeout)"
        + _unmeasured(counts, stopped)
    )
    _print_stopped(console, stopped)


def _print_stopped(console: Console, stopped: Sequence[dict[str, Any]]) -> None:
    for s in stopped:
        console.print(escape(f"  {s['line']}"))


def _unmeasured(counts: dict[str, int], stopped: Sequence[dict[str, Any]] = ()) -> str:
    n = counts.get("unmeasured", 0)
    out = f"; {n} not measured (infrastructure failure; retried on resume)" if n else ""
    skipped = counts.get("not_needed")  # off the plan: their sets met the target or lost
    lost = any(s["reason"].startswith("out") for s in stopped)
    why = "their sets known or out of the running" if lost else "their sets known"
    return out + (f"; {skipped} planned runs not needed ({why})" if skipped else "")


def print_status(st: dict[str, Any]) -> None:
    """``perflab campaign status``: counts, ETA, the fastest and the latest runs."""
    c = st["counts"]
    eta = "-" if st["eta_s"] is None else f"{st['eta_s'] / 60:.1f} min"
    console = Console()
    console.print(
        f"[bold]{escape(st['name'])}[/bold] ({st['design']}, {escape(st['target'])}): "
        f"{c['done']}/{c['planned']} done, {c['ok']} ok, {c['failed']} failed, "
        f"{c['timeout']} timeout{_unmeasured(c, st.get('stopped', []))}; ETA {eta}"
    )
    _print_stopped(console, st.get("stopped", []))
    if st.get("out_of_running"):  # the goal is the fastest set: say so, and its error spent
        console.print(escape(f"goal: the fastest set; {st['out_of_running']['line']}"))
    if st["best"]:
        console.print(
            f"fastest: {st['best']['us_per_task']:,.1f} µs/task "
            + escape(f"[{st['best']['treatments'] or 'untreated'}]")
        )
    for line in st["precision"]["lines"]:
        console.print(escape(line))
    table = Table(title="latest runs", title_justify="left")
    for col in ("seq", "status", "µs/task", "treatments", "started"):
        table.add_column(col)
    for r in st["latest"]:
        table.add_row(
            str(r["seq"]),
            r["status"],
            fmt(r["us_per_task"]),
            escape(r["treatments"] or "-"),
            r["started_at"],
        )
    console.print(table)


def print_campaigns(rows: list[dict[str, Any]], where: str) -> None:
    """``perflab campaign list``."""
    cols = ("name", "design", "planned", "done", "ok", "failed", "timeout")
    table = Table(title=f"campaigns in {where}", title_justify="left")
    for col in cols:
        table.add_column(col)
    for r in rows:
        table.add_row(*[escape(str(r[c])) for c in cols])
    Console().print(table)
