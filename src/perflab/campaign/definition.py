"""A campaign's definition: one typed shape, written by planning and by import alike."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

#: The design name of a campaign imported from a dataset CSV (it has no plan).
IMPORTED = "imported"


@dataclass
class CampaignDef:
    """What a campaign measures and how it was planned (stored as JSON in the store)."""

    name: str
    factors: list[str]
    design: str
    #: The base RunSpec as a dict (``{}`` for an imported campaign).
    base: dict[str, Any] = field(default_factory=dict)
    catalogs: list[str] = field(default_factory=list)
    #: The catalogs' and patch diffs' content at creation (perflab.factors.snapshot).
    catalog_files: list[dict[str, Any]] = field(default_factory=list)
    design_options: dict[str, Any] = field(default_factory=dict)
    #: What the design wants remembered for analysis (e.g. ``sequences``).
    design_info: dict[str, Any] = field(default_factory=dict)
    replicates: int = 1
    budget_runs: int | None = None
    budget_s: float | None = None
    seed: int | None = None
    sets: int = 0
    imported_from: str | None = None
    #: The CI half-width asked for at creation (``--precision``; relative, e.g. 0.03).
    precision: float | None = None
    created_at: str = ""

    @property
    def imported(self) -> bool:
        return self.design == IMPORTED

    @property
    def sequences(self) -> list[list[str]]:
        return list(self.design_info.get("sequences", []))

    @property
    def target(self) -> str:
        """What is measured: the black-box command, the engine, or ``imported``."""
        if self.imported:
            return IMPORTED
        return str(self.base.get("command") or self.base.get("target"))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CampaignDef:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
