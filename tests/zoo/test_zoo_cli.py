"""``perflab zoo`` / ``zoo --metg`` (old name ``perflab metg``) end to end (tiny sizes), and
their bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import perflab
from perflab import PerflabError
from perflab.campaign.store import Store
from perflab.zoo.suite import ZooConfig, create_zoo


@pytest.mark.slow
def test_a_tiny_zoo_gives_metg_and_dag_figures(tmp_path: Path) -> None:
    r = perflab(
        "zoo", "--targets", "cf-threads", "--levels", "2000,20", "--runs", "2",
        "--metg-tasks", "20", "--point-s", "0.001", "--fixed-levels", "--basis", "largest",
        "--dag-tasks", "20", "z", "-o", "out", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["counts"] == {
        "planned": 8,
        "ok": 8,
        "failed": 0,
        "timeout": 0,
        "done": 8,
        "unmeasured": 0,
        "not_needed": 0,
    }
    m = out["table"]["metg"]["cf-threads"]
    assert [p["task_us"] for p in m["curve"]] == [2000.0, 20.0]
    assert m["curve"][0]["efficiency"] == pytest.approx(1.0)  # the largest basis
    (row,) = out["rows"]
    assert row["chain.latency_per_level_s"] > 0 and row["fan.ideal_s"] > 0
    html = (tmp_path / "out" / "zoo.html").read_text()
    assert "cf-threads" in html and "data:image/png;base64," in html
    assert (tmp_path / "out" / "figures" / "zoo_efficiency.svg").exists()


@pytest.mark.slow
def test_the_metg_search_on_cf_threads_stops_by_its_rules(tmp_path: Path) -> None:
    # the largest basis: on a shared machine the peak basis measures the co-tenants' load
    # (at load 10 cf-threads never reaches 50% of the peak), which a test must not assert on
    r = perflab(
        "zoo", "--metg", "--targets", "cf-threads", "--levels", "1000,100", "--runs", "3",
        "--point-s", "0.1", "--basis", "largest", "m", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)["table"]["metg"]["cf-threads"]
    assert m["basis"] == "largest" and m["levels"] >= 3 and m["limit"], m
    if m["status"] == "crossing":
        assert 0 < m["ci_low"] <= m["metg_us"] <= m["ci_high"]
        big, small = m["bracket_us"]
        assert big > small
    else:  # a bound only with the limit that stopped the search
        assert m["status"] in ("upper", "lower") and m["ci_low"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["metg", "--target", "nosuch"], "unknown engine 'nosuch'"),
        (["metg", "--target", "cf-threads", "--levels", "10,x"], "--levels: 'x' is not"),
        (["zoo", "--metg", "--targets", "nosuch"], "unknown engine 'nosuch'"),
        (["zoo", "--metg", "--workloads", "chain"], "--metg is the METG row alone"),
    ],
)
def test_bad_zoo_input_exits_2_and_stores_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    r = perflab(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr
    db = tmp_path / ".perflab" / "perflab.db"
    assert not db.exists() or Store(db).campaign_names() == []


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        (ZooConfig(levels=[10.0]), "needs at least two task sizes"),
        (ZooConfig(levels=[10.0, 0.0]), "must be positive"),
        (ZooConfig(kinds=["chain", "spiral"]), "zoo workload 'spiral' is not one of"),
        (ZooConfig(replicates=0), "--runs must be at least 1"),
        (ZooConfig(targets=[]), "at least one target"),
    ],
)
def test_bad_zoo_plans_store_nothing(tmp_path: Path, cfg: ZooConfig, message: str) -> None:
    store = Store(tmp_path / "s.db")
    with pytest.raises(PerflabError, match=message):
        create_zoo(store, "z", cfg)
    assert store.campaign_names() == []


def test_metg_is_zoo_metg_and_says_so_once(tmp_path: Path) -> None:
    r = perflab("metg", "--target", "nosuch", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("is now `perflab zoo --metg") == 1, r.stderr
    r = perflab("zoo", "--metg", "--targets", "nosuch", cwd=tmp_path)
    assert r.returncode == 2 and "is now" not in r.stderr, r.stderr
    shown = perflab("metg", "--help", cwd=tmp_path).stdout
    assert "an existing zoo" not in shown and "zoo --metg" in " ".join(shown.split())
    assert "--dag-tasks" not in perflab("metg", "--help-all", cwd=tmp_path).stdout.replace(
        "-\n", "-"
    )
