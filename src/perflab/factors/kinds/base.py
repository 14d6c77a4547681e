"""The factor-kind interface: how one kind of effect is read from a catalog and applied."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from perflab.errors import PerflabError
from perflab.spec import RunSpec

LEVEL = "{level}"


def substitute(value: Any, level: Any) -> Any:
    """Replace ``"{level}"`` in a catalog value by the treatment's level.

    A value that is exactly ``"{level}"`` takes the level's own type (100 stays an int).
    """
    if isinstance(value, str):
        if value == LEVEL:
            return level
        return value.replace(LEVEL, str(level)) if level is not None else value
    if isinstance(value, dict):
        return {k: substitute(v, level) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, level) for v in value]
    return value


class FactorKind:
    """One kind of effect. ``keys`` are the catalog keys it owns inside a factor's table:
    by default its ``name`` alone (``package = ...`` for the kind ``package``)."""

    name: ClassVar[str] = ""
    keys: ClassVar[tuple[str, ...]] = ()
    #: Whether a black-box command target can take this kind of effect.
    for_commands: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name and not cls.keys:
            cls.keys = (cls.name,)

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        """Check the catalog value; raise PerflabError naming ``where`` when it is wrong.

        Relative paths in the value are relative to ``base_dir`` (the catalog's folder).
        """
        return value

    def check(self, value: Any, where: str) -> None:
        """Checks that need the machine (installed versions, files): run when a treatment
        set using the factor is resolved, so one stale factor does not spoil a catalog."""

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        """``spec`` with the (level-substituted) effect in force: a new spec (RunSpec is
        frozen; ``dataclasses.replace``), the nested tables copied where they change."""
        raise NotImplementedError

    def finish(self, spec: RunSpec, treatments: list[str]) -> RunSpec:
        """``spec`` once every treatment of a set is applied, for a kind whose effects
        compose (``py_variant``: the axes pick one built interpreter); ``treatments`` are the
        set's treatments with an effect of this kind."""
        return spec


class TableKind(FactorKind):
    """A kind whose value is a table laid over one of the spec's tables (``field``)."""

    field: ClassVar[str] = ""

    def parse(self, factor: str, key: str, value: Any, where: str, base_dir: Path) -> Any:
        return expect_table(value, where, key)

    def apply(self, spec: RunSpec, key: str, value: Any) -> RunSpec:
        laid: dict[str, Any] = {self.field: {**getattr(spec, self.field), **value}}
        return replace(spec, **laid)


def expect_table(value: Any, where: str, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PerflabError(f"{where}: `{key}` must be a table")
    return value
