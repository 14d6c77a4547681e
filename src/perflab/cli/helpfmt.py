"""Short, grouped ``--help`` for every verb, ``--help-all`` for the rest, and the
``--fast``/``--rigorous`` presets (issue 51).

One table (``GROUPS``) says which group each shared option is shown in; an option it does
not name is the verb's own and comes first. Options of the group ``ADVANCED`` (the ~20 run
options every measuring verb shares: ``--arg-bytes``, ``--task-ms`` …) are shown only by
``--help-all``, so a verb's ``--help`` fits a screen (50 lines at 80 columns, a test walks
every verb). The table may name options no verb has yet: a name only groups what exists.

This module imports click alone: ``cli/app.py`` builds its command group from it. A preset's
line is said once the verb is past its checks (``said_first``), so bad input stays one line.
"""

from __future__ import annotations

import fnmatch
import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import click
from click.core import ParameterSource

#: ``ctx.meta``'s key: True while ``--help-all`` prints (every option, the registries' names).
HELP_ALL = "perflab.help_all"
#: ``ctx.meta``'s key: the line ``--fast``/``--rigorous`` says, until the verb runs.
PRESET_SAID = "perflab.preset_said"
#: Options shown only by ``--help-all``.
ADVANCED = "Advanced (shown by --help-all)"
MEASURE, PRECISE, OUTPUT = "What to measure", "How precisely", "Output"
#: The groups after the verb's own options, in the order ``--help`` prints them.
ORDER = (MEASURE, PRECISE, OUTPUT, ADVANCED)

#: Option (its long name, or a glob of long names) -> the group it is shown in. The new names
#: of issue 51's vocabulary are listed beside the old ones, so the table holds while both
#: exist; an option named in none of it is the verb's own.
GROUPS: dict[str, str] = {
    **dict.fromkeys(
        ("--benchmark", "--target", "--workload", "--tasks",
         "--command", "--treat", "--package", "--repo", "--range", "--source",
         "--metric", "--by", "--engine-config", "--runner-config"),
        MEASURE,
    ),
    **dict.fromkeys(
        ("--fast", "--rigorous", "--runs", "--precision", "--alpha", "--min-effect",
         "--efficiency", "--threshold"),
        PRECISE,
    ),
    **dict.fromkeys(("--json", "--output", "--store", "--markdown"), OUTPUT),
    **dict.fromkeys(
        ("--warmup", "--arg-bytes", "--task-ms", "--task-us", "--param", "--workers", "--opt",
         "--timeout", "--run-root", "--keep-run-dir", "--graceful", "--allow-insecure",
         "--catalog", "--parsl-config", "--isolate", "--max-time", "--seed", "--update-parts",
         "--time",
         "--help-all", "--config", "--unpaired", "--min-runs", "--fixed", "--python", "--patch",
         # verbs' own details: the defaults suit a first use
         "--screen-runs", "--config-class", "--safety", "--screen-alpha", "--hunk-groups",
         "--max-culprits", "--build", "--search", "--splits", "--simulations", "--effect",
         "--fixed-levels", "--point-s", "--kernel", "--metg-tasks", "--basis",
         "--wf-task-ms", "--dag-task-us", "--recipes", "--wf-sizes", "--probe-timeout",
         # compare's one-side forms (--treat-b, --python-a …): the shared form is shown
         "--*-a", "--*-b"),
        ADVANCED,
    ),
}  # fmt: skip

#: The most lines a verb's ``--help`` may take at 80 columns (a test holds every verb to it).
MAX_HELP_LINES = 50

#: What ``--fast`` and ``--rigorous`` set, per verb (its command path after ``perflab``):
#: parameter name -> value. Each is set only where the user gave that option no value.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "run": {"fast": {"runs": 3}, "rigorous": {"runs": 10}},
    "compare": {"fast": {"runs": 6, "alpha": 0.05}, "rigorous": {"runs": 30, "alpha": 0.01}},
    "bisect": {"fast": {"runs": 6, "alpha": 0.05}, "rigorous": {"runs": 30, "alpha": 0.01}},
    "history": {"fast": {"runs": 2, "alpha": 0.05}, "rigorous": {"runs": 10, "alpha": 0.01}},
    "explain": {"fast": {"runs": 3, "alpha": 0.05}, "rigorous": {"runs": 12, "alpha": 0.01}},
    "tune": {"fast": {"pairs": 4}, "rigorous": {"pairs": 16}},
    "campaign create": {"fast": {"runs": 1}, "rigorous": {"runs": 3}},
}


def group_of(param: click.Parameter) -> str | None:
    """The group ``GROUPS`` puts ``param`` in, None for the verb's own."""
    for name in [o for o in param.opts if o.startswith("--")]:
        if name in GROUPS:
            return GROUPS[name]
        for pattern, group in GROUPS.items():
            if "*" in pattern and fnmatch.fnmatchcase(name, pattern):
                return group
    return None


def _help_all(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    ctx.meta[HELP_ALL] = True
    click.echo(ctx.get_help(), color=ctx.color)
    ctx.exit()


class HelpCommand(click.Command):
    """A verb whose ``--help`` shows its own options first, then the shared ones in the
    groups of ``GROUPS``, leaving out the advanced ones (``--help-all`` shows every option);
    and whose ``--fast``/``--rigorous`` (``preset_options``) set the values of ``PRESETS``."""

    _help_all_option: click.Option | None = None

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        if self._help_all_option is None:  # one object: click orders callbacks by identity
            self._help_all_option = click.Option(
                ["--help-all"], is_flag=True, expose_value=False, is_eager=True,
                callback=_help_all, help="Show every option, the advanced ones too.",
            )  # fmt: skip
        return [*params, self._help_all_option]

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        full = bool(ctx.meta.get(HELP_ALL))
        sections: dict[str | None, list[tuple[str, str]]] = {}
        hidden = 0
        for param in self.get_params(ctx):
            if isinstance(param, click.Argument):
                continue
            group = group_of(param)
            if group == ADVANCED and not full:
                hidden += param is not self._help_all_option and not getattr(param, "hidden", 0)
                continue
            record = _record(param, ctx, full)
            if record is not None:
                sections.setdefault(group, []).append(record)
        for group in (None, *ORDER):
            if sections.get(group):
                with formatter.section(group or "Options"):
                    formatter.write_dl(sections[group])
        if hidden:
            formatter.write_paragraph()
            more = f"{hidden} more option{'s' * (hidden > 1)}"
            formatter.write_text(f"{more}: {ctx.command_path} --help-all")

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        own = self.help
        if not ctx.meta.get(HELP_ALL) and own:
            self.help = describe(own)
        try:
            super().format_help_text(ctx, formatter)
        finally:
            self.help = own

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        apply_preset(ctx)
        return rest

    def invoke(self, ctx: click.Context) -> Any:
        line = ctx.meta.pop(PRESET_SAID, None)
        if line is None:
            return super().invoke(ctx)
        with said_first(line):
            return super().invoke(ctx)


def _record(param: click.Parameter, ctx: click.Context, full: bool) -> tuple[str, str] | None:
    """``param``'s help line: its whole help with ``--help-all``, else its ``brief``."""
    own = getattr(param, "help", None)
    if full or not own:
        return param.get_help_record(ctx)
    param.help = brief(own)
    try:
        return param.get_help_record(ctx)
    finally:
        param.help = own


#: An option's help longer than this (about two lines of ``--help``) is cut by ``brief``.
BRIEF_CHARS = 100


def brief(text: str, chars: int = BRIEF_CHARS) -> str:
    """The head of an option's help that ``--help`` shows: its first sentence; of a long one,
    the part before its first colon or semicolon (outside brackets), then before its first
    bracket. ``--help-all`` shows the whole."""
    text = " ".join(text.split())
    head = _cut(text, ".!?", 0)
    if len(head) > chars:
        head = _cut(head, ":;", 25)
    if len(head) > chars and (at := head.find(" (", 25)) > 0:
        head = head[:at]
    return head if head == text or head.endswith((".", "!", "?")) else f"{head} …"


#: A verb's description longer than this (about four lines of ``--help``) is cut by
#: ``describe``.
DESCRIPTION_CHARS = 300


def describe(text: str) -> str:
    """The head of a verb's description that ``--help`` shows: its first paragraph's
    sentences up to ``DESCRIPTION_CHARS`` (the first one at least, itself cut as ``brief``
    cuts an option's help when it is longer). ``--help-all`` shows the whole."""
    first, _, rest = inspect.cleandoc(text).partition("\n\n")
    flat = " ".join(first.split())
    if len(flat) <= DESCRIPTION_CHARS:
        return flat if not rest.strip() else f"{flat} …"
    out = ""
    while flat:
        sentence = _cut(flat, ".!?", 0)
        if out and len(out) + len(sentence) >= DESCRIPTION_CHARS:
            break
        out, flat = f"{out} {sentence}".strip(), flat[len(sentence) :].strip()
    if len(out) > DESCRIPTION_CHARS:
        return brief(out, DESCRIPTION_CHARS)
    return f"{out} …"


def _cut(text: str, marks: str, least: int) -> str:
    """``text`` up to its first of ``marks`` (followed by a space) outside brackets, at
    ``least`` characters in; "e.g." and "i.e." are not sentence ends."""
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch in "([{") - (ch in ")]}")
        if (
            depth == 0 and ch in marks and i >= least and text[i + 1 : i + 2] in (" ", "")
            and not text[max(0, i - 3) : i + 1].endswith(("e.g.", "i.e."))
        ):  # fmt: skip
            return text[: i + 1] if ch in ".!?" else text[:i]
    return text


class HelpGroup(click.Group):
    """A group of verbs (``campaign``, ``factors`` …) whose verbs are ``HelpCommand``s."""

    command_class = HelpCommand
    group_class = type  # its own groups are HelpGroups too


def preset_options(f: Any) -> Any:
    """``--fast`` and ``--rigorous`` on a measuring verb (its values in ``PRESETS``)."""
    for flag, what in (
        ("--rigorous", "more runs, a stricter alpha"),
        ("--fast", "fewer runs, a quick look"),
    ):
        f = click.option(flag, is_flag=True, help=f"Preset: {what}. It says what it sets; "
                         "an option you give wins.")(f)  # fmt: skip
    return f


def apply_preset(ctx: click.Context) -> None:
    """Set the values of ``--fast``/``--rigorous`` (if given) that the user left unset, and
    say on stderr what was set; drop the two flags from the verb's keyword arguments."""
    fast, rigorous = ctx.params.pop("fast", False), ctx.params.pop("rigorous", False)
    if fast and rigorous:
        raise click.UsageError("give --fast or --rigorous, not both", ctx)
    if not (fast or rigorous):
        return
    name = "fast" if fast else "rigorous"
    verb = ctx.command_path.partition(" ")[2]
    values = PRESETS.get(verb, {}).get(name, {})
    flags = {p.name: next((o for o in p.opts if o.startswith("--")), p.opts[0])
             for p in ctx.command.params}  # fmt: skip
    unset = (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)
    planned = ctx.get_parameter_source("precision_target") not in unset
    said, kept = [], []
    for key, value in values.items():
        if key not in ctx.params:
            continue
        if ctx.get_parameter_source(key) not in unset:
            kept.append(flags[key])
        elif key == "runs" and planned:
            kept.append("--runs (planned by --precision)")
        else:
            ctx.params[key] = value
            said.append(f"{flags[key]} {value:g}")
    line = f"--{name} sets {', '.join(said) or 'nothing'}"
    # said once the verb is past its checks (``said_first``): bad input stays one line
    ctx.meta[PRESET_SAID] = f"perflab: {line}" + (f"; yours kept: {', '.join(kept)}" if kept
                                                  else "")  # fmt: skip


class _SayFirst:
    """A text stream that has ``say`` write its pending line before its first text."""

    def __init__(self, stream: TextIO, say: Callable[[], None]) -> None:
        self._stream, self._say = stream, say

    def write(self, text: str) -> int:
        if text:  # click probes a stream with an empty write
            self._say()
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def said_first(line: str) -> Iterator[None]:
    """Write ``line`` to stderr before the first thing the verb writes (to stdout or stderr),
    or as it ends having written nothing; never when it ends in bad input (exit 2), whose
    one line is its error: a preset's line is said once the verb is past its checks, which
    come before anything is run or printed."""
    pending = [line]
    out, err = sys.stdout, sys.stderr

    def say() -> None:
        if pending:
            err.write(pending.pop() + "\n")

    sys.stdout, sys.stderr = _SayFirst(out, say), _SayFirst(err, say)
    try:
        yield
    except BaseException as exc:
        if getattr(exc, "exit_code", getattr(exc, "code", None)) != 2:
            say()
        raise
    else:
        say()
    finally:
        sys.stdout, sys.stderr = out, err
