"""Treatment sets applied: ``treat`` puts a set's effects into a RunSpec (a black-box command
takes built-in factors that can reach its program, and names the catalog does not know as
its own labels), and ``study_meta`` says
what the catalog knows about a study's factors, as plain data for the analysis."""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.catalog import CATEGORIES, Catalog, Factor, is_builtin, kind_of
from perflab.factors.kinds import FACTOR_KINDS
from perflab.factors.kinds.base import substitute
from perflab.factors.labels import LABEL_PREFIX
from perflab.files import NAME_RE
from perflab.hook import config_ops, config_unreachable
from perflab.hook.seen import seen_ops
from perflab.spec import RunSpec

__all__ = ["LABEL_PREFIX", "cannot_reach", "study_meta", "treat"]


def treat(spec: RunSpec, treatments: str | list[str], catalog: Catalog) -> RunSpec:
    """``spec`` with a treatment set applied (validated first: nothing runs on bad input).

    For a black-box command target, a built-in factor that can reach the command's own
    program does so: a ``config`` factor through perflab's hook (``perflab/hook``: it applies
    the value to the Parsl objects the program builds, and the run fails unless the hook
    proves it took effect), source transforms through the treated copy first on its
    ``PYTHONPATH``. A built-in factor that cannot reach a program is refused; a name the
    catalog does not know is the user's label, passed through ``PERFLAB_TREATMENTS``, unless
    it looks like a misspelt catalog name (refused with the suggestion). ``label:NAME``
    declares NAME a label whatever the catalog says.
    """
    items = [
        t.strip() for t in (treatments.split(",") if isinstance(treatments, str) else treatments)
    ]
    items = [t for t in items if t]
    if spec.command is None:
        return catalog.apply(spec, catalog.parse_treatments(items, spec.target))
    known: list[str] = []
    hooked: list[str] = []
    bare: list[str] = []
    for t in items:
        name = t.partition("=")[0].strip()
        if name.startswith(LABEL_PREFIX):
            t = t[len(LABEL_PREFIX) :].strip()
            name = t.partition("=")[0].strip()
            if not NAME_RE.match(name):
                raise PerflabError(f"treatment {t!r} is not a valid name")
            bare.append(t)
        elif _binds_command(catalog, name):
            known.append(t)
        elif name in catalog.factors:
            why = cannot_reach(catalog.factors[name])
            if why:
                raise PerflabError(
                    f"factor {name!r} cannot reach a command's program: {why}" + _as_label(t)
                )
            hooked.append(t)
        else:
            if not NAME_RE.match(name):
                raise PerflabError(f"treatment {t!r} is not a valid name")
            near = difflib.get_close_matches(name, catalog.names(), n=1, cutoff=0.85)
            if near:
                raise PerflabError(f"no factor {name!r}: did you mean {near[0]!r}?" + _as_label(t))
            bare.append(t)
    for t in known:
        _one(catalog, t, "command")
    for t in hooked:
        _one(catalog, t, catalog.factors[t.partition("=")[0].strip()].targets[0])
    parsed = catalog.parse_treatments(known, "command")
    for tr in parsed:
        for key in catalog.get(tr.factor).effects:
            if not kind_of(key).for_commands:
                fit = sorted(
                    k for _, kind in FACTOR_KINDS.items() if kind.for_commands for k in kind.keys
                )
                raise PerflabError(
                    f"factor {tr.factor!r} has a {kind_of(key).name} effect, which a "
                    f"black-box command cannot take (only {', '.join(fit)}){_as_label(tr.factor)}"
                )
    through = [
        tr
        for t in hooked
        for tr in catalog.parse_treatments(
            [t], catalog.factors[t.partition("=")[0].strip()].targets[0]
        )
    ]
    names = [tr.factor for tr in [*parsed, *through]]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise PerflabError(f"factor {twice[0]!r} given twice")
    catalog.check_set(names)
    out = catalog.apply(spec, parsed)
    hook = dict(out.hook)
    for tr in through:
        for key, value in catalog.get(tr.factor).effects.items():
            kind = kind_of(key)
            value = substitute(value, tr.level)
            if kind.name == "config":
                ops, why = config_ops(value)
                if why:
                    raise PerflabError(
                        f"factor {tr.factor!r} cannot reach a command's program: {why}"
                        + _as_label(str(tr))
                    )
                hook[str(tr)] = ops
            else:
                kind.check(value, f"factor {tr.factor}")
                out = kind.apply(out, key, value)
    out = replace(out, hook=hook, treatments=sorted([*out.treatments, *map(str, through), *bare]))
    return _with_proof(out, catalog, [*parsed, *through])


def _as_label(treatment: str) -> str:
    """The hint every refusal of a catalog name on a command ends with."""
    return f" (if it is the command's own label, give it as {LABEL_PREFIX}{treatment})"


def _one(catalog: Catalog, treatment: str, target: str) -> None:
    """Refuse a catalog factor the command cannot take as given (no level, a wrong one ...),
    saying how to pass the name on as the command's own label instead."""
    try:
        catalog.parse_treatments([treatment], target)
    except PerflabError as exc:
        raise PerflabError(f"{exc}{_as_label(treatment)}") from None


def _with_proof(spec: RunSpec, catalog: Catalog, applied: list[Any]) -> RunSpec:
    """``spec`` whose hook also proves each factor's env, wrapper, rundir and startup effects
    (``hook/seen.py``): what the command's processes saw, or the run fails."""
    hook = {k: list(v) for k, v in spec.hook.items()}
    for tr in applied:
        effects = catalog.get(tr.factor).effects
        ops = seen_ops({k: substitute(v, tr.level) for k, v in effects.items()})
        if ops:
            hook[str(tr)] = [*hook.get(str(tr), []), *ops]
    return replace(spec, hook=hook)


def _binds_command(catalog: Catalog, name: str) -> bool:
    f = catalog.factors.get(name)
    if f is None:
        return False
    if not is_builtin(f.source):
        return True  # a user's own factor means what its catalog says (or is refused)
    return f.applies_to("command") and all(kind_of(k).for_commands for k in f.effects)


def cannot_reach(f: Factor) -> str | None:
    """Why a built-in factor made for perflab's engine targets cannot reach a command's own
    program (None: it can, through the hook or the command's environment)."""
    for key, value in f.effects.items():
        kind = kind_of(key)
        if kind.name == "config":
            why = config_unreachable(value)
        elif kind.name == "wrapper" and "affinity" in value:
            why = "role pinning needs perflab's own HTEX launch commands"
        elif kind.name == "workload":
            why = "it sets a parameter of perflab's own workloads"
        elif not kind.for_commands:
            why = f"its {kind.name} effect is for perflab's engine targets only"
        else:
            why = None
        if why:
            return why
    return None


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
