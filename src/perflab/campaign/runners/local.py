"""The local runner: one run at a time on this machine (runs must not share a machine)."""

from __future__ import annotations

from perflab.campaign.runners import RUNNERS
from perflab.campaign.runners.base import Runner, Work
from perflab.run.measure import measure


@RUNNERS.register
class LocalRunner(Runner):
    name = "local"

    def execute(self, work: Work) -> None:
        for seq, spec in work.pending:
            if work.over():
                return
            if work.finish(measure(spec), seq):
                return  # unmeasured: the next runs would meet the same full disk; resume later
