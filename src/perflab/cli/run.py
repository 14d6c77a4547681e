"""``perflab run``: measure one run (or --runs K) in fresh supervised process trees."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import Any

import click

from perflab import api
from perflab.cli.app import json_option, main, progress, runs_option
from perflab.cli.helpfmt import preset_options
from perflab.cli.spec_options import base_spec, run_options, source_option, sources
from perflab.report.terminal import print_records


@main.command()
@preset_options
@run_options
@source_option
@click.option(
    "--treat",
    "treat_set",
    default="",
    metavar="A,B=LEVEL",
    help="Treatment set: factor names from the catalog, NAME=LEVEL for levelled "
    "factors. Command targets also pass unknown names (and label:NAME) through "
    "PERFLAB_TREATMENTS.",
)
@runs_option(
    1, "Fresh measurements of the same thing; prints median and CV.", old=("--repeat", "-r")
)
@json_option
def run(treat_set: str, runs: int, as_json: bool, **o: Any) -> None:
    """Measure one black-box run (or --runs K runs) in fresh processes."""
    spec = replace(base_spec(o), sources=sources(o["sources"]))

    def each_run(i: int, n: int) -> None:
        # one run with --json says nothing until its JSON: a failure stays one line
        if n > 1 or not as_json:
            progress(f"run {i}/{n}")

    records = api.run(spec, treat_set, list(o["catalogs"]), runs, each_run)
    summary = api.summary(records, spec.metric) if runs > 1 else None
    if as_json:
        if runs == 1:
            click.echo(records[0].to_json())
        else:
            click.echo(json.dumps({"runs": [r.to_dict() for r in records], "summary": summary}))
    else:
        print_records(records, summary)
    bad_score = [r for r in records if r.measurement.get("bad_score")]
    if bad_score:
        click.echo(f"perflab: error: command target: {bad_score[0].error}", err=True)
        sys.exit(2)
    if any(r.status != "ok" for r in records):
        sys.exit(1)
