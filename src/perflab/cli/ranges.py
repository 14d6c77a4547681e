"""``--range A..B``: the two ends of ``compare``, ``history``, ``bisect`` and ``explain``,
parsed here once — releases of ``--package NAME``, commits or tags of ``--repo PATH``, or
source folders; ``history`` also takes a list ``A,B,C``. The old spellings of the ends
(``--good/--bad``, ``--from/--to``, ``--versions``, ``--package-a/-b``) still work for one
release, each saying once that it is deprecated."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from perflab.errors import PerflabError

#: A package's bare name (``--package parsl``): whose releases ``--range`` names.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def parse_range(text: str, lists: bool = False) -> list[str]:
    """``"A..B"`` -> ``["A", "B"]``; with ``lists``, ``"A,B,C"`` -> ``["A", "B", "C"]``
    too. A PerflabError naming ``--range`` for anything else."""
    text = text.strip()
    if ".." in text:
        ends = [e.strip() for e in text.split("..")]
        if len(ends) != 2 or not all(ends):
            raise PerflabError(f"--range {text!r}: give two ends, A..B")
        if ends[0] == ends[1]:
            raise PerflabError(f"--range {text!r}: the two ends are the same")
        return ends
    if lists and "," in text:
        items = [e.strip() for e in text.split(",") if e.strip()]
        if len(items) < 2:
            raise PerflabError(f"--range {text!r}: give at least two, A,B,…")
        return items
    form = "A..B or a list A,B,C" if lists else "A..B"
    raise PerflabError(f"--range {text!r}: give the ends as {form}")


def range_option(help: str, lists: bool = False) -> Callable[[Any], Any]:
    """``--range A..B`` (click destination ``ends``)."""
    return click.option("--range", "ends", metavar="A,B,…" if lists else "A..B", help=help)


def ends_of(o: dict[str, Any], old: tuple[str, ...], lists: bool = False) -> list[str]:
    """The ends from ``--range``, else from the old options (click destinations ``old``,
    given all or none); refused when both or neither are given."""
    given = [o.get(k) for k in old]
    if o.get("ends"):
        if any(given):
            raise PerflabError("give the ends once: --range A..B (the old options too is twice)")
        return parse_range(o["ends"], lists)
    if len(old) == 1 and given[0]:
        return parse_range(given[0], lists=True) if "," in given[0] else [given[0]]
    if all(given):
        return [str(g) for g in given]
    raise PerflabError("give the two ends: --range A..B")


def compare_sides(o: dict[str, Any]) -> None:
    """compare's ``--range A..B`` as its sides' options, in ``o`` (click's keyword
    arguments): commits or tags of ``--repo`` as source trees, two folders as source trees,
    else releases of the package ``--package NAME`` names (default parsl). A bare NAME in
    ``--package`` only says whose releases the range names (a project file may hold one)."""
    bare = [p for p in o.get("side_package") or () if _NAME.fullmatch(p)]
    pins = tuple(p for p in o.get("side_package") or () if p not in bare)
    o["side_package"] = pins
    if not o.get("ends"):  # a project file's repo or package is for the verbs with a range
        return
    a, b = parse_range(o["ends"])
    sided = [f"--{k}-{s}" for k in ("package", "source") for s in "ab" if o.get(f"side_{k}_{s}")]
    if sided:
        raise PerflabError(f"--range A..B gives both sides: drop {', '.join(sided)}")
    name = bare[0] if bare else "parsl"
    if o.get("repo"):
        o["side_source_a"], o["side_source_b"] = _trees(Path(o["repo"]), name, (a, b))
    elif Path(a).is_dir() and Path(b).is_dir():
        o["side_source_a"], o["side_source_b"] = (str(Path(e).resolve()) for e in (a, b))
    else:
        o["side_package_a"], o["side_package_b"] = (f"{name}=={a}",), (f"{name}=={b}",)


def _trees(repo: Path, package: str, ends: tuple[str, str]) -> tuple[str, str]:
    """Each end's commit of the clone ``repo``, extracted once (as ``bisect`` builds them)."""
    from perflab.bisect import commits as git_
    from perflab.files import home_dir

    clone = git_.check_clone(repo, package)
    cache = home_dir("bisect", "trees")
    a, b = (str(git_.tree(clone, git_.resolve(clone, e, package), cache)) for e in ends)
    return a, b
