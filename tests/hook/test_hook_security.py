"""The hook's security model: its files and the treatment file live in the 0700 run
directory, 0600; the hook refuses a treatment file another user could have planted or
changed, follows no link, and opens no listener (docs/user-programs.md)."""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from attacker import NOBODY, as_nobody, needs_root
from perflab import RunSpec, measure
from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat
from perflab.hook import HOOK_FILES, PROOF_DIR, TREAT_FILE, arm, judge, read_facts

HOOK_SRC = Path(__file__).resolve().parents[2] / "src" / "perflab" / "hook"
OPS = {
    "cfg_prefetch=100": [{"on": "HighThroughputExecutor", "arg": "prefetch_capacity", "value": 100}]
}


def _armed(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFLAB")}
    env["PERFLAB_RUN_DIR"] = str(run_dir)
    arm(env, RunSpec(command="python app.py", hook=OPS), run_dir)
    return run_dir, env


def _python(env: dict[str, str], code: str = "print(1)") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )


def test_the_hooks_files_are_private_in_the_private_run_dir(tmp_path: Path) -> None:
    run_dir, env = _armed(tmp_path)
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(run_dir / "hook")
    mode = lambda p: stat.S_IMODE(p.lstat().st_mode)  # noqa: E731
    assert mode(run_dir) == mode(run_dir / "hook") == mode(run_dir / PROOF_DIR) == 0o700
    assert mode(run_dir / TREAT_FILE) == 0o600
    assert all(mode(run_dir / "hook" / name) == 0o600 for name in HOOK_FILES)
    assert json.loads((run_dir / TREAT_FILE).read_text())["factors"] == OPS


def test_the_hook_reads_its_treatment_and_writes_its_proof(tmp_path: Path) -> None:
    run_dir, env = _armed(tmp_path)
    proc = _python(env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert read_facts(run_dir) == []  # nothing imported Parsl: nothing to say
    treated, causes = judge(OPS, [], read_facts(run_dir))
    assert treated == {} and causes == [
        "cfg_prefetch=100: no Python process of the command imported Parsl"
    ]


@pytest.mark.parametrize("how", ["group-writable", "a link", "another owner"])
def test_the_hook_refuses_a_treatment_file_others_could_have_planted(
    tmp_path: Path, how: str
) -> None:
    run_dir, env = _armed(tmp_path)
    treat_file = run_dir / TREAT_FILE
    if how == "group-writable":
        treat_file.chmod(0o620)
    elif how == "a link":
        real = run_dir / "elsewhere.json"
        treat_file.rename(real)
        treat_file.symlink_to(real)
    else:
        if os.geteuid() != 0:
            pytest.skip("giving a file to another uid needs root")
        os.chown(treat_file, NOBODY, -1)
    proc = _python(env)
    assert "perflab hook: treatment refused" in proc.stderr
    facts = read_facts(run_dir)
    assert [f["fact"] for f in facts] == ["refused"]
    _, causes = judge(OPS, [], facts)
    assert causes[0].startswith("the hook refused the treatment file")


def test_the_hook_stays_out_of_a_run_dir_open_to_others(tmp_path: Path) -> None:
    run_dir, env = _armed(tmp_path)
    (run_dir / PROOF_DIR).chmod(0o733)
    proc = _python(env)
    assert proc.returncode == 0 and "not installed" in proc.stderr
    assert "open to others" in proc.stderr


def test_the_hook_imports_nothing_that_could_listen_or_unpickle() -> None:
    allowed = {
        "os",
        "sys",
        "json",
        "functools",
        "inspect",
        "atexit",
        "time",
        "sysconfig",  # a built variant's CONFIG_ARGS (hook/interp_proof.py)
        "warnings",  # Python's warning that an extension turned the GIL back on
        "importlib",
        "importlib.util",
        "importlib.machinery",
        "perflab_hook_parsl",
        "perflab_hook_dask",
        "__future__",
        "dask.config",
    }  # fmt: skip  (once the program imported distributed itself)
    for source in HOOK_FILES.values():
        tree = ast.parse((HOOK_SRC / source).read_text())
        for node in ast.walk(tree):  # names for the type checker only are never imported
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                node.body = []
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert imported <= allowed, (source, imported - allowed)


@needs_root
def test_nobody_cannot_plant_or_swap_the_hook_or_the_treatment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / ".perflab"))
    (tmp_path / "app.py").write_text("print(1)\n")
    spec = RunSpec(
        command="python app.py", cwd=str(tmp_path), run_root=str(tmp_path / "runs"),
        keep_run_dir=True,
    )  # fmt: skip
    (tmp_path / "runs").mkdir(mode=0o700)
    rec = measure(treat(spec, "cfg_prefetch=100", load_catalogs()))
    assert rec.status == "failed"  # no Parsl in it; the run dir stays for the attack
    run_dir = Path(rec.measurement["run_dir"])
    os.chmod(tmp_path, 0o755)  # he may walk down to the run root, as in a shared home
    out = as_nobody(
        f"""
        run = {str(run_dir)!r}
        tried = {{}}
        for what, act in [
            ("read treat.json", lambda: open(run + "/treat.json").read()),
            ("write treat.json", lambda: open(run + "/treat.json", "w").write("{{}}")),
            ("plant in hook/", lambda: open(run + "/hook/evil.py", "w").write("x")),
            ("swap the hook", lambda: os.replace(run + "/hook/sitecustomize.py", "/tmp/x")),
            ("plant a proof", lambda: open(run + "/proof/1.jsonl", "w").write("{{}}")),
            ("plant a treat.json", lambda: os.symlink("/tmp/t", run + "/treat2.json")),
        ]:
            try:
                act()
                tried[what] = "done"
            except PermissionError:
                tried[what] = "refused"
        report(**tried)
        """
    )
    assert set(out.values()) == {"refused"}, out


def test_the_hook_runs_the_sitecustomize_it_hides(tmp_path: Path) -> None:
    """A start-up bundle's or the user's own sitecustomize still runs, after the hook."""
    run_dir, env = _armed(tmp_path)
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import builtins\nbuiltins.OWN_SITE = True\n")
    env["PYTHONPATH"] += os.pathsep + str(own)
    proc = _python(env, "import builtins, sys; print(builtins.OWN_SITE, type(sys.meta_path[0]))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == "True" and "Watch" in proc.stdout
