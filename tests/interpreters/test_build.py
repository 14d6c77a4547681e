"""The build orchestration on a small source tree: a real ``configure`` (a shell script, as
autoconf's are) and ``make`` of a tiny C program that installs itself as ``python3.99``."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tarfile
from pathlib import Path

import pytest
from tinysrc import HELLO, PGO_MAKEFILE, TRAINER_CRASHES, TRAINER_ONE_FAILS, tree

from perflab.errors import PerflabError
from perflab.prepare.interp_build import (
    PGO_TOLERANT,
    BuildRequest,
    build,
    source_hash,
    source_version,
    variant_key,
)

pytestmark = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v cc make"], capture_output=True).returncode != 0,
    reason="needs a C compiler and make",
)


def test_a_tree_is_configured_made_installed_and_then_reused(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    said: list[str] = []
    req = BuildRequest(tree(tmp_path), ("nogil", "pgo"), jobs=1, nice=0)
    info = build(req, cache, said.append)
    assert info["cached"] is False and info["version"] == "3.99.1"
    assert info["flags"] == ["nogil", "pgo"]
    assert "--disable-gil" in info["configure"] and "--enable-optimizations" in info["configure"]
    python = Path(info["python"])
    assert subprocess.run([python], capture_output=True, text=True).stdout == "hello\n"
    dest = cache / info["key"]
    assert stat.S_IMODE(dest.stat().st_mode) == 0o700
    assert "configured for" in (dest / "build.log").read_text()
    assert set(info["seconds"]) == {"configure", "make", "install"}
    assert any(s.startswith("make") for s in said)
    marker = json.loads((dest / "variant.json").read_text())
    assert marker["source_sha256"] == info["source_sha256"]
    again = build(req, cache, said.append)
    assert again["cached"] is True and again["key"] == info["key"]


def test_other_flags_or_an_edited_tree_are_another_variant(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    src = tree(tmp_path)
    a = build(BuildRequest(src, (), jobs=1, nice=0), cache, lambda s: None)
    b = build(BuildRequest(src, ("nogil",), jobs=1, nice=0), cache, lambda s: None)
    (src / "hello.c").write_text(HELLO.replace("hello", "hi"))
    c = build(BuildRequest(src, (), jobs=1, nice=0), cache, lambda s: None)
    assert len({a["key"], b["key"], c["key"]}) == 3
    assert "--disable-gil" not in a["configure"]


def test_a_tarball_is_unpacked_into_the_variant(tmp_path: Path) -> None:
    src = tree(tmp_path)
    tarball = tmp_path / "Python-3.99.1.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(src, arcname="Python-3.99.1")
    info = build(BuildRequest(tarball, (), jobs=1, nice=0), tmp_path / "c", lambda s: None)
    assert info["version"] == "3.99.1" and info["key"].startswith("3.99.1-default-")
    assert (tmp_path / "c" / info["key"] / "src" / "Python-3.99.1" / "hello.c").is_file()


def test_a_failed_build_is_named_with_its_log_tail_and_is_no_variant(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    req = BuildRequest(tree(tmp_path, hello="int main(void) { return nosuchthing; }\n"),
                       (), jobs=1, nice=0)  # fmt: skip
    with pytest.raises(PerflabError, match=r"(?s)build failed at make .*nosuchthing"):
        build(req, cache, lambda s: None)
    [dest] = [d for d in cache.iterdir() if d.is_dir()]
    assert (dest / "build.log").is_file() and not (dest / "variant.json").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"source": Path("/nonexistent/src")}, "no such file"),
        ({"flags": ("fast",)}, "build flag 'fast'"),
        ({"jobs": 0}, "--jobs 0"),
        ({"profile_task": "-m test"}, "--profile-task is for a PGO build"),
    ],
)
def test_bad_requests_are_refused_before_anything_is_made(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    args: dict[str, object] = {"source": tree(tmp_path), "flags": (), "jobs": 1, "nice": 0}
    args.update(change)
    cache = tmp_path / "cache"
    with pytest.raises(PerflabError, match=message):
        build(BuildRequest(**args), cache, lambda s: None)  # type: ignore[arg-type]
    assert not cache.exists() or not any(cache.iterdir())


def test_a_version_comes_from_patchlevel_then_from_the_name(tmp_path: Path) -> None:
    assert source_version(Path("python3.11_3.11.2.orig.tar.gz")) == "3.11.2"
    assert source_version(Path("cpython-3.13")) == "3.13"
    assert source_version(Path("mine"), tree(tmp_path)) == "3.99.1"
    assert variant_key("3.13.5", ("pgo", "nogil"), "ab" * 32, None).startswith("3.13.5-nogil-pgo-")
    assert variant_key("3.13.5", (), "ab" * 32, "-m test") != variant_key(
        "3.13.5", (), "ab" * 32, None
    )


def test_the_cache_of_another_user_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give the cache to another uid")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    os.chown(cache, 65534, 65534)
    with pytest.raises(PerflabError, match="not this user's own"):
        build(BuildRequest(tree(tmp_path), (), jobs=1, nice=0), cache, lambda s: None)


def test_a_failed_pgo_training_run_says_how_to_keep_its_profile(tmp_path: Path) -> None:
    src = tree(tmp_path)
    # what 3.13's make prints when a test of the PGO task fails (its build then fails)
    (src / "Makefile.in").write_text(
        "all:\n\t@echo 'Result: FAILURE'\n"
        "\t@echo 'make: *** [Makefile:904: profile-run-stamp] Error 2'\n\tfalse\n"
    )
    with pytest.raises(PerflabError, match=r"PGO training run failed") as err:
        build(BuildRequest(src, ("pgo",), jobs=1, nice=0), tmp_path / "c", lambda s: None)
    assert repr(PGO_TOLERANT) in str(err.value)


def pgo_tree(tmp_path: Path, trainer: str) -> Path:
    src = tree(tmp_path, hello=trainer)
    (src / "Makefile.in").write_text(PGO_MAKEFILE)
    return src


def test_a_failing_test_of_the_training_run_keeps_the_profile_and_is_recorded(
    tmp_path: Path,
) -> None:
    src = pgo_tree(tmp_path, TRAINER_ONE_FAILS)
    said: list[str] = []
    info = build(BuildRequest(src, ("pgo",), jobs=1, nice=0), tmp_path / "c", said.append)
    training = info["pgo_training"]
    assert training["failed"] is True and training["failed_tests"] == ["test_generators"]
    assert training["result"] == "FAILURE" and "failures=1" in training["tests"]
    # the Makefile's own task ran, through the sub-make, its variables expanded
    assert training["task"] == "-m test --pgo --timeout=$(TESTTIMEOUT)"
    log = (tmp_path / "c" / info["key"] / "build.log").read_text()
    assert "arg --pgo" in log and "arg --timeout=" in log
    assert any("test_generators" in s and "kept" in s for s in said)
    # CPython's own task: keyed as a variant built before (no task in its key)
    assert info["key"] == variant_key("3.99.1", ("pgo",), source_hash(src), None)
    marker = json.loads((tmp_path / "c" / info["key"] / "variant.json").read_text())
    assert marker["pgo_training"]["failed_tests"] == ["test_generators"]


def test_a_passing_training_run_is_recorded_as_such(tmp_path: Path) -> None:
    info = build(BuildRequest(pgo_tree(tmp_path, HELLO), ("pgo",), jobs=1, nice=0),
                 tmp_path / "c", lambda s: None)  # fmt: skip
    assert info["pgo_training"]["failed"] is False
    assert info["pgo_training"]["failed_tests"] == []


def test_a_training_run_that_dies_before_its_result_fails_the_build(tmp_path: Path) -> None:
    cache = tmp_path / "c"
    req = BuildRequest(pgo_tree(tmp_path, TRAINER_CRASHES), ("pgo",), jobs=1, nice=0)
    with pytest.raises(PerflabError, match="failed before its tests' result"):
        build(req, cache, lambda s: None)
    [dest] = [d for d in cache.iterdir() if d.is_dir()]
    assert not (dest / "variant.json").exists()


def test_a_task_asked_for_is_the_one_run_and_keyed(tmp_path: Path) -> None:
    src = pgo_tree(tmp_path, TRAINER_ONE_FAILS)
    info = build(BuildRequest(src, ("pgo",), jobs=1, nice=0, profile_task="-m test --pgo test_re"),
                 tmp_path / "c", lambda s: None)  # fmt: skip
    assert info["pgo_training"]["task"] == "-m test --pgo test_re"
    assert "-pt" in info["key"] and info["pgo_training"]["failed"] is True
