"""What the A/B benches share: a paired ratio printed with its interval."""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from perflab.compare.stats import paired_ratio


def ratio_text(ratios: Sequence[float], confidence: float = 0.95) -> str:
    """``1.052 (95% CI 0.951-1.164)``: geometric mean of B/A over the pairs, t interval."""
    m, lo, hi = paired_ratio(ratios, confidence)
    if math.isnan(lo):
        return f"{m:.3f} (one pair: no interval)"
    return f"{m:.3f} ({confidence:.0%} CI {lo:.3f}-{hi:.3f})"


ROOT = Path(__file__).resolve().parent.parent


def export(rev: str | None, into: Path) -> Path:
    """The ``src`` of a git revision, via ``git archive`` into ``into`` (the working tree's
    own ``src`` when ``rev`` is None; nothing in the working tree is touched)."""
    if rev is None:
        return ROOT / "src"
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True
    ).stdout
    into.mkdir(mode=0o700)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def revisions(description: str, pairs: int) -> tuple[argparse.Namespace, list[str]]:
    """``--rev-a``, ``--rev-b`` (default: the working tree) and ``--pairs``; what follows
    ``--`` is the command's own arguments."""
    fmt = argparse.RawTextHelpFormatter
    ap = argparse.ArgumentParser(description=description, formatter_class=fmt)
    ap.add_argument("--rev-a", required=True, help="git revision of side A")
    ap.add_argument("--rev-b", help="git revision of side B (default: the working tree)")
    ap.add_argument("--pairs", type=int, default=pairs)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    return ap.parse_args(argv[:cut]), argv[cut + 1 :]
