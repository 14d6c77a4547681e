"""Package requirements as a factor or a compare side names them: checked here, where the
catalog reads them, and installed by ``prepare/venvs.py``, which needs them valid."""

from __future__ import annotations

import os
import re
from pathlib import Path

from perflab.errors import PerflabError

#: ``name``, ``name==1.2`` (also >=, <=, ~=, !=): what a requirement may look like here.
REQ_RE = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?((==|>=|<=|~=|!=)[A-Za-z0-9.*+!_-]+)?$"
)


def requirement_name(req: str) -> str:
    """The distribution name a requirement is about (a source tree: its folder's name)."""
    if os.sep in req:
        return Path(req).name.lower()
    return re.split(r"[\[=<>~!]", req, maxsplit=1)[0].strip().lower().replace("_", "-")


def check_requirement(req: str) -> str:
    """``NAME``, ``NAME==VERSION`` (or another comparison), or a local source tree (a
    directory with pyproject.toml or setup.py, made absolute)."""
    if os.sep in req or req.startswith("."):
        path = Path(req).expanduser().resolve()
        if not ((path / "pyproject.toml").is_file() or (path / "setup.py").is_file()):
            raise PerflabError(f"source tree {req}: no pyproject.toml or setup.py there")
        return str(path)
    req = req.replace(" ", "")
    if not REQ_RE.match(req):
        raise PerflabError(f"package requirement {req!r} is not NAME or NAME==VERSION")
    return req
