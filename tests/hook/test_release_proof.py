"""A package factor on a command (another release of a package, in a private venv first on
the command's PATH) is proven by the release each Python process imported, read beside the
file it imported; a process that imported another release fails the run
(perflab/hook/seen.py)."""

from __future__ import annotations

import json
from pathlib import Path

from perflab.hook import arm, judge
from perflab.hook.seen import imported_version, seen_ops
from perflab.spec import RunSpec


def _site(root: Path, name: str, version: str) -> Path:
    """A site-packages holding ``name`` at ``version``; the path of its ``__init__.py``."""
    site = root / "lib" / "python3.11" / "site-packages"
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text("")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return site / name / "__init__.py"


def _import(file: Path, package: str = "plx_toy", pid: int = 7) -> dict:
    return {"fact": "import", "package": package, "file": str(file), "pid": pid, "argv0": "app.py"}


def test_a_package_factor_becomes_a_check_of_the_imported_release(tmp_path: Path) -> None:
    ops = seen_ops({"package": {"plx-toy": "1.0"}})
    assert ops == [{"on": "package", "package": "plx-toy", "module": "plx_toy", "version": "1.0"}]
    # the hook is told to report the import of the package's module
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    env: dict[str, str] = {}
    arm(env, RunSpec(command="python app.py", hook={"release_a": ops}), run_dir)
    assert json.loads((run_dir / "treat.json").read_text())["packages"] == ["plx_toy"]


def test_the_factors_release_imported_is_its_proof(tmp_path: Path) -> None:
    ops = {"release_a": seen_ops({"package": {"plx_toy": "1.0"}})}
    file = _site(tmp_path / "venv_a", "plx_toy", "1.0")
    treated, causes = judge(ops, [], [_import(file)])
    assert causes == []
    assert treated["release_a"] == [
        {"process": {"pid": 7, "argv0": "app.py"}, "imported": str(file), "version": "1.0"}
    ]


def test_another_release_imported_fails_with_where_it_came_from(tmp_path: Path) -> None:
    ops = {"release_a": seen_ops({"package": {"plx_toy": "1.0"}})}
    file = _site(tmp_path / "system", "plx_toy", "2.0")
    treated, causes = judge(ops, [], [_import(file)])
    assert treated == {}
    assert causes == [f"release_a: app.py (pid 7) imported plx_toy 2.0 from {file}, not 1.0"]
    # and a command that never imported it took the factor nowhere
    _, causes = judge(ops, [], [])
    assert causes == ["release_a: no Python process of the command imported plx_toy"]


def test_a_treated_copy_is_of_the_release_it_was_made_from(tmp_path: Path) -> None:
    tree = tmp_path / "transformed" / "ab12"
    (tree / "plx_toy").mkdir(parents=True)
    (tree / "transform.json").write_text(json.dumps({"package": "plx_toy", "version": "1.0"}))
    assert imported_version(str(tree / "plx_toy" / "__init__.py"), "plx_toy") == "1.0"
    assert imported_version(str(tmp_path / "nowhere" / "x.py"), "plx_toy") is None
    # versions compare as versions, not as text
    ops = {"r": seen_ops({"package": {"plx_toy": "1.0"}})}
    treated, _ = judge(ops, [], [_import(_site(tmp_path / "v", "plx_toy", "1.0.0"))])
    assert treated["r"][0]["version"] == "1.0.0"
