"""The ``parsl_config`` factor kind (factors/kinds/system.py): the system as a factor."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs
from perflab.factors.snapshot import restore, take
from perflab.factors.treat import treat
from perflab.spec import RunSpec

CONFIG = "from parsl.config import Config\nconfig = Config(executors=[])\n"


def _catalog(tmp_path: Path, target: str = "htex_slurm.py") -> Path:
    (tmp_path / "htex_slurm.py").write_text(CONFIG)
    cat = tmp_path / "systems.toml"
    cat.write_text(
        f'[factor.system_slurm]\ncategory = "environment"\nparsl_config = "{target}"\n'
        'targets = ["parsl-htex"]\n'
    )
    return cat


def test_a_system_factor_sets_the_runs_parsl_config(tmp_path: Path) -> None:
    cat = _catalog(tmp_path)
    spec = treat(RunSpec(target="parsl-htex"), ["system_slurm"], load_catalogs([str(cat)]))
    assert spec.parsl_config == str((tmp_path / "htex_slurm.py").resolve())
    assert load_catalogs([str(cat)]).get("system_slurm").category == "environment"


def test_a_missing_config_file_is_named(tmp_path: Path) -> None:
    cat = _catalog(tmp_path, target="nowhere.py")
    with pytest.raises(PerflabError, match="nowhere.py does not exist"):
        treat(RunSpec(target="parsl-htex"), ["system_slurm"], load_catalogs([str(cat)]))


def test_the_campaign_keeps_the_config_as_it_was(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    cat = _catalog(tmp_path)
    files = take([str(cat)], load_catalogs([str(cat)]))
    kept = [e for e in files if e["kind"] == "parsl_config"]
    assert len(kept) == 1 and kept[0]["text"] == CONFIG
    (tmp_path / "htex_slurm.py").write_text("config = None  # edited later\n")
    used = restore(files).get("system_slurm").effects["parsl_config"]
    assert Path(used).read_text() == CONFIG and Path(used) != tmp_path / "htex_slurm.py"
