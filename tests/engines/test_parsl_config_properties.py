"""``--parsl-config`` files drawn (hypothesis, issue 43): garbage, syntax errors, a module
that raises or exits, no ``config``, a ``config`` of the wrong type, a valid one — for the
engines that load them and for the parsl runner. The answer is one line and exit 2, or the
input passes (and nothing starts: see ``cliprops``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cliprops import examples, run_in, workdir

VALID = "from parsl.config import Config\nconfig = Config()\n"
BODIES = [
    "",
    "def (:\n",
    "x = 1\n",
    "config = 3\n",
    "config = None\n",
    "raise RuntimeError('boom')\n",
    "import perflab_no_such_module\n",
    "def fresh_config():\n    return 1\n",
    "def fresh_config():\n    raise ValueError('x')\n",
    "fresh_config = 3\n",
    "import sys\nsys.exit(3)\n",
    "raise KeyboardInterrupt\n",
    "raise SystemExit('bye')\n",
    "config = " + "[" * 200 + "]" * 200 + "\n",
    "\x1b[31m = 1\n",
    "from parsl.config import Config\ndef fresh_config():\n    return Config()\n",
    VALID,
    VALID + "config.executors = 5\n",
]
VERBS = [
    ["run", "--target", "parsl-htex", "--tasks", "1"],
    ["run", "--target", "parsl-threads", "--tasks", "1"],
    ["run", "--command", "echo 1"],
    ["campaign", "run", "c1", "--runner", "parsl"],
    ["campaign", "create", "x", "--target", "parsl-htex", "--tasks", "1", "--factors",
     "cfg_prefetch_100"],
    ["tune", "t", "--command", "echo 1", "--factors", "a", "--runner", "parsl"],
]  # fmt: skip


@st.composite
def config_file(draw: st.DrawFn) -> tuple[str, bytes]:
    """A file name and its bytes: a body above, raw bytes or text, or one of the work
    directory's own files (a folder, a missing file, a CSV)."""
    kind = draw(st.sampled_from(["body", "body", "bytes", "text", "existing"]))
    if kind == "existing":
        return draw(st.sampled_from(["dir", "nope.py", "data.csv", "garbage.txt", ""])), b""
    if kind == "bytes":
        data = draw(st.binary(max_size=40))
    elif kind == "text":
        data = draw(st.text(max_size=40)).encode()
    else:
        data = draw(st.sampled_from(BODIES)).encode()
    return draw(st.sampled_from(["cfg.py", "cfg.txt", "é cfg.py"])), data


@examples(30)
@given(verb=st.sampled_from(VERBS), file=config_file())
def test_any_parsl_config_file_is_loaded_or_refused_in_one_line(
    verb: list[str], file: tuple[str, bytes]
) -> None:
    wd = workdir()
    name, data = file
    if data:
        (wd.path / name).write_bytes(data)
    flag = "--runner-config" if verb[0] == "tune" else "--engine-config"
    run_in(wd, [*verb, flag, name, "--store", "s.db"] if verb[0] != "run" else [*verb, flag, name])
