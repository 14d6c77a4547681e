"""The Python API is what the verbs do: each function called as a notebook would, on
black-box command targets (cheap: no engine starts)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from perflab import api
from perflab.errors import PerflabError
from perflab.spec import RunSpec

#: A score that treatment ``a`` halves and ``b`` cuts by a fifth (exact: no noise).
SCORE = """
import os
t = set(filter(None, os.environ.get("PERFLAB_TREATMENTS", "").split(",")))
print(1000.0 * (0.5 if "a" in t else 1) * (0.8 if "b" in t else 1))
"""


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / ".perflab"))
    (tmp_path / "score.py").write_text(SCORE)
    return tmp_path


def _base(work: Path) -> RunSpec:
    return RunSpec(metric="us_per_task", command=f"{sys.executable} score.py", cwd=str(work))


def test_run_measures_a_treated_command_and_summarises(work: Path) -> None:
    seen: list[tuple[int, int]] = []
    records = api.run(_base(work), treat="a", runs=2, on_run=lambda i, n: seen.append((i, n)))
    assert [r.status for r in records] == ["ok", "ok"] and seen == [(1, 2), (2, 2)]
    assert [r.us_per_task for r in records] == [500.0, 500.0]
    assert api.summary(records)["median"] == 500.0
    (rec,) = api.run(RunSpec(metric="us_per_task", command="bash -c 'echo 100'"))
    assert rec.us_per_task == 100.0


def test_run_refuses_bad_input_before_anything_runs(work: Path) -> None:
    with pytest.raises(PerflabError, match="--command is empty"):
        api.run(RunSpec(metric="us_per_task", command=" "))
    with pytest.raises(PerflabError, match="--runs|--repeat"):
        api.run(_base(work), runs=0)


def test_a_campaign_is_created_run_resumed_listed_and_analysed(work: Path) -> None:
    store = work / "s.db"
    made = api.campaign_create("c1", _base(work), ["a", "b"], "full", runs=2, seed=1, store=store)
    assert (made["sets"], made["counts"]["planned"]) == (4, 8)
    assert api.campaign_run("c1", max_runs=3, store=store)["done"] == 3
    results: list[object] = []
    counts = api.campaign_run("c1", store=store, on_result=lambda *a: results.append(a))
    assert (counts["done"], counts["ok"], len(results)) == (8, 8, 5)
    st = api.campaign_status("c1", store)
    assert st["best"]["us_per_task"] == 400.0 and st["best"]["treatments"] == "a,b"
    assert [c["name"] for c in api.campaigns(store)] == ["c1"]
    result = api.analyze("c1", store=store)
    js = json.loads(json.dumps(result.to_json(), default=float))
    assert set(js["factors"]) == {"a", "b"}
    grown = api.campaign_extend("c1", factors=["c"], store=store)
    assert grown["counts"]["planned"] > 8


def test_analyze_reads_a_dataset_csv(work: Path) -> None:
    golden = Path(__file__).parent / "golden" / "dataset.csv"
    result = api.analyze(str(golden), seed=0)
    assert result.to_json()["factors"]


def test_a_dataset_is_imported_and_exported_unchanged(work: Path) -> None:
    golden = Path(__file__).parent / "golden"
    store = work / "s.db"
    assert api.import_dataset(golden / "dataset.csv", "g", store=store) > 0
    out = api.export("g", work / "g.csv", store=store)
    assert out.read_text() == (golden / "export.csv").read_text()
    deltas = api.export("g", deltas=True, store=store)
    assert deltas.name == "g.deltas.csv" and deltas.read_text().startswith("factor;")
    with pytest.raises(PerflabError, match="CSV only"):
        api.export("g", fmt="parquet", deltas=True, store=store)


def test_compare_decides_on_exact_sides(work: Path) -> None:
    a = RunSpec(metric="us_per_task", command="bash -c 'echo 100'")
    b = RunSpec(metric="us_per_task", command="bash -c 'echo 200'")
    result = api.compare(a, b, runs=4, min_runs=2)
    assert result.decision is not None and result.decision.verdict == "slower"
    assert result.regression and result.n_max == 4
    assert result.to_dict()["n_source"] == "--runs"


def test_tune_refuses_a_budget_too_small_and_stores_nothing(work: Path) -> None:
    store = work / "s.db"
    with pytest.raises(PerflabError, match="--budget 10"):
        api.tune("t1", _base(work), ["a", "b"], budget=10, store=store)
    with pytest.raises(PerflabError, match="unknown search 'nope'"):
        api.tune("t1", _base(work), ["a", "b"], budget=60, search="nope", store=store)
    assert not store.exists() or api.campaigns(store) == []


@pytest.mark.slow
def test_tune_finds_the_set_that_helps(work: Path) -> None:
    result = api.tune("t1", _base(work), ["a", "b"], budget=40, pairs=3, store=work / "s.db")
    assert result["best_set"] == ["a", "b"] and result["search"] == "optuna"


def test_explain_checks_its_input_before_building_anything(work: Path) -> None:
    from perflab.explain.inputs import checked
    from perflab.explain.plan import Setup

    chosen = checked(Setup("", "parsl", "2024.1.1", "2024.2.1", _base(work), []))
    assert chosen.name == "explain-parsl-2024.1.1-2024.2.1" and chosen.metrics == ["us_per_task"]
    with pytest.raises(PerflabError, match="--runs must be at least 3"):
        api.explain("parsl", "2024.1.1", "2024.2.1", _base(work), runs=2, store=work / "s.db")
    with pytest.raises(PerflabError, match="unknown metric 'nope'"):
        api.explain("parsl", "a", "b", _base(work), metrics=["nope"], store=work / "s.db")
    assert not (work / "s.db").exists()


def test_zoo_refuses_bad_input_before_planning(work: Path) -> None:
    from perflab.zoo.suite import ZooConfig

    store = work / "s.db"
    with pytest.raises(PerflabError, match="--basis"):
        api.zoo(ZooConfig(targets=["cf-threads"]), basis="nope", store=store)
    api.campaign_create("c1", _base(work), ["a"], "full", store=store)
    with pytest.raises(PerflabError, match="not a zoo"):
        api.zoo(ZooConfig(targets=["cf-threads"]), name="c1", store=store)
    assert [c["name"] for c in api.campaigns(store)] == ["c1"]


def test_a_campaign_created_for_the_fastest_set_keeps_that_goal(work: Path) -> None:
    store = work / "s.db"
    made = api.campaign_create("f", _base(work), ["a"], "full", store=store, fastest=(0.1, 0.05))
    assert made["counts"]["planned"] == 2
    assert api.campaign_status("f", store)["goal"] == "fastest"
    with pytest.raises(PerflabError, match="--min-effect"):
        api.campaign_create("g", _base(work), ["a"], "full", store=store, fastest=(2.0, 0.05))
    assert [c["name"] for c in api.campaigns(store)] == ["f"]


def test_the_api_names_a_function_for_each_verb() -> None:
    for verb in ("run", "campaign_create", "campaign_run", "campaign_status", "campaigns",
                 "campaign_extend", "analyze", "report", "export", "import_dataset",
                 "compare", "tune", "explain", "profile", "zoo"):  # fmt: skip
        fn = getattr(api, verb)
        assert callable(fn) and fn.__doc__, verb
