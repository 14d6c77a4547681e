"""What the user steers in a report: terminal tables that fit 80 columns without cutting a
name (``--wide`` for every column), and before/after scatters of any factor coloured by any
other (``--before-after FACTOR[:COLOUR_BY]``, in the CLI and the Python API)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from conftest import perflab
from perflab.analysis import analyze, synthetic
from perflab.analysis.data import from_frame
from perflab.report.html import write_report
from perflab.report.terminal import print_analysis

#: Long names like the catalog's, for the synthetic truth's roles (f03: state-dependent).
LONG = {
    "f00": "cfg_noop_logging",
    "f01": "src_submit_biglogs_remove",
    "f02": "cfg_rundir_ramfs_with_a_longer_name",
    "f03": "affinity",
    "f04": "cfg_prefetch",
}


def _long_named(runs: int, seed: int = 0, replicates: int = 1, k: int = 5):  # type: ignore[no-untyped-def]
    df = synthetic.generate(runs, k=k, seed=seed, replicates=replicates)
    return df.rename(columns=LONG)


def _terminal(a: dict, capsys: pytest.CaptureFixture[str], wide: bool = False) -> str:
    print_analysis(a, wide)
    return capsys.readouterr().out


def test_tables_fit_80_columns_and_keep_every_name_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = analyze(from_frame(_long_named(96, seed=1, replicates=3))).to_json()
    assert [r for r in a["interactions"] if r["effect_us"] is not None]  # both tables shown
    monkeypatch.setenv("COLUMNS", "80")
    out = _terminal(a, capsys)
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 80
    assert "…" not in out
    table_lines = [line for line in out.splitlines() if line.startswith("│")]
    for name in LONG.values():  # whole, on one line of a table
        assert any(f" {name} " in line for line in table_lines), name
    for claim in {v["claim"] for v in a["factors"].values()}:
        for word in claim.split():
            assert word in out
    flat = " ".join(out.split())
    assert "left out to fit 80 columns: category, mean delta" in flat
    assert "--wide shows every column" in flat
    wide = _terminal(a, capsys, wide=True)
    for header in ("category", "mean delta", "p (Holm)", "95% CI"):
        assert header in wide
    assert "significant after correction" in wide or "exploratory" in wide
    assert "left out" not in wide


def test_before_after_of_a_state_dependent_factor_draws_the_seeds_picture(
    tmp_path: Path,
) -> None:
    """affinity (the truth's f03) saves 100 µs on a slow set and costs 50 on a fast one:
    coloured by cfg_noop_logging (f00, which makes sets fast), the scatter shows the
    no-logging pairs below the diagonal (helped) and the logging-removed ones above it."""
    df = _long_named(1000, seed=3, k=8)  # ~250 distinct sets: ~120 pairs per factor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = from_frame(df)
        html = write_report(
            ds,
            df,
            tmp_path / "r",
            "state",
            before_after=[("affinity", "cfg_noop_logging"), ("cfg_prefetch", None)],
        )
    page = html.read_text()
    name = "4_before_after_affinity_by_cfg_noop_logging"
    assert f'id="{name}"' in page and 'id="4_before_after_cfg_prefetch"' in page
    assert (tmp_path / "r" / "figures" / f"{name}.png").stat().st_size > 10_000
    # what the figure draws: the exact pairs of affinity, split by the colour
    from perflab.analysis.deltas import deltas

    d = deltas(ds)
    d = d[d["factor"] == "affinity"]
    # slow: without cfg_noop_logging (truth >= 600 µs); fast: with the three savers (450 µs)
    slow = d[~d["had_cfg_noop_logging"]]
    fast = d[
        d["had_cfg_noop_logging"]
        & d["had_src_submit_biglogs_remove"]
        & d["had_cfg_rundir_ramfs_with_a_longer_name"]
    ]
    assert len(slow) > 40 and len(fast) > 10
    assert (slow["after"] < slow["before"]).mean() > 0.8  # helps slow sets: the "no" colour
    assert (fast["after"] > fast["before"]).mean() > 0.7  # hurts fast ones, all "yes"
    assert slow["before"].mean() > fast["before"].mean() + 300


def test_bad_before_after_choices_are_one_line_exit_2_and_write_nothing(tmp_path: Path) -> None:
    csv = tmp_path / "d.csv"
    _long_named(60).to_csv(csv, sep=";", index=False)
    for spec, says in (
        ("nosuch:affinity", "'nosuch' is not among the analysed factors"),
        ("affinity:nosuch", "'nosuch' is not among the analysed factors"),
        ("affinity:", "expected FACTOR or FACTOR:COLOUR_BY"),
        ("affinity:affinity", "colour by another factor"),
    ):
        out = tmp_path / "out"
        proc = perflab("report", str(csv), "-o", str(out), "--before-after", spec)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0], proc.stderr
        assert not out.exists()
