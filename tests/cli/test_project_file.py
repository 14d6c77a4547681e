"""The project file (perflab.toml): found in a parent, read by every verb, a flag over it,
`config show`'s sources, `--benchmark`, `init`, and one line (exit 2) for a bad file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import perflab, perflab_json
from perflab.errors import PerflabError
from perflab.project import load_project

FILE = """\
[benchmark]
target = "from-file"
alpha = 0.01

[benchmark.other]
target = "from-other"
tasks = 7

[atlas]
repo = "../parsl"
package = "parsl"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "perflab.toml").write_text(FILE)
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    return sub


def _one_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("perflab: error:")
    return lines[0]


def test_found_in_a_parent_and_read_by_a_verb(project: Path) -> None:
    # the engine's name reaches the verb from the file two folders up (refused: not an engine)
    err = _one_error(perflab("run", "-n", "1", cwd=project))
    assert "unknown engine 'from-file'" in err


def test_a_flag_overrides_the_file(project: Path) -> None:
    err = _one_error(perflab("run", "-n", "1", "-t", "from-flag", cwd=project))
    assert "'from-flag'" in err


def test_benchmark_picks_a_named_table_also_after_the_verb(project: Path) -> None:
    err = _one_error(perflab("run", "--benchmark", "other", cwd=project))
    assert "'from-other'" in err
    assert "'from-other'" in _one_error(perflab("--benchmark", "other", "run", cwd=project))


def test_config_show_says_where_each_setting_came_from(project: Path) -> None:
    out = perflab_json("config", "show", "--benchmark", "other", "--metric", "wall_s", cwd=project)
    top = project.parent.parent / "perflab.toml"
    s = out["settings"]
    assert s["target"] == {"value": "from-other", "source": f"{top.resolve()}:6"}
    assert s["tasks"]["source"].endswith(":7")
    assert s["alpha"] == {"value": 0.01, "source": f"{top.resolve()}:3"}
    assert s["metric"] == {"value": "wall_s", "source": "flag"}
    assert s["min_effect"]["source"] == "default"
    assert out["benchmarks"] == ["other"]


def test_config_option_names_a_file_anywhere(tmp_path: Path, project: Path) -> None:
    other = tmp_path / "elsewhere.toml"
    other.write_text('[benchmark]\ntarget = "named"\n')
    err = _one_error(perflab("run", "-n", "1", "--config", str(other), cwd=project))
    assert "'named'" in err


@pytest.mark.parametrize(
    "text, says",
    [
        ("[benchmark\n", "not valid TOML"),
        ("[benchmark]\nalpah = 0.1\n", "perflab.toml:2: unknown key 'alpah'"),
        ("[benchmark]\ntasks = 'many'\n", "perflab.toml:2: tasks must be a int"),
        ("[elsewhere]\nx = 1\n", "perflab.toml:1: unknown table or key 'elsewhere'"),
        ("[atlas]\npackage = 'p'\naxis = 3\n", "perflab.toml:3: axis must be a str"),
        ("[atlas]\nrepo = '.'\nwhere = 1\n", "perflab.toml:3: unknown key 'where' in [atlas]"),
    ],
)
def test_a_bad_file_is_one_line_exit_2(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / "perflab.toml").write_text(text)
    err = _one_error(perflab("factors", "list", cwd=tmp_path))
    assert says in err


def test_an_unknown_benchmark_is_refused(project: Path) -> None:
    err = _one_error(perflab("run", "--benchmark", "nope", cwd=project))
    assert "no benchmark 'nope'" in err and "known: other" in err


def test_init_writes_a_file_that_reads_back_and_never_overwrites(tmp_path: Path) -> None:
    assert perflab("init", cwd=tmp_path).returncode == 0
    written = load_project(start=tmp_path)
    assert written.path == (tmp_path / "perflab.toml").resolve()
    assert written.settings()["workload"] == "noop"
    before = (tmp_path / "perflab.toml").read_text()
    assert "exists already" in _one_error(perflab("init", cwd=tmp_path))
    assert (tmp_path / "perflab.toml").read_text() == before


def test_the_api_keeps_paths_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "perflab.toml").write_text('[benchmark]\nengine_config = "cfg.py"\n')
    project = load_project(tmp_path / "perflab.toml")
    assert project.settings()["engine_config"] == str((tmp_path / "cfg.py").resolve())
    with pytest.raises(PerflabError, match="no benchmark"):
        project.settings("nope")
