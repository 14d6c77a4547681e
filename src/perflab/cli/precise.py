"""``--precision PCT``: the one option (its name, metavar and parsing) every verb that takes a
CI half-width target shares, and the one way a verb that cannot honour it refuses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from perflab.errors import PerflabError


def precision_option(what: str) -> Callable[[Any], Any]:
    """The ``--precision PCT`` option (into ``precision_target``), its help ending ``what``."""
    return click.option(
        "--precision", "precision_target", metavar="PCT", help=f"CI half-width to reach {what}."
    )


def parse_target(text: str) -> float:
    """'3%', '3 %' or '0.03' → 0.03; anything else is bad input naming ``--precision``."""
    from perflab.compare.planned import parse_target as parse

    return parse(text)


def refuse(verb: str, target: str | None, why: str) -> None:
    """A verb that cannot honour ``--precision`` says why (exit 2) instead of ignoring it."""
    if target is not None:
        raise PerflabError(f"--precision: {verb} {why}")
