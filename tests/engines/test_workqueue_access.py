"""The workqueue engine against another local user (uid ``nobody``): his worker must not
join the run's manager, and nothing a worker returns is unpickled unless the run's own task
process signed it (issue 24)."""

from __future__ import annotations

import base64
import os
import pickle
import threading
from pathlib import Path
from typing import Any

import pytest

from attacker import as_nobody, listeners, needs_root
from perflab.engines import workqueue
from perflab.engines.workqueue import WorkQueueEngine

#: As nobody: run a stock work_queue_worker against the manager's port for a few seconds.
ROGUE = """
d = tempfile.mkdtemp()
w = subprocess.Popen(["work_queue_worker", "--single-shot", "-t", "8", "-s", d,
                      "127.0.0.1", str(PORT)], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
time.sleep(6)
w.kill()
report(done=True)
"""


class Proof:
    """Unpickling this creates a file: what a rogue worker's answer would do."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


@pytest.mark.slow
@needs_root
@pytest.mark.parametrize("netns", [True, False], ids=["netns", "password-only"])
def test_a_worker_of_another_user_does_not_join_the_manager(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, netns: bool
) -> None:
    """With a private network namespace he cannot reach the manager; without one (a user
    who cannot make namespaces) the password alone must keep him out."""
    if not netns:
        monkeypatch.setattr(workqueue, "private_netns", lambda: None)
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    engine = WorkQueueEngine(run_dir, {"workers": 1})
    try:
        engine.start()
        seen = listeners(os.getpid())
        print(f"workqueue ({engine.isolation}) listeners seen from this host: {seen}")
        if engine.isolation.startswith("netns"):  # root here: CI always takes this branch
            assert seen == []  # the manager listens only in its private namespace
        else:
            assert [pid for _, _, pid in seen] == [engine.manager.pid]
        port = engine.port
        attacker = threading.Thread(
            target=as_nobody,
            args=(f"PORT={port}\n" + ROGUE,),
            kwargs={"preimport": ("subprocess", "tempfile", "time")},
        )
        attacker.start()
        # the manager admits workers only inside its wait(): give his worker every chance
        reply = engine._call("connect", workers=2, timeout=7)
        attacker.join()
        assert "error" in reply, f"uid nobody's worker joined the run's manager: {reply}"
    finally:
        engine.shutdown()


def test_a_forged_result_is_not_unpickled(tmp_path: Path) -> None:
    proof = tmp_path / "proof"
    forged = base64.b64encode(pickle.dumps(Proof(str(proof)))).decode()
    engine = WorkQueueEngine(tmp_path, {"workers": 1})
    engine.key = os.urandom(32)  # the run's key, which a rogue worker does not have
    with pytest.raises(Exception, match="not signed"):
        engine._parse_result(f"noise\n{forged}\n")
    assert not proof.exists(), "a worker's answer ran code in perflab"
    # a real signature, made with another key, is refused the same way
    import hashlib
    import hmac

    sig = hmac.new(os.urandom(32), forged.encode(), hashlib.sha256).hexdigest()
    with pytest.raises(Exception, match="not signed"):
        engine._parse_result(f"{forged} {sig}\n")
    assert not proof.exists()
