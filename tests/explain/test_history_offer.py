"""`history` offers `perflab explain` for each confirmed change point."""

from __future__ import annotations

from perflab.compare.changepoints import change_points
from perflab.compare.history import History, Release
from perflab.compare.render import change_point_lines
from perflab.spec import RunSpec


def test_confirmed_change_point_offers_the_explain_command() -> None:
    spec = RunSpec(target="parsl-htex", workload="noop", tasks=1000)
    values = [[100.0, 101, 99, 100], [100.0, 99, 101, 100], [150.0, 151, 149, 150]]
    rels = [Release(v, spec, values=x) for v, x in zip(("1", "2", "3"), values, strict=True)]
    cps = change_points(["1", "2", "3"], values, "us_per_task")
    hist = History("parsl", "us_per_task", rels, cps, 0.05, 0.05)
    assert [c.confirmed for c in cps] == [True]
    cmd = (
        "perflab explain --package parsl --range 2..3 --target parsl-htex --workload noop "
        "--tasks 1000 --metric us_per_task"
    )
    assert f"  explain it: {cmd}" in change_point_lines(hist)
    assert hist.to_dict()["change_points"][0]["explain"] == cmd
    bisect = (
        "perflab bisect --package parsl --range 2..3 --target parsl-htex --workload noop "
        "--tasks 1000 --metric us_per_task --repo CLONE"
    )
    assert f"  find its commits: {bisect}" in change_point_lines(hist)
    assert hist.to_dict()["change_points"][0]["bisect"] == bisect
