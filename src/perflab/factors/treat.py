"""Treatment sets applied: ``treat`` puts a set's effects into a RunSpec (a black-box command
takes the names the catalog does not bind to it as its own labels), and ``study_meta`` says
what the catalog knows about a study's factors, as plain data for the analysis."""

from __future__ import annotations

from typing import Any

from perflab.errors import PerflabError
from perflab.factors.catalog import CATEGORIES, Catalog, is_builtin, kind_of
from perflab.factors.kinds import FACTOR_KINDS
from perflab.files import NAME_RE
from perflab.spec import RunSpec


def treat(spec: RunSpec, treatments: str | list[str], catalog: Catalog) -> RunSpec:
    """``spec`` with a treatment set applied (validated first: nothing runs on bad input).

    A black-box command target also accepts names of its own: any name the built-in catalog
    does not bind to a command (not in it, or one of its engine-only factors such as
    ``affinity``) is the user's label, passed through ``PERFLAB_TREATMENTS``.
    """
    items = [
        t.strip() for t in (treatments.split(",") if isinstance(treatments, str) else treatments)
    ]
    items = [t for t in items if t]
    if spec.command is None:
        return catalog.apply(spec, catalog.parse_treatments(items, spec.target))
    known = [t for t in items if _binds_command(catalog, t.partition("=")[0].strip())]
    bare = [t for t in items if t not in known]
    for t in bare:
        if not NAME_RE.match(t.partition("=")[0].strip()):
            raise PerflabError(f"treatment {t!r} is not a valid name")
    parsed = catalog.parse_treatments(known, "command")
    for tr in parsed:
        for key in catalog.get(tr.factor).effects:
            if not kind_of(key).for_commands:
                fit = sorted(
                    k for _, kind in FACTOR_KINDS.items() if kind.for_commands for k in kind.keys
                )
                raise PerflabError(
                    f"factor {tr.factor!r} has a {kind_of(key).name} effect, which a "
                    f"black-box command cannot take (only {', '.join(fit)})"
                )
    out = catalog.apply(spec, parsed)
    out.treatments = sorted([*out.treatments, *bare])
    return out


def _binds_command(catalog: Catalog, name: str) -> bool:
    f = catalog.factors.get(name)
    if f is None:
        return False
    if not is_builtin(f.source):
        return True  # a user's own factor means what its catalog says (or is refused)
    return f.applies_to("command") and all(kind_of(k).for_commands for k in f.effects)


def study_meta(catalog: Catalog, factors: list[str]) -> dict[str, Any]:
    """What the catalog says about a study's factors (treatment strings like ``a=100``), as
    plain data for the analysis: categories (and their order), conflicts, requires, tags."""
    by_name: dict[str, list[str]] = {}
    for f in factors:
        by_name.setdefault(f.partition("=")[0], []).append(f)
    meta: dict[str, Any] = {
        "category_order": list(CATEGORIES),
        "categories": {},
        "conflicts": set(),
        "requires": set(),
        "tags": {},
    }
    for f in factors:
        name = f.partition("=")[0]
        if name not in catalog:
            continue
        spec = catalog.get(name)
        meta["categories"][f] = spec.category
        meta["tags"][f] = list(spec.tags)
        # Two levels of one factor exclude each other, like declared conflicts.
        excluded = [g for g in by_name[name] if g != f]
        excluded += [g for other in spec.conflicts for g in by_name.get(other, [])]
        meta["conflicts"].update(tuple(sorted((f, g))) for g in excluded)
        for req in spec.requires:
            for g in by_name.get(req, []):
                meta["requires"].add((f, g))
    return meta
