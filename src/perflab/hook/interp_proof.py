"""The proof of a built interpreter variant (``py``, ``py_gil``, ``py_jit``, ``py_pgo``) in
each Python process of a command, judged from the hook's facts: the process ran the
variant's interpreter; its GIL was as asked at start-up and stayed so (a ``gil_enabled``
fact: an extension module without ``Py_mod_gil`` turned it back on, which would measure the
GIL build under a no-GIL label); its ``CONFIG_ARGS`` are the variant's; and, for a JIT
build, what ``PYTHON_JIT`` it saw. Pure: facts in, (proof, cause) out."""

from __future__ import annotations

from typing import Any

MAX_FACTS = 8


def _who(fact: dict[str, Any]) -> str:
    return f"{fact.get('argv0')} (pid {fact.get('pid')})"


def judge_variant(
    op: dict[str, Any], procs: list[dict[str, Any]], facts: list[dict[str, Any]]
) -> tuple[list[Any], str | None]:
    """Proof that every Python process of the command ran the variant ``op`` names, or the
    first cause why not. ``procs`` are the processes' start-up facts, ``facts`` all facts."""
    want_gil = op.get("gil")
    for p in procs:
        py = p.get("python") or {}
        if want_gil is not None and py.get("gil") is not want_gil:
            return [], (f"{_who(p)} started with the GIL {'on' if py.get('gil') else 'off'}, "
                        f"not {'on' if want_gil else 'off'}")  # fmt: skip
        want_args = op.get("config_args")
        if want_args is not None and not _same_args(py.get("config_args"), want_args):
            return [], f"{_who(p)} was built with {py.get('config_args')!r}, not the variant's"
    if want_gil is False:
        for f in facts:
            if f.get("fact") == "gil_enabled":
                said = f"; Python said: {f['warning']}" if f.get("warning") else ""
                return [], (
                    f"{_who(f)} turned the GIL back on ({f.get('after')}): an extension "
                    f"module without Py_mod_gil was imported{said}"
                )
    return [
        {
            "process": {"pid": p.get("pid"), "argv0": p.get("argv0")},
            "gil": (p.get("python") or {}).get("gil"),
            "PYTHON_JIT": (p.get("python") or {}).get("PYTHON_JIT"),
        }
        for p in procs[:MAX_FACTS]
    ], None


def _same_args(seen: Any, want: list[str]) -> bool:
    """Whether the ``CONFIG_ARGS`` a process saw (one quoted string) hold the variant's
    configure arguments."""
    if not isinstance(seen, str):
        return False
    return all(f"'{a}'" in seen or a in seen.split() for a in want)
