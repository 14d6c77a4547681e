"""The analysis dataset: ok runs, one metric, a 0/1 matrix of factors, and what is known
about the factors (typed metadata handed in by whoever opened the source)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np
import pandas as pd

from perflab.analysis.setstats import keys_of
from perflab.errors import PerflabError, Unanswerable
from perflab.run.record import DATASET_COLUMNS

#: Columns of a dataset frame that are not factors.
NON_FACTORS = set(DATASET_COLUMNS)
#: An optional frame column: each run's replicate block (never part of the CSV contract).
BLOCK_COLUMN = "_replicate"


@dataclass
class StudyMeta:
    """What the analysis may know beyond the runs: the orders a ``sequences`` design applied,
    and the catalog's facts about the factors (keyed by treatment string, e.g. ``a=100``)."""

    sequences: list[list[str]] = field(default_factory=list)
    categories: dict[str, str] = field(default_factory=dict)
    #: Category names in the "nice" order (safest first).
    category_order: list[str] = field(default_factory=list)
    conflicts: set[tuple[str, str]] = field(default_factory=set)
    #: (a, b): a set containing a must contain b.
    requires: set[tuple[str, str]] = field(default_factory=set)
    tags: dict[str, list[str]] = field(default_factory=dict)

    def tagged(self, tag: str) -> list[str]:
        return sorted(f for f, tags in self.tags.items() if tag in tags)


@dataclass
class Dataset:
    """Ok runs with their metric ``y``, factor matrix ``x`` (n x k, 0/1) and times."""

    y: np.ndarray
    x: np.ndarray
    factors: list[str]
    t: np.ndarray  # Unix seconds
    metric: str
    n_failed: int = 0
    dropped: list[str] = field(default_factory=list)
    meta: StudyMeta = field(default_factory=StudyMeta)
    #: Each run's replicate block (the campaign's replicate number), when known.
    blocks: np.ndarray | None = None

    @property
    def sequences(self) -> list[list[str]]:
        return self.meta.sequences

    @property
    def conflicts(self) -> set[tuple[str, str]]:
        return self.meta.conflicts

    @property
    def keys(self) -> np.ndarray:
        """Each run's treatment set as a bitmask (factor j is bit j)."""
        return keys_of(self.x)

    def key_of(self, names: list[str] | set[str]) -> int:
        idx = {f: j for j, f in enumerate(self.factors)}
        unknown = sorted(set(names) - set(idx))
        if unknown:
            raise PerflabError(
                f"{', '.join(unknown)}: not among the analysed factors ({', '.join(self.factors)})"
            )
        return int(sum(1 << idx[n] for n in names))

    def names_of(self, key: int) -> list[str]:
        return [f for j, f in enumerate(self.factors) if key >> j & 1]

    def subset(self, mask: np.ndarray) -> Dataset:
        blocks = None if self.blocks is None else self.blocks[mask]
        return replace(self, y=self.y[mask], x=self.x[mask], t=self.t[mask], blocks=blocks)


def _unix(ts: pd.Series) -> np.ndarray:
    if pd.api.types.is_numeric_dtype(ts):
        return ts.to_numpy(dtype=float)
    return np.array([datetime.fromisoformat(str(v)).timestamp() for v in ts], dtype=float)


def frame_factors(df: pd.DataFrame) -> list[str]:
    """The factor names of a dataset frame: its 0/1 columns, else its ``treatments``."""
    names = [c for c in df.columns if c not in NON_FACTORS]
    if not names and "treatments" in df.columns:
        names = sorted({t for v in df["treatments"].fillna("") for t in str(v).split(",") if t})
    return names


def _factor_matrix(sub: pd.DataFrame, names: list[str]) -> np.ndarray:
    """The runs' 0/1 matrix of ``names``: their columns, else membership in
    ``treatments``."""
    small = (np.bool_, np.int8)
    if all(f in sub.columns and sub[f].dtype in small for f in names) and names:
        # one block copy; int64 columns of a million runs would be 240 MB
        return sub[names].to_numpy(dtype=np.int8)
    cols = []
    for f in names:
        if f in sub.columns:
            cols.append(sub[f].astype(int).to_numpy())
        else:
            cols.append(
                np.array([f in str(v).split(",") for v in sub["treatments"].fillna("")], dtype=int)
            )
    return np.column_stack(cols) if cols else np.zeros((len(sub), 0), dtype=int)


def from_frame(
    df: pd.DataFrame,
    metric: str = "us_per_task",
    factors: list[str] | None = None,
    meta: StudyMeta | None = None,
) -> Dataset:
    """Build a Dataset from a dataset frame (see perflab.campaign.dataset). Raises
    PerflabError for an empty dataset, a missing metric or only failed runs; warns about and
    drops a factor that never varies."""
    if df.empty:
        raise PerflabError("the dataset is empty")
    if metric not in df.columns:
        raise PerflabError(f"the dataset has no {metric!r} column")
    status = df["status"] if "status" in df.columns else pd.Series(["ok"] * len(df))
    ok = (status == "ok").to_numpy() & df[metric].notna().to_numpy()
    if not ok.any():
        failed = int((status != "ok").sum())
        if failed:  # runs were made and failed: nothing to analyse, and the runs say why
            raise Unanswerable(
                f"no ok run with a {metric} value: {failed} of {len(df)} runs failed"
            )
        raise PerflabError(f"the dataset has no ok run with a {metric} value ({len(df)} runs)")
    names = factors if factors is not None else frame_factors(df)
    # only the columns the dataset reads, and no row copy when every run counts
    wanted = [metric, *(c for c in ("timestamp", BLOCK_COLUMN) if c in df.columns)]
    wanted += [f for f in names if f in df.columns and f not in wanted]
    if any(f not in df.columns for f in names):
        wanted.append("treatments")
    sub = df[wanted] if ok.all() else df.loc[ok, wanted]
    x = _factor_matrix(sub, names)
    sums = x.sum(axis=0)
    varied = [j for j in range(x.shape[1]) if 0 < sums[j] < len(x)]
    dropped = [names[j] for j in range(len(names)) if j not in varied]
    for f in dropped:
        warnings.warn(f"factor {f!r} never varies among the ok runs: left out", stacklevel=2)
    if not varied:
        raise PerflabError("no factor varies among the ok runs: nothing to analyse")
    ts = _unix(sub["timestamp"]) if "timestamp" in sub.columns else np.zeros(len(sub))
    return Dataset(
        y=sub[metric].to_numpy(dtype=float),
        x=(x if len(varied) == x.shape[1] else x[:, varied]).astype(np.int8, copy=False),
        factors=[names[j] for j in varied],
        t=ts,
        metric=metric,
        n_failed=int((~ok).sum()),
        dropped=dropped,
        meta=meta or StudyMeta(),
        blocks=sub[BLOCK_COLUMN].to_numpy(dtype=int) if BLOCK_COLUMN in sub.columns else None,
    )
