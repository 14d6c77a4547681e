"""Workflow instances from WfCommons recipes, and their ideal makespan on n workers.

WfCommons (``pip install wfcommons``) generates a workflow of about n tasks from a recipe
built on real execution traces: a DAG whose task runtimes and input/output file sizes are
drawn from the traces' distributions.  It is imported only here and only when a workflow is
made, so perflab (and a private release venv) runs without it.  Generation is seeded (it
draws from ``random`` and ``numpy.random``, whose states are restored afterwards), so a
(recipe, size, seed) is the same workflow in every process.

The ideal makespan is a list schedule (Graham): whenever a worker is free, it takes the
ready task with the longest remaining path to a sink (HEFT's upward rank), with zero
overhead.  It is a makespan the workers could reach, at most 2× the optimum; the lower
bound max(critical path, work ÷ workers) is kept beside it.
"""

from __future__ import annotations

import functools
import heapq
import random
from dataclasses import dataclass

import numpy as np

from perflab.errors import PerflabError

#: perflab's recipe names -> WfCommons recipe classes (wfcommons.wfchef.recipes).
RECIPES = {
    "montage": "MontageRecipe",
    "epigenomics": "EpigenomicsRecipe",
    "blast": "BlastRecipe",
    "1000genome": "GenomeRecipe",
    "bwa": "BwaRecipe",
    "cycles": "CyclesRecipe",
    "seismology": "SeismologyRecipe",
    "soykb": "SoykbRecipe",
    "srasearch": "SrasearchRecipe",
}
MAX_SIZE = 20_000


@dataclass(frozen=True)
class Instance:
    """A generated workflow in topological order: runtimes in the recipe's seconds,
    ``parents`` as indices, files as (name, bytes)."""

    recipe: str
    names: tuple[str, ...]
    runtimes: tuple[float, ...]
    parents: tuple[tuple[int, ...], ...]
    inputs: tuple[tuple[tuple[str, int], ...], ...]
    outputs: tuple[tuple[tuple[str, int], ...], ...]

    @property
    def tasks(self) -> int:
        return len(self.names)

    def staged(self) -> dict[str, int]:
        """Files the workflow reads that no task writes (its inputs, staged before it runs)."""
        made = {f for out in self.outputs for f, _ in out}
        return {f: s for ins in self.inputs for f, s in ins if f not in made}

    def children(self) -> list[list[int]]:
        kids: list[list[int]] = [[] for _ in self.names]
        for i, ps in enumerate(self.parents):
            for p in ps:
                kids[p].append(i)
        return kids


def recipe_class(recipe: str) -> type:
    if recipe not in RECIPES:
        raise PerflabError(
            f"workload 'wfcommons': recipe {recipe!r} is not one of {', '.join(RECIPES)}"
        )
    try:
        from wfcommons.wfchef import recipes
    except ImportError:
        raise PerflabError(
            "workload 'wfcommons' needs the wfcommons package (pip install wfcommons)"
        ) from None
    cls: type = getattr(recipes, RECIPES[recipe])
    return cls


@functools.lru_cache(maxsize=8)
def generate(recipe: str, size: int, seed: int) -> Instance:
    """The workflow of about ``size`` tasks that ``recipe`` makes with ``seed``
    (PerflabError: unknown recipe, a size it cannot make, wfcommons missing)."""
    cls = recipe_class(recipe)
    if not 1 <= size <= MAX_SIZE:
        raise PerflabError(f"workload 'wfcommons': size must be 1..{MAX_SIZE} (got {size})")
    from wfcommons import WorkflowGenerator

    saved = random.getstate(), np.random.get_state()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        wf = WorkflowGenerator(cls.from_num_tasks(size)).build_workflow()  # type: ignore[attr-defined]
    except ValueError as exc:  # "Cannot create synthetic graph with 5 nodes from ... 60 nodes"
        raise PerflabError(f"workload 'wfcommons': recipe {recipe!r}: {exc}") from None
    finally:
        random.setstate(saved[0])
        np.random.set_state(saved[1])
    return _instance(recipe, wf)


def _instance(recipe: str, wf: object) -> Instance:
    import networkx as nx

    order = list(nx.lexicographical_topological_sort(wf))  # deterministic order
    index = {name: i for i, name in enumerate(order)}
    tasks = wf.tasks  # type: ignore[attr-defined]
    return Instance(
        recipe=recipe,
        names=tuple(order),
        runtimes=tuple(max(0.0, float(tasks[n].runtime or 0.0)) for n in order),
        parents=tuple(
            tuple(sorted(index[p] for p in wf.predecessors(n)))  # type: ignore[attr-defined]
            for n in order
        ),
        inputs=tuple(tuple((f.file_id, int(f.size)) for f in tasks[n].input_files) for n in order),
        outputs=tuple(
            tuple((f.file_id, int(f.size)) for f in tasks[n].output_files) for n in order
        ),
    )


def upward_ranks(runtimes: list[float], children: list[list[int]]) -> list[float]:
    """Each task's longest path to a sink, its own runtime included (topological order)."""
    rank = [0.0] * len(runtimes)
    for i in reversed(range(len(runtimes))):
        rank[i] = runtimes[i] + max((rank[c] for c in children[i]), default=0.0)
    return rank


def list_schedule(
    runtimes: list[float], parents: tuple[tuple[int, ...], ...], workers: int
) -> float:
    """The makespan of the zero-overhead list schedule on ``workers`` (see the module)."""
    n = len(runtimes)
    kids: list[list[int]] = [[] for _ in range(n)]
    for i, ps in enumerate(parents):
        for p in ps:
            kids[p].append(i)
    rank = upward_ranks(runtimes, kids)
    waiting = [len(ps) for ps in parents]
    ready = [(-rank[i], i) for i in range(n) if waiting[i] == 0]
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []  # (finish time, task)
    now, done = 0.0, 0
    while done < n:
        while ready and len(running) < workers:
            _, i = heapq.heappop(ready)
            heapq.heappush(running, (now + runtimes[i], i))
        now, i = heapq.heappop(running)
        done += 1
        for c in kids[i]:
            waiting[c] -= 1
            if waiting[c] == 0:
                heapq.heappush(ready, (-rank[c], c))
    return now


def lower_bound(runtimes: list[float], parents: tuple[tuple[int, ...], ...], workers: int) -> float:
    """max(critical path, work ÷ workers): no schedule is shorter."""
    finish = [0.0] * len(runtimes)
    for i, ps in enumerate(parents):
        finish[i] = runtimes[i] + max((finish[p] for p in ps), default=0.0)
    return max(max(finish, default=0.0), sum(runtimes) / max(1, workers))
