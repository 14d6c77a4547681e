"""``perflab profile``: where a run's time, writes and file-system calls go."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from perflab.cli.app import json_option, main, names, output_option, progress
from perflab.cli.spec_options import base_spec, run_options
from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat


@main.command("profile")
@run_options
@click.option("--treat", "treat_set", default="", metavar="A,B=LEVEL", help="Treatment set.")
@click.option(
    "--against",
    metavar="A,B=LEVEL",
    help="Profile again with this treatment set (e.g. a fix) and compare the two.",
)
@click.option(
    "--kinds",
    default="timeline,io,syscalls",
    show_default=True,
    help="Profile kinds: timeline (per-task events), io (write sizes), syscalls (file calls).",
)
@output_option("Output folder.", old=("--out",))
@click.option("--nodes", type=int, default=1000, show_default=True, help="Projection: nodes.")
@click.option(
    "--node-workers", type=int, default=64, show_default=True, help="Projection: workers/node."
)
@click.option(
    "--window",
    "window_s",
    type=float,
    default=10.0,
    show_default=True,
    help="Projection: seconds within which all workers start.",
)
@click.option("--keep-trace", is_flag=True, help="Keep the strace output and run directories.")
@json_option
def profile_cmd(
    treat_set: str,
    against: str | None,
    kinds: str,
    output: str | None,
    nodes: int,
    node_workers: int,
    window_s: float,
    keep_trace: bool,
    as_json: bool,
    **o: Any,
) -> None:
    """Profile a target: task timeline, write sizes, file syscalls projected to N nodes.

    Profiled runs are slowed by their tracer (strace): they are marked and never stored
    with timing runs. Writes OUT/profile.html, OUT/profile.json and OUT/figures/.
    """
    from perflab.profile.api import check_kinds, profile

    kind_list = check_kinds(names(kinds) or [])
    spec = base_spec(o)
    catalog = load_catalogs(list(o["catalogs"]))
    base = treat(spec, treat_set, catalog) if treat_set else spec
    other = treat(spec, against, catalog) if against is not None else None
    label_b = against or "treated"

    def started() -> None:
        # said once the input is checked: a refusal stays one line
        progress("profiling (traced runs are slow)")

    result = profile(
        base,
        kind_list,
        output,
        other,
        (treat_set or "untreated", label_b),
        nodes,
        node_workers,
        window_s,
        keep_trace,
        started,
    )
    if as_json:
        click.echo(json.dumps(_brief(result), default=str))
    else:
        _print(result)
    if any(r["record"]["status"] != "ok" for r in result["runs"]):
        sys.exit(1)


def _brief(result: dict[str, Any]) -> dict[str, Any]:
    """The JSON printed: everything but the raw per-task events and per-process lists."""
    runs = []
    for r in result["runs"]:
        r = dict(r)
        if "timeline" in r:
            r["timeline"] = {k: v for k, v in r["timeline"].items() if k != "events"}
        runs.append(r)
    return {**result, "runs": runs}


def _print(result: dict[str, Any]) -> None:
    for r in result["runs"]:
        rec = r["record"]
        click.echo(f"[{r['label']}] {rec['target']} {rec['workload'] or ''}: {rec['status']}")
        if rec["error"]:
            click.echo(f"  error: {rec['error'].splitlines()[0][:200]}")
        tl = r.get("timeline") or {}
        if tl.get("tasks"):
            ph = tl["phases"]
            click.echo(
                "  timeline: "
                + ", ".join(f"{k} {ph[k]['median_s'] * 1000:.2f} ms" for k in ph)
                + f"; workers busy {tl['worker_busy']:.0%}"
            )
        io = r.get("io") or {}
        if "write_calls" in io:
            rate = io["mib_per_s"]
            click.echo(
                f"  io ({io['scope']}): {io['write_calls']:,} write calls, {io['bytes']:,} B, "
                f"{rate:,.1f} MiB/s in calls; sizes {io['histogram']}"
                if rate is not None
                else f"  io ({io['scope']}): no writes to files"
            )
        sc = r.get("syscalls") or {}
        if "total" in sc:
            ws = sc["worker_start"]
            click.echo(
                f"  syscalls: {sum(sc['total'].values()):,} file calls in the tree; per worker "
                f"start {ws['all_calls']:,.0f} ({ws['metadata_ops']:,.0f} path lookups)"
            )
    for p in result["projection"]:
        click.echo(f"  projection ({p['label']}, {p['formula']}): {p['text']}")
    for f in result["findings"]:
        click.echo(f"finding: {f}")
    c = result.get("comparison")
    if c:
        click.echo("comparison: " + json.dumps({k: v for k, v in c.items()}, default=str))
    click.echo(f"report: {result['html']}")
