"""Typed options of plugins: one declaration per option (:class:`Opt`: default, what it
accepts, help) that serves validation — each value checked where it enters, before anything
starts, with one line naming the option — and ``perflab plugins`` (the options' help).
Engines, designs, runners and workloads declare theirs alike: ``options = {name: Opt(...)}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.errors import PerflabError
from perflab.registry import refuse_unknown


@dataclass(frozen=True)
class Opt:
    """One option: what it accepts — a type (int, float, bool or str), optional bounds, or a
    fixed set of ``choices``; ``above`` is an exclusive lower bound, ``lo``/``hi`` inclusive
    ones — its ``default`` (None: the plugin decides, e.g. one worker per core) and its
    ``help``. Without a type, the default's type is the rule (numbers then not negative)."""

    type: type = object
    lo: float | None = None
    hi: float | None = None
    above: float | None = None
    choices: tuple[Any, ...] = ()
    default: Any = None
    help: str = ""
    #: The plugin checks the value itself, with its own message (e.g. a number that may come
    #: as text from a catalog level): no rule is implied by the default.
    own_check: bool = False

    def rule(self) -> Opt:
        """The rule values are checked against: this one, or the one its default implies."""
        if self.own_check or self.type is not object or self.choices or self.default is None:
            return self
        implied = inferred(self.default)
        return Opt(
            implied.type,
            lo=self.lo if self.lo is not None else implied.lo,
            hi=self.hi,
            above=self.above,
            default=self.default,
            help=self.help,
        )

    def describe(self) -> str:
        if self.own_check:
            return "checked by the plugin"
        if self.choices:
            return "one of " + ", ".join(map(repr, self.choices))
        words = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
        text = words.get(self.type, "a value")
        if self.lo is not None and self.hi is not None and self.above is None:
            return f"{text} from {self.lo:g} to {self.hi:g}"
        bounds = [
            f">= {self.lo:g}" if self.lo is not None else "",
            f"> {self.above:g}" if self.above is not None else "",
            f"<= {self.hi:g}" if self.hi is not None else "",
        ]
        return " ".join([text, *filter(None, bounds)])

    def ok(self, value: Any) -> bool:
        if self.choices:
            return any(value == c and type(value) is type(c) for c in self.choices)
        if self.type is bool:
            return isinstance(value, bool)
        if self.type in (int, float):
            numeric = (int,) if self.type is int else (int, float)
            if isinstance(value, bool) or not isinstance(value, numeric):
                return False
            return (
                (self.lo is None or value >= self.lo)
                and (self.hi is None or value <= self.hi)
                and (self.above is None or value > self.above)
                and value == value  # not NaN
                and abs(value) != float("inf")
            )
        return self.type is object or isinstance(value, self.type)


def inferred(default: Any) -> Opt:
    """The rule an option's default implies: its type, and numbers not negative."""
    if isinstance(default, bool):
        return Opt(bool)
    if isinstance(default, int | float):
        return Opt(type(default), lo=0 if default >= 0 else None)
    if isinstance(default, str):
        return Opt(str)
    return Opt()


def defaults(declared: dict[str, Opt]) -> dict[str, Any]:
    """Each declared option's default."""
    return {k: o.default for k, o in declared.items()}


def check_options(
    given: dict[str, Any], declared: dict[str, Opt], what: str, noun: str = "option"
) -> dict[str, Any]:
    """Refuse unknown options and values their rule does not accept (``None`` always means
    "the default"); the defaults with ``given`` over them."""
    refuse_unknown(what, given, declared, noun)
    for key, value in given.items():
        rule = declared[key].rule()
        if value is not None and not rule.ok(value):
            raise PerflabError(f"{what}: {noun} {key} must be {rule.describe()} (got {value!r})")
    return {**defaults(declared), **{k: v for k, v in given.items() if v is not None}}


def help_rows(declared: dict[str, Opt]) -> list[dict[str, Any]]:
    """The options for ``--help`` and ``perflab plugins``: name, what it accepts, default,
    help."""
    return [
        {"name": k, "accepts": o.rule().describe(), "default": o.default, "help": o.help}
        for k, o in sorted(declared.items())
    ]
