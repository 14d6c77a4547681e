"""Datasets: a campaign's runs as a DataFrame, and the dataset CSV contract (docs/contracts.md).

CSV: semicolon-separated, header row, one row per run:
``run_id;timestamp;status;us_per_task;...metrics...;treatments;<one 0/1 column per factor>``.
Import accepts the ``treatments`` column (comma-separated) or per-factor 0/1 columns,
``timestamp`` as ISO-8601 or Unix seconds, and names the first bad line.
"""

from __future__ import annotations

import codecs
import csv
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from perflab.campaign.definition import IMPORTED, CampaignDef
from perflab.campaign.store import Store
from perflab.errors import PerflabError
from perflab.factors.labels import shown, shown_all
from perflab.files import NAME_RE, atomic_write, check_name
from perflab.run.record import (
    DATASET_COLUMNS,
    INTEGER_METRICS,
    METRICS,
    STATUSES,
    RunRecord,
    metric_problem,
)
from perflab.spec import COMMAND_METRIC, ENGINE_METRIC

#: Header names other tools use for our columns (``time``, ``us``, ...), read on import.
ALIASES = {
    "time": "timestamp",
    "unix_time": "timestamp",
    "started_at": "timestamp",
    "us": "us_per_task",
    "time_per_task_us": "us_per_task",
    "µs/task": "us_per_task",
    "us/task": "us_per_task",
    "treatment": "treatments",
}


def frame(records: list[RunRecord], factors: list[str] | None = None) -> pd.DataFrame:
    """One row per run: metrics, ``treatments`` (comma-joined) and a 0/1 column per factor."""
    rows = []
    for r in records:
        row: dict[str, Any] = {"run_id": r.run_id, "timestamp": r.started_at, "status": r.status}
        row.update({m: getattr(r, m) for m in METRICS})
        row["treatments"] = ",".join(sorted(r.treatments))
        rows.append(row)
    df = pd.DataFrame(rows, columns=DATASET_COLUMNS)
    # a command's label:NAME is NAME in its records, and so in its column
    names = shown_all(factors or sorted({t for r in records for t in r.treatments}))
    sets = [set(r.treatments) for r in records]
    for f in names:
        df[f] = [int(f in s) for s in sets]
    return df


def campaign_frame(store: Store, name: str) -> pd.DataFrame:
    return frame(store.records(name), store.campaign(name).factors)


def export(store: Store, name: str, path: str | Path, fmt: str = "csv") -> Path:
    df = campaign_frame(store, name)
    path = Path(path)
    if fmt not in ("csv", "parquet"):
        raise PerflabError(f"unknown export format {fmt!r} (csv, parquet)")
    try:
        if fmt == "csv":
            return atomic_write(path, lambda tmp: df.to_csv(tmp, sep=";", index=False))
        return atomic_write(path, lambda tmp: df.to_parquet(tmp, index=False))
    except OSError as exc:
        raise PerflabError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _timestamp(raw: str, where: str) -> str:
    raw = raw.strip()
    try:
        value = float(raw)
    except ValueError:
        value = None
    if value is not None:
        try:
            return datetime.fromtimestamp(value, UTC).isoformat(timespec="milliseconds")
        except (OverflowError, OSError, ValueError):
            raise PerflabError(f"{where}: timestamp {raw!r} is out of range") from None
    try:
        ts = datetime.fromisoformat(raw)
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=UTC)
        return ts.astimezone(UTC).isoformat(timespec="milliseconds")
    except (ValueError, OverflowError):
        raise PerflabError(
            f"{where}: timestamp {raw!r} is neither ISO-8601 nor Unix seconds"
        ) from None


def _lines(path: Path) -> list[str]:
    """A CSV's lines (PerflabError naming the file, and the line of a byte that is not UTF-8)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PerflabError(f"{path}: {exc.strerror}") from None
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PerflabError(f"{path}:{line}: not UTF-8 text (byte {data[exc.start]:#04x})") from None
    lines = text.splitlines()
    if not lines or not any(ln.strip() for ln in lines):
        raise PerflabError(f"{path}: empty file")
    return lines


def _rows(reader: Iterator[list[str]], path: Path) -> Iterator[list[str]]:
    """The reader's rows; a malformed one (e.g. a field over the size limit) as PerflabError."""
    n = 0
    while True:
        n += 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise PerflabError(f"{path}:{n}: malformed CSV ({exc})") from None
        yield row


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def column_name(header: str) -> str:
    """A CSV header cell as perflab names the column: another tool's name for one of ours
    (``ALIASES``), and a label's ``label:NAME`` (older exports) as ``NAME``."""
    h = header.strip()
    return shown(ALIASES.get(h, h))


def csv_metric(path: str | Path) -> str:
    """The metric a dataset CSV is read on when none is named: ``us_per_task`` where any
    row has one, else ``wall_s`` where any row has one (a command measured by perflab);
    an unreadable file is left to ``read_csv`` to name."""
    try:
        lines = _lines(Path(path))
    except PerflabError:
        return ENGINE_METRIC
    delimiter = ";" if lines[0].count(";") >= lines[0].count(",") else ","
    try:
        rows = list(csv.reader(lines, delimiter=delimiter))
    except csv.Error:
        return ENGINE_METRIC
    header = [column_name(h) for h in rows[0]]
    for metric in (ENGINE_METRIC, COMMAND_METRIC):
        if metric in header:
            i = header.index(metric)
            if any(len(r) > i and r[i].strip() for r in rows[1:]):
                return metric
    return ENGINE_METRIC


def read_csv(
    path: str | Path, campaign: str, metric: str | None = "us_per_task"
) -> list[RunRecord]:
    """Parse a dataset CSV into records (nothing is stored; ``metric`` None:
    ``csv_metric``'s). Errors name the file and line."""
    path = Path(path)
    metric = metric or csv_metric(path)
    lines = _lines(path)
    delimiter = ";" if lines[0].count(";") >= lines[0].count(",") else ","
    reader = _rows(csv.reader(lines, delimiter=delimiter), path)
    header = [column_name(h) for h in next(reader, [])]
    if any(_is_number(h) for h in header):
        raise PerflabError(
            f"{path}:1: no header row (the first line must name the columns, e.g. "
            "run_id;timestamp;us_per_task;treatments)"
        )
    if len(set(header)) != len(header):
        raise PerflabError(f"{path}:1: duplicate column names")
    metric = ALIASES.get(metric, metric)
    if metric not in header:
        raise PerflabError(f"{path}:1: no metric column {metric!r} (columns: {', '.join(header)})")
    known = set(DATASET_COLUMNS)
    factor_cols = [h for h in header if h not in known]
    for h in factor_cols:
        if not NAME_RE.match(h):
            raise PerflabError(f"{path}:1: column {h!r} is not a metric or a factor name")
    if "treatments" not in header and not factor_cols:
        raise PerflabError(f"{path}:1: needs a `treatments` column or one 0/1 column per factor")
    records = []
    for n, row in enumerate(reader, 2):
        if not row or all(not c.strip() for c in row):
            continue
        where = f"{path}:{n}"
        if len(row) != len(header):
            raise PerflabError(f"{where}: {len(row)} fields, header has {len(header)}")
        cells = dict(zip(header, (c.strip() for c in row), strict=True))
        treatments = set()
        if "treatments" in cells and cells["treatments"]:
            treatments |= {shown(t) for t in cells["treatments"].split(",") if t.strip()}
        for f in factor_cols:
            if cells[f] not in ("0", "1", "True", "False", "true", "false"):
                raise PerflabError(f"{where}: factor column {f!r} is {cells[f]!r}, not 0/1")
            if cells[f] in ("1", "True", "true"):
                treatments.add(f)
        for t in treatments:
            if not NAME_RE.match(t.partition("=")[0]):
                raise PerflabError(f"{where}: treatment {t!r} is not a valid name")
        status = cells.get("status") or "ok"
        if status not in STATUSES:
            raise PerflabError(f"{where}: status {status!r} is not ok, failed or timeout")
        values: dict[str, Any] = {}
        for m in METRICS:
            raw = cells.get(m, "")
            if raw == "":
                continue
            try:
                values[m] = float(raw)
            except ValueError:
                raise PerflabError(f"{where}: {m} {raw!r} is not a number") from None
            problem = metric_problem(m, values[m])
            if problem:
                raise PerflabError(f"{where}: {problem}")
        if status == "ok" and metric not in values:
            raise PerflabError(f"{where}: no {metric} value for an ok run")
        ts = _timestamp(cells["timestamp"], where) if cells.get("timestamp") else ""
        if not ts:
            raise PerflabError(f"{where}: no timestamp")
        scores: dict[str, Any] = {
            m: int(v) if m in INTEGER_METRICS else v for m, v in values.items()
        }
        if metric == "tasks_per_s" and "us_per_task" not in scores:
            us = 1e6 / values[metric] if values.get(metric) else None
            if us is not None and metric_problem("us_per_task", us):
                raise PerflabError(f"{where}: tasks_per_s {values[metric]!r} is out of range")
            scores["us_per_task"] = us
        rec = RunRecord(
            run_id=cells.get("run_id") or uuid.uuid4().hex[:16],
            campaign=campaign,
            started_at=ts,
            ended_at=ts,
            target="imported",
            workload=None,
            status=status,
            treatments=sorted(treatments),
            measurement={"imported_from": str(path), "line": n},
            **scores,
        )
        records.append(rec)
    if not records:
        raise PerflabError(f"{path}: no data rows")
    ids = [r.run_id for r in records]
    if len(set(ids)) != len(ids):
        raise PerflabError(f"{path}: run_id values repeat")
    return records


def import_csv(
    store: Store, path: str | Path, campaign: str, metric: str | None = "us_per_task"
) -> int:
    """Import a CSV as a new campaign, all rows in one transaction (or none)."""
    check_name(campaign, "campaign name")
    if campaign in store.campaign_names():
        raise PerflabError(f"campaign {campaign!r} already exists in {store.path}")
    records = read_csv(path, campaign, metric)
    factors = sorted({t for r in records for t in r.treatments})
    definition = CampaignDef(
        name=campaign,
        factors=factors,
        design=IMPORTED,
        imported_from=str(Path(path).resolve()),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    store.import_campaign(definition, records)
    return len(records)
