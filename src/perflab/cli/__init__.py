"""The ``perflab`` command: a thin shell over the Python API, one module per verb group.

Each module of this package adds its verbs to ``perflab.cli.app.main`` when imported; the
group imports a verb's module only when that verb runs, and every module for help or an
unknown verb (``PerflabGroup``), so a new verb group is one new file.
"""

from perflab.cli.app import main

__all__ = ["main"]
