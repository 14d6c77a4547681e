"""Every verb's ``--help`` fits a screen, grouped, and ``--help-all`` shows every option
(cli/helpfmt.py, issue 51)."""

from __future__ import annotations

from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from perflab.cli.app import load_all, main, verb_modules
from perflab.cli.helpfmt import (
    ADVANCED,
    DESCRIPTION_CHARS,
    GROUPS,
    MAX_HELP_LINES,
    brief,
    describe,
    group_of,
)


def _verbs() -> Iterator[tuple[list[str], click.Command]]:
    load_all()

    def walk(cmd: click.Command, path: list[str]) -> Iterator[tuple[list[str], click.Command]]:
        yield path, cmd
        if isinstance(cmd, click.Group):
            for name, sub in sorted(cmd.commands.items()):
                if not sub.hidden:
                    yield from walk(sub, [*path, name])

    return walk(main, [])


VERBS = list(_verbs())


def _help(path: list[str], flag: str) -> str:
    """``perflab PATH FLAG`` as printed on an 80-column terminal (click leaves 2 free)."""
    r = CliRunner().invoke(main, [*path, flag], prog_name="perflab", terminal_width=78)
    assert r.exit_code == 0, r.output
    return r.output


def test_the_walk_finds_every_verb() -> None:
    tops = {p[0] for p, _ in VERBS if p}
    old = {name for name, cmd in main.commands.items() if cmd.hidden}  # old spellings
    assert old >= {"seed001", "calibrate"} and set(verb_modules()) - old <= tops
    assert {"compare", "precision", "zoo", "campaign create"} <= {" ".join(p) for p, _ in VERBS}


@pytest.mark.parametrize("path", [p for p, _ in VERBS], ids=lambda p: " ".join(p) or "perflab")
def test_help_fits_a_screen_and_help_all_shows_every_option(path: list[str]) -> None:
    text = _help(path, "--help")
    assert max(len(line) for line in text.splitlines()) <= 80
    assert len(text.splitlines()) <= MAX_HELP_LINES, text
    cmd = dict((tuple(p), c) for p, c in VERBS)[tuple(path)]
    if isinstance(cmd, click.Group):
        return
    full = _help(path, "--help-all")
    ctx = click.Context(cmd, info_name=path[-1])
    for param in cmd.get_params(ctx):
        record = param.get_help_record(ctx)
        if isinstance(param, click.Option) and record is not None:
            shown = record[0].split(" ")[0].rstrip(",")
            assert shown in full, f"{' '.join(path)} --help-all lacks {shown}"
            if group_of(param) != ADVANCED:
                assert shown in text, f"{' '.join(path)} --help lacks {shown}"


def test_the_verbs_own_options_come_first_and_the_advanced_ones_only_in_help_all() -> None:
    own = _help(["tune"], "--help")
    assert own.index("--budget") < own.index("What to measure:") < own.index("--target")
    text = _help(["compare"], "--help")
    assert text.index("How precisely:") < text.index("Output:")
    assert "--arg-bytes" not in text and "--task-ms" not in text and "--treat-b" not in text
    assert "more options: perflab compare --help-all" in text
    full = _help(["compare"], "--help-all")
    assert "--arg-bytes" in full and "--treat-b" in full and ADVANCED in full
    assert "One of:" in full and "One of:" not in text  # the registries' names


def test_the_table_groups_old_and_new_names_alike() -> None:
    for old, new in (("--by", "--metric"), ("--threshold", "--min-effect")):
        assert GROUPS[old] == GROUPS[new]
    assert GROUPS["--parsl-config"] == ADVANCED and GROUPS["--engine-config"] != ADVANCED


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Runs in all. A recommendation takes more.", "Runs in all."),
        ("CI half-width to reach (e.g. 3%). More.", "CI half-width to reach (e.g. 3%)."),
        (
            "CI half-width to reach on the ratio (e.g. 3%): the window and the runs are planned "
            "from the stored parts (instead of --runs/--tasks)",
            "CI half-width to reach on the ratio (e.g. 3%) …",
        ),
        ("Short: kept whole", "Short: kept whole"),
    ],
)
def test_brief_keeps_the_head_of_an_options_help(text: str, want: str) -> None:
    assert brief(text) == want


def test_describe_keeps_whole_sentences_of_a_long_description() -> None:
    short = "Measure one run. Prints it."
    assert describe(short) == short and describe(f"{short}\n\nMore.") == f"{short} …"
    long = " ".join(f"Sentence number {i} says a little." for i in range(30))
    got = describe(long)
    assert len(got) <= DESCRIPTION_CHARS + 2 and got.endswith(". …") and long.startswith(got[:-2])
    one = "Search the best set within --budget runs (" + "x " * 200 + ") then stop."
    assert describe(one) == "Search the best set within --budget runs …"
    text = _help(["tune"], "--help")
    assert "Each stage is a campaign" not in text
    assert "Each stage is a campaign" in " ".join(_help(["tune"], "--help-all").split())


def test_factors_list_wraps_its_descriptions_at_80_columns() -> None:
    from perflab.factors.catalog import load_catalogs

    r = CliRunner().invoke(main, ["factors", "list"], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    assert max(len(line) for line in r.output.splitlines()) < 80
    flat = " ".join(r.output.split())
    for f in load_catalogs([]).nice_order(None):
        assert f.name in flat and " ".join(str(f.description).split()) in flat, f.name
