"""``perflab interpreters build|list``: CPython variants built from source, the levels of the
factors ``py``, ``py_gil``, ``py_jit`` and ``py_pgo`` (docs/interpreters.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from perflab.cli.app import main, progress
from perflab.errors import PerflabError


@main.group("interpreters")
def interpreters_group() -> None:
    """CPython built from source (free-threaded, JIT, PGO, LTO) as interpreter factors."""


@interpreters_group.command("build")
@click.option("--source", type=click.Path(), help="A CPython source folder or tarball.")
@click.option("--version", help="With --from-debian: the minor version (3.11, 3.13).")
@click.option("--from-debian", is_flag=True, help="Fetch the source from Debian's archive.")
@click.option("--no-gil", is_flag=True, help="Free-threaded (--disable-gil).")
@click.option("--jit", is_flag=True, help="The experimental JIT (needs LLVM 18 for 3.13).")
@click.option("--pgo", is_flag=True, help="Profile-guided (--enable-optimizations).")
@click.option("--lto", is_flag=True, help="Link-time optimisation (--with-lto).")
@click.option("--jobs", "-j", type=int, default=2, show_default=True, help="make -jN.")
@click.option("--nice", type=int, default=15, show_default=True, help="Build under nice -n N.")
@click.option("--profile-task", help="PGO's training run (PROFILE_TASK), shorter than CPython's.")
@click.option("--json", "as_json", is_flag=True, help="Print the variant as JSON.")
def build_cmd(**o: Any) -> None:
    """Configure, make and install one variant into the cache (reused when built)."""
    from perflab.factors.kinds.pybuild import cache_root
    from perflab.files import private_dir
    from perflab.prepare.debian_source import debian_tarball, suite_for
    from perflab.prepare.interp_build import BuildFailed, BuildRequest, build

    if bool(o["source"]) == bool(o["from_debian"]):
        raise PerflabError("interpreters build: give --source DIR|TARBALL or --from-debian")
    if o["from_debian"] and not o["version"]:
        raise PerflabError("interpreters build --from-debian: give --version (3.11 or 3.13)")
    if o["source"]:
        source = Path(o["source"]).expanduser().resolve()
    else:
        suite_for(o["version"])  # bad input before anything is fetched or made
        progress(f"fetching python{o['version']}'s source from Debian")
        source = debian_tarball(o["version"], private_dir(cache_root()))
    flags = tuple(f for f in ("nogil", "jit", "pgo", "lto") if o["no_gil" if f == "nogil" else f])
    req = BuildRequest(source, flags, o["jobs"], o["nice"], o["profile_task"])
    try:
        info = build(req, say=progress)
    except BuildFailed as exc:  # the build's failure, not bad input: exit 1, with the tail
        click.echo(f"perflab: {exc.what}; its last lines:\n{exc.tail}", err=True)
        sys.exit(1)
    if o["as_json"]:
        click.echo(json.dumps(info, indent=1))
        return
    took = sum(info.get("seconds", {}).values())
    state = "already built" if info["cached"] else f"built in {took:.0f} s"
    click.echo(f"{info['key']}: {state}; python {info['python']}")


@interpreters_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the variants as JSON.")
def list_cmd(as_json: bool) -> None:
    """The variants built, with their flags, build times and interpreter."""
    from perflab.factors.kinds.pybuild import built_variants, cache_root

    variants = built_variants()
    if as_json:
        click.echo(json.dumps({"cache": str(cache_root()), "variants": variants}, indent=1))
        return
    if not variants:
        click.echo(f"no interpreters built in {cache_root()} (perflab interpreters build)")
        return
    for v in variants:
        secs = v.get("seconds", {})
        took = " + ".join(f"{k} {s:.0f} s" for k, s in secs.items())
        flags = ",".join(v.get("flags", [])) or "default"
        click.echo(f"{v['key']}  {v['version']}  {flags}  ({took})  {v.get('python')}")
