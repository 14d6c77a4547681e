"""Private transformed copies of a package: the source a run uses, with its transforms applied.

The source is the one the *run's* interpreter imports (the installed release, a release in a
cached venv) or a developer's tree (``--source DIR``). The copy is cached under a key of the
package's version (or the tree's content hash) and the transforms; beside it lie the unified
diff it amounts to (``transform.diff``: audit it, or apply it by hand) and a report of what
each factor changed where (``transform.json``).
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.sources import locate, modules, tree_package
from perflab.factors.transforms import Transform, apply, log_sites, parse_transform
from perflab.files import build_dir
from perflab.prepare.patched import write_scripts
from perflab.spec import RunSpec


def apply_to_tree(
    pkg_dir: Path, package: str, version: str, items: list[tuple[str, Transform]]
) -> tuple[dict[Path, str], list[dict[str, Any]]]:
    """The new text of every file the transforms change (keyed by path relative to the
    package's parent), and per factor what changed where. A transform that changes nothing
    in this version is a PerflabError naming the version and the selector."""
    found = modules(pkg_dir, package)
    texts: dict[Path, str] = {}
    report = []
    for factor, t in items:
        names = [m for m in found if fnmatch.fnmatchcase(m, t.module)]
        counts: dict[str, int] = {}
        for m in names:
            rel = found[m].relative_to(pkg_dir.parent)
            before = texts.get(rel) or found[m].read_text()
            after, n = apply(t, before, m)
            if n:
                texts[rel], counts[m] = after, n
        # an import another factor of the run added already is there: nothing is missing
        if not counts and not (t.op == "add_statement" and names):
            where = f"module {t.module}" if names else f"no module matches {t.module}"
            raise PerflabError(
                f"factor {factor}: '{t.describe()}' matched nothing in "
                f"{package} {version} ({where})"
            )
        entry: dict[str, Any] = {
            "factor": factor, "op": t.op, "changed": counts, "total": sum(counts.values())
        }  # fmt: skip
        missing = unmatched(t, {m: found[m].read_text() for m in names})
        if missing:  # the factor applies, but not all of it: say which selectors found nothing
            entry["unmatched"] = missing
        report.append(entry)
    return texts, report


def unmatched(t: Transform, sources: dict[str, str]) -> list[str]:
    """The ``match`` strings of a log transform that no call in ``sources`` contains (a
    release that predates some of the calls a grouped factor removes)."""
    if t.op not in ("remove_log_calls", "lazy_log_calls") or not t.match:
        return []
    texts = [
        s.text
        for m, src in sources.items()
        for s in log_sites(src, m, t.levels)
        if not t.function or fnmatch.fnmatchcase(s.function, t.function)
    ]
    return [m for m in t.match if not any(m in text for text in texts)]


@functools.cache
def _applier() -> str:
    """The hash of the code that applies transforms: a copy made by an older perflab (a
    lost function then added after the ``__main__`` guard, say) is not reused."""
    from perflab.factors import code_ops, transforms

    digest = hashlib.sha256()
    for module in (code_ops, transforms):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()[:16]


def transformed_tree(
    package: str,
    pkg_dir: Path,
    version: str,
    items: list[tuple[str, Transform]],
    cache_root: Path,
) -> tuple[Path, list[dict[str, Any]]]:
    """A directory holding the transformed copy of ``package`` (and ``transform.diff``,
    ``transform.json``); cached by package, version and transforms."""
    import difflib

    key = json.dumps([package, version, [(f, repr(t)) for f, t in items], _applier()])
    dest = cache_root / hashlib.sha256(key.encode()).hexdigest()[:20]
    if (dest / ".complete").exists():
        return dest, json.loads((dest / "transform.json").read_text())["factors"]
    texts, report = apply_to_tree(pkg_dir, package, version, items)
    with build_dir(dest) as tmp:
        top = tmp / package.replace(".", "/")
        # a link that leads nowhere is skipped, not followed: Parsl's tree holds one
        # (parsl/tests/sites/test_mpi/mpi_hello) and nothing can import it
        shutil.copytree(pkg_dir, top, ignore=shutil.ignore_patterns("__pycache__"),
                        ignore_dangling_symlinks=True)  # fmt: skip
        diff: list[str] = []
        for rel, text in sorted(texts.items()):
            before = (pkg_dir.parent / rel).read_text()
            compile(text, str(rel), "exec")  # a transform never leaves invalid Python
            (tmp / rel).write_text(text)
            diff += difflib.unified_diff(
                before.splitlines(keepends=True), text.splitlines(keepends=True),
                f"a/{rel}", f"b/{rel}",
            )  # fmt: skip
        (tmp / "transform.diff").write_text("".join(diff))
        meta = {"package": package, "version": version, "source": str(pkg_dir), "factors": report}
        (tmp / "transform.json").write_text(json.dumps(meta, indent=1))
    return dest, report


def transformed_sources(spec: RunSpec, cache_root: Path) -> list[dict[str, Any]]:
    """One transformed copy per package the spec transforms or takes from a source tree;
    for each: its tree (first on the run's PYTHONPATH), package, version, diff and report."""
    by_package: dict[str, list[tuple[str, Transform]]] = {p: [] for p in spec.sources}
    for t in spec.transforms:
        fields = {k: v for k, v in t.items() if k != "factor"}
        by_package.setdefault(t["package"], []).append(
            (t["factor"], parse_transform(fields, f"factor {t['factor']}"))
        )
    both = sorted(set(by_package) & {p["package"] for p in spec.patches})
    if both:
        raise PerflabError(
            f"package {both[0]} is both patched (a diff) and transformed in one run: "
            "make the diff a transform, or run them apart"
        )
    out = []
    python = spec.python or sys.executable
    for package, items in by_package.items():
        if package in spec.sources:
            pkg_dir, version = tree_package(Path(spec.sources[package]), package)
        else:
            pkg_dir, version = locate(package, python)
        tree, report = transformed_tree(package, pkg_dir, version, items, cache_root)
        write_scripts(tree, {package}, python)
        out.append({"tree": str(tree), "package": package, "version": version,
                    "diff": str(tree / "transform.diff"), "factors": report})  # fmt: skip
    return out
