"""One registry per plugin kind (engine, workload, design, ...): adding a plugin is one new file.

A plugin module in the registry's package registers itself with ``@REGISTRY.register`` on a
class whose ``name`` attribute is its public name (written once). The registry imports every
module of its package the first time it is asked for a name, so no ``__init__`` lists the
plugins; installed distributions can add plugins through the entry-point group
``perflab.<kind>`` (e.g. ``perflab.engine``).

Asked for one name, the registry first imports only the modules whose source declares it: a
run's child may live in a private venv of another release that lacks what other plugins
import (numpy, say), and must still find its own engine and workload.  A module that fails
to import is skipped and named when a name is not found.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable, Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Generic, TypeVar

from perflab.errors import PerflabError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps a public name to a plugin; unknown names give a PerflabError listing the known."""

    def __init__(self, kind: str, package: str | None = None, instantiate: bool = False) -> None:
        self.kind = kind
        self.package = package
        #: Register an instance of each decorated class (for stateless strategy objects).
        self.instantiate = instantiate
        self._items: dict[str, T] = {}
        self._discovered = package is None
        #: Plugin modules that failed to import, with why (named when a name is missing).
        self.broken: dict[str, str] = {}

    def register(self, obj: Any) -> Any:
        """Class decorator: registers ``obj`` under ``obj.name``; returns the class."""
        name = getattr(obj, "name", "")
        if not name:
            raise RuntimeError(f"{self.kind} plugin {obj!r} has no `name`")
        self.add(name, obj() if self.instantiate else obj)
        return obj

    def add(self, name: str, obj: T) -> T:
        if name in self._items and self._items[name] is not obj:
            raise RuntimeError(f"{self.kind} {name!r} registered twice")
        self._items[name] = obj
        return obj

    def _modules(self) -> list[tuple[str, Path]]:
        """The plugin modules of the package: (module name, source file)."""
        assert self.package is not None
        pkg = importlib.import_module(self.package)
        return [
            (f"{self.package}.{m.name}", Path(m.module_finder.path) / f"{m.name}.py")  # type: ignore[union-attr]
            for m in pkgutil.iter_modules(pkg.__path__)
            if not m.name.startswith("_") and m.name != "base"
        ]

    def _load(self, module: str) -> None:
        try:
            importlib.import_module(module)
        except ImportError as exc:  # an optional dependency this environment lacks
            self.broken[module.rsplit(".", 1)[1]] = f"{type(exc).__name__}: {exc}"

    def _import_declaring(self, name: str) -> None:
        """Import only the modules whose source says ``name = "<name>"`` (a cheap guess: a
        miss costs the full discovery, never a wrong answer)."""
        declares = re.compile(rf"""^\s+name\s*=\s*["']{re.escape(name)}["']""", re.MULTILINE)
        for module, path in self._modules():
            try:
                text = path.read_text()
            except OSError:
                continue
            if declares.search(text):
                self._load(module)

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        for module, _ in self._modules():
            self._load(module)
        for ep in entry_points(group=f"perflab.{self.kind.replace(' ', '_')}"):
            ep.load()

    def get(self, name: str) -> T:
        if name not in self._items and not self._discovered:
            self._import_declaring(name)
        if name not in self._items:
            self._discover()
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            broken = "; ".join(f"{m}: {why}" for m, why in sorted(self.broken.items()))
            skipped = f"; not loaded here: {broken}" if broken else ""
            raise PerflabError(f"unknown {self.kind} {name!r} (known: {known}{skipped})") from None

    def names(self) -> list[str]:
        self._discover()
        return sorted(self._items)

    def items(self) -> list[tuple[str, T]]:
        return [(n, self._items[n]) for n in self.names()]

    def help(self) -> str:
        """The names, comma-separated, for a CLI option's help text."""
        return ", ".join(self.names())

    def __contains__(self, name: object) -> bool:
        self._discover()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def refuse_unknown(what: str, given: Iterable[str], accepted: Iterable[str], noun: str) -> None:
    """PerflabError naming the keys of ``given`` not in ``accepted`` (e.g. an engine's options).

    ``what`` names the plugin (``engine 'parsl-htex'``); ``noun`` the kind of key.
    """
    accepted = sorted(accepted)
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        raise PerflabError(
            f"{what} has no {noun} {', '.join(unknown)} ({noun}s: {', '.join(accepted) or 'none'})"
        )
