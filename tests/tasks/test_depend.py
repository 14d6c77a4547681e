"""Callback chaining (concurrent.futures engines): order, values and failures."""

from __future__ import annotations

import concurrent.futures

import pytest

from perflab.errors import PerflabError
from perflab.tasks.depend import Chainer, Dependent


def _add(*xs: int) -> int:
    return 1 + max(xs, default=0)


def _boom(*xs: int) -> int:
    raise ValueError("boom")


def test_a_stencil_of_chained_futures_computes_depths() -> None:
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        ch = Chainer(pool.submit)
        row = [ch.submit_after(_add, []) for _ in range(4)]
        for _ in range(9):
            row = [ch.submit_after(_add, row[max(0, i - 1) : i + 2]) for i in range(4)]
        assert [f.result(timeout=10) for f in row] == [10] * 4
        ch.close()


def test_a_failed_input_fails_its_dependants() -> None:
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        ch = Chainer(pool.submit)
        bad = ch.submit_after(_boom, [])
        after = ch.submit_after(_add, [bad])
        with pytest.raises(ValueError, match="boom"):
            after.result(timeout=10)
        ch.close()


class _Pool:
    """An executor of the protocol over a thread pool, with a chosen dependency kind."""

    def __init__(self, pool: concurrent.futures.Executor, kind: str | None) -> None:
        self.pool, self.dependencies, self.name = pool, kind, f"pool-{kind}"
        self.calls: list[tuple[object, ...]] = []

    def submit(self, fn, *args):  # type: ignore[no-untyped-def]
        self.calls.append(args)
        return self.pool.submit(fn, *args)


def test_the_wrapper_passes_futures_to_native_engines_and_chains_for_the_others() -> None:
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        native = _Pool(pool, "native")
        first = native.submit(_add)
        dep = Dependent(native)  # type: ignore[arg-type]
        dep.submit_after(lambda *a: a, [first], 7)
        assert native.calls[-1][0] == 7 and native.calls[-1][1] is first  # the future itself
        chained = _Pool(pool, "callbacks")
        dep = Dependent(chained)  # type: ignore[arg-type]
        out = dep.submit_after(_add, [chained.submit(_add)], 5)
        assert out.result(timeout=10) == 6  # 1 + max(5, 1): the input's result, not its future
        dep.close()
        with pytest.raises(PerflabError, match="pool-None.*cannot express task dependencies"):
            Dependent(_Pool(pool, None))  # type: ignore[arg-type]
