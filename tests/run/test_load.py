"""Each run records the node's load beside it (``env.load``): the 1-min load average, the CPU
pressure where the kernel has PSI, and steal where the hypervisor reports any."""

from __future__ import annotations

import math
import os
from pathlib import Path

from perflab.compare.busy import load_of, load_text
from perflab.run import envinfo
from perflab.run.measure import measure
from perflab.spec import RunSpec


def test_cpu_pressure_is_read_from_psi(tmp_path: Path) -> None:
    psi = tmp_path / "cpu"
    psi.write_text(
        "some avg10=41.50 avg60=30.00 avg300=20.00 total=123\n"
        "full avg10=2.25 avg60=1.00 avg300=0.50 total=4\n"
    )
    assert envinfo.cpu_pressure(str(psi)) == {"cpu_some_avg10": 41.5, "cpu_full_avg10": 2.25}
    assert envinfo.cpu_pressure(str(tmp_path / "none")) == {}


def test_steal_is_the_share_of_ticks_since_the_start() -> None:
    load = envinfo.load_now((0, 0))
    assert math.isclose(load["loadavg_1m"], os.getloadavg()[0], abs_tol=5.0)
    now = envinfo.cpu_times()
    if now is not None and now[1] > 0:
        assert math.isclose(load["steal_pct"], 100 * now[1] / now[0], rel_tol=0.05)
    assert "steal_pct" not in envinfo.load_now(None)


def test_a_run_records_the_load_and_a_comparison_says_it(tmp_path: Path) -> None:
    rec = measure(RunSpec(command="echo 100", run_root=str(tmp_path)))
    assert rec.status == "ok", rec.error
    load = rec.env["load"]
    assert load["loadavg_1m"] >= 0
    mean = load_of([rec, rec])
    assert mean is not None and math.isclose(mean["loadavg_1m"], load["loadavg_1m"])
    assert load_text(mean).startswith("load ")
    assert load_of([]) is None and load_text(None) == "load not recorded"
