"""A command's own labels (``label:NAME``) are factors like any other, named ``NAME`` in
every output, and a campaign's export round-trips through ``analyze FILE.csv`` and
``import`` (issue 51)."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cliprops import examples
from perflab import api
from perflab.campaign.csvframe import read_frame
from perflab.campaign.dataset import csv_metric, export, frame, import_csv, read_csv
from perflab.campaign.definition import CampaignDef
from perflab.campaign.source import open_source
from perflab.campaign.stopping import set_key
from perflab.campaign.store import Store
from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs
from perflab.factors.labels import is_label, shown, shown_all
from perflab.factors.treat import treat
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

EXAMPLES = examples(60)
TMP = Path(tempfile.mkdtemp(prefix="perflab-labels-"))


def test_a_label_is_named_without_its_prefix() -> None:
    assert shown("label:prefetch") == "prefetch" and shown(" label:x=3 ") == "x=3"
    assert shown("cfg_prefetch=100") == "cfg_prefetch=100"
    assert is_label("label:a") and not is_label("a")
    assert shown_all(["label:a", "b"]) == ["a", "b"]
    # a planned label:NAME and its runs' NAME are one set to the stopping rules
    assert set_key(["label:b", "a"]) == set_key(["a", "b"]) == "a,b"


def test_a_catalog_name_refused_on_a_command_names_label() -> None:
    cat = load_catalogs()
    spec = RunSpec(command="true")
    with pytest.raises(PerflabError, match="needs a level.*give it as label:prefetch"):
        treat(spec, "prefetch", cat)
    assert treat(spec, "label:prefetch", cat).treatments == ["prefetch"]


def _record(i: int, treatments: list[str], us: float | None, wall: float) -> RunRecord:
    return RunRecord(
        run_id=f"r{i:04d}",
        campaign="c",
        started_at=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000+00:00",
        ended_at="",
        target="command",
        workload=None,
        status="ok",
        treatments=sorted(treatments),
        us_per_task=us,
        tasks_per_s=None if us is None else 1e6 / us,
        wall_s=wall,
    )


NAMES = st.sampled_from(["prefetch", "null_b", "alpha", "cfg_noop_logging", "mine"])


@st.composite
def campaigns(draw: st.DrawFn) -> tuple[list[str], list[RunRecord]]:
    """A campaign's factors (some given as label:NAME, as on the command line) and runs
    whose records name each factor as treat() does (NAME)."""
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    factors = [f"label:{n}" if draw(st.booleans()) else n for n in names]
    printed = draw(st.booleans())  # a printed µs/task, or perflab's own wall time only
    n = draw(st.integers(2, 12))
    records = []
    for i in range(n):
        on = [f for f in names if draw(st.booleans())]
        us = draw(st.floats(0.5, 1e6)) if printed else None
        records.append(_record(i, on, us, draw(st.floats(1e-3, 1e3))))
    return factors, records


def _store(factors: list[str], records: list[RunRecord]) -> Store:
    store = Store(TMP / f"{uuid.uuid4().hex}.sqlite")
    definition = CampaignDef(name="c", factors=factors, design="full", base={})
    store.import_campaign(definition, records)
    return store


@EXAMPLES
@given(campaigns())
def test_export_analyze_import_round_trip(campaign: tuple[list[str], list[RunRecord]]) -> None:
    """Export -> read as ``analyze FILE.csv`` reads it -> import -> export: the same file,
    the same factors (each label by its NAME), the same runs and metric."""
    factors, records = campaign
    store = _store(factors, records)
    out = export(store, "c", TMP / f"{uuid.uuid4().hex}.csv")
    header = out.read_text().splitlines()[0].split(";")
    assert header[-len(factors) :] == shown_all(factors)
    assert not any(h.startswith("label:") for h in header)
    metric = csv_metric(out)
    assert metric == ("us_per_task" if records[0].us_per_task is not None else "wall_s")
    # analyze FILE.csv: the column-wise reader and the row-by-row one agree on every value
    runs = read_frame(out, metric)
    rows = frame(read_csv(out, "c", metric))
    for col in ("run_id", "treatments", metric):
        assert runs[col].tolist() == rows[col].tolist()
    src = open_source(str(out))
    assert src.metric == metric
    assert set(src.factors) == {
        f for f in shown_all(factors) if any(f in r.treatments for r in records)
    }
    # import, then export again: byte for byte the first export
    import_csv(store, out, "back", None)
    again = export(store, "back", TMP / f"{uuid.uuid4().hex}.csv")
    first = pd.read_csv(out, sep=";")
    second = pd.read_csv(again, sep=";")
    used = [f for f in shown_all(factors) if first[f].any()]
    # an import knows only the factors some run took (a never-applied column is all 0)
    assert list(second.columns) == [*first.columns[: -len(factors)], *sorted(used)]
    pd.testing.assert_frame_equal(first[second.columns], second, check_exact=False, rtol=1e-12)
    assert [r.treatments for r in store.records("back")] == [r.treatments for r in records]


def test_an_older_export_with_label_columns_is_read(tmp_path: Path) -> None:
    """An export written before labels were named NAME (``label:prefetch`` columns and
    treatments) is read, column-wise and row by row, with the label named ``prefetch``."""
    csv = tmp_path / "old.csv"
    csv.write_text(
        "run_id;timestamp;status;us_per_task;treatments;label:prefetch;null_b\n"
        "a;2026-01-01T00:00:00.000+00:00;ok;30.0;null_b;0;1\n"
        "b;2026-01-01T00:00:01.000+00:00;ok;35.0;label:prefetch,null_b;1;1\n"
        "c;2026-01-01T00:00:02.000+00:00;ok;34.0;label:prefetch;1;0\n"
        "d;2026-01-01T00:00:03.000+00:00;ok;31.0;;0;0\n"
    )
    runs = read_frame(csv)
    assert runs["treatments"].tolist() == ["null_b", "null_b,prefetch", "prefetch", ""]
    assert runs["prefetch"].tolist() == [0, 1, 1, 0]
    store = Store(tmp_path / "s.sqlite")
    assert api.import_dataset(csv, "old", store=store) == 4
    assert store.campaign("old").factors == ["null_b", "prefetch"]


def test_a_command_campaign_with_labels_is_analysed_on_its_labels(tmp_path: Path) -> None:
    """A real small campaign on a command: label:prefetch (a catalog name too) and null_b,
    measured by perflab (wall_s, the default) and analysed with both factors named."""
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import os\nt = os.environ.get('PERFLAB_TREATMENTS', '')\n"
        "x = bytearray((40 if 'prefetch' in t else 4) << 20)\nprint(1)\n"
    )
    store = Store(tmp_path / "s.sqlite")
    spec = RunSpec(command=f"python3 {prog}", run_root=str(tmp_path / "runs"), timeout_s=60)
    assert spec.metric == "wall_s"
    api.campaign_create("c", spec, ["label:prefetch", "null_b"], "full", runs=2, store=store)
    api.campaign_run("c", store=store)
    records = store.records("c")
    assert len(records) == 8 and all(r.status == "ok" for r in records), records[0].error
    assert all(r.us_per_task is None and r.wall_s for r in records)  # the print is not read
    assert {tuple(r.treatments) for r in records} >= {("prefetch",), ("null_b", "prefetch")}
    assert api.campaign_status("c", store=store)["factors"] == ["prefetch", "null_b"]
    src = open_source("c", str(store.path))
    assert src.metric == "wall_s" and src.factors == ["prefetch", "null_b"]
    a = api.analyze("c", metric="peak_rss_bytes", store=store.path).to_json()
    effects = a["factors"]
    assert set(effects) == {"prefetch", "null_b"} and a["metric"] == "peak_rss_bytes"
    # the 36 MiB the label asks the program for: seen, and null_b's effect is far smaller
    assert effects["prefetch"]["effect_us"] > 30 << 20 > abs(effects["null_b"]["effect_us"])
    out = api.export("c", tmp_path / "c.csv", store=store)
    assert out.read_text().splitlines()[0].endswith(";treatments;prefetch;null_b")
    assert api.analyze(str(out), metric="peak_rss_bytes").to_json()["dataset"]["runs"] == 8
