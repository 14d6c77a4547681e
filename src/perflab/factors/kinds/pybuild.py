"""``py_variant``: interpreters perflab built from source (``perflab interpreters build``)
as factors whose levels compose: ``py=3.11|3.13``, ``py_gil=on|off``, ``py_jit=on|off``,
``py_pgo=on|off``.

Each factor only names its axis; a treatment set's axes together (the others at their
defaults: 3.13, GIL on, JIT off, PGO off) pick one built variant from the cache
(``variant.json`` of each build, :func:`built_variants`). The run then gets that variant's
private venv with the target's packages, as an ``interpreter`` factor with ``venv = true``
does. A set whose variant is not built is refused with the command that builds it; an
impossible one (3.11 without the GIL) is refused with why.

In a campaign whose design varies any axis, a set that names none of them (the design's
baseline, ``-``) runs the variant at every axis' default level too (:func:`at_baseline`),
not the interpreter perflab runs on: otherwise every effect would be measured against
another interpreter's build.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import FactorKind
from perflab.factors.kinds.interpreter import use_interpreter
from perflab.files import perflab_home, private_dir
from perflab.hook.seen import seen_ops
from perflab.spec import RunSpec

MARKER = "variant.json"
#: Axis -> (its factor's levels, default level).
AXES: dict[str, tuple[tuple[str, ...], str]] = {
    "py": (("3.11", "3.13"), "3.13"),
    "py_gil": (("on", "off"), "on"),
    "py_jit": (("on", "off"), "off"),
    "py_pgo": (("on", "off"), "off"),
}
#: Axis -> the build flag its non-default level stands for.
FLAG_OF = {"py_gil": ("nogil", "off"), "py_jit": ("jit", "on"), "py_pgo": ("pgo", "on")}
#: A set's choice travels between the kind's ``apply`` calls in ``venv_base`` (the spec has
#: no field for half a choice); ``finish`` replaces it with the variant's interpreter.
PENDING = "pybuild:"
#: A campaign's ``design_info`` key: the levels its sets naming no axis run at (present only
#: in a design that varies an axis; a campaign made without it keeps its sets as they ran).
BASELINE_INFO = "py_variant_baseline"
#: The hook's key for the baseline variant's proof (the set has no treatment to key it by).
BASELINE_PROOF = "py_variant:baseline"
#: Where the first free-threaded build of each version is (CPython 3.13).
FREE_THREADED_SINCE = (3, 13)


def cache_root() -> Path:
    """Where built interpreters live: ``$PERFLAB_INTERPRETERS``, else perflab's home's
    ``interpreters/``."""
    env = os.environ.get("PERFLAB_INTERPRETERS")
    return Path(env).expanduser().resolve() if env else perflab_home() / "interpreters"


def built_variants(root: Path | None = None) -> list[dict[str, Any]]:
    """The variants built under ``root`` (each its ``variant.json``, with ``dir``), by key;
    unfinished and failed builds (no marker) are not variants. A cache another user could
    have planted (not this user's own, or writable by others above it) is refused."""
    root = private_dir(root or cache_root(), create=False)
    out = []
    for marker in sorted(root.glob(f"*/{MARKER}")):
        try:
            info = json.loads(marker.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and isinstance(info.get("version"), str):
            out.append({**info, "dir": str(marker.parent)})
    return out


def choice_of(text: str) -> dict[str, str]:
    """``{"py": "3.13", "py_gil": "off", ...}`` from a pending ``venv_base``, all axes set."""
    got = dict(a.split("=", 1) for a in text.removeprefix(PENDING).split(";") if "=" in a)
    return {axis: got.get(axis, default) for axis, (_, default) in AXES.items()}


def flags_of(choice: dict[str, str]) -> set[str]:
    """The build flags a full choice asks for (``nogil``, ``jit``, ``pgo``)."""
    return {flag for axis, (flag, level) in FLAG_OF.items() if choice[axis] == level}


def build_command(choice: dict[str, str]) -> str:
    """The command that builds the variant ``choice`` stands for."""
    flags = flags_of(choice)
    opts = [f"--{'no-gil' if f == 'nogil' else f}" for f in ("nogil", "jit", "pgo") if f in flags]
    return " ".join(["perflab interpreters build --version", choice["py"], "--from-debian", *opts])


def pick_variant(choice: dict[str, str], variants: list[dict[str, Any]]) -> dict[str, Any]:
    """The built variant for a full choice: its minor version and exactly its flags (LTO
    aside: a build with it serves when none without it is there). A PerflabError saying how
    to build it when there is none, or why it cannot be."""
    minor = tuple(int(x) for x in choice["py"].split("."))
    if choice["py_gil"] == "off" and minor < FREE_THREADED_SINCE:
        raise PerflabError(f"py={choice['py']} with py_gil=off: CPython {choice['py']} has no "
                           "free-threaded build (3.13 is the first)")  # fmt: skip
    want = flags_of(choice)
    fits = [
        v
        for v in variants
        if ".".join(v["version"].split(".")[:2]) == choice["py"]
        and set(v.get("flags", [])) - {"lto"} == want
        and v.get("python")
    ]
    fits.sort(key=lambda v: ("lto" in v.get("flags", []), v.get("built_at", "")))
    if not fits:
        shown = ",".join(f"{a}={choice[a]}" for a in AXES)
        raise PerflabError(
            f"no built interpreter for {shown} (in {cache_root()}): build it with "
            f"`{build_command(choice)}`, or see `perflab interpreters list`"
        )
    return fits[0]


def proof_op(variant: dict[str, Any], choice: dict[str, str]) -> dict[str, Any]:
    """The hook's operation proving the variant in every Python process of a command: an
    ``interpreter`` factor's (its real interpreter, in a venv), with the GIL as asked and
    its configure arguments."""
    [op] = seen_ops({"python": {"path": variant["python"], "venv": True}})
    return {
        **op,
        "gil": choice["py_gil"] == "on",
        "config_args": variant.get("configure", []),
        "jit": choice["py_jit"] == "on",
    }


@FACTOR_KINDS.register
class PyVariantKind(FactorKind):
    name = "py_variant"
    keys = ("py_variant",)
    #: a command's Python is the variant's venv's, proven by the hook in every process
    for_commands = True

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        if not isinstance(value, dict) or set(value) != {"axis", "level"}:
            raise PerflabError(f"{where}: `py_variant` takes a table of `axis` and `level`")
        if value["axis"] not in AXES:
            raise PerflabError(f"{where}: `py_variant.axis` is one of {', '.join(AXES)}")
        return value

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        axis, level = value["axis"], str(value["level"])
        if level not in AXES[axis][0]:
            raise PerflabError(f"factor {axis}: level {level!r} is not one of "
                               f"{', '.join(AXES[axis][0])}")  # fmt: skip
        base = spec.venv_base or PENDING
        if not base.startswith(PENDING):
            raise PerflabError(f"factor {axis} picks a built interpreter: it cannot be combined "
                               "with another interpreter factor")  # fmt: skip
        return replace(spec, venv_base=f"{base};{axis}={level}")

    def finish(self, spec: RunSpec, treatments: list[str]) -> RunSpec:
        """The pending choice made one built variant's interpreter, with its proof (a
        command's, under each of the set's ``treatments`` of this kind)."""
        if not (spec.venv_base or "").startswith(PENDING):
            return spec
        choice = choice_of(spec.venv_base or "")
        variant = pick_variant(choice, built_variants())
        shown = ",".join(f"{a}={choice[a]}" for a in AXES)
        # the variant's interpreter as an ``interpreter`` factor with ``venv = true`` takes it
        spec = use_interpreter(spec, variant["python"], venv=True, named=shown)
        env = dict(spec.env)
        if "jit" in variant.get("flags", []):
            env["PYTHON_JIT"] = "1" if choice["py_jit"] == "on" else "0"
        hook = dict(spec.hook)
        if spec.command is not None:
            hook.update({t: [*hook.get(t, []), proof_op(variant, choice)] for t in treatments})
        return replace(spec, env=env, hook=hook)


def design_baseline(effects: Iterable[Mapping[str, Any]]) -> dict[str, str] | None:
    """Every axis' default level when a design's factors (their catalog ``effects`` tables)
    vary any axis, else None: what its sets that name no axis run at."""
    if any("py_variant" in e for e in effects):
        return {axis: default for axis, (_, default) in AXES.items()}
    return None


def at_baseline(spec: RunSpec, base: RunSpec, baseline: Mapping[str, str] | None) -> RunSpec:
    """A design's set's ``spec`` run by the variant at ``baseline``'s levels (from
    :func:`design_baseline`) when the set chose no interpreter of its own (``base``'s), with
    its proof; the spec as it is otherwise. No such variant built is a PerflabError saying
    the design needs it and the command that builds it."""
    if not baseline or spec.venv_base is not None or spec.python != base.python:
        return spec
    pending = PENDING + "".join(f";{a}={lvl}" for a, lvl in baseline.items())
    try:
        return PyVariantKind().finish(replace(spec, venv_base=pending), [BASELINE_PROOF])
    except PerflabError as exc:
        axes = ", ".join(AXES)
        raise PerflabError(
            f"the design's sets that name none of {axes} run the variant at the default "
            f"levels (its baseline): {exc}"
        ) from None


def variant_factors() -> dict[str, dict[str, Any]]:
    """Catalog tables of the four axes (present whether or not anything is built, so a set
    with no variant is refused with the command that builds it)."""
    doc = {
        "py": "CPython minor version of a built interpreter (perflab interpreters build)",
        "py_gil": "a built CPython with the GIL (on) or free-threaded (off)",
        "py_jit": "a built CPython with the experimental JIT (on) or without (off)",
        "py_pgo": "a built CPython with PGO, --enable-optimizations (on) or without (off)",
    }
    return {
        axis: {
            "description": doc[axis],
            "category": "environment",
            "levels": list(levels),
            "py_variant": {"axis": axis, "level": "{level}"},
        }
        for axis, (levels, _) in AXES.items()
    }
