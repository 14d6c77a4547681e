"""Numeric factors: any number in a range is a level; sweep level lists parse or fail clearly."""

from __future__ import annotations

import re

import pytest

from perflab import PerflabError
from perflab.factors.catalog import load_catalog, load_catalogs
from perflab.factors.levels import sweep_levels
from perflab.factors.treat import treat
from perflab.spec import RunSpec


def test_a_range_factor_takes_any_number_in_range_as_a_number() -> None:
    cat = load_catalogs()
    spec = treat(RunSpec(tasks=10), "workers=3,prefetch=10,task_us=250.5", cat)
    assert spec.engine_options == {"workers": 3, "prefetch_capacity": 10}
    assert spec.params == {"task_us": 250.5}
    assert isinstance(spec.engine_options["workers"], int)
    assert spec.treatments == ["prefetch=10", "task_us=250.5", "workers=3"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("workers=0", "no level '0' (levels: a number in [1, 256])"),
        ("workers=x", "no level 'x'"),
        ("workers", "needs a level: workers=VALUE with VALUE a number in [1, 256]"),
    ],
)
def test_out_of_range_and_missing_levels_are_refused(text: str, message: str) -> None:
    with pytest.raises(PerflabError, match=re.escape(message)):
        treat(RunSpec(tasks=10), text, load_catalogs())


@pytest.mark.parametrize(
    ("text", "levels"),
    [
        ("workers=1..4", [1, 2, 3, 4]),
        ("cfg_prefetch", [0, 10, 100, 1000]),
        ("task_us=10..100000*10", [10, 100, 1000, 10000, 100000]),
        ("task_us=100..1000*3.1623", [100, 316.2, 1000]),
        ("task_us=0.5..2:0.5", [0.5, 1, 1.5, 2]),
        ("prefetch=0|10|100", [0, 10, 100]),
    ],
)
def test_sweep_level_lists(text: str, levels: list[float]) -> None:
    name, got = sweep_levels(text, load_catalogs())
    assert name == text.partition("=")[0]
    assert got == levels


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("workers=4..1", "the range is empty"),
        ("cfg_noop_logging", "is not numeric"),
        ("workers=a..b", "'a' is not a number"),
        ("workers", "has a range, not levels"),
        ("task_us=0..10*2", "geometric range needs a > 0"),
        ("workers=1|1", "a level repeats"),
        ("nosuch=1..2", "unknown factor 'nosuch'"),
    ],
)
def test_bad_sweep_levels_name_the_input(text: str, message: str) -> None:
    with pytest.raises(PerflabError, match=message):
        sweep_levels(text, load_catalogs())


def test_a_catalog_range_must_be_two_ordered_numbers(tmp_path) -> None:
    p = tmp_path / "c.toml"
    p.write_text('[factor.w]\nrange = [4, 1]\nconfig = { workers = "{level}" }\n')
    with pytest.raises(PerflabError, match=r"c.toml: factor w: `range` must be \[low, high\]"):
        load_catalog(p)
