"""A Work Queue manager driven over a pipe: one JSON object per line in, one per line out.

Runs under the system interpreter (Debian's python3-workqueue binds only to /usr/bin/python3),
imports nothing but the standard library and work_queue, and does exactly what its driver
asks, one request at a time, so the manager is idle whenever the driver is busy -- as it is
when an application calls the library in-process.

Usage: ``_wq_manager.py PORT RUN_DIR PASSWORD_FILE`` (RUN_DIR only names whose manager this
is; every worker must present the password in PASSWORD_FILE).

Requests: submit {cmd}, connect {workers, timeout}, wait {timeout}, drain {}, dispatch {},
stats {}, tune {name, value}, stop {}.  It exits when its driver goes away (stdin closed, or
the parent dies: PR_SET_PDEATHSIG).
"""

import ctypes
import json
import os
import signal
import sys
import time
from typing import Any

PR_SET_PDEATHSIG = 1


def task_dict(t: Any) -> dict[str, Any]:
    return {
        "id": t.id,
        "result": t.result,
        "exit": t.return_status,
        "output": (t.output or "")[-2000:],
        "t_returned": time.time(),
        # WQ's own timestamps are microseconds since the epoch.
        "submit_us": t.submit_time,
        "finish_us": t.finish_time,
        "exec_start_us": t.execute_cmd_start,
        "exec_end_us": t.execute_cmd_finish,
        "send_start_us": t.send_input_start,
        "send_end_us": t.send_input_finish,
        "recv_start_us": t.receive_output_start,
        "recv_end_us": t.receive_output_finish,
    }


class Manager:
    def __init__(self, wq: Any, port: int) -> None:
        self.wq = wq
        self.q = wq.WorkQueue(port=port)
        self.outstanding: set[int] = set()
        self.held: list[
            dict[str, Any]
        ] = []  # tasks returned by a dispatch pass, handed over by the next request

    def take(self, t: Any) -> dict[str, Any]:
        self.outstanding.discard(t.id)
        return task_dict(t)

    def wait(self, timeout: int) -> dict[str, Any] | None:
        if self.held:
            return self.held.pop(0)
        t = self.q.wait(timeout)
        return self.take(t) if t else None

    def finished_ids(self) -> list[int]:
        state, q = self.wq.work_queue_task_state, self.q._work_queue
        finished = (self.wq.WORK_QUEUE_TASK_WAITING_RETRIEVAL, self.wq.WORK_QUEUE_TASK_RETRIEVED)
        return [i for i in self.outstanding if state(q, i) in finished]

    def drain(self) -> list[dict[str, Any]]:
        """Every task the manager knows has finished; each wait() returns at once."""
        out, self.held = self.held, []
        for _ in self.finished_ids():
            t = self.q.wait(1)
            if t:
                out.append(self.take(t))
        return out

    def dispatch(self) -> None:
        """Wait passes until every queued task is sent (run after replying to the driver).

        Work Queue sends only inside wait(), and only when nothing is left to receive; what
        these passes retrieve is held and handed over by the next request.
        """
        while self.q.stats.tasks_waiting > 0:
            t = self.q.wait(1)
            if t:
                self.held.append(self.take(t))

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req["op"]
        if op == "submit":
            t = self.wq.Task(req["cmd"])
            t.specify_cores(1)
            tid = self.q.submit(t)
            self.outstanding.add(tid)
            return {"id": tid}
        if op == "wait":
            return {"task": self.wait(int(req.get("timeout", 5)))}
        if op == "drain":
            return {"tasks": self.drain()}
        if op == "stats":
            s = self.q.stats
            keys = (
                "workers_connected",
                "tasks_running",
                "tasks_waiting",
                "tasks_done",
                "time_send",
                "time_receive",
                "time_polling",
                "time_status_msgs",
                "time_internal",
                "total_tasks_dispatched",
                "total_tasks_complete",
                "tasks_dispatched",
                "tasks_done",
            )
            return {k: getattr(s, k, None) for k in keys}
        if op == "connect":
            # Workers are accepted only inside wait(); tasks are not submitted yet.
            deadline = time.monotonic() + float(req.get("timeout", 30))
            while self.q.stats.workers_connected < int(req["workers"]):
                if time.monotonic() > deadline:
                    return {"error": f"only {self.q.stats.workers_connected} workers connected"}
                self.q.wait(1)
            return {"workers": self.q.stats.workers_connected}
        if op == "tune":
            return {"rc": self.q.tune(req["name"], req["value"])}
        raise ValueError(f"unknown op {op!r}")


def main() -> int:
    # Die with the driver even if it is killed without closing the pipe.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    try:
        import work_queue as wq  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        print(json.dumps({"error": f"import work_queue failed: {exc}"}), flush=True)
        return 3
    if len(sys.argv) < 4:
        # No password means any worker that reaches the port joins: never run open.
        print(json.dumps({"error": "usage: _wq_manager.py PORT RUN_DIR PASSWORD_FILE"}), flush=True)
        return 2
    m = Manager(wq, int(sys.argv[1]))
    # Workers are admitted only inside wait(), which no request has run yet: none can have
    # joined without the password. The binding returns 0 (and the manager would stay open)
    # when the file is missing, unreadable or empty, so that is fatal here.
    if not m.q.specify_password_file(sys.argv[3]):
        print(json.dumps({"error": f"cannot read the password file {sys.argv[3]}"}), flush=True)
        return 2
    print(json.dumps({"port": m.q.port, "pid": os.getpid()}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "stop":
            break
        if req["op"] == "dispatch":
            print(json.dumps({"ok": True}), flush=True)
            m.dispatch()
            continue
        try:
            reply = m.handle(req)
        except Exception as exc:  # the driver gets the cause, the manager stays up
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
