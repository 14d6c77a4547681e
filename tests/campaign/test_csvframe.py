"""The column-wise CSV reader gives exactly the row-by-row parser's frame and dataset, and
its errors (by handing what it cannot vouch for to that parser)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from perflab import PerflabError
from perflab.analysis.data import from_frame
from perflab.campaign import csvframe
from perflab.campaign.dataset import frame, read_csv

HEADER = "run_id;timestamp;status;tasks;us_per_task;treatments;a;b;c"
ROWS = [
    "r1;2026-01-01T00:00:04.0829+00:00;ok;10.7;900.5;a;1;0;0",
    "r2;2026-01-01 02:00:05.704+02:00;ok;;800;a,b;1;1;0",
    "r3;2026-01-01T00:00:06Z;failed;;;;0;0;0",
    "r4;2026-01-01T00:00:07;ok;3;1000;;0;0;0",
    "r5;2026-01-01T00:00:08.5;timeout;;;c;0;0;true",
    "r6;2026-01-01T00:00:09.999999;;;750.25;b,c;False;1;1",
]


def frames(path: Path, metric: str = "us_per_task") -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """(column-wise frame, row-by-row frame, whether the column-wise path vouched)."""
    try:
        fast, vouched = csvframe._columnwise(path, metric), True
    except csvframe._RowByRow:
        fast, vouched = csvframe.read_frame(path, metric), False
    return fast, frame(read_csv(path, path.stem, metric)), vouched


def assert_same(path: Path, metric: str = "us_per_task", vouched: bool = True) -> None:
    fast, slow, took = frames(path, metric)
    assert took == vouched
    assert list(fast.columns) == list(slow.columns)
    for col in slow.columns:
        if col in ("run_id", "timestamp"):
            continue
        a, b = fast[col].to_numpy(), slow[col].to_numpy()
        if col in ("status", "treatments"):
            assert list(a) == list(b), col
        else:
            assert np.array_equal(a.astype(float), b.astype(float), equal_nan=True), col
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        da, db = from_frame(fast, metric), from_frame(slow, metric)
    assert da.factors == db.factors and da.n_failed == db.n_failed
    assert np.array_equal(da.y, db.y) and np.array_equal(da.x, db.x)
    assert np.array_equal(da.t, db.t)  # to the bit: the same millisecond truncation


def write(tmp_path: Path, lines: list[str], name: str = "d.csv") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def test_export_shaped_file_is_read_column_wise_and_identically(tmp_path: Path) -> None:
    assert_same(write(tmp_path, [HEADER, *ROWS]))


def test_unix_seconds_and_treatments_only_and_blank_lines(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    lines = ["time,us,treatments"]
    for i in range(200):
        t = 1.7e9 + rng.random() * 1e6
        sets = ",".join(f for f in ("x", "y=2", "z") if rng.random() < 0.5)
        lines.append(f'{t!r},{rng.random() * 1000:.6f},"{sets}"')
        if i % 50 == 0:
            lines.append("")
    assert_same(write(tmp_path, lines))


def test_columns_and_a_differing_treatments_list_are_united(tmp_path: Path) -> None:
    rows = [r.replace(";a;1;0;0", ";a,zz;1;0;0") for r in ROWS]
    assert_same(write(tmp_path, [HEADER, *rows]))


def test_other_metric_fills_us_per_task(tmp_path: Path) -> None:
    lines = ["run_id;timestamp;tasks_per_s;a", "1;5;2000;1", "2;6;1500;0", "3;7;1000;0"]
    assert_same(write(tmp_path, lines), metric="tasks_per_s")


@pytest.mark.parametrize(
    "bad",
    [
        "r7;2026-01-01T00:00:10;ok;;nan;;0;0;0",  # not finite
        "r7;2026-01-01T00:00:10;ok;;x;;0;0;0",  # not a number
        "r7;2026-01-01T00:00:10;ok;;1;;2;0;0",  # factor not 0/1
        "r7;2026-01-01T00:00:10;maybe;;1;;0;0;0",  # status
        "r7;yesterday;ok;;1;;0;0;0",  # timestamp
        "r7;2026-01-01T00:00:10;ok;;;;0;0;0",  # ok without metric
        "r1;2026-01-01T00:00:10;ok;;1;;0;0;0",  # repeated run id
        "r7;2026-01-01T00:00:10;ok;;1;;0;0",  # too few fields
        "r7;2026-01-01T00:00:10;ok;;1;9bad;0;0;0",  # bad treatment name
    ],
)
def test_bad_lines_get_the_row_by_row_message(tmp_path: Path, bad: str) -> None:
    p = write(tmp_path, [HEADER, *ROWS, bad])
    with pytest.raises(PerflabError) as slow:
        read_csv(p, "d")
    with pytest.raises(PerflabError) as fast:
        csvframe.read_frame(p)
    assert str(fast.value) == str(slow.value) and str(p) in str(fast.value)


def test_padded_cells_are_left_to_the_row_by_row_parser(tmp_path: Path) -> None:
    rows = [ROWS[0].replace("r1;", " r1 ;"), *ROWS[1:]]
    assert_same(write(tmp_path, [HEADER, *rows]), vouched=False)


def _stamps(values: list[str]) -> pa.ChunkedArray:
    return pa.chunked_array(
        [pa.array(values[: len(values) // 2]), pa.array(values[len(values) // 2 :])]
    )


def test_perflab_timestamps_by_arithmetic_equal_the_general_parser() -> None:
    rng = np.random.default_rng(11)
    secs = rng.integers(-2_000_000_000, 4_000_000_000, 3000)  # 1906 to 2096
    ms = rng.integers(0, 1000, 3000)
    text = [
        pd.Timestamp(int(s) * 1000 + int(m), unit="ms", tz="UTC").isoformat(timespec="milliseconds")
        for s, m in zip(secs, ms, strict=True)
    ]
    text += [
        "2024-02-29T23:59:59.999+00:00",
        "2000-02-29T00:00:00.000+00:00",
        "1970-01-01T00:00:00.000+00:00",
    ]
    ts = _stamps(text)
    fast = csvframe._perflab_iso(ts)
    assert fast is not None and np.array_equal(fast, csvframe._any_iso(ts))
    for bad in (
        "2023-02-29T00:00:00.000+00:00",  # no such day: the general path decides
        "2026-13-01T00:00:00.000+00:00",
        "2026-01-01T24:00:00.000+00:00",
        "2026-01-01T00:00:60.000+00:00",
        "2026-01-01T00:00:00.000+02:00",
        "2026-01-01T00:00:00.00a+00:00",
        "2026-01-01 00:00:00.000+00:00",
        "2026-01-01T00:00:00.0000+00:00",
        "1500-01-01T00:00:00.000+00:00",
    ):
        assert csvframe._perflab_iso(_stamps([*text[:5], bad])) is None, bad


def test_padding_prefilter_flags_every_padded_column() -> None:
    for cell, padded in (
        ("r1", False),
        (" r1", True),
        ("r1\t", True),
        ("r1\xa0", True),
        ("é", True),
    ):
        col = pa.chunked_array([pa.array(["a", None, "", cell]), pa.array(["b"]).slice(0, 1)])
        assert csvframe._maybe_padded(col) == padded, cell
