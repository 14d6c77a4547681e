"""``perflab interpreters build|list`` as a user runs them: a tiny source tree built into a
private cache, listed; bad input refused in one line (exit 2); a failed build exits 1 with
its log's tail."""

from __future__ import annotations

import json
from pathlib import Path

from tinysrc import tree

from conftest import perflab


def test_build_then_list(tmp_path: Path) -> None:
    env = {"PERFLAB_INTERPRETERS": str(tmp_path / "cache")}
    src = tree(tmp_path)
    built = perflab("interpreters", "build", "--source", str(src), "--no-gil", "--nice", "0",
                    "--json", env=env)  # fmt: skip
    assert built.returncode == 0, built.stderr
    info = json.loads(built.stdout)
    assert info["flags"] == ["nogil"] and "configure" in built.stderr
    listed = perflab("interpreters", "list", "--json", env=env)
    assert [v["key"] for v in json.loads(listed.stdout)["variants"]] == [info["key"]]
    again = perflab("interpreters", "build", "--source", str(src), "--no-gil", env=env)
    assert again.returncode == 0 and "already built" in again.stdout


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {"PERFLAB_INTERPRETERS": str(tmp_path / "cache")}
    for args in (
        ["interpreters", "build"],
        ["interpreters", "build", "--from-debian", "--version", "3.12"],
        ["interpreters", "build", "--source", str(tmp_path / "nothing")],
    ):
        proc = perflab(*args, env=env)
        assert proc.returncode == 2, args
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_a_failed_build_exits_1_with_the_logs_tail(tmp_path: Path) -> None:
    env = {"PERFLAB_INTERPRETERS": str(tmp_path / "cache")}
    src = tree(tmp_path, hello="int main(void) { return nosuchthing; }\n")
    proc = perflab("interpreters", "build", "--source", str(src), "--nice", "0", env=env)
    assert proc.returncode == 1
    assert "build failed at make" in proc.stderr and "nosuchthing" in proc.stderr
    assert "Traceback" not in proc.stderr
