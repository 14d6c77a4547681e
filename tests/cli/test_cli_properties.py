"""Every verb's options, drawn (hypothesis): hostile numbers, strings and paths for each
option by its type, against a store made before. Whatever the draw, the answer is exit 0,
1 or 2 with one line, never a traceback or exit 3, and exit 2 leaves the store as it was
(issue 43). Nothing starts (see ``cliprops``)."""

from __future__ import annotations

import subprocess

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cliprops import examples, run_in, workdir
from conftest import perflab
from perflab.cli.app import load_all, main

INTS = ["0", "1", "3", "-1", "-7", "99999999999999999999999", "x", "", "1.5", "nan", "1e3"]
FLOATS = ["0", "0.5", "3", "-1", "1e308", "1e-320", "nan", "inf", "-inf", "x", "", "1e999"]
#: Relative paths only: an output option must never name a device or a system file.
PATHS = ["nope/x.csv", "", ".", "dir", "garbage.txt", "bad.py", "noconfig.py", "s.db",
         "empty.csv", "data.csv", "catalog.toml", "dir/../nope", "-", "n" * 300]  # fmt: skip
TEXTS = ["", " ", "a", "a,b", "a=1", "=", "a=b=c", ",", "nan", "-1", "0", "\x1b[31mred",
         "é", "a" * 300, "../..", "%s", "{}", "\n", "1e999", "c1", "d1", "parsl", "x;y",
         "a,,b", "noop", "random", "1..4", "2024.1.1", "us_per_task"]  # fmt: skip
NAMES = ["c1", "d1", "nope", "", "a b", "../x", "x" * 120, "data.csv", "-", "garbage.txt"]


def leaves() -> list[tuple[str, ...]]:
    """Every command that does something (not a group), by its path; old spellings left out
    (they are the same commands)."""
    load_all()
    out: list[tuple[str, ...]] = []

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(cmd, click.Group):
            for name, sub in sorted(cmd.commands.items()):
                if not (sub.hidden and not path):  # seed001, calibrate, metg …
                    walk(sub, (*path, name))
        else:
            out.append(path)

    walk(main, ())
    return out


def command(path: tuple[str, ...]) -> click.Command:
    cmd: click.Command = main
    for name in path:
        assert isinstance(cmd, click.Group)
        found = cmd.get_command(click.Context(cmd), name)
        assert found is not None
        cmd = found
    return cmd


def values(param: click.Parameter) -> st.SearchStrategy[str]:
    t = param.type
    if isinstance(t, click.Choice):
        return st.sampled_from([*map(str, t.choices), "nope", ""])
    if isinstance(t, click.types.IntParamType):
        return st.one_of(st.sampled_from(INTS), st.integers(-(10**6), 10**6).map(str))
    if isinstance(t, click.types.FloatParamType):
        return st.one_of(st.sampled_from(FLOATS), st.floats().map(repr))
    if isinstance(t, click.Path):
        return st.sampled_from(PATHS)
    if isinstance(param, click.Argument):
        return st.sampled_from(NAMES + PATHS)
    return st.one_of(st.sampled_from(TEXTS), st.text(max_size=12).filter(lambda s: "\0" not in s))


@st.composite
def argv(draw: st.DrawFn, path: tuple[str, ...]) -> list[str]:
    """The command's arguments and up to four of its options, each with a drawn value."""
    cmd = command(path)
    args = [*path]
    for p in cmd.params:
        if isinstance(p, click.Argument):
            args.append(draw(values(p)))
    options = [p for p in cmd.params if isinstance(p, click.Option) and not p.hidden]
    drawn = st.lists(st.sampled_from(options), max_size=4, unique_by=lambda p: p.name)
    for p in draw(drawn) if options else []:
        # the current spelling: an old one (tests/cli/test_old_spellings.py) adds its line
        flag = [o for o in p.opts if o not in getattr(p, "old", ())][-1]
        if p.is_flag:
            args.append(flag)
        else:
            args += [flag, draw(values(p))]
    # a verb that keeps data gets the store made before, unless the draw names one
    if "--store" in [o for p in options for o in p.opts] and "--store" not in args:
        args += ["--store", "s.db"]
    return args


VERBS = leaves()
#: Examples per verb (default profile): 26 verbs x 10 = 260 in-process invocations.
PER_VERB = 10


@pytest.mark.parametrize("path", VERBS, ids=[" ".join(p) for p in VERBS])
def test_any_options_of_any_verb_give_an_exit_code_and_one_line(path: tuple[str, ...]) -> None:
    wd = workdir()

    @examples(PER_VERB)
    @given(args=argv(path))
    def prop(args: list[str]) -> None:
        run_in(wd, args)

    prop()


# Found by the properties above, each kept as an example of its own.
@pytest.mark.parametrize(
    "args",
    [
        # click's usage errors were three lines, the usage first
        ["campaign", "create", "x", "--runs", "x"],
        ["--bogus"],
        ["analyze", "d1", "--nope"],
        # a seed below 0 reached numpy, one above 2^63 - 1 SQLite: internal errors
        ["analyze", "d1", "--seed", "-1"],
        ["campaign", "create", "x", "--command", "echo 1", "--factors", "a", "--seed", "-1"],
        ["campaign", "create", "x", "--command", "echo 1", "--factors", "a", "--seed",
         str(2**64)],
    ],
)  # fmt: skip
def test_found_usage_errors_are_one_line(args: list[str]) -> None:
    out = run_in(workdir(), [*args, "--store", "s.db"] if args[0] != "--bogus" else args)
    assert out.code == 2 and "(see perflab" in out.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        # a name past NAME_MAX: OSError from is_dir, an internal error
        (["run", "--command", "echo 1", "--source", "a" * 300], "--source"),
        # inf tasks per point: OverflowError from ceil
        (["zoo", "--point-s", "1e308", "--store", "s.db"], None),
        (["zoo", "--point-s", "inf", "--store", "s.db"], "--point-s"),
        # the first progress line came before the check
        (["study", "job-submission", "table", "--timeout", "0"], "--timeout"),
        (["campaign", "run", "d1", "--store", "s.db"], "imported"),
        (["profile", "-t", "nope"], "nope"),
        # an output folder that is a file: FileExistsError
        (["study", "postprocess", "run", "x", "-o", "garbage.txt"], "garbage.txt"),
        # a plan of 10^11 runs was built in memory (a hang), a scale of 10^11 overflowed a clock
        (
            [
                "campaign",
                "create",
                "x",
                "--command",
                "echo 1",
                "--factors",
                "a",
                "--runs",
                "99999999999",
                "--store",
                "s.db",
            ],
            "--runs",
        ),
        (
            [
                "campaign",
                "create",
                "x",
                "--command",
                "echo 1",
                "--factors",
                "a,b,c,d,e,f,g,h",
                "--runs",
                "9999",
                "--design-opt",
                "runs=200",
                "--store",
                "s.db",
            ],
            "1,000,000",
        ),
        (["zoo", "--runs", "99999", "--store", "s.db"], "1,000,000"),
        (["study", "postprocess", "run", "x", "--scale", "99999999999"], "--scale"),
        # the parsl runner's missing config came after the progress bar
        (["campaign", "run", "c1", "--runner", "parsl", "--store", "s.db"], "Parsl config"),
        # an empty plan: IndexError
        (["zoo", "--workloads", "", "--store", "s.db"], "--workloads"),
        # the first stage was stored before the runner's name was looked up
        (
            [
                "tune",
                "t",
                "--command",
                "echo 1",
                "--factors",
                "a",
                "--runner",
                "",
                "--store",
                "s.db",
            ],
            "runner",
        ),
    ],
)
def test_found_bad_input_is_one_line(args: list[str], fragment: str | None) -> None:
    out = run_in(workdir(), args)
    assert out.would_run or out.code == 2, out.stderr
    assert fragment is None or fragment in out.stderr


def test_analyze_without_every_factor_is_one_line() -> None:
    # found by the properties: analysis/deltas.py concatenated no frames
    out = run_in(workdir(), ["analyze", "d1", "--without", "a,b", "--store", "s.db"])
    assert out.code == 2 and "leaves no factor" in out.stderr, out.stderr


def test_a_patch_that_is_not_text_is_one_line() -> None:
    # found by the properties: factors/patching.py read a diff as UTF-8 without a guard
    out = run_in(workdir(), ["compare", "--patch", "garbage.txt"])
    assert out.code == 2 and "not a text diff" in out.stderr, out.stderr


def test_in_process_answers_are_the_entry_points() -> None:
    """CliRunner is what the property tests drive; the real ``perflab`` gives the same exit
    codes and the same single line for a sample of refusals and successes."""
    wd = workdir()
    cases = [
        ["campaign", "status", "nope", "--store", "s.db"],
        ["campaign", "create", "x", "--command", "echo 1", "--factors", "a", "--design",
         "fractional", "--design-opt", "resolution=99", "--store", "s.db"],
        ["campaign", "list", "--store", "s.db", "--json"],
        ["--bogus"],
    ]  # fmt: skip
    for args in cases:
        inproc = run_in(wd, args)
        wd.fresh()
        real: subprocess.CompletedProcess[str] = perflab(
            *args, cwd=wd.path, env={"PERFLAB_HOME": str(wd.home)}
        )
        assert real.returncode == inproc.code, (args, real.stderr, inproc.stderr)
        # the same line, but for the program's name (``python -m perflab`` there)
        first = [ln.split(" (see ")[0] for ln in real.stderr.strip().splitlines()[:1]]
        assert first == [ln.split(" (see ")[0] for ln in inproc.stderr.strip().splitlines()[:1]]
