"""What ``perflab explain`` is asked, checked before anything is built or stored."""

from __future__ import annotations

import re
from dataclasses import replace

from perflab.compare.gate import DERIVED
from perflab.errors import PerflabError
from perflab.explain.plan import Setup
from perflab.run.measure import validate
from perflab.run.record import METRICS


def checked(draft: Setup) -> Setup:
    """The checked ``Setup`` of explaining ``a`` → ``b`` of ``package`` on ``base``, from a
    draft whose empty ``name`` and ``metrics`` take their defaults: ``metrics`` the
    command's ``--metric`` (a command target) or us_per_task, the first decides; ``name``
    ``explain-PACKAGE-A-B``. The options themselves are ``Setup``'s (``api.explain``)."""
    base = draft.base
    if draft.a == draft.b:  # the CLI's --range refuses it too; the API and --from/--to reach here
        raise PerflabError(f"--range names the same release twice ({draft.a}): nothing to explain")
    validate(base)
    metrics = draft.metrics or [base.metric if base.command else "us_per_task"]
    for m in metrics:
        if m not in METRICS and m not in DERIVED:
            raise PerflabError(f"unknown metric {m!r} for --metric")
    if draft.runs < 3:
        raise PerflabError(f"--runs must be at least 3 rounds (got {draft.runs})")
    name = draft.name or f"explain-{draft.package}-{draft.a}-{draft.b}"
    return replace(
        draft,
        name=re.sub(r"[^A-Za-z0-9_.-]", "_", name),
        metrics=metrics,
        modules=tuple(draft.modules),
        classes=tuple(draft.classes),
    )
