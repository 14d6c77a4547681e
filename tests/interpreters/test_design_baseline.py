"""A campaign over the built interpreters' axes: its sets that name none of them (``-``) run
the variant at the axes' default levels, not perflab's own interpreter; a design whose
baseline variant is not built is refused naming it, and a campaign whose runs ran perflab's
own interpreter cannot grow by an axis. On a made-up list of variants (no build, no run)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from test_variants import cache  # noqa: F401  (the fixture: a cache of made-up variants)

from conftest import perflab
from perflab.campaign.extend import extend_campaign
from perflab.campaign.plan import create_campaign, planned_specs
from perflab.campaign.store import Store
from perflab.errors import PerflabError
from perflab.factors.kinds.pybuild import BASELINE_INFO, BASELINE_PROOF
from perflab.spec import RunSpec


@pytest.fixture
def full(cache: Path) -> Path:  # noqa: F811
    """The made-up cache with the GIL build with PGO too: all four 3.13 cells of GIL × PGO."""
    python = cache / "3.13.5-pgo-aa" / "prefix" / "bin" / "python3"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    info = {"key": "3.13.5-pgo-aa", "version": "3.13.5", "flags": ["pgo"],
            "python": str(python), "configure": ["--enable-optimizations"]}  # fmt: skip
    (cache / "3.13.5-pgo-aa" / "variant.json").write_text(json.dumps(info))
    return cache


def key_of(spec: RunSpec) -> str | None:
    """The variant a spec runs (its folder in the cache), None for perflab's own."""
    return Path(spec.venv_base).parts[-4] if spec.venv_base else None


def base(tmp_path: Path) -> RunSpec:
    return RunSpec(command="true", metric="wall_s", cwd=str(tmp_path))


def test_the_empty_set_of_a_design_over_the_axes_runs_the_default_variant(
    full: Path,
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "s.db")
    made = create_campaign(store, "gp", base(tmp_path), ["py_gil=off", "py_pgo=on"], "full",
                           seed=1)  # fmt: skip
    assert made.design_info[BASELINE_INFO] == {
        "py": "3.13", "py_gil": "on", "py_jit": "off", "py_pgo": "off"
    }  # fmt: skip
    by_set = {",".join(s.treatments): s for _, s in planned_specs(store, "gp")}
    assert sorted(by_set) == ["", "py_gil=off", "py_gil=off,py_pgo=on", "py_pgo=on"]
    assert key_of(by_set[""]) == "3.13.5-default-aa"
    assert key_of(by_set["py_gil=off"]) == "3.13.5-nogil-aa"
    assert key_of(by_set["py_pgo=on"]) == "3.13.5-pgo-aa"
    # the baseline is proven like a treated set's variant, without a treatment recorded
    [proof] = by_set[""].hook[BASELINE_PROOF]
    assert proof["gil"] is True and proof["venv"] is True
    assert by_set[""].treatments == []


def test_a_design_without_the_axes_keeps_perflabs_own_interpreter(
    cache: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "s.db")
    made = create_campaign(store, "ab", base(tmp_path), ["a", "b"], "full", seed=1)
    assert BASELINE_INFO not in made.design_info
    assert {key_of(s) for _, s in planned_specs(store, "ab")} == {None}


def test_a_baseline_not_built_is_refused_naming_it_and_nothing_is_stored(
    cache: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    shutil.rmtree(cache / "3.13.5-default-aa")
    store = Store(tmp_path / "s.db")
    with pytest.raises(PerflabError, match=r"baseline.*py=3.13,py_gil=on,py_jit=off,py_pgo=off"
                       r".*`perflab interpreters build --version 3.13 --from-debian`"):  # fmt: skip
        create_campaign(store, "gp", base(tmp_path), ["py_gil=off"], "full", seed=1)
    assert store.campaign_names() == []


def test_a_set_naming_another_interpreter_keeps_it(
    cache: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    catalog = tmp_path / "mine.toml"
    catalog.write_text(f'[factor.mypy]\npython = {{ path = "{sys.executable}", venv = true }}\n'
                       'conflicts = ["py_gil"]\n')  # fmt: skip
    store = Store(tmp_path / "s.db")
    create_campaign(store, "mix", base(tmp_path), ["py_gil=off", "mypy"], "full",
                    catalogs=[str(catalog)], seed=1)  # fmt: skip
    by_set = {",".join(s.treatments): s for _, s in planned_specs(store, "mix")}
    assert key_of(by_set[""]) == "3.13.5-default-aa"
    assert by_set["mypy"].venv_base and not by_set["mypy"].venv_base.startswith(str(cache))
    assert BASELINE_PROOF not in by_set["mypy"].hook


def test_an_axis_is_not_added_to_a_campaign_that_ran_perflabs_own_interpreter(
    full: Path,
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "s.db")
    create_campaign(store, "ab", base(tmp_path), ["a"], "full", seed=1)
    with pytest.raises(PerflabError, match=r"py_gil=off picks a built interpreter.*'ab'"):
        extend_campaign(store, "ab", factors=["py_gil=off"])
    create_campaign(store, "gp", base(tmp_path), ["py_gil=off"], "full", seed=1)
    extend_campaign(store, "gp", factors=["py_pgo=on"])
    by_set = {",".join(s.treatments): s for _, s in planned_specs(store, "gp")}
    assert key_of(by_set["py_gil=off,py_pgo=on"]) == "3.13.5-nogil-pgo-aa"


def test_the_cli_refuses_a_design_whose_baseline_is_not_built_in_one_line(
    cache: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    shutil.rmtree(cache / "3.13.5-default-aa")
    db = tmp_path / "s.db"
    proc = perflab(
        "campaign", "create", "gp", "--command", "true", "--factors", "py_gil=off",
        "--design", "full", "--store", str(db),
        env={"PERFLAB_INTERPRETERS": str(cache)},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "--version 3.13 --from-debian`" in proc.stderr and "baseline" in proc.stderr
