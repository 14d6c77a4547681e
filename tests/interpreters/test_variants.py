"""Factors to variants: the axes ``py``, ``py_gil``, ``py_jit``, ``py_pgo`` of a treatment
set compose into one built variant, whatever their order; a set with no variant is refused
with the command that builds it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import perflab
from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs
from perflab.factors.kinds.pybuild import build_command, built_variants, choice_of, pick_variant
from perflab.factors.treat import treat
from perflab.spec import RunSpec

BUILT = [
    ("3.13.5-default-aa", "3.13.5", []),
    ("3.13.5-nogil-aa", "3.13.5", ["nogil"]),
    ("3.13.5-nogil-pgo-aa", "3.13.5", ["nogil", "pgo"]),
    ("3.11.2-pgo-lto-bb", "3.11.2", ["pgo", "lto"]),
]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of recorded variants, each interpreter a link to this one."""
    root = tmp_path / "interpreters"
    root.mkdir(mode=0o700)
    for key, version, flags in BUILT:
        (root / key / "prefix" / "bin").mkdir(parents=True)
        python = root / key / "prefix" / "bin" / "python3"
        python.symlink_to(sys.executable)
        configure = ["--prefix=x"] + (["--disable-gil"] if "nogil" in flags else [])
        info = {"key": key, "version": version, "flags": flags, "python": str(python),
                "configure": configure}  # fmt: skip
        (root / key / "variant.json").write_text(json.dumps(info))
    (root / "3.13.5-jit-cc").mkdir()  # a failed build: a log, no marker
    (root / "3.13.5-jit-cc" / "build.log").write_text("Can't find clang-18\n")
    monkeypatch.setenv("PERFLAB_INTERPRETERS", str(root))
    return root


def keys(sets: list[str]) -> list[str]:
    return [Path(treat(RunSpec(), s, load_catalogs()).venv_base or "").parts[-4] for s in sets]


def test_a_set_maps_to_its_variant_whatever_the_order(cache: Path) -> None:
    assert keys(["py_gil=off", "py=3.13,py_gil=off"]) == ["3.13.5-nogil-aa"] * 2
    assert keys(["py_pgo=on,py_gil=off", "py_gil=off,py_pgo=on"]) == ["3.13.5-nogil-pgo-aa"] * 2
    assert keys(["py=3.13", "py_gil=on"]) == ["3.13.5-default-aa"] * 2
    # LTO is no axis: a PGO+LTO build serves when it is the one there
    assert keys(["py=3.11,py_pgo=on"]) == ["3.11.2-pgo-lto-bb"]


def test_a_set_not_built_is_refused_with_the_command_that_builds_it(cache: Path) -> None:
    with pytest.raises(PerflabError, match=r"--version 3.11 --from-debian`"):
        treat(RunSpec(), "py=3.11", load_catalogs())
    with pytest.raises(PerflabError, match=r"build --version 3.13 --from-debian --jit`"):
        treat(RunSpec(), "py_jit=on", load_catalogs())
    with pytest.raises(PerflabError, match="3.11 has no free-threaded build"):
        treat(RunSpec(), "py=3.11,py_gil=off", load_catalogs())


def test_only_finished_builds_are_variants(cache: Path) -> None:
    assert sorted(v["key"] for v in built_variants()) == sorted(k for k, _, _ in BUILT)


def test_the_axes_exclude_a_found_interpreter_and_bad_levels(cache: Path) -> None:
    catalog = load_catalogs()
    found = [n for n in catalog.names() if n.startswith("python3.")]
    if found:
        with pytest.raises(PerflabError, match="conflict"):
            treat(RunSpec(), f"py_gil=off,{found[0]}", catalog)
    with pytest.raises(PerflabError, match="no level '3.12'"):
        treat(RunSpec(), "py=3.12", catalog)


def test_a_command_gets_the_variants_proof_under_each_axis(cache: Path) -> None:
    spec = treat(RunSpec(command="true"), "py_gil=off,py_pgo=on", load_catalogs())
    ops = spec.hook["py_gil=off"]
    assert ops == spec.hook["py_pgo=on"]
    [op] = [o for o in ops if o.get("gil") is not None]
    assert op["gil"] is False and op["venv"] is True and "--disable-gil" in op["config_args"]
    assert op["path"] == os.path.realpath(sys.executable)
    assert sorted(spec.treatments) == ["py_gil=off", "py_pgo=on"]


def test_a_jit_build_gets_python_jit_as_asked(cache: Path) -> None:
    key = "3.13.5-jit-dd"
    (cache / key).mkdir()
    info: dict[str, Any] = {"key": key, "version": "3.13.5", "flags": ["jit"],
                            "python": sys.executable, "configure": []}  # fmt: skip
    (cache / key / "variant.json").write_text(json.dumps(info))
    assert treat(RunSpec(), "py_jit=on", load_catalogs()).env["PYTHON_JIT"] == "1"


def test_choices_default_and_commands_name_the_flags() -> None:
    assert choice_of("pybuild:;py_gil=off") == {
        "py": "3.13", "py_gil": "off", "py_jit": "off", "py_pgo": "off"
    }  # fmt: skip
    full = {"py": "3.13", "py_gil": "off", "py_jit": "on", "py_pgo": "on"}
    assert build_command(full).endswith("--from-debian --no-gil --jit --pgo")
    with pytest.raises(PerflabError, match="no built interpreter"):
        pick_variant(full, [])


def test_a_cache_owned_by_another_uid_is_refused_by_the_factor_and_the_list(cache: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give the cache to another uid")
    os.chown(cache, 65534, 65534)  # nobody: who could have planted its variants
    with pytest.raises(PerflabError, match="not this user's own"):
        treat(RunSpec(), "py_gil=off", load_catalogs())
    proc = perflab("interpreters", "list", env={"PERFLAB_INTERPRETERS": str(cache)})
    assert proc.returncode == 2 and "not this user's own" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_variant_whose_interpreter_is_gone_is_refused_naming_the_set(cache: Path) -> None:
    (cache / "3.13.5-nogil-aa" / "prefix" / "bin" / "python3").unlink()
    with pytest.raises(PerflabError, match=r"py_gil=off.*is not an executable"):
        treat(RunSpec(), "py_gil=off", load_catalogs())
