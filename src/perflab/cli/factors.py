"""``perflab factors``: the treatment-factor catalog."""

from __future__ import annotations

import json
import shutil
import textwrap
from typing import Any

import click

from perflab.cli.app import json_option, main, shown_warnings
from perflab.factors.catalog import Catalog, load_catalogs
from perflab.report.terminal import print_factors

catalog_option = click.option(
    "--catalog", "catalogs", multiple=True, type=click.Path(), help="Extra catalog (TOML)."
)


@main.group()
def factors() -> None:
    """Treatment factors: the built-in Parsl catalog plus any --catalog files."""


@factors.command("list")
@click.option("--target", "-t", help="Only factors that apply to this target.")
@click.option(
    "--for-command", "command", help="Probe this command once and list the built-in factors "
    "that can reach its program (docs/user-programs.md).",
)  # fmt: skip
@click.option("--probe-timeout", type=float, default=120.0, show_default=True,
              help="Seconds the probe run may take.")  # fmt: skip
@catalog_option
@json_option
def factors_list(
    target: str | None, command: str | None, probe_timeout: float,
    catalogs: tuple[str, ...], as_json: bool,
) -> None:  # fmt: skip
    """List factors, in the "nice" category order."""
    if command is not None:
        _list_for_command(command, probe_timeout, load_catalogs(list(catalogs)), as_json)
        return
    ordered = load_catalogs(list(catalogs)).nice_order(target)
    if as_json:
        click.echo(json.dumps({f.name: f.to_dict() for f in ordered}))
    elif shutil.get_terminal_size().columns >= TABLE_COLUMNS:
        print_factors(ordered)
    else:
        click.echo(wrapped(ordered, shutil.get_terminal_size().columns))


#: The narrowest terminal the table of ``factors list`` is printed on: narrower, its four
#: unwrapped columns left the descriptions no room at all (none were shown at 80 columns).
TABLE_COLUMNS = 140


def wrapped(factors: list[Any], width: int) -> str:
    """``factors list`` for a narrow terminal: a heading per category, then each factor's
    name and its description (with its kinds and levels) wrapped beside it to ``width``."""
    name_w = min(28, max((len(f.name) for f in factors), default=0)) + 2
    lines, category = [f"treatment factors ({len(factors)})"], None
    for f in factors:
        if f.category != category:
            category = f.category
            lines += ["", str(category)]
        what = ", ".join(f.kinds())
        if f.levels:
            what += "; levels: " + ", ".join(map(str, f.levels))
        text = f"{' '.join(str(f.description).split())} [{what}]"
        body = textwrap.wrap(text, max(30, width - name_w - 3), break_on_hyphens=False) or [""]
        head = f"  {f.name:<{name_w}}"
        if len(f.name) >= name_w:  # a long name has its own line
            lines.append(f"  {f.name}")
            head = " " * (name_w + 2)
        lines.append(head + body[0])
        lines += [" " * (name_w + 2) + b for b in body[1:]]
    return "\n".join(lines)


@factors.command("show")
@click.argument("name")
@catalog_option
def factors_show(name: str, catalogs: tuple[str, ...]) -> None:
    """Everything about one factor, as JSON."""
    click.echo(json.dumps(load_catalogs(list(catalogs)).get(name).to_dict(), indent=2))


@factors.group("generate")
def factors_generate() -> None:
    """Write catalogs from a package's source (one factor per call site)."""


@factors_generate.command("log-calls")
@click.option("--package", default="parsl", show_default=True, help="The package to read.")
@click.option(
    "--module", "module_glob", required=True, help="Module name or glob, e.g. parsl.dataflow.*"
)
@click.option("--levels", default="debug,info", show_default=True, help="Logger levels.")
@click.option("--source", "source", type=click.Path(), help="A source tree instead of the "
              "installed package.")  # fmt: skip
@click.option("-o", "--output", required=True, type=click.Path(), help="Catalog file to write.")
@catalog_option
@json_option
def factors_generate_log_calls(
    package: str, module_glob: str, levels: str, source: str | None, output: str,
    catalogs: tuple[str, ...], as_json: bool,
) -> None:  # fmt: skip
    """One factor per logger call, named by module, function and message (stable across
    releases), conflicting with the grouped factors that also remove it."""
    import sys
    from pathlib import Path

    from perflab.factors.generate import log_call_factors, to_toml
    from perflab.factors.sources import locate, tree_package
    from perflab.files import atomic_write

    lv = tuple(x.strip() for x in levels.split(",") if x.strip())
    pkg_dir, version = (
        tree_package(Path(source), package) if source else locate(package, sys.executable)
    )
    with shown_warnings():
        found = log_call_factors(pkg_dir, package, module_glob, lv, load_catalogs(list(catalogs)))
    atomic_write(output, to_toml(found, package, version, lv))
    summary = {"output": output, "package": package, "version": version,
               "factors": len(found), "calls": sum(len(f.sites) for f in found)}  # fmt: skip
    if as_json:
        click.echo(json.dumps(summary))
    else:
        click.echo(f"wrote {len(found)} factors ({summary['calls']} logger calls of "
                   f"{package} {version}) to {output}")  # fmt: skip


def _list_for_command(command: str, timeout_s: float, catalog: Catalog, as_json: bool) -> None:
    from perflab.run.probe import probe, reaching

    found = probe(command, timeout_s)
    reach = reaching(catalog, found)
    if as_json:
        factors = {f.name: {**f.to_dict(), "reaches": how} for f, how in reach}
        click.echo(json.dumps({"probe": found, "factors": factors}))
        return
    used = ", ".join(f"{p} {i['version'] or ''}".strip() for p, i in found["imports"].items())
    built = ", ".join(found["built"]) or "nothing the hook treats"
    click.echo(f"probe run: {found['status']} in {found['wall_s'] or 0:.1f}s; "
               f"imports {used or 'no task system'}; builds {built}")  # fmt: skip
    if found["status"] != "ok":
        click.echo(f"  ({(found['error'] or '').splitlines()[0]})")
    for f, how in reach:
        click.echo(f"  {f.name:32} {how}")
