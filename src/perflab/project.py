"""The project file: ``perflab.toml`` in the current folder or a parent (or one named with
``--config FILE``) holds the benchmark every verb measures, so a flag need not be repeated.

A plain ``[benchmark]`` table is the default benchmark; each ``[benchmark.NAME]`` table is
one more, picked with ``--benchmark NAME`` (its keys over the plain table's). Every verb
reads the settings in force as its options' defaults, so a flag given still wins. Other
tools may keep a table of their own in the file (``[atlas]``); perflab leaves it alone.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from perflab.errors import PerflabError

#: The file's name, looked for in the current folder and then each parent.
FILENAME = "perflab.toml"

#: The keys a benchmark table may hold, and the types each accepts (a verb's own option
#: converts the value as it converts a flag's).
KEYS: dict[str, tuple[type, ...]] = {
    "target": (str,),
    "workload": (str,),
    "tasks": (int,),
    "command": (str,),
    "metric": (str,),
    "precision": (str, int, float),
    "alpha": (float, int),
    "min_effect": (float, int),
    "engine_config": (str,),
    "runs": (int,),
    "package": (str,),
    "repo": (str,),
    "range": (str,),
}

#: Keys whose value is a path: read relative to the file's folder, not the caller's.
PATHS = ("engine_config", "repo")

#: Where a setting comes from when neither the file nor a flag gives it: the verbs' one
#: default (the rest have none, or one of the verb's own, e.g. its runs).
DEFAULTS: dict[str, Any] = {
    "target": "parsl-htex",
    "workload": "noop",
    "metric": "us_per_task",
    "alpha": 0.05,
    "min_effect": 0.05,
}

#: Top-level tables of other tools that share the file (``atlas`` writes one), with the keys
#: each may hold: checked here like a benchmark table's, every error naming its file:line.
FOREIGN_TABLES: dict[str, dict[str, tuple[type, ...]]] = {
    "atlas": {
        "repo": (str,), "package": (str,), "axis": (str,), "since": (str,), "until": (str,),
        "every": (int,), "build": (str,), "min_effect": (float, int), "alpha": (float, int),
        "runner": (str,), "runner_config": (str,),
    },
}  # fmt: skip
#: A foreign table's keys whose value is a path (read relative to the file's folder).
FOREIGN_PATHS = ("repo", "runner_config")


@dataclass(frozen=True)
class Setting:
    """One setting's value and where it came from (``perflab.toml:12``)."""

    value: Any
    source: str


@dataclass(frozen=True)
class Project:
    """A project file read (``path`` None: none was found, every setting is a default):
    the plain ``[benchmark]`` table under the key ``None``, each named one under its name."""

    path: Path | None = None
    tables: Mapping[str | None, Mapping[str, Setting]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    #: The other tools' tables the file holds (``atlas``), checked, with where each key is.
    foreign: Mapping[str, Mapping[str, Setting]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def benchmarks(self) -> list[str]:
        """The named benchmarks, in the file's order."""
        return [name for name in self.tables if name is not None]

    def resolved(self, benchmark: str | None = None) -> dict[str, Setting]:
        """The settings of ``benchmark`` (None: the plain table) with where each came from;
        a name the file does not hold is refused."""
        if benchmark is not None and benchmark not in self.tables:
            where = self.path or f"no {FILENAME} found"
            known = ", ".join(self.benchmarks()) or "none"
            raise PerflabError(
                f"{where}: no benchmark {benchmark!r} ([benchmark.{benchmark}]; known: {known})"
            )
        out = dict(self.tables.get(None, {}))
        if benchmark is not None:
            out.update(self.tables[benchmark])
        return out

    def settings(self, benchmark: str | None = None) -> dict[str, Any]:
        """The values of ``benchmark``'s settings (only those the file gives)."""
        return {k: s.value for k, s in self.resolved(benchmark).items()}

    def in_force(
        self, benchmark: str | None = None, flags: Mapping[str, Any] | None = None
    ) -> dict[str, Setting]:
        """Every key's value in force and its source: a flag, the file, or the default."""
        got = self.resolved(benchmark)
        out = {}
        for key in KEYS:
            if flags and flags.get(key) is not None:
                out[key] = Setting(flags[key], "flag")
            elif key in got:
                out[key] = got[key]
            else:
                out[key] = Setting(DEFAULTS.get(key), "default")
        return out


def find(start: Path | None = None) -> Path | None:
    """The nearest ``perflab.toml``: in ``start`` (default: the current folder) or a parent."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / FILENAME
        if candidate.is_file():
            return candidate
    return None


def load_project(config: Path | None = None, start: Path | None = None) -> Project:
    """The project file ``config`` (it must exist), else the one ``find(start)`` finds, read
    and checked: bad TOML, an unknown key or a value of the wrong type is a PerflabError
    naming the file (and its line, where known). No file found: an empty Project."""
    path = Path(config) if config is not None else find(start)
    if path is None:
        return Project()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PerflabError(f"{path}: cannot read the project file ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PerflabError(f"{path}: not valid TOML: {exc}") from None
    lines = _key_lines(text)
    for key in data:
        if key != "benchmark" and key not in FOREIGN_TABLES:
            raise PerflabError(f"{_at(path, lines, None, key)}: unknown table or key {key!r} "
                               f"(perflab reads [benchmark] and [benchmark.NAME])")  # fmt: skip
    bench = data.get("benchmark", {})
    if not isinstance(bench, dict):
        raise PerflabError(f"{_at(path, lines, None, 'benchmark')}: benchmark must be a table")
    tables: dict[str | None, Mapping[str, Setting]] = {None: _table(path, lines, None, bench)}
    for name, sub in bench.items():
        if isinstance(sub, dict):
            tables[name] = _table(path, lines, name, sub)
    foreign = {t: _foreign(path, lines, t, data[t]) for t in FOREIGN_TABLES if t in data}
    return Project(path.resolve(), MappingProxyType(tables), MappingProxyType(foreign))


def _foreign(
    path: Path, lines: dict[tuple[str, str], int], name: str, table: Any
) -> Mapping[str, Setting]:
    """Another tool's table (``[atlas]``), each key checked against ``FOREIGN_TABLES``."""
    if not isinstance(table, dict):
        raise PerflabError(f"{_at(path, lines, None, name)}: {name} must be a table")
    keys, out = FOREIGN_TABLES[name], {}
    for key, value in table.items():
        number = lines.get((name, key))
        where = f"{path}:{number}" if number else str(path)
        if key not in keys:
            raise PerflabError(f"{where}: unknown key {key!r} in [{name}] "
                               f"(known: {', '.join(keys)})")  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, keys[key]):
            want = " or ".join(t.__name__ for t in keys[key])
            raise PerflabError(f"{where}: {key} must be a {want} (got {value!r})")
        if key in FOREIGN_PATHS:
            value = str((path.parent / os.path.expanduser(str(value))).resolve())
        out[key] = Setting(value, where)
    return MappingProxyType(out)


def _table(
    path: Path, lines: dict[tuple[str, str], int], name: str | None, table: dict[str, Any]
) -> Mapping[str, Setting]:
    """One benchmark table's settings, each checked and with its file:line."""
    out: dict[str, Setting] = {}
    for key, value in table.items():
        if name is None and isinstance(value, dict):
            continue  # a named benchmark, read on its own
        where = _at(path, lines, name, key)
        if key not in KEYS:
            raise PerflabError(f"{where}: unknown key {key!r} in {_title(name)} "
                               f"(known: {', '.join(KEYS)})")  # fmt: skip
        types = KEYS[key]
        if isinstance(value, bool) or not isinstance(value, types):
            want = " or ".join(t.__name__ for t in types)
            raise PerflabError(f"{where}: {key} must be a {want} (got {value!r})")
        if key in PATHS:
            value = str((path.parent / os.path.expanduser(str(value))).resolve())
        out[key] = Setting(value, where)
    return MappingProxyType(out)


_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
_KEY = re.compile(r"""^\s*("?)([A-Za-z0-9_-]+)\1\s*=""")


def _key_lines(text: str) -> dict[tuple[str, str], int]:
    """(table, key) -> the line it is on, read from the text (tomllib gives no lines): only
    for the messages and ``config show``, so a key it misses is named without its line."""
    out: dict[tuple[str, str], int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        if m := _HEADER.match(line):
            table = m.group(1).replace('"', "").replace(" ", "")
            out.setdefault(("", table.split(".")[0]), number)
        elif m := _KEY.match(line):
            out.setdefault((table, m.group(2)), number)
    return out


def _title(name: str | None) -> str:
    return "[benchmark]" if name is None else f"[benchmark.{name}]"


def _at(path: Path, lines: dict[tuple[str, str], int], name: str | None, key: str) -> str:
    table = "" if key == "benchmark" or (name is None and key in FOREIGN_TABLES) else _title(name)
    number = lines.get((table.strip("[]"), key)) or lines.get(("", key))
    return f"{path}:{number}" if number else str(path)


#: What ``perflab init`` writes: every key, commented, with what it means.
TEMPLATE = """\
# perflab's project file: every verb run in this folder (or below it) reads these settings
# as its defaults; a flag on the command line still wins. `perflab config show` prints the
# settings in force and where each came from. See docs/project-file.md.

[benchmark]
# What to measure: an engine and a workload ...
target = "parsl-htex"
workload = "noop"
# tasks = 5000                 # counted tasks per run (default: a 5-second window)
# ... or a shell command (then target and workload are not used):
# command = "python my_workflow.py"
# metric = "us_per_task"       # the metric decided on and analysed
# precision = "3%"             # the 95% CI half-width to reach (planned from `perflab precision`)
# alpha = 0.05                 # significance, the same in every verb
# min_effect = 0.05            # a smaller change is "no difference"
# engine_config = "config.py"  # the engine's config file (relative to this file)
# runs = 10                    # measured runs (per side, release, set ...)
# package = "parsl"            # whose releases `--range A..B` names
# repo = "../parsl"            # a git clone: `--range` then names its commits or tags
# range = "2024.6.3..2025.6.2" # the two ends of compare, history, bisect and explain

# A named benchmark, picked with `--benchmark sleep`; its keys override [benchmark]'s.
# [benchmark.sleep]
# workload = "sleep"
# tasks = 200
"""


def write_template(path: Path) -> Path:
    """Write ``TEMPLATE`` to ``path``: created, never overwritten (nor a link followed)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise PerflabError(f"{path}: exists already (perflab init never overwrites)") from None
    except OSError as exc:
        raise PerflabError(f"{path}: cannot create ({exc.strerror})") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(TEMPLATE)
    return path
