"""A registry finds one plugin without importing the others, and names those that fail."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perflab.errors import PerflabError
from perflab.registry import Registry

GOOD = """
from toyplugins import TOYS

@TOYS.register
class Good:
    name = "good"
"""
NEEDS_MISSING = """
import no_such_module_here  # like numpy in a release's private venv

from toyplugins import TOYS

@TOYS.register
class Fancy:
    name = "fancy"
"""


@pytest.fixture
def toys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry[type]:
    pkg = tmp_path / "toyplugins"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from perflab.registry import Registry\nTOYS = Registry('toy', __name__)\n"
    )
    (pkg / "good.py").write_text(GOOD)
    (pkg / "fancy.py").write_text(NEEDS_MISSING)
    monkeypatch.syspath_prepend(str(tmp_path))
    import toyplugins

    yield toyplugins.TOYS
    for m in [m for m in sys.modules if m.startswith("toyplugins")]:
        del sys.modules[m]


def test_one_name_imports_only_its_module(toys: Registry[type]) -> None:
    assert toys.get("good").__name__ == "Good"
    assert "toyplugins.fancy" not in sys.modules and toys.broken == {}


def test_a_plugin_that_fails_to_import_is_skipped_and_named(toys: Registry[type]) -> None:
    assert toys.names() == ["good"]
    with pytest.raises(PerflabError, match="unknown toy 'fancy'.*fancy: ModuleNotFoundError"):
        toys.get("fancy")


def test_the_real_workload_registry_finds_noop_without_numpy_modules() -> None:
    import subprocess

    code = (
        "import sys\nfrom perflab.workloads import WORKLOADS\nWORKLOADS.get('noop')\n"
        "print(sorted(m for m in sys.modules if m.startswith('perflab.workloads.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "perflab.workloads.imbalanced" not in out.stdout
