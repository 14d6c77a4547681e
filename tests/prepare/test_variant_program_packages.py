"""An interpreter factor on a command runs the program in a venv of that interpreter that
holds the program's own packages, at the versions of the command's environment
(prepare/program.py, prepare/venvs.py); one that cannot be installed fails the run."""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import pytest

from perflab import RunSpec, measure
from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs
from perflab.factors.kinds.interpreter import discovered_interpreters
from perflab.factors.treat import treat
from perflab.hook import judge
from perflab.hook.seen import seen_ops
from perflab.prepare import program as program_module
from perflab.prepare import venvs
from perflab.prepare.program import program_files, program_packages

TOOLZ = importlib.metadata.version("toolz")
APP = """\
import sys
import toolz
import helper
print(sys.version.split()[0], toolz.__file__, file=open("seen.txt", "w"))
print(1.0)
"""
HELPER = "import json\n\ndef task():\n    import cloudpickle  # in a worker only\n"


@pytest.fixture
def program(tmp_path: Path) -> Path:
    """The user's folder: app.py imports toolz and its own helper, which imports cloudpickle."""
    folder = tmp_path / "prog"
    folder.mkdir()
    (folder / "app.py").write_text(APP)
    (folder / "helper.py").write_text(HELPER)
    return folder


def test_the_programs_packages_are_its_imports_outside_itself_and_the_stdlib(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = program_packages("python app.py", str(program), sys.executable, tmp_path)
    assert found["modules"] == ["cloudpickle", "toolz"]  # not json, not its own helper
    assert found["files"] == [str(program / "app.py"), str(program / "helper.py")]
    assert found["packages"]["toolz"] == TOOLZ
    assert found["packages"]["cloudpickle"] == importlib.metadata.version("cloudpickle")
    assert "perflab" not in found["packages"]
    # the import is kept: another perflab process finds it without importing again
    monkeypatch.setattr(program_module, "_IMPORTS", "raise SystemExit(1)")
    program_module._probe.cache_clear()
    again = program_packages("python app.py", str(program), sys.executable, tmp_path)
    assert again["packages"] == found["packages"]
    program_module._probe.cache_clear()
    assert program_packages("python app.py", str(program), sys.executable)["packages"] == {}
    # -m's module and -c's code are read too; another program has no Python to read
    assert program_files("python -u -m app", str(program))[0] == [program / "app.py"]
    assert program_files("python -c 'import toolz'", str(program)) == ([], ["code:import toolz"])
    assert program_files("./run.sh", str(program)) == ([], [])
    assert program_files("env X=1 nice python3.11 app.py", str(program))[0] == [program / "app.py"]
    assert program_files("python -m toolz.sandbox", str(program)) == ([], ["toolz"])


@pytest.fixture
def pip_asked(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """What each venv build would have pip install (nothing is installed)."""
    asked: list[list[str]] = []

    def build(base: str, reqs: list[str], dest: Path) -> None:
        asked.append(list(reqs))
        if any(r.startswith("nosuch==") for r in reqs):
            raise PerflabError(
                f"pip install {' '.join(reqs)} failed: ERROR: Could not find a version that "
                "satisfies the requirement nosuch==1.0 (from versions: none) | ERROR: No "
                "matching distribution found for nosuch==1.0"
            )
        dest.mkdir(parents=True)
        (dest / venvs.MARKER).write_text(json.dumps({"installed": {}}))

    monkeypatch.setattr(venvs, "_build", build)
    return asked


def test_the_variant_venv_pins_the_programs_packages_and_names_one_pip_cannot_install(
    tmp_path: Path, pip_asked: list[list[str]]
) -> None:
    spec = RunSpec(metric="us_per_task", command="python app.py", venv_base=sys.executable)
    one = venvs.in_venv(spec, tmp_path / "v", {"toolz": TOOLZ})
    assert pip_asked[-1] == [f"toolz=={TOOLZ}", "psutil"]
    # another package set is another venv (the set is in its cache key)
    other = venvs.in_venv(spec, tmp_path / "v", {"toolz": TOOLZ, "six": "1.16.0"})
    assert one.python != other.python and len(pip_asked) == 2
    with pytest.raises(venvs.VariantError) as err:
        venvs.in_venv(spec, tmp_path / "v", {"nosuch": "1.0"})
    assert str(err.value).startswith(
        f"the program's package nosuch==1.0 cannot be installed for {sys.executable}: ERROR: "
    )
    assert "\n" not in str(err.value)


def test_a_package_pip_cannot_install_fails_the_run_with_the_cause(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pip_asked: list[list[str]]
) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    (program / "app.py").write_text("import nosuch\n")
    monkeypatch.setattr(
        "perflab.prepare.stage.program_packages",
        lambda command, cwd, python, cache: {"packages": {"nosuch": "1.0"}, "modules": ["nosuch"],
                                      "files": [], "python": python},
    )  # fmt: skip
    (tmp_path / "runs").mkdir(mode=0o700)
    rec = measure(RunSpec(command="python app.py", cwd=str(program), venv_base=sys.executable,
                          run_root=str(tmp_path / "runs"), metric="wall_s"))  # fmt: skip
    assert rec.status == "failed"
    assert rec.error.startswith("the program's package nosuch==1.0 cannot be installed")
    assert rec.env["venv"]["program"]["packages"] == {"nosuch": "1.0"}


def test_an_interpreter_factor_is_proven_by_the_interpreter_each_process_ran() -> None:
    ops = {"py": seen_ops({"python": {"path": sys.executable, "venv": True}})}
    real = ops["py"][0]["path"]
    ran = {"executable": real, "version": "3.12.1", "venv": True}
    proc = {"fact": "process", "pid": 7, "argv0": "app.py", "python": ran}
    treated, causes = judge(ops, [], [proc])
    assert causes == [] and treated["py"] == [
        {"process": {"pid": 7, "argv0": "app.py"}, "python": ran}
    ]
    other = {**proc, "pid": 8, "python": {**ran, "executable": "/usr/bin/python3.11"}}
    treated, causes = judge(ops, [], [proc, other])
    assert treated == {}
    assert causes == [f"py: app.py (pid 8) ran /usr/bin/python3.11 3.12.1 in a venv, not {real}"]


PY312 = discovered_interpreters().get("3.12")


@pytest.mark.slow  # builds one venv of CPython 3.12 (pip installs toolz and psutil)
@pytest.mark.skipif(PY312 is None, reason="no CPython 3.12 on this machine")
def test_a_program_runs_under_the_variant_with_its_packages_from_the_variants_venv(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    (program / "helper.py").write_text("")  # toolz only: one small pure-Python package
    (tmp_path / "runs").mkdir(mode=0o700)
    spec = RunSpec(command="python app.py", cwd=str(program), run_root=str(tmp_path / "runs"),
                   metric="wall_s", timeout_s=120)  # fmt: skip
    rec = measure(treat(spec, "python3.12", load_catalogs()))
    assert rec.status == "ok", rec.error
    # the program's process ran the variant, in its venv
    [proof] = rec.measurement["treated"]["python3.12"]
    assert proof["process"]["argv0"] == "app.py"
    assert proof["python"]["version"].startswith("3.12.") and proof["python"]["venv"] is True
    assert rec.env["venv"]["program"]["packages"] == {"toolz": TOOLZ}
    version, toolz_file = (program / "seen.txt").read_text().split()
    assert version.startswith("3.12.")
    venv = Path(rec.env["venv"]["python"]).parent.parent
    assert Path(toolz_file).is_relative_to(venv) and venv.is_relative_to(tmp_path / "home")
