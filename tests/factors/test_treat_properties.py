"""Treatment strings drawn (hypothesis, issue 43): catalog names with good and hostile
levels, unknown names, stray separators, for an engine and for a black-box command. The
answer is one line and exit 2, or the treatment passes (and nothing starts)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cliprops import examples, run_in, workdir
from perflab.factors.catalog import load_catalogs

NAMES = sorted(load_catalogs().names())
LEVELS = ["1", "0", "-1", "100", "1e999", "nan", "", "x", "1.5", "99999999999999999999",
          "\x1b[31m", "a,b", "=", "1..4"]  # fmt: skip


@st.composite
def treatment(draw: st.DrawFn) -> str:
    items = []
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.one_of(st.sampled_from(NAMES), st.sampled_from(
            ["a", "mine", "", " ", "a b", "é", "x" * 200, "patch:x", "../x", "f1"])))  # fmt: skip
        if draw(st.booleans()):
            name += "=" + draw(st.sampled_from(LEVELS))
        items.append(name)
    return draw(st.sampled_from([",", ", ", ",,"])).join(items)


TARGETS = [
    ["run", "--command", "echo 1"],
    ["run", "--target", "parsl-htex", "--tasks", "1"],
    ["run", "--target", "dask", "--tasks", "1", "--catalog", "catalog.toml"],
    ["compare", "--command", "echo 1", "--runs", "2"],
]


@examples(50)
@given(target=st.sampled_from(TARGETS), treat=treatment())
def test_any_treatment_string_is_applied_or_refused_in_one_line(
    target: list[str], treat: str
) -> None:
    flag = "--treat-b" if target[0] == "compare" else "--treat"
    run_in(workdir(), [*target, flag, treat], store=False)
