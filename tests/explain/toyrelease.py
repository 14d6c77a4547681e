"""Two local "releases" of a small package with known costs, as wheels pip installs offline.

Release 1.0: ``Worker().run()`` sleeps 60 ms, then ``rounds`` (default 2) steps of 20 ms.
Release 2.0: ``run`` adds a 60 ms sleep (the costly hunk) and ``rounds`` defaults to 4 (the
costly default): 100 ms -> 200 ms. Reverting the hunk explains 60/100 = 0.6 of the step, the
default 40/100 = 0.4. Release 1.1 has only the null changes of 2.0 (nothing to explain).
Null changes: ``label``'s default, ``tidy``'s body, and ``describe``
with ``fmt`` (whose parameters changed: a group that must be reverted together).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

NAME = "plx_explain_toy"
TRUE_SHARES = {"hunk": 0.6, "default": 0.4}

COMMON = """
def fmt(x{sep_param}):
    return str(x){sep_use}


class Worker:
    def __init__(self, rounds={rounds}, label={label!r}):
        self.rounds = rounds
        self.label = label

    def step(self):
        time.sleep(0.02)

    def tidy(self):
        return {tidy}

    def describe(self):
        return fmt(self.label{sep_arg})

    def run(self):
        time.sleep(0.06){extra}
        for _ in range(self.rounds):
            self.step()
        self.tidy()
        self.describe()
"""

RELEASES = {
    "1.0": dict(
        rounds=2, label="a", tidy="sum(range(10))", sep_param="", sep_use="", sep_arg="", extra=""
    ),
    "1.1": dict(
        rounds=2,
        label="b",
        tidy="sum(range(10)) + 0",
        sep_param="",
        sep_use="",
        sep_arg="",
        extra="",
    ),
    "2.0": dict(
        rounds=4,
        label="b",
        tidy="sum(range(10)) + 0",
        sep_param=", sep='-'",
        sep_use=" + sep",
        sep_arg=", '-'",
        extra="\n        time.sleep(0.06)",
    ),
}


def make_wheels(folder: Path) -> Path:
    """Both releases as wheels in ``folder`` (for PIP_FIND_LINKS)."""
    folder.mkdir(parents=True, exist_ok=True)
    for version, fields in RELEASES.items():
        info = f"{NAME}-{version}.dist-info"
        files = {
            f"{NAME}/__init__.py": "",
            f"{NAME}/core.py": "import time\n\n" + COMMON.format(**fields),
            f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n",
            f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n",
        }
        files[f"{info}/RECORD"] = "".join(f"{p},,\n" for p in [*files, f"{info}/RECORD"])
        with zipfile.ZipFile(folder / f"{NAME}-{version}-py3-none-any.whl", "w") as z:
            for path, text in files.items():
                z.writestr(path, text)
    return folder


#: The black-box command: one call of run(), its wall time in µs (timed inside the process,
#: so start-up is not in it; its noise is the sleeps' overshoot, far below the test's share
#: tolerance, so averaging more calls per run only made each run slower).
COMMAND = (
    f"python -c 'import time, {NAME}.core as c; t = time.perf_counter(); "
    "c.Worker().run(); print((time.perf_counter() - t) * 1e6)'"
)
