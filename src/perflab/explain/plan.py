"""``perflab explain``: why release B is slower (or faster) than release A.

1. **Prepare** (nothing is stored): both releases' venvs (a release that does not install is
   bad input), the configuration defaults that changed (``defaults.py``), the function-level
   changes of the modules on the measured path (``hunks.py``), each a factor of B; factors
   whose transformed copy does not import are listed and left out. The factors are written
   as a catalog beside the store's campaigns.
2. **Step**: A and B interleaved in rounds; a paired test (the compare gate's). No step
   beyond the threshold: nothing to explain, no screen.
3. **Screen**: a Plackett–Burman design over every factor on B, replicated until the main
   effects have residual degrees of freedom; factors with p < ``screen_alpha`` survive.
4. **Focus**: A, B, B + each survivor, B + all survivors, in rounds; shares with intervals,
   Holm-corrected claims, and the residual (``estimate.py``).

Each stage is a campaign ``NAME.K-stage`` in the store: run again after an interruption, it
measures only what is missing, and a name started with other options is refused.
"""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perflab.campaign.plan import create_ordered, run_campaign
from perflab.campaign.store import Store
from perflab.compare.gate import metric_value
from perflab.compare.precision import Looks
from perflab.errors import PerflabError
from perflab.explain import defaults as dflt
from perflab.explain import hunks
from perflab.explain.dask_config import config_factors
from perflab.factors.requirements import check_requirement
from perflab.factors.sources import locate, modules
from perflab.factors.transforms import parse_transform
from perflab.files import atomic_write, check_name, home_dir, private_dir
from perflab.hook.seen import release_modules
from perflab.prepare import prepare
from perflab.prepare.transformed import transformed_tree
from perflab.spec import RunSpec

#: The engine options that are HTEX keywords perflab may set for safety (docs/security.md).
SAFETY_OPTIONS = ("encrypted",)
#: A private network namespace: only this run's processes share its loopback.
NETNS = ["unshare", "--net", "--map-root-user", "sh", "-c", 'ip link set lo up && exec "$@"', "-"]
OnStage = Callable[[str, int], None]


@dataclass
class Setup:
    """What to explain and how hard to look."""

    name: str
    package: str
    a: str
    b: str
    base: RunSpec
    metrics: list[str]
    runs: int = 6
    screen_reps: int = 0  # 0: the fewest that leave 4 residual degrees of freedom
    alpha: float = 0.05
    threshold: float = 0.05
    screen_alpha: float = 0.1
    modules: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    safety: str = "opt-in"  # opt-in (needs allow_insecure) | netns | keep
    seed: int = 0
    #: ``--precision``: the step's looks and stopping rule (None: all ``runs`` rounds), and
    #: (the seconds its rounds may take, a round's planned seconds); None: no budget
    step_looks: Looks | None = None
    step_budget: tuple[float, float] | None = None


@dataclass
class ExplainPlan:
    """Factors of B and what was listed instead of measured."""

    catalog: Path
    factors: list[str]
    defaults: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    listed: list[str] = field(default_factory=list)
    safety: dict[str, Any] = field(default_factory=dict)
    base_b: RunSpec | None = None
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    python: dict[str, str] = field(default_factory=dict)
    keep: set[str] = field(default_factory=set)
    #: The package's import name (PyYAML's is ``yaml``): the source's, the transforms'.
    module: str = ""


def make_plan(setup: Setup) -> ExplainPlan:
    """Both venvs, the defaults that changed, the safety settings, and the step's catalog
    (release A as a factor of B); PerflabError on bad input. The source comes later
    (``add_sources``): a pair with nothing to explain never needs it."""
    check_name(setup.name, "--name")
    spec = {
        v: replace(setup.base, packages=[check_requirement(f"{setup.package}=={v}")])
        for v in (setup.a, setup.b)
    }
    py = {v: prepare(s).python for v, s in spec.items()}
    module = release_modules(setup.package, py[setup.b])[0]  # PyYAML's source is yaml's
    listed: list[str] = []
    base = setup.base
    classes = list(setup.classes) or list(
        dflt.classes_for(base.target, base.command, setup.package)
    )
    changes: list[dflt.DefaultChange] = []
    config: list[dict[str, Any]] = []
    if classes:
        da = dflt.introspect(py[setup.a], classes, f"{setup.package} {setup.a}")
        db = dflt.introspect(py[setup.b], classes, f"{setup.package} {setup.b}")
        explicit = dflt.explicit_keywords(setup.base.target, setup.base.engine_options)
        changes = dflt.changed_defaults(da, db, explicit)
    else:
        listed.append("defaults: no configuration classes for this target (--config-class)")
    base_b, opts_a, safety = _safety(setup, changes, spec[setup.b])
    if base.command is not None:
        base_b = _command_safety(setup, changes, base_b)
    tables: dict[str, dict[str, Any]] = {
        "release_a": {
            "description": f"{setup.package} {setup.a} (release A)",
            "category": "environment",
            "package": {setup.package: setup.a},
            **({"config": opts_a} if opts_a else {}),
        }
    }
    for c in changes:
        if c.left_out:
            a, b = (" ".join(x.split())[:60] for x in (c.a, c.b))
            listed.append(f"{c.factor}: {b} in B, {a} in A — {c.left_out}")
        else:
            tables[c.factor] = {
                "description": f"restore A's default {c.name}={c.a}",
                "category": "safe_config",
                "transform": [c.transform(module)],
            }
    if base.command is not None:  # a Dask program: the dask.config defaults that changed
        config = config_factors(setup.package, py, (setup.a, setup.b), tables, listed)
    for name, opt in safety.get("factors", {}).items():
        tables[name] = {
            "description": f"A's default {opt}",
            "category": "safe_config",
            "config": opt,
        }
    folder = private_dir(home_dir("explain") / setup.name)
    atomic_write(folder / "step.toml", to_toml({"release_a": tables["release_a"]}))
    found = [*(c.to_dict() for c in changes), *config]
    prep = ExplainPlan(folder / "step.toml", [], found, [], listed, safety, base_b)
    prep.tables, prep.python, prep.module = tables, py, module
    prep.keep = {c.function for c in changes if not c.left_out}
    return prep


def add_sources(setup: Setup, prep: ExplainPlan) -> None:
    """The function-level changes of the modules on the measured path as factors (those
    whose transformed copy does not import are listed); the catalog of every factor."""
    py, pkg = prep.python, prep.module or setup.package
    dir_a, _ = locate(pkg, py[setup.a])
    dir_b, _ = locate(pkg, py[setup.b])
    globs = setup.modules or (hunks.PARSL_PATH if pkg == "parsl" else (f"{pkg}*",))
    units, more = hunks.diff_units(dir_a, dir_b, pkg, tuple(globs), prep.keep)
    prep.listed += more
    groups = hunks.group_units(units, hunks.path_vocabulary(dir_b, pkg, tuple(globs)))
    groups, broken = _importable(pkg, dir_b, py[setup.b], groups)
    prep.listed += [f"{g.name}: does not import alone ({why})" for g, why in broken]
    tables = prep.tables
    for g in groups:
        tables[g.name] = {
            "description": f"revert {', '.join(u.qualname for u in g.units)}",
            "category": "source_keep",
            "transform": g.transforms(pkg),
        }
    prep.catalog = prep.catalog.with_name("factors.toml")
    atomic_write(prep.catalog, to_toml(tables))
    prep.factors = [f for f in tables if f != "release_a"]
    prep.groups = [g.to_dict() for g in groups]


def add_module_revert(setup: Setup, prep: ExplainPlan, failed: list[str]) -> str | None:
    """One factor reverting, whole, every module the failed source factors touch (A's file
    in place of B's): a change spread over modules that no function-level revert can run
    is still measured, coarsely. Its name is returned (None when nothing failed)."""
    units = [u for g in prep.groups if g["factor"] in failed for u in g["units"]]
    mods = sorted({u.split(":", 1)[0] for u in units})
    if not mods:
        return None
    pkg = prep.module or setup.package
    dir_a, _ = locate(pkg, prep.python[setup.a])
    files = modules(dir_a, pkg)
    name = f"revert_modules_{len(mods)}"
    prep.tables[name] = {
        "description": f"A's {', '.join(mods)} (whole modules)",
        "category": "source_keep",
        "transform": [
            {
                "package": pkg,
                "op": "replace_module",
                "module": m,
                "value": files[m].read_text(),
            }
            for m in mods
            if m in files
        ],
    }
    atomic_write(prep.catalog, to_toml(prep.tables))
    return name


def _safety(
    setup: Setup, changes: list[dflt.DefaultChange], spec_b: RunSpec
) -> tuple[RunSpec, dict[str, Any], dict[str, Any]]:
    """Both releases as they ship: a safety keyword perflab would set (HTEX ``encrypted``)
    whose default changed gets each release's own default, run with the documented opt-in
    (``--allow-insecure``) or in a private network namespace; ``keep`` measures both with
    perflab's setting and lists the change as not measured."""
    hidden = [
        c
        for c in changes
        if c.name in SAFETY_OPTIONS and c.left_out and c.name not in setup.base.engine_options
    ]
    info: dict[str, Any] = {"mode": setup.safety, "hidden": []}
    if not hidden or setup.safety == "keep":
        for c in hidden:
            c.left_out = "perflab's safety setting (--safety keep): both measured with it"
        info["hidden"] = [c.to_dict() for c in hidden]
        return spec_b, {}, info
    for c in hidden:
        c.left_out = "measured as shipped: a config factor of its own"
    info["hidden"] = [c.to_dict() for c in hidden]
    opts_a = {c.name: _literal(c.a) for c in hidden}
    opts_b = {c.name: _literal(c.b) for c in hidden}
    insecure = any(v is False for v in (*opts_a.values(), *opts_b.values()))
    if insecure and setup.safety == "opt-in" and not setup.base.allow_insecure:
        names = ", ".join(f"{k}={v}" for k, v in opts_a.items())
        raise PerflabError(
            f"release {setup.a} ships {names}, which perflab would override for safety: pass "
            "--allow-insecure (the documented opt-in) or --safety netns to measure it as "
            "shipped, or --safety keep to measure both with perflab's setting"
        )
    base_b = replace(spec_b, engine_options={**spec_b.engine_options, **opts_b})
    if setup.safety == "netns":  # alone on its own loopback: the opt-in is safe there
        base_b = replace(base_b, wrapper=[*NETNS, *base_b.wrapper], allow_insecure=True)
    info["factors"] = {f"dflt_{c.name}": {c.name: _literal(c.a)} for c in hidden}
    return base_b, opts_a, info


def _command_safety(setup: Setup, changes: list[dflt.DefaultChange], base_b: RunSpec) -> RunSpec:
    """A user's program passes its own keywords, so a safety keyword's changed default is a
    factor like any other; but where A's default is unsafe (HTEX ``encrypted=False``), the
    factor would have perflab turn the program's safety off: it needs the opt-in
    (``--allow-insecure``), or runs in a private network namespace (``--safety netns``);
    ``keep`` lists it as not measured."""
    unsafe = [
        c for c in changes if c.name in SAFETY_OPTIONS and not c.left_out and _literal(c.a) is False
    ]
    if not unsafe or setup.base.allow_insecure:
        return base_b
    if setup.safety == "keep":
        for c in unsafe:
            c.left_out = "perflab's safety setting (--safety keep): A's unsafe default not measured"
        return base_b
    if setup.safety == "netns":  # alone on its own loopback: the opt-in is safe there
        return replace(base_b, wrapper=[*NETNS, *base_b.wrapper], allow_insecure=True)
    names = ", ".join(f"{c.name}={c.a}" for c in unsafe)
    raise PerflabError(
        f"release {setup.a} ships {names}: restoring it in the command's program turns its "
        "safety off; pass --allow-insecure (the documented opt-in) or --safety netns to "
        "measure it, or --safety keep to leave it out"
    )


def _literal(text: str) -> Any:
    import ast

    return ast.literal_eval(text)


def _importable(
    package: str, pkg_dir: Path, python: str, groups: list[hunks.Group]
) -> tuple[list[hunks.Group], list[tuple[hunks.Group, str]]]:
    """Groups whose transformed copy of B imports (all at once first; one by one if not)."""

    def why_not(gs: list[hunks.Group]) -> str:
        items = [(g.name, parse_transform(t, g.name)) for g in gs for t in g.transforms(package)]
        try:
            tree, _ = transformed_tree(package, pkg_dir, "explain", items, home_dir("transformed"))
        except (PerflabError, SyntaxError) as exc:
            return str(exc)[:200]
        mods = sorted({u.module for g in gs for u in g.units})
        code = "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)"
        proc = subprocess.run(
            [python, "-c", code, *mods],
            capture_output=True,
            text=True,
            timeout=300,
            env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        )
        lines = proc.stderr.strip().splitlines()
        return "" if proc.returncode == 0 else (lines[-1] if lines else f"exit {proc.returncode}")

    if not groups or not why_not(groups):
        return groups, []
    ok, bad = [], []
    for g in groups:
        why = why_not([g])
        (bad.append((g, why)) if why else ok.append(g))
    return ok, bad


def to_toml(tables: dict[str, dict[str, Any]]) -> str:
    """A catalog of ``[factor.NAME]`` tables (strings as JSON strings, which TOML reads)."""

    def val(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int | float):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        return "{" + ", ".join(f"{json.dumps(str(k))} = {val(x)}" for k, x in v.items()) + "}"

    out = ["# written by perflab explain: factors of release B (A's defaults, A's functions)"]
    for name, table in tables.items():
        out += ["", f"[factor.{name}]", *(f"{k} = {val(v)}" for k, v in table.items())]
    return "\n".join(out) + "\n"


def stage(
    store: Store,
    name: str,
    base: RunSpec,
    catalog: Path,
    factors: list[str],
    sets: list[list[str]],
    info: dict[str, Any],
    on_stage: OnStage | None,
) -> list[tuple[list[str], Any]]:
    """Create (or resume) the stage's campaign, run what is missing, and return each planned
    set with its record (None when not run)."""
    made(store, name, base, catalog, factors, sets, info)
    if on_stage:
        on_stage(name, len(store.pending(name)))
    run_campaign(store, name)
    recs = dict(store.records_by_seq(name))
    return [(list(t), recs.get(seq)) for seq, t in store.planned(name)]


def made(
    store: Store,
    name: str,
    base: RunSpec,
    catalog: Path,
    factors: list[str],
    sets: list[list[str]],
    info: dict[str, Any],
) -> None:
    """The stage's campaign of ``sets`` in this order, created, or found as it was started
    (one started with other options is refused)."""
    if name in store.campaign_names():
        if [list(t) for _, t in store.planned(name)] != [sorted(s) for s in sets]:
            raise PerflabError(f"explain stage {name!r} was started with other options")
    else:
        create_ordered(store, name, base, factors, sets, [str(catalog)], info)


def rounds(conditions: dict[str, list[str]], n: int, seed: int) -> list[tuple[str, int, list[str]]]:
    """``n`` rounds, each every condition once in a fresh random order."""
    rng = random.Random(seed)
    out = []
    for r in range(n):
        for c in rng.sample(list(conditions), len(conditions)):
            out.append((c, r, conditions[c]))
    return out


def value(rec: Any, metric: str) -> float | None:
    v = metric_value(rec, metric) if rec is not None and rec.status == "ok" else None
    return v if v is not None and v > 0 else None
