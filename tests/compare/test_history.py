"""history's schedule: a refused release is not run again, and its cause is in the table."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sidefakes import unbuilt

from perflab.compare import history
from perflab.compare.render import history_markdown
from perflab.prepare import Prepared
from perflab.run.record import RunRecord
from perflab.spec import RunSpec

REFUSAL = (
    "Traceback (most recent call last):\n  File ...\nperflab.errors.PerflabError: refused: HTEX "
    "executor 'htex' unencrypted (this release has no encryption)\n"
)


def test_a_refused_release_runs_once_and_its_cause_is_in_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []

    def measure(ready: Prepared) -> RunRecord:
        # stands in for the child only to count visits: the refusal text is the child's own
        version = ready.spec.packages[-1].split("==")[1]
        seen.append(version)
        rec = RunRecord("r", "", "", "parsl-htex", "noop", "ok", tasks_per_s=1000.0)
        if version == "2024.1.8":
            return replace(rec, status="failed", error=REFUSAL, tasks_per_s=None)
        if version == "2025.6.2" and seen.count(version) == 1:  # a flake: tried again
            return replace(rec, status="failed", error="TimeoutError: run timed out")
        return replace(rec, tasks_per_s=1000.0 + len(seen))

    monkeypatch.setattr(history, "measure", measure)
    versions = ["2024.1.8", "2024.6.3", "2025.6.2"]
    hist = history.run_history("parsl", versions, RunSpec(tasks=10), runs=3, prepare=unbuilt)
    assert seen.count("2024.1.8") == 1 and seen.count("2024.6.3") == 3
    assert seen.count("2025.6.2") == 3  # a timeout is not a refusal
    rel = hist.releases[0]
    assert rel.refused and rel.cause().startswith("perflab.errors.PerflabError: refused")
    assert not hist.releases[2].refused
    md = history_markdown(hist)
    row = next(ln for ln in md.splitlines() if ln.startswith("| 2024.1.8 |"))
    assert "| 0 | 1 | - | - |" in row and "refused: HTEX executor" in row
    assert (
        "2025.6.2: 1 of 3 runs failed; its level is from the 2 measured; "
        "cause: TimeoutError: run timed out"
    ) in md
    # the unmeasured release is left out of the change-point search, not a NaN in it
    assert all("2024.1.8" not in (c.before, c.after) for c in hist.change_points)
