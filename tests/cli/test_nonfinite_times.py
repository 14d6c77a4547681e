"""Issue 43: ``--time`` and ``--timeout`` take a positive finite number of seconds. ``inf``
passed validate() (inf > 0) and reached timers and the batch's sizing; it is refused like 0
and -1, with exit 2 and one line naming the option."""

from __future__ import annotations

import pytest

from cliprops import run_in, workdir
from perflab.errors import PerflabError
from perflab.run.measure import validate
from perflab.spec import RunSpec

BAD = ["inf", "-inf", "nan", "-1", "0"]


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize("field", ["time_s", "timeout_s"])
def test_validate_refuses_a_time_that_is_not_positive_and_finite(field: str, value: str) -> None:
    spec = RunSpec(target="parsl-threads", workload="noop", **{field: float(value)})
    with pytest.raises(PerflabError, match="--time" if field == "time_s" else "--timeout"):
        validate(spec)


@pytest.mark.parametrize("value", ["inf", "nan", "-5"])
@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["run", "--command", "echo 1"], "--timeout"),
        (["run", "-t", "threads", "-w", "noop"], "--time"),
        (["campaign", "create", "x", "--command", "echo 1", "--factors", "a", "--store", "s.db"],
         "--timeout"),
        (["compare", "--command", "echo 1", "--runs", "2"], "--timeout"),
        (["zoo", "--store", "s.db"], "--timeout"),
        (["study", "job-submission", "table"], "--timeout"),
    ],
)  # fmt: skip
def test_the_cli_refuses_it_with_one_line_naming_the_option(
    args: list[str], option: str, value: str
) -> None:
    out = run_in(workdir(), [*args, option, value])
    assert not out.would_run, f"{args} {option} {value} got past validation"
    assert out.code == 2 and option in out.stderr, out.stderr
