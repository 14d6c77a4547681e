"""Open what the analysis and report read — a campaign in the store or a dataset CSV — once,
as a run frame plus typed metadata; the analysis itself never opens a store or a catalog."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from perflab.analysis import hostshare
from perflab.analysis.data import BLOCK_COLUMN, Dataset, StudyMeta, frame_factors, from_frame
from perflab.campaign.csvframe import read_frame
from perflab.campaign.dataset import csv_metric, frame
from perflab.campaign.definition import CampaignDef
from perflab.campaign.store import Store
from perflab.errors import PerflabError, Unanswerable
from perflab.factors.catalog import load_catalogs
from perflab.factors.labels import shown_all
from perflab.factors.snapshot import campaign_catalog
from perflab.factors.treat import study_meta
from perflab.run.record import HIGHER_IS_BETTER
from perflab.spec import COMMAND_METRIC, ENGINE_METRIC, default_metric


@dataclass
class Source:
    """A study's runs (one row per run, failed ones too) and what is known about it."""

    name: str
    runs: pd.DataFrame
    factors: list[str]
    meta: StudyMeta
    cause: str = ""  # the last failed run's error (a campaign's; a CSV has none)
    #: runs that overlapped on one host (``hostshare.summary``; a CSV's are not judged)
    shared_hosts: dict[str, Any] = field(default_factory=hostshare.unjudged)
    #: The CI half-width the campaign was created for (``campaign create --precision``;
    #: None: none stored, or a CSV)
    precision: float | None = None
    #: Why sets stopped early, one line each, then the error the looks spent (``stopping``)
    stopped: list[str] = field(default_factory=list)

    #: The metric analysed when none is named (``study_metric``).
    metric: str = ENGINE_METRIC

    def dataset(self, metric: str | None = None) -> Dataset:
        """The analysis dataset of the ok runs with a value of ``metric`` (default: the
        study's own, ``self.metric``)."""
        try:
            return from_frame(self.runs, metric or self.metric, self.factors, self.meta)
        except Unanswerable as exc:
            raise Unanswerable(f"{exc}: {self.cause}" if self.cause else str(exc)) from None


def _cost(metric: str) -> str:
    if metric in HIGHER_IS_BETTER:  # the analysis's best set is its smallest mean
        raise PerflabError(
            f"--metric {metric}: the analysis models a cost (lower is better) and {metric} "
            "is higher-is-better; use --metric us_per_task, its reciprocal per task"
        )
    return metric


def open_source(source: str, store_path: str | None = None, metric: str | None = None) -> Source:
    """A campaign name (from the store) or a dataset CSV path (``.csv``, or an existing file).

    ``metric`` None: the study's own (``study_metric``). A CSV's factors are described by
    the built-in catalog where their names match it.
    """
    if metric is not None:
        _cost(metric)
    p = Path(source)
    if p.suffix == ".csv" or p.is_file():
        if not p.is_file():
            raise PerflabError(f"{source}: no such file")
        metric = _cost(metric or csv_metric(p))
        runs = read_frame(p, metric)
        factors = frame_factors(runs)
        meta = StudyMeta(**study_meta(load_catalogs(), factors))
        return Source(p.stem, runs, factors, meta, metric=metric)
    store = Store(store_path)
    definition = store.campaign(source)
    records = store.records(source)
    shared = hostshare.summary(records)
    if shared["warning"]:  # analyze and report show it (one line), beside the results
        warnings.warn(shared["warning"], stacklevel=2)
    runs = frame(records, definition.factors)
    metric = _cost(metric or study_metric(definition, runs))
    # Replicate blocks adjust every effect (a block that ran slower shifts all its sets).
    runs[BLOCK_COLUMN] = runs["run_id"].map(store.replicates(source)).fillna(0).astype(int)
    catalog = campaign_catalog(definition.catalog_files, definition.catalogs)
    meta = StudyMeta(sequences=definition.sequences, **study_meta(catalog, definition.factors))
    errors = [r.error for r in records if r.status != "ok" and r.error]
    cause = errors[-1].strip().splitlines()[-1] if errors else ""
    from perflab.campaign import stopping

    stops = [s["line"] for s in stopping.stopped(definition)]
    spent = stopping.spent(definition)
    stops += [spent["line"]] if spent else []
    return Source(source, runs, shown_all(definition.factors), meta, cause, shared,
                  definition.precision, stops, metric)  # fmt: skip


def study_metric(definition: CampaignDef, runs: pd.DataFrame) -> str:
    """The metric a campaign is analysed on when none is named: its runs' own (a command's
    ``wall_s`` unless it named another, an engine's ``us_per_task``); an imported one's
    ``us_per_task``, or ``wall_s`` where no run has a µs per task."""
    if definition.base:
        return str(definition.base.get("metric") or default_metric(definition.base.get("command")))
    ok = runs[runs["status"] == "ok"]
    if ok[ENGINE_METRIC].notna().any() or not ok[COMMAND_METRIC].notna().any():
        return ENGINE_METRIC
    return COMMAND_METRIC


def load(source: str, store_path: str | None = None, metric: str | None = None) -> Dataset:
    """The analysis dataset of a campaign or CSV (``open_source(...).dataset(metric)``)."""
    return open_source(source, store_path, metric).dataset(metric)


def export_deltas(
    store_path: str | None, name: str, path: str | Path | None, metric: str | None
) -> Path:
    """Campaign ``name``'s pairs of runs X, X+{t} as a CSV (default ``NAME.deltas.csv``),
    written whole or not at all."""
    from perflab.analysis.deltas import run_pairs
    from perflab.files import atomic_write

    df = run_pairs(load(name, store_path, metric))
    out = Path(path or f"{name}.deltas.csv")
    try:
        return atomic_write(out, lambda tmp: df.to_csv(tmp, sep=";", index=False))
    except OSError as exc:
        raise PerflabError(f"{out}: cannot write ({exc.strerror or exc})") from None
