"""``bench/interp_factorial.py``'s pure parts on a made-up list of built variants: the
design's cells and the variant each runs, what is left out and why, which effects the
nested design can estimate, and the runs rewritten as two-level factors for perflab's
analysis (on planted effects: no engine, no interpreter started)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import interp_factorial as fx  # noqa: E402


def variant(key: str, version: str, flags: list[str]) -> dict[str, Any]:
    return {"key": key, "version": version, "flags": flags, "python": f"/c/{key}/bin/python3"}


ALL = [
    variant("311", "3.11.2", []),
    variant("311p", "3.11.2", ["pgo"]),
    variant("313", "3.13.5", []),
    variant("313p", "3.13.5", ["pgo"]),
    variant("313t", "3.13.5", ["nogil"]),
    variant("313tp", "3.13.5", ["nogil", "pgo"]),
]


def by_factors(cells: list[fx.Cell]) -> dict[str, str]:
    return {",".join(c.factors): c.variant for c in cells}


def test_every_built_combination_is_a_cell_and_3_11_without_the_gil_is_left_out() -> None:
    cells, missing = fx.design_cells(ALL)
    assert by_factors(cells) == {
        "": "311", "py_pgo=on": "311p", "py=3.13": "313", "py=3.13,py_pgo=on": "313p",
        "py=3.13,py_gil=off": "313t", "py=3.13,py_gil=off,py_pgo=on": "313tp",
    }  # fmt: skip
    assert len(missing) == 2 and all("no free-threaded build" in m for m in missing)
    # every cell names every axis: none runs perflab's own interpreter
    assert all(len(c.treat) == 3 for c in cells)
    assert fx.analysis_factors(cells) == ["py=3.13", "py_gil=off", "py_pgo=on"]


def test_the_nested_design_says_what_it_can_estimate() -> None:
    lines = fx.estimability(fx.design_cells(ALL)[0])
    assert "py_gil=off: estimable (at py=3.13 only)" in lines
    assert "py=3.13: estimable (without py_gil=off only)" in lines
    assert "py_pgo=on: estimable" in lines
    assert "py=3.13 × py_pgo=on: estimable" in lines
    assert any(ln.startswith("py=3.13 × py_gil=off: aliased") for ln in lines)


def test_a_variant_not_built_is_left_out_with_its_build_command_and_its_axis_drops() -> None:
    cells, missing = fx.design_cells([v for v in ALL if "pgo" not in v["flags"]])
    assert fx.analysis_factors(cells) == ["py=3.13", "py_gil=off"]
    assert any("--version 3.13 --from-debian --no-gil --pgo`" in m for m in missing)


def test_a_jit_variant_adds_the_jit_axis() -> None:
    cells, _ = fx.design_cells([*ALL, variant("313j", "3.13.5", ["jit"])])
    assert by_factors(cells)["py=3.13,py_jit=on"] == "313j"
    assert "py_jit=on" in fx.analysis_factors(cells)
    assert "py_jit" not in fx.design_axes(ALL)


def runs(cells: list[fx.Cell], truth: dict[str, float], reps: int, tasks: int) -> pd.DataFrame:
    """Campaign-like runs: the campaign's sets in ``treatments``, planted effects."""
    rng = np.random.default_rng(1)
    rows: list[dict[str, Any]] = []
    for _ in range(reps):
        for c in cells:
            y = 1000.0 + sum(truth.get(f, 0.0) for f in c.factors) + rng.normal(0, 5)
            rows.append({"status": "ok", "treatments": ",".join(reversed(c.treat)),
                         "us_per_task": y, "cpu_user_s": y * tasks / 2e6,
                         "cpu_sys_s": y * tasks / 2e6, "timestamp": float(len(rows)),
                         "error": None, "py=3.11": 0})  # fmt: skip
    return pd.DataFrame(rows)


def test_runs_become_two_level_factors_and_the_analysis_finds_the_planted_effects() -> None:
    cells, _ = fx.design_cells(ALL)
    truth = {"py=3.13": -100.0, "py_gil=off": 300.0, "py_pgo=on": -150.0}
    df = fx.analysis_frame(runs(cells, truth, 3, 200), cells, 200)
    assert "py=3.11" not in df.columns  # the campaign's own level columns are gone
    assert set(df["treatments"]) == {",".join(c.factors) for c in cells}
    np.testing.assert_allclose(df["cpu_us_per_task"], df["us_per_task"], rtol=1e-9)
    meta = fx.study_meta(cells)
    assert ("py_gil=off", "py=3.13") in meta.requires and len(meta.requires) == 1
    result, text = fx.analyse(df, cells, "us_per_task")
    for f, effect in truth.items():
        got = result["factors"][f]
        assert got["ci_low"] <= effect <= got["ci_high"], (f, got)
    assert "| py=3.13 × py_gil=off | — | — .. — | — | aliased |" in text
    assert "Nice path: baseline" in text


def test_a_run_outside_the_design_is_refused() -> None:
    cells, _ = fx.design_cells(ALL)
    df = runs(cells[:1], {}, 1, 10)
    df.loc[0, "treatments"] = "py=3.12"
    with pytest.raises(fx.PerflabError, match="not one of the design's cells"):
        fx.analysis_frame(df, cells, 10)
