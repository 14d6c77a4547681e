"""A compare side's options are factor kinds' effects, applied by the kinds themselves."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from perflab.compare import sides
from perflab.compare.sides import side_spec
from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.spec import RunSpec

DIFF = "--- a/parsl/version.py\n+++ b/parsl/version.py\n@@ -1 +1 @@\n-a\n+b\n"


def test_side_options_go_through_the_package_interpreter_and_patch_kinds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    applied: list[tuple[str, Any]] = []
    for name in ("package", "interpreter", "patch"):
        kind = FACTOR_KINDS.get(name)
        real = kind.apply

        def spy(spec: RunSpec, key: str, value: Any, real: Any = real, name: str = name) -> RunSpec:
            applied.append((name, value))
            out: RunSpec = real(spec, key, value)
            return out

        monkeypatch.setattr(kind, "apply", spy)
    (tmp_path / "fix.diff").write_text(DIFF)
    base = RunSpec(metric="us_per_task", command="echo 1", packages=["parsl==1"])
    out = side_spec(
        base, python=sys.executable, packages=("parsl==2024.6.3", "psutil"),
        patch=str(tmp_path / "fix.diff"),
    )  # fmt: skip
    assert [n for n, _ in applied] == ["interpreter", "package", "patch"]
    assert out.packages == ["parsl==2024.6.3", "psutil"]  # one requirement per name
    assert out.patches == [
        {"package": "parsl", "diff": str(tmp_path / "fix.diff"), "factor": "fix.diff"}
    ]
    assert out.treatments == ["patch:fix.diff"]
    venv = (Path(sys.executable).parent.parent / "pyvenv.cfg").is_file()
    assert (out.python, out.venv_base) == (
        (sys.executable, None) if venv else (None, sys.executable)
    )
    assert base.packages == ["parsl==1"] and base.patches == []  # the caller's spec is its own
    assert not any(hasattr(sides, f) for f in ("_add_requirement", "_set_python", "_add_patch"))


def test_side_errors_still_name_the_option(tmp_path: Path) -> None:
    with pytest.raises(PerflabError, match="--python '9.99': no such interpreter"):
        side_spec(RunSpec(metric="us_per_task", command="true"), python="9.99")
    with pytest.raises(PerflabError, match="--python '/nope/python': .* is not an executable"):
        side_spec(RunSpec(metric="us_per_task", command="true"), python="/nope/python")
    with pytest.raises(PerflabError, match="not NAME or NAME==VERSION"):
        side_spec(RunSpec(metric="us_per_task", command="true"), packages=("parsl=!1",))
    (tmp_path / "x.diff").write_text("not a diff\n")
    with pytest.raises(PerflabError, match="--patch .*x.diff: not a unified diff"):
        side_spec(RunSpec(metric="us_per_task", command="true"), patch=str(tmp_path / "x.diff"))
