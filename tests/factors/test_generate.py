"""One factor per logger call, generated from the installed Parsl (issue 25)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from conftest import perflab
from perflab.factors.catalog import load_catalogs
from perflab.factors.sources import locate
from perflab.factors.transforms import parse_transform
from perflab.prepare.transformed import apply_to_tree


def test_log_call_factors_each_remove_their_own_calls(tmp_path: Path) -> None:
    out = tmp_path / "dflow.toml"
    r = perflab("factors", "generate", "log-calls", "--module", "parsl.dataflow.dflow",
                "-o", str(out), "--json", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["factors"] >= 20 and summary["calls"] >= summary["factors"]
    cat = load_catalogs([str(out)])
    generated = [n for n in cat.names() if n.startswith("log_dflow_")]
    assert len(generated) == summary["factors"]
    # every call of the grouped factor has its own factor, in conflict with the group
    group = set(cat.get("src_submit_biglogs_remove").conflicts) & set(generated)
    assert len(group) >= 10
    pkg_dir, version = locate("parsl", sys.executable)
    total = 0
    for name in generated:
        [t] = cat.get(name).effects["transform"]
        tr = parse_transform({k: v for k, v in t.items() if k != "factor"}, name)
        _, report = apply_to_tree(pkg_dir, "parsl", version, [(name, tr)])
        total += report[0]["total"]
    assert total == summary["calls"]  # each call removed by exactly its own factor

    # the group's line factors together make exactly the group's change (the per-line
    # screen's "all lines" set is the grouped factor, split)
    def items(names: list[str]) -> list[tuple[str, Any]]:
        return [(n, parse_transform({k: v for k, v in e.items() if k != "factor"}, n))
                for n in names for e in cat.get(n).effects["transform"]]  # fmt: skip

    whole, _ = apply_to_tree(pkg_dir, "parsl", version, items(["src_submit_biglogs_remove"]))
    parts, _ = apply_to_tree(pkg_dir, "parsl", version, items(sorted(group)))
    assert parts == whole
    # names come from module, function and message: a second run gives the same names
    again = tmp_path / "again.toml"
    perflab("factors", "generate", "log-calls", "--module", "parsl.dataflow.dflow",
            "-o", str(again), cwd=tmp_path)  # fmt: skip
    assert again.read_text() == out.read_text()


def test_a_module_glob_that_matches_nothing_is_exit_2(tmp_path: Path) -> None:
    r = perflab("factors", "generate", "log-calls", "--module", "parsl.nothing.*",
                "-o", str(tmp_path / "x.toml"), cwd=tmp_path)  # fmt: skip
    assert r.returncode == 2 and "parsl.nothing.*" in r.stderr
    assert not (tmp_path / "x.toml").exists()
