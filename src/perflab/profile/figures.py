"""Profile figures (plotnine): Gantt by worker, write-size histogram, file syscalls by role."""

from __future__ import annotations

from typing import Any

import pandas as pd
from plotnine import (
    aes,
    coord_flip,
    geom_col,
    geom_segment,
    geom_text,
    ggplot,
    labs,
    position_dodge,
    scale_x_discrete,
    theme,
    theme_bw,
)

#: Darshan's bin labels, in order (the io module owns the bounds).
BIN_LABELS = ["0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M", "1M+"]


def gantt(tasks: list[dict[str, Any]]) -> tuple[ggplot, str] | None:
    """One row per worker, a bar per task from start to end; the gaps are queue/idle time."""
    if not tasks:
        return None
    df = pd.DataFrame(tasks)
    # From the first task's start: engine start-up would otherwise squeeze the tasks flat.
    t0 = df["started"].min()
    df["worker"] = [
        f"{p}" if t == "MainThread" else f"{p}/{t}"
        for p, t in zip(df["pid"], df["thread"], strict=True)
    ]
    for col in ("submitted", "started", "ended", "received"):
        df[col] = df[col] - t0
    # A no-op task lasts microseconds: draw every bar at least 0.2 % of the span wide.
    span = max(float(df["ended"].max()), 1e-6)
    df["ended"] = df["ended"].clip(lower=df["started"] + 0.002 * span)
    df["batch"] = df["batch"].astype(str)
    p = (
        ggplot(df)
        + geom_segment(
            aes(x="started", xend="ended", y="worker", yend="worker", color="batch"), size=6
        )
        + labs(x="seconds since the first task started", y="worker (pid[/thread])", color="batch")
        + theme_bw()
        + theme(figure_size=(9, 1.2 + 0.35 * df["worker"].nunique()))
    )
    caption = (
        "Each bar is one task on the worker that ran it, from the moment the task began to the "
        "moment it ended (timestamps taken inside the worker). White space on a row is time the "
        "worker had no task: queueing, dispatch and result return. Bars are drawn at least "
        "0.2 % of the time axis wide, so sub-millisecond tasks stay visible."
    )
    return p, caption


def histogram(profiles: dict[str, dict[str, Any]]) -> tuple[ggplot, str] | None:
    """Write calls per Darshan size bin, one bar group per profile (e.g. before/after a fix)."""
    rows = [
        {"profile": name, "bin": label, "calls": prof["histogram"].get(label, 0)}
        for name, prof in profiles.items()
        for label in BIN_LABELS
    ]
    if not rows or not any(r["calls"] for r in rows):
        return None
    df = pd.DataFrame(rows)
    p = (
        ggplot(df, aes("bin", "calls", fill="profile"))
        + geom_col(position=position_dodge())
        + geom_text(aes(label="calls"), position=position_dodge(width=0.9), va="bottom", size=7)
        + scale_x_discrete(limits=BIN_LABELS)
        + labs(x="write size (bytes)", y="write calls to files", fill="")
        + theme_bw()
        + theme(figure_size=(8, 4))
    )
    caption = (
        "Number of write-family system calls to regular files, by bytes written per call, in "
        "Darshan's bins. Many calls in the left bins are the many-tiny-writes pattern."
    )
    return p, caption


def syscall_bars(profile: dict[str, Any]) -> tuple[ggplot, str] | None:
    """File syscalls per process, stacked by class, labelled by role."""
    rows = []
    for proc in profile["processes"]:
        label = f"{proc['role']} {proc['pid']}"
        for cls, n in proc["counts"].items():
            if n:
                rows.append({"process": label, "class": cls, "calls": n})
    if not rows:
        return None
    df = pd.DataFrame(rows)
    p = (
        ggplot(df, aes("process", "calls", fill="class"))
        + geom_col()
        + coord_flip()
        + labs(x="", y="file system calls", fill="")
        + theme_bw()
        + theme(figure_size=(8, 1.5 + 0.3 * df["process"].nunique()))
    )
    caption = "File-metadata system calls of every process in the tree, by class."
    return p, caption
