"""``atlas update``: unattended and idempotent. Under a lock, it adds the clone's new
first-parent commits to the axis, measures the points that have fewer runs than planned,
detects steps (``detect``), confirms each by the paired gate on fresh runs of its two sides,
bisects confirmed steps to their commits (``bisect.search``) and lists each culprit's hunks
(``bisect.onward.commit_groups``). Every run, comparison and state change is its own
transaction in the store; work left at ``--max-time`` is queued for the next update."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from perflab.atlas import detect
from perflab.atlas import steps as steps_
from perflab.atlas.gate import Clock, OutOfTime, compare
from perflab.atlas.measure import Failed, Measurer, RealMeasurer
from perflab.atlas.project import Atlas, Benchmark, load
from perflab.atlas.store import Store
from perflab.errors import PerflabError
from perflab.files import private_dir
from perflab.run.record import HIGHER_IS_BETTER

#: A benchmark that failed on this many points and ran on none is said to fail everywhere.
FAILS_EVERYWHERE = 3


@dataclass
class Outcome:
    """What one update did, and what it left."""

    new_points: int = 0
    measured: dict[str, list[str]] = field(default_factory=dict)
    runs: int = 0
    new_steps: list[int] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    skipped: dict[str, dict[str, str]] = field(default_factory=dict)
    failing: dict[str, str] = field(default_factory=dict)
    queued: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    #: The series' runs sent through a runner: where they ran ({provider/scheduler: runs}).
    runner: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@contextmanager
def locked(dir_: Path) -> Iterator[None]:
    """Hold ``DIR/.lock`` (flock) for the update; a second update is refused while it is held."""
    fd = os.open(dir_ / ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PerflabError(
                f"{dir_}: another atlas update is running (it holds the lock)"
            ) from None
        yield
    finally:
        os.close(fd)


def open_atlas(dir_: str | Path) -> tuple[Path, Atlas, Store]:
    """The atlas directory (owner-checked, never created here), its definition and store."""
    d = Path(dir_)
    if not d.is_dir():
        raise PerflabError(f"{d}: no atlas here (make one with atlas init)")
    d = private_dir(d, create=False)
    atlas = load(d)
    return d, atlas, Store(d)


def update(
    dir_: str | Path,
    max_time_s: float | None = None,
    measurer: Measurer | None = None,
    say: Callable[[str], None] = lambda _: None,
    runner: str | None = None,
    runner_config: str | None = None,
) -> Outcome:
    """One update of the atlas in ``dir_`` (see the module docstring); ``runner`` (else the
    project file's) sends the series' runs through a campaign runner (``atlas.batch``)."""
    from perflab.atlas.batch import runner_for
    from perflab.atlas.points import axis_points

    d, atlas, store = open_atlas(dir_)
    chosen = runner_for(atlas, runner, runner_config) if measurer is None else None
    out, clock = Outcome(), Clock(max_time_s)
    with locked(d):
        uid = store.begin_update()
        runs0 = store.run_count()
        out.new_points = store.add_points(axis_points(Path(atlas.repo), atlas.since, atlas.axis,
                                                      atlas.every, atlas.until))  # fmt: skip
        say(f"{out.new_points} new commits on the axis")
        m = measurer or RealMeasurer(Path(atlas.repo), atlas.package, atlas.build)
        try:
            for bench in atlas.benchmarks.values():
                _one_bench(store, atlas, bench, m, clock, out, say, chosen)
        except OutOfTime:
            out.queued = queued(store, atlas)
            say("--max-time reached: " + "; ".join(out.queued))
        _link_fixes(store, out)
        out.runs = store.run_count() - runs0
        out.elapsed_s = time.monotonic() - clock.t0
        store.end_update(uid, out.to_dict())
    store.close()
    return out


def _one_bench(store: Store, atlas: Atlas, bench: Benchmark, m: Measurer, clock: Clock,
               out: Outcome, say: Callable[[str], None], runner: Any = None) -> None:  # fmt: skip
    if not _measure_series(store, bench, m, clock, out, say, runner):
        return
    _detect(store, atlas, bench, out, say)
    for s in store.steps(bench.name):
        if s.state == "suspected" or steps_.retried(s.state, s.data):
            _confirm(store, atlas, bench, m, clock, s.id, out, say)
    for s in store.steps(bench.name):
        if s.state in ("confirmed", "bisecting"):
            _bisect(store, atlas, bench, m, clock, s.id, out, say)
    for s in store.steps(bench.name):
        if _hunks_pending(s.data):
            _measure_hunks(store, atlas, bench, m, clock, s.id, out, say)


def _hunks_pending(data: dict[str, Any]) -> bool:
    from perflab.atlas.hunks import pending

    return any(pending(c) for c in data.get("culprits", []))


def _measure_hunks(store: Store, atlas: Atlas, bench: Benchmark, m: Measurer, clock: Clock,
                   sid: int, out: Outcome, say: Callable[[str], None]) -> None:  # fmt: skip
    """Each culprit's largest hunk groups measured (``atlas.hunks``), the step's culprits
    stored again after each culprit."""
    from perflab.atlas import hunks

    s = store.step(sid)
    assert s is not None
    named = s.data["culprits"]
    for c in named:
        say(f"{bench.name} step {sid}: measuring {len(hunks.pending(c))} hunk groups of "
            f"{c['sha'][:10]}")  # fmt: skip
        if hunks.measure(store, m, bench, Path(atlas.repo), atlas.package, c, atlas.min_effect,
                         clock):  # fmt: skip
            store.set_step(sid, data={"culprits": named})
            shares = ", ".join(
                f"{h['factor']} {h['share']:.0%}" for h in c["hunks"] if "share" in h
            )
            out.changed.append(f"{bench.name} step {sid}: hunks of {c['sha'][:10]} measured"
                               + (f": {shares}" if shares else ""))  # fmt: skip
            say(out.changed[-1])


def _measure_series(store: Store, bench: Benchmark, m: Measurer, clock: Clock, out: Outcome,
                    say: Callable[[str], None], runner: Any = None) -> bool:  # fmt: skip
    """Bring each point of the axis to ``bench.runs`` runs; False when the benchmark fails
    everywhere (said, and the update goes on with the others)."""
    runs, failed = store.runs(bench.name), store.failures(bench.name)
    todo = [
        p
        for p in store.points(axis_only=True)
        if p["key"] not in failed and len(runs.get(p["key"], [])) < bench.runs
    ]
    if runner is not None and isinstance(m, RealMeasurer):
        todo = []  # measured here, all at once
        runs, failed = _through_runner(store, bench, m, runner, clock, out, say)
    for n, p in enumerate(todo[i] for i in steps_.spread(len(todo))):
        if p["key"] in failed:  # a run of an earlier point failed for it
            continue
        say(f"{bench.name}: {p['label']} {p['release'] or ''} ({n + 1} of {len(todo)} to measure)")
        if not runs and sum(k == "run" for k, _ in failed.values()) >= FAILS_EVERYWHERE:
            break
        for _ in range(bench.runs - len(runs.get(p["key"], []))):
            clock.check()
            try:
                value = m.run(bench, p["key"])
            except Failed as f:
                store.fail(bench.name, f.key, f.kind, f.reason)
                failed[f.key] = (f.kind, f.reason)
                out.skipped.setdefault(bench.name, {})[f.key] = f.reason
                say(f"{bench.name}: {f.key[:10]} skipped: {f.reason}")
                break
            store.add_run(bench.name, p["key"], value)
            runs.setdefault(p["key"], []).append(value)
        else:
            out.measured.setdefault(bench.name, []).append(p["key"])
    if not runs and failed:
        kinds = [r for k, r in failed.values() if k == "run"] or [r for _, r in failed.values()]
        out.failing[bench.name] = f"fails on every commit measured ({len(failed)}): {kinds[0]}"
        say(f"{bench.name}: {out.failing[bench.name]} — not a step; going on")
        return False
    return True


def _through_runner(store: Store, bench: Benchmark, m: RealMeasurer, runner: Any, clock: Clock,
                    out: Outcome, say: Callable[[str], None],
                    ) -> tuple[dict[str, list[float]], dict[str, tuple[str, str]]]:  # fmt: skip
    """The series' missing runs sent at once through ``runner`` (``atlas.batch``); OutOfTime
    when some are still missing after it (the deadline, or attempts that came back
    unmeasured): the next update sends them again."""
    from perflab.atlas.batch import measure_points

    runs, failed = store.runs(bench.name), store.failures(bench.name)
    need = {p["key"]: bench.runs - len(runs.get(p["key"], [])) for p in store.points(axis_only=True)
            if p["key"] not in failed and len(runs.get(p["key"], [])) < bench.runs}  # fmt: skip
    if not need:
        return runs, failed

    def skip(f: Failed) -> None:
        store.fail(bench.name, f.key, f.kind, f.reason)
        out.skipped.setdefault(bench.name, {})[f.key] = f.reason
        say(f"{bench.name}: {f.key[:10]} skipped: {f.reason}")

    say(f"{bench.name}: {sum(need.values())} runs of {len(need)} points through the "
        f"{runner.name} runner")  # fmt: skip
    deadline = clock.t0 + clock.max_time_s if clock.max_time_s is not None else None
    got = measure_points(store, bench, m, runner, list(need.items()), deadline, skip)
    out.runner = {"name": runner.name, **got}
    runs, failed = store.runs(bench.name), store.failures(bench.name)
    done = [k for k in need if k not in failed and len(runs.get(k, [])) >= bench.runs]
    out.measured.setdefault(bench.name, []).extend(done)
    if len(done) + sum(k in failed for k in need) < len(need):
        raise OutOfTime
    return runs, failed


def _series(store: Store, bench: Benchmark) -> list[tuple[dict[str, Any], list[float]]]:
    runs, failed = store.runs(bench.name), store.failures(bench.name)
    return [(p, runs[p["key"]]) for p in store.points(axis_only=True)
            if p["key"] in runs and p["key"] not in failed]  # fmt: skip


def _detect(store: Store, atlas: Atlas, bench: Benchmark, out: Outcome,
            say: Callable[[str], None]) -> None:  # fmt: skip
    series = _series(store, bench)
    found = detect.steps([r for _, r in series], bench.alpha, atlas.min_effect,
                         bench.metric in HIGHER_IS_BETTER)  # fmt: skip
    stored = [{"direction": s.direction, **s.data} for s in store.steps(bench.name)]
    for f in found:
        ia, ib = steps_.window(f)
        a, b = series[ia][0], series[ib][0]
        if any(steps_.same(a["ord"], b["ord"], f.direction, s) for s in stored):
            continue
        data = {"detect": {**f.to_dict(), "statement": detect.statement(len(series), bench.alpha),
                           "before": series[f.index - 1][0]["key"],
                           "after": series[f.index][0]["key"]},
                "a_ord": a["ord"], "b_ord": b["ord"]}  # fmt: skip
        sid = store.add_step(bench.name, a["key"], b["key"], f.direction, data)
        stored.append({"direction": f.direction, **data})
        out.new_steps.append(sid)
        say(f"{bench.name}: step {sid} suspected between {a['label']} and {b['label']} "
            f"({f.ratio:.3f}×, {f.direction})")  # fmt: skip


def _confirm(store: Store, atlas: Atlas, bench: Benchmark, m: Measurer, clock: Clock, sid: int,
             out: Outcome, say: Callable[[str], None]) -> None:  # fmt: skip
    """The gate's rounds on fresh runs of the step's two sides, until one decides, the rounds
    are spent (``steps.rounds``) or the clock runs out (the step stays queued)."""
    s = store.step(sid)
    assert s is not None
    done = steps_.rounds_done(s.data)
    while len(done) < steps_.ROUNDS:
        level, n_max = steps_.round_plan(bench.alpha, bench.runs, len(done))
        try:
            got = compare(store, m, bench, s.a, s.b, level, atlas.min_effect, clock, n_max)
        except Failed as f:
            store.fail(bench.name, f.key, f.kind, f.reason)
            store.set_step(sid, "undecided", {"why": f"an end failed: {f.reason}", "retry": False})
            return
        done.append({**got, "round": len(done) + 1, "n_max": n_max})
        state = ("confirmed" if got["verdict"] == s.direction
                 else "undecided" if got["verdict"] == "inconclusive" else "rejected")  # fmt: skip
        retry = state == "undecided" and len(done) < steps_.ROUNDS
        store.set_step(sid, state, {"confirm": got, "rounds": done, "retry": retry})
        out.changed.append(f"{bench.name} step {sid}: {state} by the gate's round {len(done)} of "
                           f"{steps_.ROUNDS} ({got['ratio']:.3f}×, {got['verdict']}, "
                           f"{got['runs']} runs)")  # fmt: skip
        say(out.changed[-1])
        if not retry:
            return


def _bisect(store: Store, atlas: Atlas, bench: Benchmark, m: Measurer, clock: Clock, sid: int,
            out: Outcome, say: Callable[[str], None]) -> None:  # fmt: skip
    from perflab.atlas.culprits import culprits, search

    s = store.step(sid)
    assert s is not None
    store.set_step(sid, "bisecting")
    points = [p for p in store.points() if s.data["a_ord"] <= p["ord"] <= s.data["b_ord"]]
    found = search(store, m, bench, atlas, points, clock)
    named = culprits(found, points, Path(atlas.repo), atlas.package)
    state = "named" if named else "undecided"
    store.set_step(sid, state, {"search": found.to_dict(), "keys": [p["key"] for p in points],
                                "culprits": named})  # fmt: skip
    text = ", ".join(f"{c['sha'][:10]} (#{c['pr']})" if c["pr"] else c["sha"][:10] for c in named)
    out.changed.append(f"{bench.name} step {sid}: {state}" + (f": {text}" if text else ""))
    say(out.changed[-1])


def _link_fixes(store: Store, out: Outcome) -> None:
    rows = [{"id": s.id, "bench": s.bench, "direction": s.direction, **s.data}
            for s in store.steps() if s.state in ("confirmed", "bisecting", "named", "acknowledged")
            or (s.state == "fixed")]  # fmt: skip
    for fix, reg in steps_.fixes(rows):
        r = store.step(reg)
        if r is None or r.link is not None:
            continue
        store.set_step(reg, "fixed", link=fix)
        store.set_step(fix, link=reg)
        out.changed.append(f"step {reg}: fixed by step {fix}")


def queued(store: Store, atlas: Atlas) -> list[str]:
    """What is left for the next update, per benchmark."""
    lines = []
    for bench in atlas.benchmarks.values():
        runs, failed = store.runs(bench.name), store.failures(bench.name)
        todo = [p for p in store.points(axis_only=True)
                if p["key"] not in failed and len(runs.get(p["key"], [])) < bench.runs]  # fmt: skip
        open_ = [s for s in store.steps(bench.name)
                 if s.state in ("suspected", "confirmed", "bisecting")
                 or steps_.retried(s.state, s.data)]  # fmt: skip
        hunky = [s for s in store.steps(bench.name) if _hunks_pending(s.data)]
        if todo or open_ or hunky:
            lines.append(f"{bench.name}: {len(todo)} points to measure, {len(open_)} steps to "
                         f"confirm or bisect, {len(hunky)} steps' hunks to measure, queued for "
                         "the next update")  # fmt: skip
    return lines
