"""The Python API's verbs that join rooms (a CLI verb calls the same function)::

    from perflab.api import report_on
    report_on("c1", out_dir="report/")   # a campaign by name, or a dataset CSV

Each room keeps to its stage (``report`` never opens a store); what joins them lives here.
"""

from __future__ import annotations

from pathlib import Path


def report_on(
    source: str,
    store_path: str | None = None,
    out_dir: str | Path = "report",
    without: list[str] | None = None,
    metric: str = "us_per_task",
    before_after: list[tuple[str, str | None]] | None = None,
) -> Path:
    """Report on a campaign (by name) or a dataset CSV: ``out_dir/report.html``."""
    from perflab.campaign.source import open_source
    from perflab.report.html import write_report

    src = open_source(source, store_path, metric)
    return write_report(src.dataset(metric), src.runs, out_dir, source, without, before_after)
