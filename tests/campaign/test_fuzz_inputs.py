"""Fuzzing the two parsers of user files (hypothesis): any input gives either a result or one
PerflabError — never another exception. 2,000 examples per parser (issue 17)."""

from __future__ import annotations

import csv
import io
import json
import math
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from cliprops import examples
from perflab.campaign.dataset import read_csv
from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs

#: 200 examples a property in the suite (2,000 in the slow profile, drawn afresh).
EXAMPLES = examples(200)
TMP = Path(tempfile.mkdtemp(prefix="perflab-fuzz-"))

# --- CSV ------------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=10)
NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**20), 10**20).map(str),
    st.sampled_from(["0", "1", "-1", "1e309", "nan", "inf", "-0", "1e-320", "9" * 400, "1_0"]),
)
GOOD = st.one_of(st.floats(1e-3, 1e7).map(repr), st.integers(1, 10**6).map(str))
#: Mostly a good metric value, sometimes any number (negative, zero, huge, inf, nan).
METRIC = st.one_of(GOOD, GOOD, GOOD, NUMBER)
#: A plausible value per column (a random one some of the time).
COLUMN_VALUES: dict[str, Any] = {
    "run_id": st.one_of(st.sampled_from(["r1", "r2", ""]), TEXT),
    "timestamp": st.one_of(
        st.sampled_from(["2026-01-01T00:00:00", "2026-13-45", "1700000000", "0001-01-01", ""]),
        st.integers(0, 2**32).map(str),
        NUMBER,
    ),
    "status": st.sampled_from(["ok", "failed", "timeout", "", "OK", "done"]),
    "treatments": st.one_of(
        st.sampled_from(["", "a", "a,b", "a=1", "b, c"]),
        st.sampled_from(["", "a", "a,b", "a=1", "b, c"]),
        st.sampled_from(["1x", "a b"]),
        TEXT,
    ),
}
FACTOR_CELL = st.one_of(
    st.sampled_from(["0", "1"]), st.sampled_from(["0", "1", "true", "False", "2", "", "yes"])
)
COLUMNS = [
    "tasks",
    "wall_s",
    "tasks_per_s",
    "cpu_user_s",
    "utilization",
    "cfg_x",
    "tasks",
    "wall_s",
    "tasks_per_s",
    "cpu_user_s",
    "utilization",
    "cfg_x",
    "time",
    "us",
    "1x",
    "",
    "a b",
    "µs/task",
]


def rare(draw: st.DrawFn, n: int = 10) -> bool:
    """True about one time in ``n`` (a uniform pick: hypothesis favours the ends of ranges)."""
    return bool(draw(st.sampled_from(range(n))) == n // 2)


def good_cell(draw: st.DrawFn, col: str) -> str:
    if col in COLUMN_VALUES:
        return str(draw(GOOD_VALUES.get(col, COLUMN_VALUES[col])))
    if col in ("a", "b", "cfg_x"):
        return draw(st.sampled_from(["0", "1"]))
    return str(draw(GOOD))


GOOD_VALUES: dict[str, Any] = {
    "run_id": st.uuids().map(lambda u: u.hex[:8]),
    "timestamp": st.integers(0, 2**32).map(str),
    "status": st.sampled_from(["ok", "failed", "timeout"]),
    "treatments": st.sampled_from(["", "a", "a,b", "a=1", "b, c"]),
}
MUTATIONS = ["cell", "cell", "cell", "header", "duplicate", "separator", "bytes", "row", "bom"]


@st.composite
def csv_text(draw: st.DrawFn) -> bytes:
    """A well-formed dataset CSV, the same with one thing wrong, or raw noise."""
    kind = draw(st.sampled_from(["good", "mutated", "mutated", "noise"]))
    if kind == "noise":
        return draw(st.binary(max_size=300))
    header = ["run_id", "timestamp", "us_per_task", "treatments"]
    header += draw(
        st.lists(
            st.sampled_from(
                ["a", "b", "status", "tasks", "wall_s", "tasks_per_s", "utilization", "cfg_x"]
            ),
            max_size=3,
            unique=True,
        )
    )
    header = draw(st.permutations(header))
    rows = [[good_cell(draw, c) for c in header] for _ in range(draw(st.integers(1, 4)))]
    sep = draw(st.sampled_from([";", ","]))
    if kind == "mutated":
        what = draw(st.sampled_from(MUTATIONS))
        r, c = draw(st.integers(0, len(rows) - 1)), draw(st.integers(0, len(header) - 1))
        if what == "cell":
            rows[r][c] = draw(st.one_of(TEXT, NUMBER, COLUMN_VALUES.get(header[c], FACTOR_CELL)))
        elif what == "header":
            header[c] = draw(st.one_of(st.sampled_from(COLUMNS), TEXT))
        elif what == "duplicate":
            header[c] = header[(c + 1) % len(header)]
        elif what == "separator":
            sep = draw(st.sampled_from(["\t", " ", "|"]))
        elif what == "row":
            rows[r] = rows[r][:-1] if draw(st.booleans()) else [*rows[r], "x"]
    out = io.StringIO()
    csv.writer(out, delimiter=sep, lineterminator=draw(st.sampled_from(["\n", "\r\n"]))).writerows(
        [header, *rows]
    )
    data = out.getvalue().encode()
    if kind == "mutated" and what == "bom":
        data = b"\xef\xbb\xbf" + data
    if kind == "mutated" and what == "bytes":
        cut = draw(st.integers(0, len(data)))
        data = data[:cut] + draw(st.binary(min_size=1, max_size=4)) + data[cut:]
    return data


@EXAMPLES
@given(data=csv_text(), metric=st.sampled_from(["us_per_task", "tasks_per_s", "us", "nope"]))
def test_csv_importer_gives_records_or_one_perflab_error(data: bytes, metric: str) -> None:
    path = TMP / "fuzz.csv"
    path.write_bytes(data)
    try:
        records = read_csv(path, "fuzz", metric)
    except PerflabError as exc:
        assert str(exc).strip() and "\n" not in str(exc).strip()
        return
    assert records
    for r in records:
        for m in ("us_per_task", "wall_s", "tasks_per_s"):
            v = getattr(r, m)
            assert v is None or (math.isfinite(v) and v > 0), (m, v)


# --- catalog --------------------------------------------------------------------------------

META = [
    "description",
    "category",
    "targets",
    "levels",
    "conflicts",
    "requires",
    "tags",
    "override",
    "bogus",
]
EFFECTS: dict[str, Any] = {
    "config": st.dictionaries(
        st.sampled_from(["prefetch_capacity", "poll_period", "x"]),
        st.one_of(st.integers(-5, 500), st.just("{level}"), TEXT),
        max_size=2,
    ),
    "env": st.dictionaries(st.sampled_from(["X", "Y", ""]), st.one_of(TEXT, st.integers())),
    "rundir": st.sampled_from(["/dev/shm", "relative", "", "/tmp/{level}"]),
    "python": st.sampled_from(["/usr/bin/python3", "/nonexistent", "venv", ""]),
    "patch": st.fixed_dictionaries(
        {},
        optional={
            "package": st.sampled_from(["parsl", "nope"]),
            "diff": st.sampled_from(["x.diff", "/etc/hostname", ""]),
            "version": st.sampled_from(["1", ""]),
        },
    ),
    "wrapper": st.fixed_dictionaries(
        {},
        optional={
            "nice": st.one_of(st.integers(-30, 30), st.just("{level}"), TEXT),
            "policy": st.sampled_from(["batch", "idle", "rt", "{level}"]),
            "cpus": st.sampled_from(["0", "0-1", "1,3", "x", "{level}", ""]),
            "affinity": st.sampled_from(["roles", "none"]),
        },
    ),
    "workload": st.dictionaries(
        st.sampled_from(["arg_bytes", "task_ms", "zz"]),
        st.one_of(st.integers(-3, 10**6), TEXT),
        max_size=2,
    ),
    "label": st.sampled_from([True, False, 1, "yes"]),
}
META_VALUES: dict[str, Any] = {
    "description": TEXT,
    "category": st.sampled_from(["environment", "safe_config", "source_keep", "nope"]),
    "targets": st.lists(st.sampled_from(["parsl-htex", "command", "*", "nope"]), max_size=2),
    "levels": st.lists(st.one_of(st.integers(0, 100), TEXT), max_size=3),
    "conflicts": st.lists(st.sampled_from(["f1", "f2", "cfg_poll_100", "zz"]), max_size=2),
    "requires": st.lists(st.sampled_from(["f1", "f2", "zz"]), max_size=1),
    "tags": st.lists(st.sampled_from(["logging", "x"]), max_size=2),
    "override": st.sampled_from([True, False, "yes"]),
}
SCALARS = st.one_of(TEXT, st.integers(-(2**70), 2**70), st.floats(), st.booleans())
ANY = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "nice"]), inner)
    ),
    max_leaves=5,
)


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return (
            "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        )
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + "}"


@st.composite
def catalog_text(draw: st.DrawFn) -> bytes:
    """Mostly plausible catalogs with some wrong keys, types and values; sometimes noise."""
    if rare(draw):
        return draw(st.binary(max_size=200))
    names = st.sampled_from(["f1", "f2", "f1", "f2", "cfg_poll_100", "affinity", "a.b", "x y"])
    out = []
    for name in draw(st.lists(names, max_size=3, unique=True)):
        out.append(f"[factor.{json.dumps(name)}]")
        keys = draw(st.lists(st.sampled_from([*EFFECTS, *META]), max_size=4, unique=True))
        for key in keys:
            if rare(draw) or key == "bogus":
                value = draw(ANY)
            else:
                value = draw(EFFECTS[key] if key in EFFECTS else META_VALUES[key])
            out.append(f"{key} = {toml_value(value)}")
    if rare(draw):
        out.insert(0, draw(st.sampled_from(["x = 1", "[other]", "factor = 3", "[[factor]]"])))
    return "\n".join(out).encode()


@EXAMPLES
@given(data=catalog_text())
def test_catalog_loader_gives_a_catalog_or_one_perflab_error(data: bytes) -> None:
    path = TMP / "fuzz.toml"
    path.write_bytes(data)
    try:
        catalog = load_catalogs([str(path)])
    except PerflabError as exc:
        assert str(exc).strip() and "\n" not in str(exc).strip()
        return
    for name in catalog.names():
        catalog.get(name).to_dict()
