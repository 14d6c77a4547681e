"""The ``perflab`` command: a thin shell over the Python API, one module per verb group.

Each module of this package adds its verbs to ``perflab.cli.app.main`` when imported; a new
verb is one new module here. ``perflab.cli.app.verb_modules`` reads which module holds which
verb from their sources, so only that one is imported when the verb runs.
"""

from perflab.cli.app import main

__all__ = ["main"]
