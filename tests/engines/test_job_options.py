"""The seed-001 engines' own logic, without starting anything: options, workloads' command
lines, the flush patch against the installed radical.saga, the seed table's arithmetic."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perflab.engines import ENGINES
from perflab.engines.jobs import shares
from perflab.errors import PerflabError
from perflab.factors.catalog import load_catalogs
from perflab.factors.patching import package_dir
from perflab.factors.treat import treat
from perflab.prepare.patched import patched_tree
from perflab.run.measure import validate
from perflab.spec import RunSpec
from perflab.studies.job_submission import FLUSH_PATCH


@pytest.mark.parametrize(
    ("target", "opts", "message"),
    [
        ("saga", {"mode": "async"}, "mode='async' is not one of"),
        ("saga", {"endpoint": "gsissh"}, "endpoint='gsissh'"),
        ("saga", {"services": "0"}, "services must be >= 1"),
        ("saga", {"services": "many"}, "not an integer"),
        ("saga", {"endpoints": "2"}, "endpoints > 1 needs endpoint=ssh"),
        ("saga", {"until": "never"}, "until='never'"),
        ("shell", {"mode": "csh"}, "mode='csh'"),
        ("redis-pubsub", {"clients": "0"}, "clients must be >= 1"),
        ("redis-pubsub", {"port": "-1"}, "port must be >= 0"),
        ("redis-pubsub", {"channels": "2"}, "no option channels"),
    ],
)
def test_bad_engine_options_are_refused_before_anything_runs(
    target: str, opts: dict[str, str], message: str
) -> None:
    spec = RunSpec(target=target, workload="noop", tasks=1, engine_options=opts)
    with pytest.raises(PerflabError, match=message.replace("(", r"\(")):
        validate(spec)


def test_job_engines_need_a_command_line_and_an_executable() -> None:
    with pytest.raises(PerflabError, match="no command-line form"):
        validate(RunSpec(target="shell", workload="cpu", tasks=1))
    with pytest.raises(PerflabError, match="'/no/such/tool' not found"):
        validate(
            RunSpec(target="saga", workload="exec", tasks=1, params={"executable": "/no/such/tool"})
        )
    with pytest.raises(PerflabError, match="No closing quotation"):
        validate(RunSpec(target="shell", workload="exec", tasks=1, params={"args": "'open"}))
    validate(RunSpec(target="shell", workload="exec", tasks=1, params={"executable": "date"}))


def test_workload_command_lines() -> None:
    from perflab.workloads import WORKLOADS

    assert WORKLOADS.get("noop")().command() == ["/bin/true"]
    assert WORKLOADS.get("sleep")({"task_ms": 1000}).command() == ["/bin/sleep", "1"]
    exe = shutil.which("date")
    assert WORKLOADS.get("exec")({"executable": "date", "args": "-u '+%s x'"}).command() == [
        exe,
        "-u",
        "+%s x",
    ]


def test_shares_deal_all_tasks_evenly() -> None:
    assert shares(10, 3) == [4, 3, 3]
    assert shares(2, 4) == [1, 1, 0, 0]
    assert sum(shares(1001, 7)) == 1001


def test_engines_are_registered_with_their_packages() -> None:
    assert ENGINES.get("saga").packages == ("radical.saga", "radical.utils")
    assert ENGINES.get("saga").runs_commands and ENGINES.get("shell").runs_commands
    assert not ENGINES.get("redis-pubsub").runs_commands


def test_flush_patch_applies_to_the_installed_saga(tmp_path: Path) -> None:
    """The patch factor resolves against the namespace package radical.saga, and its private
    copy has flush() without the 0.1 s read (site-packages untouched)."""
    spec = treat(RunSpec(target="saga", workload="noop", tasks=1), FLUSH_PATCH, load_catalogs())
    assert [p["package"] for p in spec.patches] == ["radical.saga"]
    tree = patched_tree(spec.patches, tmp_path)
    patched = (tree / "radical/saga/utils/pty_process.py").read_text()
    assert "self.read(timeout=0.1)" not in patched
    assert "select.select([self.parent_out], [], [], 0)" in patched
    # the installed module, located without importing saga (its import writes a log file)
    installed = Path(package_dir("radical.saga")) / "utils" / "pty_process.py"
    assert "self.read(timeout=0.1)" in installed.read_text()
    assert not (tree / "radical" / "__init__.py").exists()  # stays a namespace package


def test_fifo_patch_changes_the_packaged_wrapper_script(tmp_path: Path) -> None:
    spec = RunSpec(target="saga", workload="noop", tasks=1)
    spec = treat(spec, "src_saga_wrapper_fifo,src_saga_flush_nowait", load_catalogs())
    tree = patched_tree(spec.patches, tmp_path)
    script = (tree / "radical/saga/adaptors/shell/shell_wrapper.sh").read_text()
    assert 'exec 4<>"$BASE/fifo.$GID"' in script and "read -r UPID <&4" in script
    assert "self.read(timeout=0.1)" not in (tree / "radical/saga/utils/pty_process.py").read_text()


def test_saga_catalog_factors_set_engine_options() -> None:
    catalog = load_catalogs()
    spec = treat(RunSpec(target="saga", workload="noop", tasks=1), "saga_services=4", catalog)
    assert spec.engine_options["services"] in (4, "4")
    with pytest.raises(PerflabError):
        treat(RunSpec(target="shell", workload="noop", tasks=1), "saga_services=4", catalog)
