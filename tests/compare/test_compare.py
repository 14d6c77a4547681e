"""The compare gate: its statistics on known data, and `perflab compare`/`calibrate` on
black-box commands with known injected differences."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

import perflab.cli  # noqa: F401  (registers the verbs)
from conftest import CHROMIUM, ROOT, open_in_chromium
from perflab.cli.app import main
from perflab.compare.calibrate import calibrate_values, load, save, signature
from perflab.compare.changepoints import change_points
from perflab.compare.history import History, Release, history_figure
from perflab.compare.render import history_html, history_markdown
from perflab.compare.stats import (
    abba,
    decide,
    look_levels,
    looks,
    pair_sd,
    paired_ratio,
    recommend_n,
    sequential,
)
from perflab.spec import RunSpec


def perflab(*args: str, home: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess (slow to start on a loaded machine: used once)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PERFLAB_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "perflab", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=home.parent,
    )


def cli(*args: str, home: Path) -> Result:
    """The CLI in this process (click's runner): same code path, no interpreter start-up."""
    return CliRunner().invoke(main, list(args), env={"PERFLAB_HOME": str(home)})


def lognormal(rng: np.random.Generator, n: int, sigma: float, scale: float = 1.0) -> list[float]:
    return list(scale * np.exp(rng.normal(0.0, sigma, n)))


# --- statistics ------------------------------------------------------------------------


def test_decide_names_the_direction_of_a_clear_change() -> None:
    rng = np.random.default_rng(1)
    a = lognormal(rng, 8, 0.02, 100.0)
    slower = decide(a, lognormal(rng, 8, 0.02, 130.0))
    assert slower.verdict == "slower" and slower.ci_low > 1.2 and slower.p_value < 0.01
    faster = decide(a, lognormal(rng, 8, 0.02, 70.0))
    assert faster.verdict == "faster" and faster.ci_high < 0.8
    # tasks/s: higher is better, so a larger B is faster
    assert decide(a, lognormal(rng, 8, 0.02, 130.0), higher_is_better=True).verdict == "faster"


def test_decide_shows_equivalence_or_says_it_cannot_tell() -> None:
    rng = np.random.default_rng(2)
    same = decide(lognormal(rng, 20, 0.01, 100.0), lognormal(rng, 20, 0.01, 100.0))
    assert same.verdict == "no difference" and 0.95 < same.ci_low <= same.ci_high < 1.05
    noisy = decide(lognormal(rng, 3, 0.4, 100.0), lognormal(rng, 3, 0.4, 100.0))
    assert noisy.verdict == "inconclusive" and not noisy.decided


def test_a_significant_change_below_the_threshold_is_no_regression() -> None:
    rng = np.random.default_rng(3)
    d = decide(lognormal(rng, 30, 0.005, 100.0), lognormal(rng, 30, 0.005, 102.0))
    assert d.p_value < 1e-6 and 1.01 < d.ratio < 1.03
    assert d.verdict == "no difference"


def test_abba_order_and_looks() -> None:
    assert "".join(abba(4)) == "ABBABAAB"
    ks = looks(4, 40)
    assert ks[0] == 4 and ks[-1] == 40 and ks == sorted(set(ks)) and len(ks) <= 8
    assert looks(4, 4) == [4]
    assert recommend_n(0.2, 0.1, 0.01) > recommend_n(0.05, 0.1, 0.01) >= 4


def test_look_levels_add_up_to_alpha_and_keep_most_for_the_last_look() -> None:
    levels = look_levels(4, 40, 0.01)
    assert list(levels) == looks(4, 40) and math.isclose(sum(levels.values()), 0.01)
    assert levels[40] == 0.008 and max(v for k, v in levels.items() if k < 40) < 0.001
    assert look_levels(4, 40, 0.01, sequential=False) == {40: 0.01}


def drifting(rng: np.random.Generator, n: int, step: float, jitter: float) -> np.ndarray:
    """Log run times of a host whose speed wanders (a random walk) under per-run jitter."""
    return np.cumsum(rng.normal(0, step, n)) + rng.normal(0, jitter, n)


def test_paired_gate_keeps_its_error_rate_and_gains_power_under_drift() -> None:
    """Synthetic truth, 300 seeds: a host drifting like this VM's (sd of the walk's step
    0.06, jitter 0.08). Each comparison draws 2n runs in ABBA order; B is 10 % slower or
    the same. The paired gate must keep the false-alarm rate at alpha and its CI's coverage
    at nominal, and detect the slowdown more often than the Welch gate on the same runs."""
    n, alpha, seeds = 16, 0.05, 300
    order = abba(n)
    counts = {"paired": [0, 0], "welch": [0, 0]}  # [false alarms, detections]
    covered = 0
    for seed in range(seeds):
        logs = drifting(np.random.default_rng(seed), 2 * n, 0.06, 0.08)
        a = np.exp([x for x, s in zip(logs, order, strict=True) if s == "A"])
        b = np.exp([x for x, s in zip(logs, order, strict=True) if s == "B"])
        for paired, key in ((True, "paired"), (False, "welch")):
            same = decide(a, b, alpha=alpha, paired=paired)
            slow = decide(a, b * 1.1, alpha=alpha, paired=paired)
            counts[key][0] += same.different
            counts[key][1] += slow.verdict == "slower"
            if paired:
                covered += slow.ci_low <= 1.1 <= slow.ci_high
    # P(more than 27 alarms in 300 | rate 5 %) < 1 %
    assert counts["paired"][0] <= 27
    assert covered / seeds >= 0.9  # nominal 95 %; 0.9 is > 3 binomial sd below it
    assert counts["paired"][1] > counts["welch"][1] + 30
    assert counts["paired"][1] / seeds > 0.5


def test_pair_sd_sees_the_noise_a_paired_gate_sees() -> None:
    rng = np.random.default_rng(9)
    walk = np.exp(drifting(rng, 400, 0.06, 0.01))
    assert pair_sd(list(walk)) < 0.5 * float(np.log(walk).std(ddof=1))
    assert pair_sd([1.0, 2.0]) == 0.0  # one pair: no spread to measure
    assert recommend_n(0.1, 0.1, 0.01, paired=True) < recommend_n(0.1, 0.1, 0.01)


def test_sequential_stops_early_when_decided_and_keeps_its_false_alarm_rate() -> None:
    rng = np.random.default_rng(4)
    dec, a, b = sequential(lambda: 100.0, lambda: 150.0, 4, 20)
    assert dec.verdict == "slower" and len(a) == len(b) == 4
    alarms = 0
    for _ in range(100):
        dec, _, _ = sequential(
            lambda: float(np.exp(rng.normal(0, 0.1))),
            lambda: float(np.exp(rng.normal(0, 0.1))),
            4,
            10,
            alpha=0.05,
        )
        alarms += dec.different
    assert alarms <= 10  # alpha 5 % over all looks, Bonferroni-split (P(>10) < 1 %)


def test_calibration_replays_the_gate_and_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    sig = signature(RunSpec(metric="us_per_task", command="x"), "us_per_task")
    cal = calibrate_values(sig, lognormal(rng, 24, 0.03, 1000.0), sims=60)
    assert cal.simulations == 60 and cal.false_alarms <= 3
    assert cal.detection_rate > 0.5  # 10 % on 3 % noise is easy
    assert math.isclose(cal.sigma_log, float(np.log(cal.values).std(ddof=1)))
    noisy = calibrate_values(sig, lognormal(rng, 24, 0.2, 1000.0), sims=20)
    assert noisy.recommended_n > cal.recommended_n
    save(cal, tmp_path)
    assert load(sig, tmp_path) == cal
    assert load({**sig, "metric": "wall_s"}, tmp_path) is None


def test_change_points_find_a_step_and_nothing_on_a_flat_history() -> None:
    rng = np.random.default_rng(6)
    labels = [f"v{i}" for i in range(7)]
    step = [lognormal(rng, 4, 0.03, 100.0 if i < 4 else 140.0) for i in range(7)]
    cps = change_points(labels, step, "us_per_task")
    confirmed = [c for c in cps if c.confirmed]
    assert [(c.before, c.after) for c in confirmed] == [("v3", "v4")]
    assert confirmed[0].decision.verdict == "slower"
    flat = [lognormal(rng, 4, 0.03, 100.0) for _ in range(7)]
    assert not [c for c in change_points(labels, flat, "us_per_task") if c.confirmed]


# --- the command line, on black-box commands -----------------------------------------


def test_compare_flags_an_injected_slowdown_and_exits_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    md = tmp_path / "summary.md"
    proc = perflab(
        "compare",
        "--metric",
        "us_per_task",
        "--command-a",
        "echo 100",
        "--command-b",
        "echo 125",
        "--runs",
        "4",
        "--min-runs",
        "2",
        "--markdown",
        str(md),
        "--json",
        home=home,
    )
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    assert out["verdict"] == "slower" and out["regression"] is True
    assert out["decision"]["ratio"] == pytest.approx(1.25)
    assert out["a"]["n"] == out["b"]["n"] == 2  # decided at the first look
    text = md.read_text()
    assert "slower" in text and "| A |" in text and "echo 125" in text


def _toy_tree(root: Path, delay: float) -> Path:
    (root / "plabtoy").mkdir(parents=True)
    # flit_core: a build backend far smaller than setuptools to install into each build's
    # isolated environment (the venv is what the test is about, not the backend)
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["flit_core>=3.4"]\nbuild-backend = "flit_core.buildapi"\n'
        '[project]\nname = "plabtoy"\nversion = "0.1"\ndescription = "a toy"\n'
    )
    (root / "plabtoy" / "__init__.py").write_text(f"DELAY = {delay}\n")
    return root


@pytest.mark.slow
def test_compare_two_source_trees_each_in_its_own_venv(tmp_path: Path) -> None:
    """--source-a/-b: each tree pip-installed into its own cached venv; the command runs there
    (its `python` is the venv's) and the slower tree is flagged."""
    a, b = _toy_tree(tmp_path / "a", 0.01), _toy_tree(tmp_path / "b", 0.03)
    score = (
        'python -c "import time, plabtoy; t = time.perf_counter(); time.sleep(plabtoy.DELAY); '
        'print((time.perf_counter() - t) * 1e6)"'
    )
    home = tmp_path / "home"
    args = [
        "compare",
        "--metric",
        "us_per_task",
        "--command",
        score,
        "--runs",
        "4",
        "--fixed",
        "--json",
    ]
    res = perflab(*args, "--source-a", str(a), "--source-b", str(b), home=home)
    assert res.returncode == 1, res.stderr[-2000:]
    out = json.loads(res.stdout)
    # 30 ms over 10 ms: each tree's own delay (not the same tree twice: 1, nor swapped: 1/3);
    # a loaded host's sleeps overshoot by milliseconds either way (3.57 seen at load 17)
    assert out["verdict"] == "slower" and 2 < out["decision"]["ratio"] < 5
    venvs = {s: out[s]["env"]["venv"] for s in ("a", "b")}
    assert venvs["a"]["requirements"] == [str(a)] and venvs["b"]["requirements"] == [str(b)]
    assert venvs["a"]["python"] != venvs["b"]["python"]
    assert all(str(home / "venvs") in v["python"] for v in venvs.values())


def test_compare_faster_is_exit_0_and_identical_sides_warn(tmp_path: Path) -> None:
    home = tmp_path / "home"
    res = cli(
        "compare",
        "--metric",
        "us_per_task",
        "--command-a",
        "echo 100",
        "--command-b",
        "echo 80",
        "--runs",
        "2",
        "--json",
        home=home,
    )
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["verdict"] == "faster" and out["test"] == "paired t"
    welch = cli(
        "compare", "--command-a", "echo 100", "--command-b", "echo 80", "--runs", "2",
        "--metric", "us_per_task",
        "--unpaired", "--json", home=home,
    )  # fmt: skip
    assert json.loads(welch.stdout)["test"] == "Welch t", welch.stderr
    same = cli(
        "compare",
        "--metric",
        "us_per_task",
        "--command",
        "echo 7",
        "--command-b",
        "echo 7",
        "--runs",
        "2",
        "--json",
        home=home,
    )
    assert same.exit_code == 0, same.stderr
    assert "identical" in same.stderr
    assert json.loads(same.stdout)["identical"] is True


def test_a_failed_run_stops_the_comparison_as_a_regression_with_its_cause(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    res = cli(
        "compare", "--command-a", "echo 100", "--command-b", "sh -c 'exit 3'", "--runs", "4",
        "--metric", "us_per_task",
        "--json", home=home,
    )  # fmt: skip
    assert res.exit_code == 1, res.stderr
    out = json.loads(res.stdout)
    assert out["verdict"] == "failed" and out["regression"] is True and out["decision"] is None
    assert out["failed"]["error"] and out["b"]["n"] == 0 and out["a"]["n"] == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--python-b", "9.99"], "--python '9.99'"),
        (["--package", "parsl=!1"], "not NAME or NAME==VERSION"),
        (["--metric", "speed"], "unknown metric 'speed'"),
        (["--min-effect", "2"], "--min-effect"),
        (["--patch-b", "/nonexistent.diff"], "no such file"),
    ],
)
def test_compare_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    home = tmp_path / "home"
    res = cli(
        "compare", "--metric", "us_per_task", "--command", "echo 1", "--runs", "2", *args, home=home
    )
    assert res.exit_code == 2, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (home / "runs").exists() or not any((home / "runs").iterdir())


def test_calibrate_stores_the_noise_and_compare_uses_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    noisy = "python3 -c 'import random; print(100 * random.lognormvariate(0, 0.02))'"
    res = cli(
        "calibrate",
        "--metric",
        "us_per_task",
        "--command",
        noisy,
        "--runs",
        "8",
        "--simulations",
        "20",
        "--json",
        home=home,
    )
    assert res.exit_code == 0, res.stderr
    cal = json.loads(res.stdout)
    assert len(cal["values"]) == 8 and 0 < cal["sigma_log"] < 0.1
    assert (home / "calibration.json").is_file()
    cmp = cli(
        "compare",
        "--metric",
        "us_per_task",
        "--command",
        noisy,
        "--command-b",
        noisy.replace("100", "200"),
        "--json",
        home=home,
    )
    out = json.loads(cmp.stdout)
    assert out["n_max"] == cal["recommended_n"] and "calibration" in out["n_source"]
    assert cmp.exit_code == 1 and out["verdict"] == "slower"


def test_history_figure_and_table_from_measured_values(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    versions = ["2024.1.8", "2024.6.3", "2025.6.2", "2026.1.5"]
    releases = [
        Release(v, RunSpec(), values=lognormal(rng, 4, 0.02, 900.0 if i < 2 else 600.0))
        for i, v in enumerate(versions)
    ]
    cps = change_points(versions, [r.values for r in releases], "tasks_per_s")
    hist = History("parsl", "tasks_per_s", releases, cps, 0.05, 0.05)
    assert [(c.before, c.after, c.decision.verdict) for c in cps if c.confirmed] == [
        ("2024.6.3", "2025.6.2", "slower")  # fewer tasks/s is slower
    ]
    paths = history_figure(hist, tmp_path)
    assert sorted(p.suffix for p in paths) == [".png", ".svg"]
    assert all(p.stat().st_size > 1000 for p in paths)
    assert "2025.6.2" in paths[1].read_text()  # releases label the x axis
    out = hist.to_dict()
    assert [r["version"] for r in out["releases"]] == versions
    assert out["change_points"][0]["decision"]["ratio"] < 0.75
    md = history_markdown(hist)
    assert "| 2026.1.5 | 4 | 0 |" in md
    assert "between 2024.6.3 and 2025.6.2: confirmed" in md
    page = tmp_path / "history.html"
    page.write_text(history_html(hist, paths[0].read_bytes()))
    if CHROMIUM is not None:  # scripts/setup installs it; CI always has it
        seen = open_in_chromium(page, tmp_path / "history_shot.png")
        assert [(ok, w > 0) for ok, w, _ in seen["images"]] == [(True, True)]
        assert [u for u in seen["requests"] if not u.startswith(("file://", "data:"))] == []
        assert seen["errors"] == [] and "parsl" in seen["title"]


def test_history_names_the_cause_of_a_release_s_failed_runs() -> None:
    from perflab.run.record import RunRecord

    failed = RunRecord(
        run_id="r1", started_at="", ended_at="", target="parsl-htex", workload="noop",
        status="failed",
        error="Traceback (most recent call last):\n  File ...\n"
        "ModuleNotFoundError: No module named 'numpy'\n",
    )  # fmt: skip
    releases = [Release("2025.12.1", RunSpec(), records=[failed]), Release("2026.6.1", RunSpec())]
    md = history_markdown(History("parsl", "us_per_task", releases, [], 0.05, 0.05))
    assert (
        "2025.12.1: 1 of 1 runs failed; no value; "
        "cause: ModuleNotFoundError: No module named 'numpy'" in md
    )
    assert "2026.6.1:" not in md


def test_history_bad_input_is_exit_2(tmp_path: Path) -> None:
    res = cli("history", "--versions", "2024.6.3", home=tmp_path)
    assert res.exit_code == 2 and "at least two" in res.stderr
    res = cli("history", "--range", "2024.6.3,2024.6.3", home=tmp_path)
    assert res.exit_code == 2 and "twice" in res.stderr
    res = cli("history", "--range", "1;x,2", home=tmp_path)
    assert res.exit_code == 2 and "not NAME or NAME==VERSION" in res.stderr


@pytest.mark.parametrize("seed", range(4))
def test_a_paired_ratio_interval_covers_the_true_ratio_as_often_as_it_says(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ratios = np.exp(rng.normal(math.log(1.2), 0.1, size=(2000, 8)))
    covered = 0
    for row in ratios:
        m, lo, hi = paired_ratio(row)
        assert lo < m < hi
        covered += lo <= 1.2 <= hi
    # 95% nominal: 2000 draws put the count within 1900 ± 45 (4.6 sd) but for 1 in 200,000
    assert 1855 <= covered <= 1945
    m, lo, hi = paired_ratio([1.3])
    assert m == pytest.approx(1.3) and math.isnan(lo) and math.isnan(hi)
