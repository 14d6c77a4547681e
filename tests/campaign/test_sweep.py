"""The sweep design: grids and one-factor-at-a-time sweeps of numeric factors, as campaigns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import perflab
from perflab import PerflabError
from perflab.campaign.designs import DESIGNS, Constraints
from perflab.campaign.plan import create_campaign
from perflab.campaign.store import Store
from perflab.factors.catalog import load_catalogs
from perflab.spec import RunSpec


def _sets(factors: list[str], **opts: str) -> tuple[list[list[str]], dict]:
    d = DESIGNS.get("sweep")(opts)
    cat = load_catalogs()
    expanded = d.expand(factors, cat)
    return d.generate(Constraints(expanded, cat), np.random.default_rng(0)), d.info


def test_a_grid_is_every_combination_of_levels() -> None:
    sets, info = _sets(["workers=1..4", "cfg_prefetch"])
    assert len(sets) == 16 and len({tuple(s) for s in sets}) == 16
    assert all(len(s) == 2 for s in sets)
    assert info["sweep"] == {"workers": [1, 2, 3, 4], "cfg_prefetch": [0, 10, 100, 1000]}


def test_ofat_varies_one_factor_from_the_base_levels() -> None:
    sets, _ = _sets(["workers=1..3", "prefetch=0|10"], mode="ofat", base_levels="prefetch=10")
    assert sorted(map(tuple, sets)) == sorted(
        [
            ("prefetch=10", "workers=1"),
            ("prefetch=10", "workers=2"),
            ("prefetch=10", "workers=3"),
            ("prefetch=0", "workers=1"),
        ]
    )


def test_base_treatments_go_into_every_set() -> None:
    sets, _ = _sets(["workers=1..2"], base="cfg_noop_logging")
    assert sets == [["cfg_noop_logging", "workers=1"], ["cfg_noop_logging", "workers=2"]]


@pytest.mark.parametrize(
    ("factors", "opts", "message"),
    [
        (["workers=1..2"], {"mode": "spiral"}, "option mode must be one of 'grid', 'ofat'"),
        (["workers=1..2", "workers=3..4"], {}, "factor 'workers' given twice"),
        (["workers=1..2"], {"base": "workers=3"}, "is also swept"),
        (["workers=1..2"], {"base_levels": "workers=9"}, "not a swept factor's level"),
        (["a=1..2", "b=1..2", "c=1..2", "d=1..2"], {}, "unknown factor 'a'"),
    ],
)
def test_bad_sweeps_are_refused(factors: list[str], opts: dict, message: str) -> None:
    with pytest.raises(PerflabError, match=message):
        _sets(factors, **opts)


def test_a_sweep_campaign_stores_numbers_and_interleaves_replicates(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    c = create_campaign(
        store,
        "s",
        RunSpec(target="parsl-htex", tasks=100),
        ["workers=1..4", "cfg_prefetch"],
        "sweep",
        replicates=2,
        seed=1,
    )
    assert c.design_info["sweep"]["workers"] == [1, 2, 3, 4]
    assert all(isinstance(v, int) for v in c.design_info["sweep"]["cfg_prefetch"])
    plan = store.pending("s")
    assert len(plan) == 32
    first, second = [t for _, t in plan[:16]], [t for _, t in plan[16:]]
    assert sorted(map(tuple, first)) == sorted(map(tuple, second)) and first != second


@pytest.mark.parametrize(
    ("factors", "message"),
    [
        ("workers=5..1", "sweep factor 'workers=5..1': the range is empty"),
        ("prefetch=0..10", "does not apply to target 'cf-threads'"),
    ],
)
def test_bad_sweep_campaigns_store_nothing(tmp_path: Path, factors: str, message: str) -> None:
    store = Store(tmp_path / "s.db")
    with pytest.raises(PerflabError, match=message):
        create_campaign(store, "c", RunSpec(target="cf-threads", tasks=10), [factors], "sweep")
    assert store.campaign_names() == []


def test_cli_sweep_over_a_non_numeric_factor_exits_2_and_stores_nothing(tmp_path: Path) -> None:
    r = perflab(
        "campaign", "create", "c", "--target", "cf-threads", "--workload", "noop",
        "--tasks", "10", "--design", "sweep", "--factors", "cfg_noop_logging", cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 2
    assert "sweep factor 'cfg_noop_logging' is not numeric" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    db = tmp_path / ".perflab" / "perflab.db"
    assert not db.exists() or Store(db).campaign_names() == []
