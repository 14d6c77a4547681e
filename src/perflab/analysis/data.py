"""The analysis dataset: ok runs, one metric, and a 0/1 matrix of factors."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from perflab.dataset import BASE_COLUMNS
from perflab.errors import PerflabError

#: Columns of a dataset frame that are not factors.
NON_FACTORS = set(BASE_COLUMNS)


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
    sequences: list[list[str]] = field(default_factory=list)
    categories: dict[str, str] = field(default_factory=dict)
    conflicts: set[tuple[str, str]] = field(default_factory=set)

    @property
    def keys(self) -> np.ndarray:
        """Each run's treatment set as a bitmask (factor j is bit j)."""
        return (self.x.astype(np.int64) << np.arange(self.x.shape[1], dtype=np.int64)).sum(axis=1)

    def key_of(self, names: list[str] | set[str]) -> int:
        idx = {f: j for j, f in enumerate(self.factors)}
        return int(sum(1 << idx[n] for n in names))

    def names_of(self, key: int) -> list[str]:
        return [f for j, f in enumerate(self.factors) if key >> j & 1]

    def subset(self, mask: np.ndarray) -> Dataset:
        return Dataset(
            self.y[mask],
            self.x[mask],
            self.factors,
            self.t[mask],
            self.metric,
            self.n_failed,
            self.dropped,
            self.sequences,
            self.categories,
            self.conflicts,
        )


def _unix(ts: pd.Series) -> np.ndarray:
    if pd.api.types.is_numeric_dtype(ts):
        return ts.to_numpy(dtype=float)
    return np.array([datetime.fromisoformat(str(v)).timestamp() for v in ts], dtype=float)


def from_frame(
    df: pd.DataFrame, metric: str = "us_per_task", factors: list[str] | None = None
) -> Dataset:
    """Build a Dataset from a dataset frame (see perflab.dataset). Raises PerflabError for an
    empty dataset, a missing metric or only failed runs; warns about and drops a factor that
    never varies."""
    if df.empty:
        raise PerflabError("the dataset is empty")
    if metric not in df.columns:
        raise PerflabError(f"the dataset has no {metric!r} column")
    status = df["status"] if "status" in df.columns else pd.Series(["ok"] * len(df))
    ok = (status == "ok").to_numpy() & df[metric].notna().to_numpy()
    if not ok.any():
        raise PerflabError(f"the dataset has no ok run with a {metric} value ({len(df)} runs)")
    names = factors if factors is not None else [c for c in df.columns if c not in NON_FACTORS]
    if not names and "treatments" in df.columns:
        names = sorted({t for v in df["treatments"].fillna("") for t in str(v).split(",") if t})
    sub = df.loc[ok]
    cols = []
    for f in names:
        if f in sub.columns:
            cols.append(sub[f].astype(int).to_numpy())
        else:
            cols.append(
                np.array([f in str(v).split(",") for v in sub["treatments"].fillna("")], dtype=int)
            )
    x = np.column_stack(cols) if cols else np.zeros((len(sub), 0), dtype=int)
    varied = [j for j in range(x.shape[1]) if 0 < x[:, j].sum() < len(x)]
    dropped = [names[j] for j in range(len(names)) if j not in varied]
    for f in dropped:
        warnings.warn(f"factor {f!r} never varies among the ok runs: left out", stacklevel=2)
    if not varied:
        raise PerflabError("no factor varies among the ok runs: nothing to analyse")
    ts = _unix(sub["timestamp"]) if "timestamp" in sub.columns else np.zeros(len(sub))
    return Dataset(
        y=sub[metric].to_numpy(dtype=float),
        x=x[:, varied].astype(np.int8),
        factors=[names[j] for j in varied],
        t=ts,
        metric=metric,
        n_failed=int((~ok).sum()),
        dropped=dropped,
    )


def load(source: str, store_path: str | None = None, metric: str = "us_per_task") -> Dataset:
    """A campaign name (from the store) or a dataset CSV path."""
    from perflab.dataset import frame, read_csv

    p = Path(source)
    if p.suffix == ".csv" or p.is_file():
        if not p.is_file():
            raise PerflabError(f"{source}: no such file")
        records = read_csv(p, p.stem, metric)
        ds = from_frame(frame(records), metric)
        return ds
    from perflab.factors.catalog import load_catalogs
    from perflab.store import Store

    store = Store(store_path)
    definition = store.campaign(source)
    ds = from_frame(frame(store.records(source), definition.get("factors")), metric)
    ds.sequences = definition.get("design_info", {}).get("sequences", [])
    if definition.get("design") != "imported":
        catalog = load_catalogs(definition.get("catalogs", []))
        for f in ds.factors:
            name = f.partition("=")[0]
            if name in catalog:
                ds.categories[f] = catalog.get(name).category
                for other in catalog.get(name).conflicts:
                    for g in ds.factors:
                        if g.partition("=")[0] == other:
                            ds.conflicts.add(tuple(sorted((f, g))))  # type: ignore[arg-type]
    return ds
