"""The proof of a built variant, judged on recorded hook facts: the GIL as asked at start-up
and after (an extension that turned it back on fails the run, naming it), the variant's
configure arguments, ``PYTHON_JIT`` as each process saw it."""

from __future__ import annotations

from typing import Any

from perflab.hook.interp_proof import judge_variant
from perflab.hook.seen import judge_seen

EXE = "/cache/3.13.5-nogil-aa/prefix/bin/python3.13t"
OP = {"on": "interpreter", "path": EXE, "venv": True, "gil": False, "jit": False,
      "config_args": ["--prefix=/cache/3.13.5-nogil-aa/prefix", "--disable-gil"]}  # fmt: skip
ARGS = "'--prefix=/cache/3.13.5-nogil-aa/prefix' '--disable-gil'"


def proc(pid: int, gil: bool = False, args: str = ARGS, exe: str = EXE) -> dict[str, Any]:
    """A process fact as the hook (hook/site.py) writes it for a variant."""
    return {"fact": "process", "pid": pid, "argv0": "python3 prog.py", "env": {},
            "python": {"executable": exe, "version": "3.13.5", "venv": True, "gil": gil,
                       "config_args": args, "PYTHON_JIT": None}}  # fmt: skip


GIL_BACK = {
    "fact": "gil_enabled", "pid": 12, "argv0": "python3 prog.py", "after": "warning",
    "warning": "The global interpreter lock (GIL) has been enabled to load module 'noglil', "
    "which has not declared that it can run safely without the GIL.",
}  # fmt: skip


def test_every_process_without_the_gil_is_proof() -> None:
    facts = [proc(11), proc(12)]
    where, why = judge_variant(OP, facts, facts)
    assert why is None and [w["process"]["pid"] for w in where] == [11, 12]
    assert all(w["gil"] is False for w in where)


def test_an_extension_that_turned_the_gil_back_on_fails_with_that_cause() -> None:
    facts = [proc(11), proc(12), GIL_BACK]
    where, why = judge_variant(OP, facts[:2], facts)
    assert where == [] and why is not None
    assert "pid 12" in why and "Py_mod_gil" in why and "'noglil'" in why
    # and through the judge of every seen operation, under the factor's name
    _, causes = judge_seen("py_gil=off", [OP], facts, None)
    assert len(causes) == 1 and causes[0].startswith("py_gil=off: ")


def test_a_process_started_with_the_gil_or_another_build_fails() -> None:
    _, why = judge_variant(OP, [proc(11, gil=True)], [])
    assert why is not None and "started with the GIL on, not off" in why
    _, why = judge_variant(OP, [proc(11, args="'--prefix=/usr'")], [])
    assert why is not None and "built with" in why


def test_the_gil_build_asked_with_the_gil_is_proof_and_needs_no_watch() -> None:
    op = {**OP, "gil": True, "config_args": ["--prefix=/p"]}
    facts = [proc(11, gil=True, args="'--prefix=/p'"), GIL_BACK]
    assert judge_variant(op, facts[:1], facts)[1] is None


def test_another_interpreter_is_caught_before_the_gil_is_looked_at() -> None:
    facts = [proc(11, exe="/usr/bin/python3.11")]
    _, causes = judge_seen("py_gil=off", [OP], facts, None)
    assert len(causes) == 1 and "/usr/bin/python3.11" in causes[0]
