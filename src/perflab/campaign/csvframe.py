"""A dataset CSV straight into a run frame, column at a time (pyarrow), for the analysis.

``dataset.read_csv`` checks a file row by row into RunRecords and names the first bad line;
at a million rows that costs minutes and gigabytes. ``read_frame`` parses typed columns with
pyarrow's CSV reader and checks the same rules on whole columns. Whatever it cannot vouch
for (a bad or unusual cell, a blank-padded value, a line of the wrong length) sends the file
to ``read_csv``, so errors and results stay exactly those of the row-by-row parser (a test
compares the two frames). A rule added to ``read_csv`` needs its column-wise twin here.

The frame has ``frame(read_csv(...))``'s columns and values, except ``timestamp``: Unix
seconds (truncated to the millisecond, as the ISO text ``read_csv`` stores) instead of text.
"""

from __future__ import annotations

import csv
import uuid
from itertools import compress
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv

from perflab.campaign.dataset import ALIASES, column_name, frame, read_csv
from perflab.files import NAME_RE
from perflab.run.record import DATASET_COLUMNS, INTEGER_METRICS, METRICS, STATUSES

#: The ISO-8601 forms taken column-wise; anything else goes to the row-by-row parser.
ISO_RE = r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?$"
TEXT_COLUMNS = ("run_id", "timestamp", "status", "treatments")
#: perflab's own timestamps (d: a digit), read by integer arithmetic.
PERFLAB_ISO = "dddd-dd-ddTdd:dd:dd.ddd+00:00"
#: Where year, month, day, hour, minute, second and millisecond sit among its digits.
_ISO_FIELDS = ((0, 4), (4, 6), (6, 8), (8, 10), (10, 12), (12, 14), (14, 17))


class _RowByRow(Exception):
    """The column-wise reader cannot vouch for this file; ``read_csv`` decides."""


def read_frame(path: str | Path, metric: str = "us_per_task") -> pd.DataFrame:
    """The run frame of a dataset CSV (see the module's note); PerflabError naming the file
    and line for bad input, as ``read_csv``."""
    path = Path(path)
    try:
        return _columnwise(path, metric)
    except _RowByRow:
        return frame(read_csv(path, path.stem, metric))


def _header(path: Path, metric: str) -> tuple[str, list[str], list[str]]:
    try:
        with open(path, encoding="utf-8-sig") as f:
            first = f.readline().rstrip("\r\n")
    except (OSError, UnicodeDecodeError):
        raise _RowByRow from None
    delimiter = ";" if first.count(";") >= first.count(",") else ","
    cells = next(csv.reader([first], delimiter=delimiter), [])
    header = [column_name(h) for h in cells]
    factor_cols = [h for h in header if h not in DATASET_COLUMNS]
    if (
        not header
        or len(set(header)) != len(header)
        or ALIASES.get(metric, metric) not in header
        or "timestamp" not in header
        or any(not NAME_RE.match(h) for h in factor_cols)
        or ("treatments" not in header and not factor_cols)
    ):
        raise _RowByRow
    return delimiter, header, factor_cols


def _table(path: Path, delimiter: str, header: list[str], factor_cols: list[str]) -> pa.Table:
    types: dict[str, pa.DataType] = {h: pa.string() for h in header}
    types.update({m: pa.float64() for m in METRICS if m in header})
    types.update({f: pa.bool_() for f in factor_cols})
    try:
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=header, skip_rows=1),
            parse_options=pacsv.ParseOptions(delimiter=delimiter),
            convert_options=pacsv.ConvertOptions(
                column_types=types,
                null_values=[""],
                strings_can_be_null=True,
                true_values=["1", "True", "true"],
                false_values=["0", "False", "false"],
            ),
        )
    except (pa.ArrowInvalid, OSError):
        raise _RowByRow from None
    # A line of empty cells is skipped, as read_csv skips it (none if a column has no empty).
    if table.num_rows and table.columns[0].null_count:
        empty = table.columns[0].is_null()
        for col in table.columns[1:]:
            empty = pc.and_(empty, col.is_null())
        if pc.any(empty).as_py():
            table = table.filter(pc.invert(empty))
    if table.num_rows == 0:
        raise _RowByRow
    for name in TEXT_COLUMNS:
        # read_csv strips every cell: a padded one is left to it
        if (
            name in header
            and _maybe_padded(table[name])
            and not pc.all(pc.equal(table[name], pc.utf8_trim_whitespace(table[name]))).as_py()
        ):
            raise _RowByRow
    if "treatments" in header and pc.any(pc.match_substring(table["treatments"], "label:")).as_py():
        raise _RowByRow  # an older export's label:NAME, named NAME by read_csv
    return table


def _maybe_padded(col: pa.ChunkedArray) -> bool:
    """Whether a cell may start or end with whitespace: its first or last byte is a space, a
    control or not ASCII (every whitespace character is one of those). Reads the string
    buffers; only a column with such a byte needs the exact (and 20x dearer) comparison."""
    for chunk in col.chunks:
        if chunk.type != pa.string() or len(chunk) == 0:
            return chunk.type != pa.string()
        _, offsets, data = chunk.buffers()
        off = np.frombuffer(offsets, np.int32, len(chunk) + 1, chunk.offset * 4)
        start, end = off[:-1], off[1:]
        some = end > start
        if data is None or not some.any():
            continue
        raw = np.frombuffer(data, np.uint8)
        ends = np.concatenate([raw[start[some]], raw[end[some] - 1]])
        if ((ends <= 0x20) | (ends >= 0x7F)).any():
            return True
    return False


def _columnwise(path: Path, metric: str) -> pd.DataFrame:
    delimiter, header, factor_cols = _header(path, metric)
    metric = ALIASES.get(metric, metric)
    table = _table(path, delimiter, header, factor_cols)
    n = table.num_rows
    out: dict[str, object] = {"run_id": _run_ids(table, n), "timestamp": _timestamps(table)}
    if "status" in header:
        status = pc.fill_null(table["status"], "ok")
        if not pc.all(pc.is_in(status, pa.array(STATUSES))).as_py():
            raise _RowByRow
        out["status"] = status.to_pandas()  # Arrow-backed strings, no Python objects
    else:
        out["status"] = np.full(n, "ok", dtype=object)
    values = _metrics(table, n)
    if np.isnan(values[metric][np.asarray(out["status"] == "ok")]).any():
        raise _RowByRow  # an ok run without its metric
    if metric == "tasks_per_s":
        tps = values[metric]
        fill = np.isnan(values["us_per_task"]) & ~np.isnan(tps) & (tps != 0)
        with np.errstate(divide="ignore"):
            values["us_per_task"] = np.where(fill, 1e6 / tps, values["us_per_task"])
    out.update(values)
    x, names, (strings, inverse) = _factors(table, factor_cols, "treatments" in header)
    out["treatments"] = pa.array(strings, pa.string()).take(pa.array(inverse)).to_pandas()
    df = pd.DataFrame(out, columns=DATASET_COLUMNS)
    return pd.concat([df, pd.DataFrame(x, columns=names)], axis=1)


def _run_ids(table: pa.Table, n: int) -> object:
    if "run_id" not in table.column_names:
        # read_csv draws a random id per run; unique is all that matters
        stem = uuid.uuid4().hex[:8]
        return np.array([f"{stem}{i:08x}" for i in range(n)], dtype=object)
    ids = table["run_id"]
    if ids.null_count or pc.count_distinct(ids).as_py() != n:
        raise _RowByRow  # missing ids get fresh ones there; repeats are an error there
    return ids.to_pandas()


def _metrics(table: pa.Table, n: int) -> dict[str, np.ndarray]:
    values: dict[str, np.ndarray] = {}
    for m in METRICS:
        if m not in table.column_names:
            values[m] = np.full(n, np.nan)
            continue
        col = table[m]
        v = np.asarray(col.to_numpy(zero_copy_only=False), dtype=float)
        given = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False))
        if not np.isfinite(v[given]).all():
            raise _RowByRow  # "nan"/"inf" cells are errors there
        values[m] = np.trunc(v) if m in INTEGER_METRICS else v
    return values


def _timestamps(table: pa.Table) -> np.ndarray:
    """Unix seconds, truncated to the millisecond exactly as read_csv's ISO text is."""
    ts = table["timestamp"]
    if ts.null_count:
        raise _RowByRow
    try:
        num = np.asarray(pc.cast(ts, pa.float64()).to_numpy(zero_copy_only=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        num = None
    if num is not None:
        if not np.isfinite(num).all():
            raise _RowByRow
        # datetime.fromtimestamp: whole seconds, plus the fraction rounded half-even to µs
        whole = np.floor(num)
        micros = whole.astype(np.int64) * 1_000_000 + np.rint((num - whole) * 1e6).astype(np.int64)
    else:
        micros = _perflab_iso(ts)
        if micros is None:
            micros = _any_iso(ts)
    return (micros // 1000 * 1000) / 1e6


def _any_iso(ts: pa.ChunkedArray) -> np.ndarray:
    if not pc.all(pc.match_substring_regex(ts, ISO_RE)).as_py():
        raise _RowByRow
    try:
        dt = pd.to_datetime(ts.to_pandas(), format="ISO8601", utc=True)
    except (ValueError, TypeError, OverflowError):
        raise _RowByRow from None
    return np.asarray(dt.dt.tz_convert(None).to_numpy().astype("datetime64[us]").view(np.int64))


def _perflab_iso(ts: pa.ChunkedArray) -> np.ndarray | None:
    """Microseconds since the epoch when every cell is ``YYYY-MM-DDTHH:MM:SS.mmm+00:00`` (as
    perflab writes them) with a valid date and time within pandas' range; else None (the
    general path decides). Integer arithmetic on the bytes: what ``_any_iso`` gives, 10x
    cheaper."""
    arr = ts.combine_chunks()
    n, width = len(arr), len(PERFLAB_ISO)
    if arr.type != pa.string() or arr.null_count or n == 0:
        return None
    _, offsets, data = arr.buffers()
    off = np.frombuffer(offsets, np.int32, n + 1, arr.offset * 4)
    if off[-1] - off[0] != n * width or not (np.diff(off) == width).all():
        return None
    raw = np.frombuffer(data, np.uint8, n * width, int(off[0])).reshape(n, width)
    layout = np.frombuffer(PERFLAB_ISO.encode(), np.uint8)
    digit = np.flatnonzero(layout == ord("d"))
    other = np.flatnonzero(layout != ord("d"))
    d = raw - np.uint8(ord("0"))  # a non-digit wraps around to above 9
    if (raw[:, other] != layout[other]).any() or (d[:, digit] > 9).any():
        return None
    num = []
    for a, b in _ISO_FIELDS:
        v = np.zeros(n, np.int64)
        for i in digit[a:b]:
            v = v * 10 + d[:, i]
        num.append(v)
    year, month, day, hour, minute, sec, milli = num
    if not ((year >= 1678) & (year <= 2261) & (month >= 1) & (month <= 12)).all():
        return None
    first = (year - 1970).astype("datetime64[Y]") + (month - 1).astype("timedelta64[M]")
    last_day = ((first + 1).astype("datetime64[D]") - first.astype("datetime64[D]")).view(np.int64)
    if not ((day >= 1) & (day <= last_day) & (hour < 24) & (minute < 60) & (sec < 60)).all():
        return None
    days = first.astype("datetime64[D]").view(np.int64) + day - 1
    return (days * 86400 + hour * 3600 + minute * 60 + sec) * 1_000_000 + milli * 1000


def _factors(
    table: pa.Table, factor_cols: list[str], has_treatments: bool
) -> tuple[np.ndarray, list[str], tuple[np.ndarray, np.ndarray]]:
    """The 0/1 matrix of every factor applied at least once (sorted by name), united with
    the names in the ``treatments`` column, and each row's comma-joined set (as the distinct
    sets' strings and each row's index into them)."""
    n = table.num_rows
    names = sorted(factor_cols)
    # column-major: each column is one contiguous copy, and the frame takes it as one block
    x = np.empty((n, len(names)), np.int8, order="F")
    for j, f in enumerate(names):
        if table[f].null_count:
            raise _RowByRow
        x[:, j] = np.asarray(table[f].to_numpy(zero_copy_only=False)).view(np.int8)
    strings, inverse = _joined(x, names)
    if has_treatments and not _same_sets(table["treatments"], strings, inverse):
        x, names = _united(x, names, pc.fill_null(table["treatments"], ""))
        strings, inverse = _joined(x, names)
    keep = np.flatnonzero(x.any(axis=0)).tolist()
    if len(keep) < len(names):
        x, names = x[:, keep], [names[j] for j in keep]
    return x, names, (strings, inverse)


def _same_sets(given: pa.ChunkedArray, strings: np.ndarray, inverse: np.ndarray) -> bool:
    """Whether every row's ``treatments`` text is its joined set (perflab's own export):
    compared once per distinct (text, set) pair, not per run."""
    enc = pc.dictionary_encode(pc.fill_null(given, "").combine_chunks())
    codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    texts = enc.dictionary.to_pylist()
    m = len(strings)
    pairs = pd.unique(codes * m + inverse)  # hashed: the order does not matter here
    return all(texts[c] == strings[i] for c, i in zip(pairs // m, pairs % m, strict=True))


def _united(
    x: np.ndarray, names: list[str], given: pa.ChunkedArray
) -> tuple[np.ndarray, list[str]]:
    """Factor columns united with the names listed in ``treatments`` (parsed once per
    distinct value)."""
    codes, uniques = pd.factorize(np.asarray(given.to_numpy(zero_copy_only=False)))
    parsed = []
    for u in uniques:
        s = {t.strip() for t in str(u).split(",") if t.strip()}
        if any(not NAME_RE.match(t.partition("=")[0]) for t in s):
            raise _RowByRow
        parsed.append(s)
    cols = {f: x[:, j] for j, f in enumerate(names)}
    for t in set().union(*parsed):
        member = np.array([t in s for s in parsed], dtype=np.int8)[codes]
        cols[t] = np.maximum(cols[t], member) if t in cols else member
    every = sorted(cols)
    return np.column_stack([cols[f] for f in every]), every


def _joined(x: np.ndarray, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct row's treatments, comma-joined in name order, and each row's index
    into them (one join per distinct set)."""
    n, k = x.shape
    if k == 0:
        return np.array([""], dtype=object), np.zeros(n, np.int64)
    if k <= 62:
        keys: np.ndarray = np.zeros(n, np.int64)
        for j in range(k):
            keys |= x[:, j].astype(np.int64) << j
        # hashed, in order of first appearance (5x cheaper than sorting; any order will do)
        inverse, uniq = pd.factorize(keys)
        first = np.empty(len(uniq), np.int64)
        first[inverse[::-1]] = np.arange(n - 1, -1, -1)
    else:
        packed = np.ascontiguousarray(np.packbits(x.astype(bool), axis=1))
        keys = packed.view(np.dtype((np.void, packed.shape[1])))[:, 0]
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rows = x[first].astype(bool).tolist()
    strings = np.array([",".join(compress(names, r)) for r in rows], dtype=object)
    return strings, np.ravel(inverse)
