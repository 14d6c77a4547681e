"""``perflab explain`` on a user's own program: a script that imports two releases of a
package and prints only its makespan. The release is proven in each A run, each of B's
changes (a default, a function) reaches the program as the treated copy it imported, and
the changes that cost time are claimed with their shares; restoring an unsafe default in
the program needs the opt-in."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import userprogram

from perflab import api
from perflab.campaign.store import Store

sys.path.insert(0, str(Path(__file__).parents[1] / "explain"))
from toyrelease import NAME, TRUE_SHARES, make_wheels  # noqa: E402

work = userprogram.work  # the fixture: the user's folder

#: The user's script: it knows nothing of perflab and prints its makespan in seconds.
APP = f"""import time
import {NAME}.core as core

began = time.perf_counter()
core.Worker().run()
print(f"{{time.perf_counter() - began:.6f}}")
"""


@pytest.mark.slow
def test_explain_a_users_script_between_two_releases(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_FIND_LINKS", str(make_wheels(work / "wheels")))
    (work / "toy_app.py").write_text(APP)
    spec = userprogram.spec_for(work, "python toy_app.py", metric="wall_s")
    store = work / "s.db"
    res = api.explain(
        NAME,
        "1.0",
        "2.0",
        spec,
        runs=3,
        screen_runs=1,
        classes=(f"{NAME}.core:Worker",),
        store=store,
    )
    assert res["target"] == "command" and res["metrics"] == ["wall_s"]
    assert res["verdict"] == "explained", res
    est = res["focus"]["wall_s"]["factors"]
    assert {"hunk_core_Worker_run", "dflt_Worker_rounds"} <= set(res["claimed"]), est
    for factor, share in (("hunk_core_Worker_run", "hunk"), ("dflt_Worker_rounds", "default")):
        low, high = est[factor]["low"], est[factor]["high"]
        assert low - 0.05 <= TRUE_SHARES[share] <= high + 0.05, (factor, est[factor])
    # every run ok, and every factor of its set proven in the user's process
    runs = [r for name in res["campaigns"] for r in Store(store).records(name)]
    assert runs and all(r.status == "ok" for r in runs), [r.error for r in runs]
    for r in runs:
        treated = r.measurement.get("treated", {})
        assert sorted(treated) == sorted(r.treatments), r.run_id
        for proof in treated.get("release_a", []):
            assert proof["version"] == "1.0" and proof["process"]["argv0"] == "toy_app.py"
        for factor in set(treated) - {"release_a"}:
            assert all("/transformed/" in p["imported"] for p in treated[factor])
    assert any(r.treatments == ["release_a"] for r in runs)


def _encrypted_change() -> Any:
    from perflab.explain.defaults import DefaultChange

    htex = "parsl.executors:HighThroughputExecutor"
    return DefaultChange(htex, "encrypted", "False", "True", "parsl.m", "HTEX.__init__")


def _setup(safety: str, allow_insecure: bool = False) -> Any:
    from perflab.explain.plan import Setup
    from perflab.spec import RunSpec

    base = RunSpec(command="python app.py", allow_insecure=allow_insecure)
    return Setup("e", "parsl", "1", "2", base, ["wall_s"], safety=safety)


def test_restoring_an_unsafe_default_in_a_program_needs_the_opt_in() -> None:
    from perflab.errors import PerflabError
    from perflab.explain.plan import NETNS, _command_safety

    setup = _setup("opt-in")
    with pytest.raises(PerflabError, match="ships encrypted=False.*--allow-insecure"):
        _command_safety(setup, [_encrypted_change()], setup.base)
    # the opt-in, or a private network namespace, measures it; keep leaves it out
    ok = _setup("opt-in", allow_insecure=True)
    assert _command_safety(ok, [_encrypted_change()], ok.base) == ok.base
    netns = _setup("netns")
    wrapped = _command_safety(netns, [_encrypted_change()], netns.base)
    assert wrapped.wrapper[: len(NETNS)] == NETNS and wrapped.allow_insecure
    keep, change = _setup("keep"), _encrypted_change()
    assert _command_safety(keep, [change], keep.base) == keep.base
    assert "--safety keep" in change.left_out
