"""A black-box command's own labels: ``label:NAME`` on the command line declares NAME the
command's label (passed to it in ``PERFLAB_TREATMENTS``) whatever the catalog says. The
prefix is input only: everywhere a factor is shown or stored with runs (records, dataset
CSV headers and treatments column, analysis, tune, report) the label is named ``NAME``."""

from __future__ import annotations

from collections.abc import Iterable

#: Declares a treatment the command's own label even where the catalog knows the name.
LABEL_PREFIX = "label:"


def is_label(treatment: str) -> bool:
    """Whether ``treatment`` is given as the command's own label (``label:NAME[=LEVEL]``)."""
    return treatment.strip().startswith(LABEL_PREFIX)


def shown(treatment: str) -> str:
    """``treatment`` as every output names it: ``label:NAME[=LEVEL]`` is ``NAME[=LEVEL]``;
    any other treatment is itself."""
    t = treatment.strip()
    return t[len(LABEL_PREFIX) :].strip() if t.startswith(LABEL_PREFIX) else t


def shown_all(treatments: Iterable[str]) -> list[str]:
    """Each of ``treatments`` as outputs name it (``shown``), in order."""
    return [shown(t) for t in treatments]
