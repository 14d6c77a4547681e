"""The ``perflab`` command group and what its verbs share: error handling, option parsing,
the options that describe one run. Verbs live one group per module beside this one: every
module of ``perflab.cli`` that adds commands to ``main`` is found (``verb_modules``), so a
new verb is one new module.

Exit codes (one table in docs/reliability.md): 0 all ok; 1 a run failed, timed out or was
not measured (it is recorded); 2 bad input; 3 an internal error (traceback in a file).
"""

from __future__ import annotations

import errno
import functools
import importlib
import os
import pkgutil
import re
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.markup import escape

from perflab.cli.defaults import apply_project
from perflab.cli.helpfmt import HELP_ALL, HelpCommand, HelpGroup
from perflab.cli.spelling import Said, global_first
from perflab.display import guard_streams
from perflab.errors import INTERNAL_ERROR, PerflabError
from perflab.files import home_dir, perflab_home

err_console = Console(stderr=True)


def progress(text: str) -> None:
    """One line of a verb's progress (a stage, a run, a decision) on stderr, dimmed: the one
    way every verb reports while it works. Printed with or without ``--json``: stdout keeps
    only what the verb answers (exactly one JSON object with ``--json``), and a verb that
    runs for an hour is never silent (an 85-minute ``bisect --json`` printed nothing)."""
    err_console.print(f"[dim]{escape(text)} …[/dim]", soft_wrap=True)


#: A line of a ``perflab.cli`` module that adds a verb to ``main``: its decorator, with the
#: verb's name or without (then click names it after the next ``def``).
_DECORATOR = re.compile(r"""^@main\.(?:command|group)\((?:\s*["']([^"']+)["'])?""")
_DEF = re.compile(r"^def (\w+)\(")


@functools.cache
def verb_modules() -> dict[str, str]:
    """Every verb and the module of ``perflab.cli`` that adds it, read from the modules'
    sources (not imported): running a verb imports only its module. A verb is any module of
    this package that adds commands to ``main``; a verb this reading misses (one added by
    ``main.add_command`` with a computed name) is still found, by importing every module.
    Packages outside perflab add verbs through the entry-point group ``perflab.cli``."""
    table: dict[str, str] = {}
    for module, path in _cli_modules():
        try:
            lines = path.read_text().splitlines()
        except OSError:
            continue
        unnamed = False
        for line in lines:
            if m := _DECORATOR.match(line):
                unnamed = m.group(1) is None
                if not unnamed:
                    table.setdefault(m.group(1), module)
            elif unnamed and (d := _DEF.match(line)):
                unnamed = False
                table.setdefault(d.group(1).lower().replace("_", "-"), module)
    return table


def _cli_modules() -> list[tuple[str, Path]]:
    """The modules of ``perflab.cli`` (each folder on its ``__path__``): (name, source)."""
    package = importlib.import_module(__package__ or "perflab.cli")
    return [
        (m.name, Path(m.module_finder.path) / f"{m.name}.py")  # type: ignore[union-attr]
        for m in pkgutil.iter_modules(package.__path__)
        if not m.name.startswith("_")
    ]


class PerflabGroup(click.Group):
    """Turns every error into one line on stderr and its exit code: PerflabError 2 (or 1 for
    an InfraError), Ctrl-C 130, anything unexpected 3 with the traceback written to a file.

    Verbs are loaded lazily (see ``verb_modules``), so ``perflab analyze`` does not import
    ``compare``, ``tune`` or ``zoo``. Their help is short and grouped (``cli/helpfmt.py``)."""

    command_class = HelpCommand
    group_class = HelpGroup

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in verb_modules():
            importlib.import_module(f"{__package__}.{verb_modules()[cmd_name]}")
        if cmd_name not in self.commands:
            load_all()
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        load_all()
        return super().list_commands(ctx)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # Whatever a verb prints may hold other people's strings (imported treatment levels,
        # a store's errors): no escape sequence of theirs reaches the user's terminal.
        guard_streams()
        return super().main(*args, **kwargs)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.parent is None:
            args = global_first(args)
        try:
            return super().parse_args(ctx, args)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            _usage_error(exc)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PerflabError as exc:
            click.echo(f"perflab: error: {_one_line(str(exc))}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo(
                "perflab: interrupted (finished runs are stored; run again to resume)", err=True
            )
            sys.exit(130)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            _usage_error(exc)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except OSError as exc:
            # only a name the user gave can be too long: bad input wherever it is opened
            if exc.errno != errno.ENAMETOOLONG:
                _internal_error(exc)
            name = _one_line(str(exc.filename))
            click.echo(f"perflab: error: {name[:60]}…: file name too long", err=True)
            sys.exit(2)
        except Exception as exc:  # noqa: BLE001 - the last line of defence for the user
            _internal_error(exc)


def load_all() -> None:
    """Import every module of ``perflab.cli``, and the verbs of installed distributions."""
    for module, _ in _cli_modules():
        importlib.import_module(f"{__package__}.{module}")
    for ep in entry_points(group="perflab.cli"):
        ep.load()


def _internal_error(exc: BaseException) -> NoReturn:
    """An unexpected exception: one line, the traceback in a file, exit 3."""
    where = _write_traceback()
    click.echo(
        f"perflab: internal error: {type(exc).__name__}: {_one_line(str(exc))[:300]} "
        f"(a bug; full traceback in {where})",
        err=True,
    )
    sys.exit(INTERNAL_ERROR)


def _usage_error(exc: click.UsageError) -> NoReturn:
    """A wrong option or argument: one line naming it, like every other refusal (click's own
    form is three lines, the usage first)."""
    where = exc.ctx.command_path if exc.ctx else "perflab"
    click.echo(f"perflab: error: {_one_line(exc.format_message())} (see {where} -h)", err=True)
    sys.exit(exc.exit_code)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _write_traceback() -> str:
    """Write the current exception's traceback to a file; return where (or why not)."""
    text = traceback.format_exc()
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for folder in (perflab_home() / "crash", Path(tempfile.gettempdir())):
        try:
            if folder.is_relative_to(perflab_home()):
                home_dir("crash")
            # mkstemp: O_EXCL, 0600, an unguessable name (the fallback is the shared /tmp)
            fd, path = tempfile.mkstemp(prefix=f"perflab-crash-{stamp}-", suffix=".txt", dir=folder)
            with os.fdopen(fd, "w") as f:
                f.write(f"perflab {' '.join(sys.argv[1:])}\n{text}")
            return path
        except (OSError, PerflabError):
            continue
    return "nowhere (no writable folder); rerun with PERFLAB_HOME set"


@click.group(cls=PerflabGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="perflab")
@click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), metavar="FILE",
    help="The project file (default: perflab.toml here or in a parent); also after a verb.",
)  # fmt: skip
@click.option(
    "--benchmark", metavar="NAME", help="Its [benchmark.NAME] table (default: [benchmark])."
)
@click.pass_context
def main(ctx: click.Context, config_file: str | None, benchmark: str | None) -> None:
    """perflab: measure, treat, campaign, analyse and report task-system performance."""
    apply_project(ctx, config_file, benchmark)


class RegistryChoice(click.Option):
    """An option whose ``--help-all`` lists a registry's names, built only when help is shown
    (so a plain command does not import every plugin)."""

    def __init__(self, *args: Any, registry: Callable[[], Any], **kwargs: Any) -> None:
        self.registry = registry
        super().__init__(*args, **kwargs)

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        # the names only in --help-all: they take 3-4 lines each (``perflab plugins`` too)
        if not ctx.meta.get(HELP_ALL):
            return super().get_help_record(ctx)
        own = self.help
        self.help = f"{own or ''} One of: {self.registry().help()}."
        try:
            return super().get_help_record(ctx)
        finally:
            self.help = own


def registry_option(
    *decls: str, registry: Callable[[], Any], default: str | None, help: str
) -> Any:
    """An option naming one plugin of ``registry()`` (its help lists them: RegistryChoice)."""
    return click.option(
        *decls, default=default, show_default=default is not None, cls=RegistryChoice,
        registry=registry, help=help,
    )  # fmt: skip


class Aliased(click.Option):
    """An option whose old spellings (``old``) still parse but are left out of ``--help``:
    kept for one release after the CLI took one vocabulary (``--runs``, ``-o/--output``,
    ``--targets``)."""

    def __init__(self, *args: Any, old: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.old = old
        self.opts += [o for o in old if o.startswith("--") or len(o) == 2]

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        new = max((o for o in self.opts if o not in self.old), key=len, default="")
        for spelling in self.old:
            table = parser._long_opt if spelling.startswith("--") else parser._short_opt
            if spelling in table:
                table[spelling] = Said(table[spelling], spelling, new)

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        shown, self.opts = self.opts, [o for o in self.opts if o not in self.old]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = shown


#: The most ``--runs`` a verb takes: each is a measured run of seconds or more, and a plan
#: of 10^11 (a typo) was built in memory until it was killed.
MAX_RUNS = 100_000


def runs_option(default: int | None, help: str, old: tuple[str, ...] = ()) -> Any:
    """``--runs N``: how many measured runs (per set, side, level or row)."""
    return click.option(
        "--runs", type=click.IntRange(max=MAX_RUNS), default=default,
        show_default=default is not None, help=help, cls=Aliased, old=old,
    )  # fmt: skip


def output_option(help: str, old: tuple[str, ...] = (), **kwargs: Any) -> Any:
    """``-o/--output PATH``: where a verb writes its files."""
    return click.option(
        "-o", "--output", "output", type=click.Path(), help=help, cls=Aliased, old=old, **kwargs
    )


def _runners() -> Any:
    from perflab.campaign.runners import RUNNERS

    return RUNNERS


#: Where a campaign's runs execute: this machine, or scale-out through Parsl.
runner_option = registry_option(
    "--runner",
    registry=_runners,
    default="local",
    help="Where the runs execute (parsl: scale-out).",
)


def kv_option(flag: str, dest: str, help: str | None = None) -> Any:
    """A repeatable ``FLAG KEY=VALUE`` option, its values read with ``kv``."""
    return click.option(flag, dest, multiple=True, metavar="KEY=VALUE", help=help)


def kv(values: tuple[str, ...], what: str) -> dict[str, Any]:
    """``("a=1", "b=x")`` -> ``{"a": 1, "b": "x"}``; dashes in keys become underscores."""
    out: dict[str, Any] = {}
    for item in values:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise PerflabError(f"{what} {item!r} is not KEY=VALUE")
        out[key.strip().replace("-", "_")] = scalar(raw.strip())
    return out


def scalar(raw: str) -> Any:
    """A command-line value as bool, None, int, float or the string itself."""
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(raw)
        except ValueError:
            pass
    return raw


def names(text: str | None) -> list[str] | None:
    """``"a,b"`` -> ``["a", "b"]``; None stays None (option not given)."""
    return None if text is None else [t.strip() for t in text.split(",") if t.strip()]


@contextmanager
def shown_warnings() -> Iterator[None]:
    """Print the warnings raised inside as one yellow line each on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        # one line, even past the terminal's width (a wrapped path cannot be copied back)
        text = escape(str(w.message))
        err_console.print(f"[yellow]warning[/yellow]: {text}", soft_wrap=True)


def resolved(path: str | None) -> str | None:
    return str(Path(path).resolve()) if path else None


#: A random seed: numpy takes none below 0, SQLite stores none above 2^63 - 1 (both ended
#: in an internal error).
SEED = click.IntRange(0, 2**63 - 1)

store_option = click.option(
    "--store", "store_path", type=click.Path(), help="SQLite store (default .perflab/perflab.db)."
)
json_option = click.option(
    "--json", "as_json", is_flag=True,
    help="Print exactly one JSON object on stdout (progress stays on stderr).",
)  # fmt: skip
