"""Catalogs written from the source: one factor per logger call (``factors generate``).

Does each of the log lines a grouped factor removes cost the same, or do a few carry the
saving? Answering that needs one factor per call. A call's factor name
comes from its module, its function and its message, not its line number, so the same call
keeps its name across releases; it conflicts with the grouped factors that also remove it.
"""

from __future__ import annotations

import fnmatch
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.catalog import Catalog
from perflab.factors.sources import modules
from perflab.factors.transforms import Site, log_sites, slug


@dataclass
class CallFactor:
    name: str
    module: str
    function: str
    match: str
    sites: list[Site]
    conflicts: list[str]
    #: pieces of other calls that also hold ``match`` but have their own factor
    exclude: list[str] = field(default_factory=list)


#: A one-line string literal (an f-string too) in source text, and its content.
_LITERAL = re.compile(r"""[rRbBuUfF]{0,2}(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')""")
_PLACEHOLDER = re.compile(r"\{[^}]*\}|%[-#0 +]*\d*(?:\.\d+)?[sdrfgxi]")


def _pieces(site: Site) -> list[str]:
    """The literal pieces of the call's message as written in its source, longest first:
    what identifies the call across releases (line numbers and argument names move; the
    words of a message rarely do). Placeholders split a literal into pieces."""
    pieces = {
        piece.strip()
        for m in _LITERAL.finditer(site.text)
        for piece in _PLACEHOLDER.split(m.group(1) or m.group(2) or "")
        if "\\" not in piece
    }
    usable = sorted(
        (p for p in pieces if len(p) >= 4 and p in site.text), key=lambda p: (-len(p), p)
    )
    # No usable literal: the call's longest source line, as written, so the match is a
    # substring of the call (a whitespace-collapsed text would match nothing, not even it)
    return usable or [max((ln.strip() for ln in site.text.splitlines()), key=len)[:80]]


def log_call_factors(
    pkg_dir: Path, package: str, module_glob: str, levels: tuple[str, ...], catalog: Catalog
) -> list[CallFactor]:
    """One factor per logger call at ``levels`` in the modules matching ``module_glob``; calls
    of one function that no literal tells apart share a factor."""
    groups = _grouped(catalog)
    out: dict[str, CallFactor] = {}
    chosen = {m: f for m, f in modules(pkg_dir, package).items()
               if fnmatch.fnmatchcase(m, module_glob)}  # fmt: skip
    if not chosen:
        raise PerflabError(f"--module {module_glob}: no module of {package} matches it")
    for module, path in chosen.items():
        sites = _sites(module, path, levels)
        covered: set[int] = set()
        for site in sites:
            if site.lineno in covered:
                continue
            same_function = [s for s in sites if s.function == site.function]
            candidates = _pieces(site)
            # the longest piece no other call of the function contains; else the longest,
            # and the factor covers every call of the function that contains it
            match = next((p for p in candidates if sum(p in s.text for s in same_function) == 1),
                         candidates[0])  # fmt: skip
            # a call already given its own factor stays out, by one of its own pieces
            # this call lacks (else the two factors would overlap)
            exclude = [
                next(p for p in _pieces(s) if p not in site.text)
                for s in same_function
                if match in s.text and s.lineno in covered
                and any(p not in site.text for p in _pieces(s))
            ]  # fmt: skip
            mine = [s for s in same_function if match in s.text
                    and not any(x in s.text for x in exclude)]  # fmt: skip
            covered |= {s.lineno for s in mine}
            # a factor name is ASCII letters, digits and _ (a TOML bare key, a catalog name);
            # a file or function name need not be (``a b.py``, ``def café``)
            short = _ascii(module.rsplit(".", 1)[-1])
            func = _ascii(site.function.replace("<module>", "module").lower())
            name = base = f"log_{short}_{func}_{slug(site.message() or match)}"[:90]
            k = 2
            while name in out:
                name, k = f"{base}_{k}", k + 1
            conflicts = sorted(
                g
                for g, (mods, needles) in groups.items()
                if fnmatch.fnmatchcase(module, mods)
                and (not needles or any(n in s.text for s in mine for n in needles))
            )
            out[name] = CallFactor(name, module, site.function, match, mine, conflicts, exclude)
    if not out:
        raise PerflabError(f"no logger call at {', '.join(levels)} in {module_glob}")
    return list(out.values())


def _ascii(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def _sites(module: str, path: Path, levels: tuple[str, ...]) -> list[Site]:
    """The module's logger calls; a file this interpreter cannot read as Python (a template,
    another encoding, a dangling link) has none a transform could change: skipped, said."""
    try:
        return log_sites(path.read_text(encoding="utf-8"), module, levels)
    except (SyntaxError, ValueError, OSError) as exc:  # UnicodeDecodeError is a ValueError
        why = " ".join(str(exc).split())[:120]
        warnings.warn(f"{path}: skipped, not readable as Python ({why})", stacklevel=2)
        return []


def _grouped(catalog: Catalog) -> dict[str, tuple[str, list[str]]]:
    """Grouped log-removing factors of the catalog: name -> (module glob, match strings)."""
    out = {}
    for name in catalog.names():
        for t in catalog.get(name).effects.get("transform", []):
            if t.get("op") == "remove_log_calls":
                out[name] = (t["module"], list(t.get("match", [])))
    return out


def to_toml(factors: list[CallFactor], package: str, version: str, levels: tuple[str, ...]) -> str:
    """The catalog text: one ``[factor.NAME]`` per call, each a remove_log_calls transform."""
    lines = [
        f"# One factor per logger call ({', '.join(levels)}) of {package} {version}, written by",
        "# `perflab factors generate log-calls`. Screen them with a design made for many",
        "# factors (e.g. --design fractional --design-opt plackett_burman=1), then focus.",
        "",
    ]
    for f in factors:
        where = f"{f.module}:{f.sites[0].lineno}"
        desc = f"Remove the logger call in {f.function} ({where}): {' '.join(f.match[:60].split())}"
        table: dict[str, Any] = {
            "package": package, "module": f.module, "op": "remove_log_calls",
            "function": f.function, "match": [f.match], "levels": list(levels),
        }  # fmt: skip
        if f.exclude:
            table["exclude"] = f.exclude
        lines += [
            f"[factor.{f.name}]",
            f"description = {_q(desc)}",
            'category = "source_remove"',
            'tags = ["logging", "log-call"]',
            "transform = { " + ", ".join(f"{k} = {_v(v)}" for k, v in table.items()) + " }",
        ]
        if f.conflicts:
            lines.append(f"conflicts = {_v(f.conflicts)}")
        lines.append("")
    return "\n".join(lines)


def _q(s: str) -> str:
    """A TOML basic string: the text read back is the text given (a match taken from source
    may hold a tab, a form feed or a non-breaking space; TOML allows no raw control
    character but the tab)."""
    body = "".join(
        "\\" + c if c in '"\\' else f"\\u{ord(c):04x}" if ord(c) < 32 or ord(c) == 127 else c
        for c in s
    )
    return '"' + body + '"'


def _v(v: Any) -> str:
    return "[" + ", ".join(_q(x) for x in v) + "]" if isinstance(v, list) else _q(str(v))
