"""Spellings on the command line: the group's options a verb also accepts, and the old
spellings kept for one release, each saying once on stderr that it is deprecated."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.markup import escape

err_console = Console(stderr=True)


#: The group's options a verb also accepts (``perflab run --config FILE``).
GLOBAL_OPTIONS = ("--config", "--benchmark")


def global_first(args: list[str]) -> list[str]:
    """``args`` with the group's options moved before the verb, wherever they were given:
    one project file and one benchmark for the whole command line."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        name = arg.partition("=")[0]
        if name in GLOBAL_OPTIONS and "=" in arg:
            front.append(arg)
        elif arg in GLOBAL_OPTIONS and i + 1 < len(args):
            front += args[i : i + 2]
            i += 1
        else:
            rest.append(arg)
        i += 1
    return front + rest


def deprecated(old: str, new: str) -> None:
    """The one line on stderr an old spelling earns (it still works for one release)."""
    err_console.print(
        f"[yellow]deprecated[/yellow]: {escape(old)} is now {escape(new)} "
        "(the old spelling goes in the next release)",
        soft_wrap=True,
    )


class Said:
    """A parser option of an old spelling: says it is deprecated, then parses as the new."""

    def __init__(self, option: Any, old: str, new: str) -> None:
        self._option, self._old, self._new = option, old, new

    def __getattr__(self, name: str) -> Any:
        return getattr(self._option, name)

    def process(self, value: Any, state: Any) -> None:
        deprecated(self._old, self._new)
        self._option.process(value, state)


class Deprecated(click.Option):
    """An old option kept hidden for one release where the new spelling is not one option
    (``--good``/``--bad`` are now one ``--range``): says so once when given."""

    def __init__(self, *args: Any, now: str, **kwargs: Any) -> None:
        kwargs["hidden"] = True
        super().__init__(*args, **kwargs)
        self.now = now

    def handle_parse_result(self, ctx: click.Context, opts: Any, args: list[str]) -> Any:
        if self.name in opts:
            deprecated(self.opts[0], self.now)
        return super().handle_parse_result(ctx, opts, args)
