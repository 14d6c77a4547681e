"""The ``startup`` factor kind: catalog checks, and a bundle that really cuts file calls."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs
from perflab.factors.treat import treat
from perflab.profile.api import profile
from perflab.spec import RunSpec


def catalog(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "startup.toml"
    p.write_text(f'[factor.sb]\ndescription = "x"\ncategory = "environment"\n{body}\n')
    return p


@pytest.mark.parametrize(
    "body, message",
    [
        ('startup = { bundle = "json" }', "list of module names"),
        ("startup = { trim_path = 1 }", "true or false"),
        ("startup = { other = true }", "no key other"),
        ("startup = {}", "needs `bundle` or `trim_path"),
    ],
)
def test_bad_startup_tables_name_the_factor(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(PerflabError, match=message) as info:
        load_catalogs([str(catalog(tmp_path, body))])
    assert "sb" in str(info.value)


@pytest.mark.slow
def test_bundle_cuts_file_calls_and_imports_stay_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "home"))
    cat = load_catalogs([str(catalog(tmp_path, 'startup = { bundle = ["email.message"] }'))])
    cmd = f"{sys.executable} -c 'import email.message as m, sys; print(m.__file__)'"
    base = RunSpec(metric="us_per_task", command=cmd)
    treated = treat(base, "sb", cat)
    assert "PYTHONPATH" in treated.env and "bundles" in treated.env["PYTHONPATH"]
    res = profile(base, ["syscalls"], tmp_path / "out", against=treated, keep_trace=True)
    a, b = res["runs"]
    assert a["record"]["status"] == b["record"]["status"] == "ok"

    def lookups(run: dict) -> int:
        return sum(v for k, v in run["syscalls"]["total"].items() if k != "fstat")

    # a one-module bundle: the interpreter's own start-up (~200 lookups) and perflab's hook,
    # which every command run gets (docs/user-programs.md, ~100), are the floor
    assert lookups(a) >= 1.6 * lookups(b), (lookups(a), lookups(b))
    # the bundled module keeps its real file (data files and getsource still work)
    printed = Path(b["record"]["measurement"]["run_dir"], "stdout.txt").read_text().split()
    import email.message

    assert printed[-1] == email.message.__file__
