"""``atlas pr``: a pull request's verdict for each benchmark, as markdown. The head is
measured against its base (default: the newest commit on the atlas's axis) by the same paired
gate that confirms the atlas's steps, at ``alpha`` split over the benchmarks (Bonferroni)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from perflab.analysis.stats import bonferroni_level
from perflab.atlas.measure import Failed, Measurer, RealMeasurer
from perflab.atlas.update import open_atlas
from perflab.errors import PerflabError

ICON = {"slower": "🔴 slower", "faster": "🟢 faster", "no difference": "⚪ no difference",
        "inconclusive": "🟡 inconclusive"}  # fmt: skip


def verdicts(dir_: str | Path, head: str, base: str | None = None,
             say: Callable[[str], None] = lambda _: None,
             measurer: Measurer | None = None) -> str:  # fmt: skip
    """The markdown verdict of ``head`` against ``base`` for every benchmark of the atlas."""
    from perflab.bisect.commits import resolve

    _, atlas, store = open_atlas(dir_)
    repo = Path(atlas.repo)
    head_sha = resolve(repo, head, atlas.package)
    if base is None:
        points = store.points(axis_only=True)
        if not points:
            raise PerflabError(f"{dir_}: nothing measured yet: give --base or run atlas update")
        base_sha = points[-1]["key"]
    else:
        base_sha = resolve(repo, base, atlas.package)
    store.close()
    m = measurer or RealMeasurer(repo, atlas.package, atlas.build)
    n = max(1, len(atlas.benchmarks))
    rows = []
    for bench in atlas.benchmarks.values():
        level = bonferroni_level(bench.alpha, n)
        say(f"{bench.name}: {base_sha[:10]} → {head_sha[:10]} (level {level:.2g})")
        try:
            r = m.compare(bench, base_sha, head_sha, level, atlas.min_effect)
        except Failed as f:
            rows.append(f"| {bench.name} | ❌ {f.kind} failed at {f.key[:10]}: {f.reason} | | |")
            continue
        ratio = f"{r['ratio']:.3f}× ({r['low']:.3f}–{r['high']:.3f})"
        rows.append(f"| {bench.name} | {ICON.get(r['verdict'], r['verdict'])} | {ratio} | "
                    f"{r['runs']} |")  # fmt: skip
    return "\n".join([
        f"### perflab atlas: {head_sha[:10]} against {base_sha[:10]}", "",
        "| benchmark | verdict | head ÷ base (interval) | runs |", "|---|---|---|---|", *rows, "",
        f"Paired gate (ABBA order), each benchmark at its alpha / {n} (Bonferroni); "
        f"a change must also exceed {atlas.min_effect:.0%} to count.",
    ])  # fmt: skip
