"""The factor catalog: TOML files of treatment factors, and treatment sets resolved against it.

[factor.cfg_prefetch]
description = "HTEX prefetch capacity"
category = "safe_config"
targets = ["parsl-htex"]
levels = [0, 10, 100, 1000]
config = { prefetch_capacity = "{level}" }
conflicts = ["other_factor"]
requires = []
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import substitute
from perflab.factors.levels import is_number, number
from perflab.files import NAME_RE
from perflab.spec import RunSpec

#: The "nice" order: what a user can change most safely comes first.
CATEGORIES = (
    "environment",
    "safe_config",
    "source_keep",
    "config_disable",
    "source_remove",
)
#: A factor's category when its catalog entry names none.
DEFAULT_CATEGORY = "safe_config"
META_KEYS = {
    "description",
    "category",
    "targets",
    "levels",
    "range",
    "conflicts",
    "requires",
    "tags",
    "override",
}
#: The built-in catalogs: every TOML file in catalogs/ (parsl.toml, saga.toml, ...).
BUILTIN_DIR = Path(__file__).resolve().parent / "catalogs"


def is_builtin(source: str | Path) -> bool:
    """Whether a factor's source file is one of the built-in catalogs."""
    return Path(source).parent == BUILTIN_DIR


@dataclass
class Factor:
    name: str
    description: str
    category: str
    effects: dict[str, Any]
    targets: list[str] = field(default_factory=lambda: ["*"])
    levels: list[Any] | None = None
    #: A numeric factor may take any number in [low, high] (``range = [1, 256]``).
    range: tuple[float, float] | None = None
    conflicts: list[str] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)
    #: Free labels the analysis and report use (``logging``: the "keep logs" view).
    tags: list[str] = field(default_factory=list)
    #: Declared ``override = true``: knowingly replaces a factor of the same name.
    override: bool = False
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "category": self.category,
            "kinds": self.kinds(),
            "targets": self.targets,
            "levels": self.levels,
            "range": list(self.range) if self.range else None,
            "conflicts": self.conflicts,
            "requires": self.requires,
            "tags": self.tags,
            "effects": self.effects,
            "source": self.source,
        }

    @property
    def numeric(self) -> bool:
        """Whether every level is a number (the factor can be swept)."""
        if self.range is not None:
            return True
        return bool(self.levels) and all(is_number(v) for v in self.levels or [])

    @property
    def levelled(self) -> bool:
        return self.levels is not None or self.range is not None

    def level_hint(self) -> str:
        if self.range is not None:
            return f"a number in [{self.range[0]:g}, {self.range[1]:g}]"
        return "one of " + ", ".join(map(str, self.levels or []))

    def kinds(self) -> list[str]:
        return sorted({kind_of(k).name for k in self.effects})

    def applies_to(self, target: str) -> bool:
        return "*" in self.targets or target in self.targets


def kind_of(key: str) -> Any:
    for name in FACTOR_KINDS:
        kind = FACTOR_KINDS.get(name)
        if key in kind.keys:
            return kind
    return None


@dataclass(frozen=True)
class Treatment:
    """One factor of a treatment set, with its level (None for an on/off factor)."""

    factor: str
    level: Any = None

    def __str__(self) -> str:
        return self.factor if self.level is None else f"{self.factor}={self.level}"


class Catalog:
    """Named factors, from one or more TOML files (later files override earlier names)."""

    def __init__(self, factors: dict[str, Factor] | None = None) -> None:
        self.factors: dict[str, Factor] = dict(factors or {})

    def __contains__(self, name: object) -> bool:
        return name in self.factors

    def get(self, name: str) -> Factor:
        try:
            return self.factors[name]
        except KeyError:
            raise PerflabError(f"unknown factor {name!r} (see `perflab factors list`)") from None

    def names(self, target: str | None = None) -> list[str]:
        return sorted(n for n, f in self.factors.items() if target is None or f.applies_to(target))

    def nice_order(self, target: str | None = None) -> list[Factor]:
        """The factors (for ``target``) in the "nice" category order, then by name."""
        return sorted(
            (self.factors[n] for n in self.names(target)),
            key=lambda f: (CATEGORIES.index(f.category), f.name),
        )

    def merge(self, other: Catalog) -> Catalog:
        return Catalog({**self.factors, **other.factors})

    # --- treatment sets ---------------------------------------------------------------

    def parse_treatments(self, text: str | list[str], target: str) -> list[Treatment]:
        """``"a,b=100"`` -> treatments, refusing unknown, duplicated, wrongly levelled,
        conflicting, inapplicable or unmet-``requires`` sets (PerflabError)."""
        items = [t.strip() for t in (text.split(",") if isinstance(text, str) else text)]
        items = [t for t in items if t]
        out: list[Treatment] = []
        seen: set[str] = set()
        for item in items:
            name, sep, raw = item.partition("=")
            name = name.strip()
            factor = self.get(name)
            if name in seen:
                raise PerflabError(f"factor {name!r} given twice")
            seen.add(name)
            if not factor.applies_to(target):
                raise PerflabError(
                    f"factor {name!r} does not apply to target {target!r} "
                    f"(targets: {', '.join(factor.targets)})"
                )
            level = None
            if factor.levelled:
                if not sep:
                    raise PerflabError(
                        f"factor {name!r} needs a level: {name}=VALUE with VALUE "
                        f"{factor.level_hint()}"
                    )
                level = _match_level(factor, raw.strip())
            elif sep:
                raise PerflabError(f"factor {name!r} has no levels; give it as just {name!r}")
            out.append(Treatment(name, level))
        self.check_set([t.factor for t in out])
        return sorted(out, key=str)

    def check_set(self, names: list[str]) -> None:
        present = set(names)
        for name in names:
            f = self.get(name)
            for other in f.conflicts:
                if other in present:
                    raise PerflabError(f"factors {name!r} and {other!r} conflict")
            for req in f.requires:
                if req not in present:
                    raise PerflabError(f"factor {name!r} requires {req!r}")

    def apply(self, spec: RunSpec, treatments: list[Treatment]) -> RunSpec:
        """``spec`` with every treatment's effects in force (a new spec; the kinds hand on
        new tables, so the caller's spec and its tables stay as they were)."""
        used: dict[str, tuple[Any, list[str]]] = {}
        for t in treatments:
            factor = self.get(t.factor)
            for key, value in factor.effects.items():
                kind = kind_of(key)
                kind.check(value, f"factor {t.factor}")
                spec = kind.apply(spec, key, substitute(value, t.level))
                used.setdefault(kind.name, (kind, []))[1].append(str(t))
        for kind, names in used.values():  # kinds whose effects compose settle here
            spec = kind.finish(spec, names)
        return replace(spec, treatments=[str(t) for t in treatments])


def _match_level(factor: Factor, raw: str) -> Any:
    if factor.range is not None:
        value = number(raw)
        if value is not None and factor.range[0] <= value <= factor.range[1]:
            return value
    for level in factor.levels or []:
        if str(level) == raw:
            return level
    raise PerflabError(
        f"factor {factor.name!r} has no level {raw!r} (levels: {factor.level_hint()})"
    )


def load_catalog(path: str | Path, text: str | None = None) -> Catalog:
    """Read a catalog file (or its ``text`` kept elsewhere, e.g. by a campaign). Errors name
    the file (and the line, for malformed TOML)."""
    path = Path(path)
    if text is None:
        text = read_catalog_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PerflabError(
            f"catalog {path}:{_toml_line(exc, text)}: malformed TOML: {exc}"
        ) from None
    if not isinstance(data.get("factor", {}), dict):
        raise PerflabError(f"catalog {path}: `factor` must be a table of [factor.NAME] tables")
    unknown_top = set(data) - {"factor"}
    if unknown_top:
        raise PerflabError(
            f"catalog {path}: unknown top-level key(s) {', '.join(sorted(unknown_top))}"
        )
    factors: dict[str, Factor] = {}
    for name, table in data.get("factor", {}).items():
        factors[name] = _parse_factor(name, table, path)
    # names from other catalogs (a generated per-call catalog conflicts with the built-in
    # grouped factors) are checked once the catalogs are merged
    return Catalog(factors)


def read_catalog_text(path: Path) -> str:
    """A catalog file's text (PerflabError naming the file if unreadable or not UTF-8)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PerflabError(f"catalog {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PerflabError(f"catalog {path}:{line}: not UTF-8 text") from None


def _toml_line(exc: tomllib.TOMLDecodeError, text: str) -> int:
    m = re.search(r"at line (\d+)", str(exc))
    if m:
        return int(m.group(1))
    return text.count("\n") + (0 if text.endswith("\n") else 1)  # "at end of document"


def _parse_factor(name: str, table: Any, path: Path) -> Factor:
    where = f"catalog {path}: factor {name}"
    if not NAME_RE.match(name):
        raise PerflabError(f"{where}: bad name (letters, digits, _ . -)")
    if not isinstance(table, dict):
        raise PerflabError(f"{where}: must be a table")
    category = table.get("category", DEFAULT_CATEGORY)
    if category not in CATEGORIES:
        raise PerflabError(f"{where}: category {category!r} is not one of {', '.join(CATEGORIES)}")
    levels = table.get("levels")
    if levels is not None and (not isinstance(levels, list) or not levels):
        raise PerflabError(f"{where}: `levels` must be a non-empty list")
    rng = table.get("range")
    if rng is not None and not (
        isinstance(rng, list) and len(rng) == 2 and all(map(is_number, rng)) and rng[0] <= rng[1]
    ):
        raise PerflabError(f"{where}: `range` must be [low, high], two numbers, low <= high")
    effects: dict[str, Any] = {}
    for key, value in table.items():
        if key in META_KEYS:
            continue
        kind = kind_of(key)
        if kind is None:
            keys = sorted(k for n in FACTOR_KINDS for k in FACTOR_KINDS.get(n).keys)
            raise PerflabError(f"{where}: unknown key {key!r} (effects: {', '.join(keys)})")
        effects[key] = kind.parse(name, key, value, where, path.parent)
    if not isinstance(table.get("override", False), bool):
        raise PerflabError(f"{where}: `override` must be true or false")
    if not effects:
        raise PerflabError(
            f"{where}: has no effect (declare `label = true` for a factor that perflab only "
            "passes on in PERFLAB_TREATMENTS)"
        )
    for key in ("targets", "conflicts", "requires", "tags"):
        if key in table and not (
            isinstance(table[key], list) and all(isinstance(x, str) for x in table[key])
        ):
            raise PerflabError(f"{where}: `{key}` must be a list of names")
    return Factor(
        name=name,
        description=str(table.get("description", "")),
        category=category,
        effects=effects,
        targets=list(table.get("targets", ["*"])),
        levels=levels,
        range=(rng[0], rng[1]) if rng is not None else None,
        conflicts=list(table.get("conflicts", [])),
        requires=list(table.get("requires", [])),
        tags=list(table.get("tags", [])),
        override=table.get("override", False),
        source=str(path),
    )


def merge_catalogs(catalogs: list[Catalog]) -> Catalog:
    """Merge catalogs in order (the first is the built-in one). A factor may replace one of
    the same name only if it says ``override = true``; conflicts become symmetric."""
    merged = Catalog()
    for cat in catalogs:
        for name, f in cat.factors.items():
            old = merged.factors.get(name)
            if old is not None and not f.override:
                what = "the built-in factor" if is_builtin(old.source) else f"{old.source}'s"
                raise PerflabError(
                    f"catalog {f.source}: factor {name!r} would replace {what} {name!r}; "
                    "rename it, or declare `override = true` in its table"
                )
        merged = merged.merge(cat)
    for f in merged.factors.values():
        for other in (*f.conflicts, *f.requires):
            if other not in merged.factors:
                raise PerflabError(
                    f"catalog {f.source}: factor {f.name} names unknown factor {other!r}"
                )
    for f in merged.factors.values():
        for other in f.conflicts:
            if other in merged and f.name not in merged.factors[other].conflicts:
                merged.factors[other].conflicts.append(f.name)
    return merged


def load_catalogs(paths: list[str] | None = None, builtin: bool = True) -> Catalog:
    """The built-in catalog merged with user catalogs (see ``merge_catalogs``)."""
    first = [load_catalog(p) for p in sorted(BUILTIN_DIR.glob("*.toml"))] if builtin else []
    first += [interpreter_catalog()] if builtin else []
    return merge_catalogs(first + [load_catalog(p) for p in paths or []])


def interpreter_catalog() -> Catalog:
    """A factor ``python3.X`` for each interpreter present (see kinds/interpreter.py), and
    the axes of those perflab built, ``py``, ``py_gil``, ``py_jit``, ``py_pgo``
    (kinds/pybuild.py), which pick their own interpreter: they exclude the found ones."""
    from perflab.factors.kinds.interpreter import interpreter_factors
    from perflab.factors.kinds.pybuild import variant_factors

    where = Path("<interpreters present>")
    tables = interpreter_factors()
    axes = {a: {**t, "conflicts": sorted(tables)} for a, t in variant_factors().items()}
    return Catalog({n: _parse_factor(n, t, where) for n, t in {**tables, **axes}.items()})
