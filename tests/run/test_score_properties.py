"""The score line of a black-box command (hypothesis, issue 43): whatever a command prints,
its score is finite numbers a metric can be, or one ScoreError line — never another
exception (which would end the whole campaign as an internal error)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cliprops import examples
from conftest import perflab
from perflab.run.blackbox import ScoreError, parse_score
from perflab.run.record import METRICS, metric_problem

HOSTILE = ["nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-0", "0", "1_000", "0x10",
           "١٢", "\x1b[31m5", "5\r", "1e-320", "9" * 5000, "true", "null", "[]", "{}",
           "[" * 5000, '{"a":' * 3000, "\x00", "\ufeff12", '{"us_per_task": ' + "1" * 5000 + "}",
           '{"us_per_task": 1e999}', '{"us_per_task": NaN}',
           '{"us_per_task": -Infinity}']  # fmt: skip
JSON_VALUES = st.one_of(
    st.floats(),
    st.integers(-(10**30), 10**30),
    st.sampled_from([True, False, None, "12", "nan", "", [], {}, [1]]),
    st.text(max_size=5),
)


@st.composite
def stdout(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["number", "json", "hostile", "text"]))
    if kind == "number":
        last = draw(st.one_of(st.floats().map(repr), st.integers(-(10**400), 10**400).map(str)))
    elif kind == "json":
        keys = st.sampled_from([*METRICS, "us_per_task", "x", ""])
        last = json.dumps(draw(st.dictionaries(keys, JSON_VALUES, max_size=4)))
    elif kind == "hostile":
        last = draw(st.sampled_from(HOSTILE))
    else:
        last = draw(st.text(max_size=40))
    before = draw(st.lists(st.text(max_size=20), max_size=3))
    return "\n".join([*before, last, *draw(st.sampled_from([[], [""], ["  "]]))])


@examples(300)
@given(out=stdout(), metric=st.sampled_from(["us_per_task", "tasks_per_s", "tasks", "wall_s"]))
@example(out='{"us_per_task": ' + "1" * 5000 + "}", metric="us_per_task")
@example(out="[" * 5000, metric="us_per_task")
@example(out='{"us_per_task": true}', metric="us_per_task")
def test_any_stdout_is_a_score_or_one_score_error(out: str, metric: str) -> None:
    try:
        score = parse_score(out, metric)
    except ScoreError as exc:
        assert str(exc).strip() and "\n" not in str(exc) and len(str(exc)) < 400, str(exc)
        return
    assert metric in score
    for key, value in score.items():
        assert isinstance(value, float) and math.isfinite(value)
        assert metric_problem(key, value) is None


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        # json.loads refuses an integer of more than 4,300 digits with a ValueError that is
        # no JSONDecodeError: it escaped as an internal error
        ('{"us_per_task": ' + "1" * 5000 + "}", "neither a number nor a JSON object"),
        # nesting deeper than the recursion limit: RecursionError
        ("[" * 100_000, "neither a number nor a JSON object"),
        # a boolean was taken as 1.0
        ('{"us_per_task": true}', "not a number"),
    ],
)
def test_found_score_lines_are_score_errors(line: str, fragment: str) -> None:
    with pytest.raises(ScoreError, match=fragment):
        parse_score(line, "us_per_task")


def test_a_hostile_score_through_the_real_cli_is_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The same through ``perflab run --command``: exit 2, one line (one real run)."""
    (tmp_path / "score.txt").write_text('{"us_per_task": ' + "1" * 5000 + "}\n")
    r = perflab("run", "--command", "cat score.txt", "--metric", "us_per_task",
                "--run-root", str(tmp_path / "runs"),
                cwd=tmp_path, env={"PERFLAB_HOME": str(tmp_path / ".perflab")})  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("perflab: error: command target:")
    assert "internal error" not in r.stderr
