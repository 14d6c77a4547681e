"""A campaign's own copy of every catalog (and patch diff, and Parsl config a factor names) it
was planned with.

A campaign stores each file's text and SHA-256 at creation, and later runs (and analyses)
use that copy: editing or deleting a catalog cannot change what a factor means inside a
campaign. A file that changed on disk since is reported, never silently used.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from perflab.errors import PerflabError
from perflab.factors.catalog import (
    BUILTIN_DIR,
    Catalog,
    interpreter_catalog,
    load_catalog,
    load_catalogs,
    merge_catalogs,
)
from perflab.files import atomic_write, home_dir


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _entry(path: Path, kind: str) -> dict[str, Any]:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise PerflabError(f"{kind} {path}: cannot be read ({exc})") from None
    return {"path": str(path), "kind": kind, "sha256": _sha(text), "text": text}


def take(paths: list[str], catalog: Catalog) -> list[dict[str, Any]]:
    """The files behind ``catalog`` (built-in first, then ``paths``) and its patch diffs."""
    entries = [
        {**_entry(p, "catalog"), "builtin": True} for p in sorted(BUILTIN_DIR.glob("*.toml"))
    ]
    entries += [_entry(Path(p), "catalog") for p in paths]
    referenced = sorted(
        {
            (k, _file_of(k, v))
            for f in catalog.factors.values()
            for k, v in f.effects.items()
            if k in REFERENCED
        }
    )
    return entries + [_entry(Path(path), kind) for kind, path in referenced]


#: Effects that point at a file of their own (a patch's diff, a Parsl config), and the suffix
#: its stored copy keeps.
REFERENCED = {"patch": ".diff", "parsl_config": ".py"}


def _file_of(kind: str, value: Any) -> str:
    return str(value["diff"]) if kind == "patch" else str(value)


def changed(entries: list[dict[str, Any]]) -> list[str]:
    """Paths whose content on disk differs from the stored copy (or that are gone)."""
    out = []
    for e in entries:
        path = BUILTIN_DIR / Path(e["path"]).name if e.get("builtin") else Path(e["path"])
        try:
            now = _sha(path.read_text())
        except (OSError, UnicodeDecodeError):
            now = None
        if now != e["sha256"]:
            out.append(str(path))
    return out


def restore(entries: list[dict[str, Any]]) -> Catalog:
    """The catalog as it was at creation. A patch whose diff (or a Parsl config a factor
    names) changed on disk is used from the stored copy, written once to
    ``$PERFLAB_HOME/campaign-files/<sha256>.diff|.py``."""
    catalogs = [
        load_catalog(
            BUILTIN_DIR / Path(e["path"]).name if e.get("builtin") else e["path"], e["text"]
        )
        for e in entries
        if e["kind"] == "catalog"
    ]
    # The interpreters present are the machine's, not a file's: found again, never stored.
    catalog = merge_catalogs([interpreter_catalog(), *catalogs])
    stale = set(changed([e for e in entries if e["kind"] in REFERENCED]))
    copies = {(e["kind"], e["path"]): e for e in entries if e["path"] in stale}
    for f in catalog.factors.values():
        for kind, suffix in REFERENCED.items():
            value = f.effects.get(kind)
            if value is None or (e := copies.get((kind, _file_of(kind, value)))) is None:
                continue
            kept = home_dir("campaign-files") / f"{e['sha256']}{suffix}"
            if not kept.exists():
                atomic_write(kept, e["text"])
            f.effects[kind] = {**value, "diff": str(kept)} if kind == "patch" else str(kept)
    return catalog


def campaign_catalog(files: list[dict[str, Any]], paths: list[str]) -> Catalog:
    """A campaign's catalog: its stored copy, or (campaigns older than the copy) the files."""
    return restore(files) if files else load_catalogs(paths)
