"""``campaign status``'s precision per hour on a ``--command`` campaign (cheap: no engine):
the half-width each effect reached from the stored runs, the runs and hours a target needs
(predicted), in the text and in ``--json``; a bad ``--precision`` is one line, exit 2."""

from __future__ import annotations

import math

import pytest
from scipy.stats import t

from conftest import perflab, perflab_json

#: a halves the score, b does nothing; lognormal noise of sd 0.05 on the log
SCORE = (
    "import math, os, random\n"
    "t = set(os.environ['PERFLAB_TREATMENTS'].split(','))\n"
    "print(1000 * (0.5 if 'a' in t else 1.0) * math.exp(random.gauss(0, 0.05)))\n"
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    work = tmp_path_factory.mktemp("prec")
    score = work / "score.py"
    score.write_text(SCORE)
    st = ["--store", str(work / "s.db")]
    made = perflab(
        "campaign", "create", "p", "--command", f"python3 {score}", "--factors", "a,b",
        "--metric", "us_per_task",
        "--design", "full", "--runs", "4", "--seed", "1", *st, cwd=work,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    ran = perflab("campaign", "run", "p", *st, "--json", cwd=work)
    assert ran.returncode == 0, ran.stderr
    return st


def test_status_says_the_precision_reached_and_what_a_target_costs(store: list[str]) -> None:
    p = perflab_json("campaign", "status", "p", "--precision", "1%", *store)["precision"]
    assert p["target"] == 0.01 and p["runs"] == 16 and p["df"] == 12
    assert [s["runs"] for s in p["sets"]] == [4, 4, 4, 4]
    # 12 df of a 0.05 sd (unseeded noise): the pooled estimate within a factor of 3
    # (chi-square: outside in about 2 of 100,000 suites; a factor of 2 failed 1 in ~400)
    assert 0.05 / 3 < p["pooled_sd_log"] < 0.05 * 3
    for e in p["effects"]:
        assert e["estimable"] and 0 < e["half_width"] < 0.2
        assert e["more_runs"] == e["runs_to_target"] - 16 > 0
        assert e["more_hours_predicted"] == pytest.approx(e["more_runs"] * p["run_s"] / 3600)
    # the half-width falls as √runs and with the t quantile of the runs' df (runs − 4 sets)
    (a, _) = p["effects"]
    n = a["runs_to_target"]
    shrink = t.ppf(0.975, n - 4) / t.ppf(0.975, 12)
    ratio = (math.log1p(a["half_width"]) * shrink / math.log1p(0.01)) ** 2
    assert n / 16 == pytest.approx(ratio, rel=0.02)
    text = perflab("campaign", "status", "p", "--precision", "1%", *store)
    assert text.returncode == 0
    assert "reached on the widest effect" in text.stdout and "predicted" in text.stdout


def test_a_bad_precision_is_one_line_and_exit_2(store: list[str]) -> None:
    proc = perflab("campaign", "status", "p", "--precision", "lots", *store)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--precision" in proc.stderr
