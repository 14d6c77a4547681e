"""Noisy bisection with error control: which of an ordered list of points (releases or
commits) made a step in a metric. Pure search logic; what a measurement is (runs, builds,
caches) is the caller's ``measure``.

* **Confirm** the step between the two ends with the paired gate. No step, or an undecided
  one, ends the search: nothing is bisected.
* **Probe** the middle of the current interval, measured paired against both of its current
  ends (two comparisons). A side whose verdict is the confirmed step's direction holds a
  step: follow it. Both sides → the step **splits**: follow both, and report several culprits.
  Neither side (both "no difference") → the step **dissolves** there: said, not guessed.
  A side still **undecided** at the most runs may hold (part of) the step: it is followed
  too, after the decided sides, while fewer than ``max_culprits`` branches are open. A range
  the search cannot go on with (adjacent points still undecided, or no branch left) is kept
  in ``Search.undecided`` with why; a culprit is only ever a decided comparison.
* **More runs only where undecided**: each comparison is the sequential gate (it stops as
  soon as it is decided, at most ``n_max`` runs per side), run by ``measure``.
* **Error control**: every comparison is tested at ``alpha / K``, ``K`` the comparisons
  planned for up to ``max_culprits`` culprits (1 + 2 · max_culprits · ⌈log2(n − 1)⌉); a
  search that needs more (skipped points) spends the last share geometrically. By the union
  bound the chance of any wrong decision in the whole search is at most ``alpha``.
* A point that does not build or run (``PointFailed``) is **skipped** and named, as
  ``git bisect skip`` does; the probe moves to its neighbour.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from perflab.analysis.stats import spent_level

STEP_VERDICTS = ("slower", "faster")


class PointFailed(Exception):
    """Point ``index`` does not build or run: the search skips it."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index
        self.reason = reason


@dataclass(frozen=True)
class Step:
    """One paired comparison of point ``a`` (baseline) with point ``b``: the ratio b/a of
    the metric with its interval at ``1 − level``, the gate's verdict, and the runs it made
    (both sides)."""

    a: int
    b: int
    ratio: float
    low: float
    high: float
    verdict: str
    runs: int
    level: float
    #: With ``--precision``: the half-width reached, the target, why it stopped, the line.
    precision: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def interval(self) -> str:
        """``1.237× (1.044–1.466)``: the ratio and its interval (none when not finite)."""
        ci = (
            f" ({self.low:.3f}–{self.high:.3f})"
            if math.isfinite(self.low) and math.isfinite(self.high)
            else ""
        )
        return f"{self.ratio:.3f}×{ci}"

    def text(self) -> str:
        """``1.237× (1.044–1.466) slower, 32 runs``: the comparison as decided."""
        return f"{self.interval()} {self.verdict}, {self.runs} runs"


#: ``measure(a, b, level)``: the paired comparison of points a and b, tested at ``level``.
Measure = Callable[[int, int, float], Step]


@dataclass
class Culprit:
    """The point that made (its share of) the step: ``index`` is the first point showing
    it, ``before`` the last before it; ``candidates`` more than one point when skipped points
    hide which of them it is."""

    index: int
    before: int
    step: Step
    share: float
    share_low: float
    share_high: float
    candidates: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["step"] = self.step.to_dict()
        return out


@dataclass
class Search:
    n_points: int
    alpha: float
    planned: int
    outcome: str = "not confirmed"
    direction: str | None = None
    confirm: Step | None = None
    steps: list[Step] = field(default_factory=list)
    culprits: list[Culprit] = field(default_factory=list)
    dissolved: list[tuple[int, int]] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: Ranges (``a``, ``b``, the comparison's numbers, ``why``) the search could not tell
    #: about: undecided at the most runs and not followed further.
    undecided: list[dict[str, Any]] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return sum(s.runs for s in self.steps)

    def error_statement(self) -> str:
        return (
            f"each comparison tested at alpha/{self.planned} (Bonferroni over the "
            f"{self.planned} comparisons planned); at most {self.alpha:g} chance of any wrong "
            f"decision in the whole search ({len(self.steps)} comparisons made)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_points": self.n_points,
            "alpha": self.alpha,
            "planned_comparisons": self.planned,
            "error": self.error_statement(),
            "outcome": self.outcome,
            "direction": self.direction,
            "confirm": self.confirm.to_dict() if self.confirm else None,
            "steps": [s.to_dict() for s in self.steps],
            "culprits": [c.to_dict() for c in self.culprits],
            "dissolved": [list(d) for d in self.dissolved],
            "undecided": self.undecided,
            "skipped": {str(k): v for k, v in self.skipped.items()},
            "runs": self.runs,
            "notes": self.notes,
        }


def planned_comparisons(n_points: int, max_culprits: int) -> int:
    """Comparisons a search of ``n_points`` with up to ``max_culprits`` culprits makes at
    most without skips: the confirmation, and two per probe, ⌈log2(n − 1)⌉ probes a culprit."""
    depth = math.ceil(math.log2(max(2, n_points - 1)))
    return 1 + 2 * max_culprits * depth


class Budget:
    """The level of each comparison in turn (``spent_level``): ``alpha / K`` for the first
    ``K − 1``, then the last ``alpha / K`` halved for each further one, so all levels add up
    to ``alpha``."""

    def __init__(self, alpha: float, planned: int) -> None:
        self.alpha, self.planned, self.used = alpha, planned, 0

    def next(self) -> float:
        self.used += 1
        return spent_level(self.alpha, self.planned, self.used)


def bisect(n_points: int, measure: Measure, alpha: float = 0.05, max_culprits: int = 3) -> Search:
    """Find the points between point 0 (good) and point ``n_points − 1`` (bad) that made the
    step between them. See the module docstring."""
    if n_points < 2:
        raise ValueError("a bisection needs at least two points")
    search = Search(n_points, alpha, planned_comparisons(n_points, max_culprits))
    budget = Budget(alpha, search.planned)
    confirm = _measure(search, measure, 0, n_points - 1, budget)
    if confirm is None:
        search.outcome = "end failed"
        return search
    search.confirm = confirm
    if confirm.verdict not in STEP_VERDICTS:
        search.outcome = "no step" if confirm.verdict == "no difference" else "not confirmed"
        return search
    search.direction = confirm.verdict
    todo = [confirm]
    while todo:
        step = todo.pop()
        if step.b - step.a == 1:
            if step.verdict == search.direction:
                search.culprits.append(_culprit(step, confirm, [step.b]))
            else:
                _stays_undecided(search, step, "adjacent points")
            continue
        room = max(1, max_culprits - len(search.culprits) - len(todo))
        todo += _within(search, step, _probe(search, measure, step, budget), room, max_culprits)
    search.culprits.sort(key=lambda c: c.index)
    search.undecided.sort(key=lambda u: u["a"])
    search.outcome = (
        "found" if search.culprits else "undecided" if search.undecided else "dissolved"
    )
    return search


def _within(
    search: Search, step: Step, sides: list[Step], room: int, max_culprits: int
) -> list[Step]:
    """The first ``room`` of ``sides`` (decided ones first): each side followed beyond the
    first opens a branch, and at most ``max_culprits`` are open. A decided side left out is
    noted; an undecided one is kept as a range that stayed undecided, with why."""
    kept, left = sides[:room], sides[room:]
    for s in left:
        if s.verdict == search.direction:
            search.notes.append(
                f"more than {max_culprits} culprits: only the larger side of the split at "
                f"point {s.b if s.a == step.a else s.a} followed (raise --max-culprits)"
            )
        else:
            _stays_undecided(search, s, f"not followed: {max_culprits} branches already open "
                             "(raise --max-culprits)")  # fmt: skip
    return kept


def _stays_undecided(search: Search, step: Step, why: str) -> None:
    """Keep ``step`` as a range the search could not tell about: the step (or part of it) may
    lie there. ``why``: what stopped the search from going on."""
    search.undecided.append({
        "a": step.a, "b": step.b, "ratio": step.ratio, "low": step.low, "high": step.high,
        "runs": step.runs,
        "why": f"its interval ({step.low:.3f}–{step.high:.3f}×) was still undecided at the most "
               f"runs; {why}",
    })  # fmt: skip


def _probe(search: Search, measure: Measure, step: Step, budget: Budget) -> list[Step]:
    """Probe between the ends of ``step``: the sides to follow (none: it dissolves or all
    points between are skipped)."""
    while True:
        m = _middle(step.a, step.b, search.skipped)
        if m is None:  # every point between is skipped: the culprit is one of them or b
            cands = [i for i in range(step.a + 1, step.b + 1)]
            if step.verdict == search.direction:
                search.culprits.append(_culprit(step, _confirm(search), cands))
            else:
                _stays_undecided(search, step, "every point between its ends is skipped")
            return []
        left = _measure(search, measure, step.a, m, budget)
        right = _measure(search, measure, m, step.b, budget) if left else None
        if left is not None and right is not None:
            break
        if m not in search.skipped:  # an end failed on a later run: stop this branch
            search.notes.append(f"points {step.a}–{step.b}: an end stopped running")
            return []
    sign = 1 if search.direction == "slower" else -1
    decided = [s for s in (left, right) if s.verdict == search.direction]
    undecided = [s for s in (left, right) if s.verdict == "inconclusive"]
    if decided or undecided:  # decided sides first, then those showing more of the step
        return sorted(decided, key=lambda s: -abs(math.log(s.ratio))) + sorted(
            undecided, key=lambda s: -sign * math.log(s.ratio)
        )
    search.dissolved.append((step.a, step.b))
    return []


def _measure(search: Search, measure: Measure, a: int, b: int, budget: Budget) -> Step | None:
    try:
        step = measure(a, b, budget.next())
    except PointFailed as exc:
        search.skipped[exc.index] = exc.reason
        return None
    search.steps.append(step)
    return step


def _middle(a: int, b: int, skipped: dict[int, str]) -> int | None:
    """The point nearest the middle of (a, b), not skipped; None if every one is."""
    mid = (a + b) // 2
    inside = [i for i in range(a + 1, b) if i not in skipped]
    return min(inside, key=lambda i: (abs(i - mid), i)) if inside else None


def _confirm(search: Search) -> Step:
    assert search.confirm is not None
    return search.confirm


def _culprit(step: Step, total: Step, candidates: list[int]) -> Culprit:
    """The culprit of ``step`` with its share of the total step on the log scale."""
    whole = math.log(total.ratio)
    shares = sorted(math.log(x) / whole for x in (step.low, step.high))
    return Culprit(
        index=step.b,
        before=step.a,
        step=step,
        share=math.log(step.ratio) / whole,
        share_low=shares[0],
        share_high=shares[1],
        candidates=candidates if len(candidates) > 1 else [],
    )
