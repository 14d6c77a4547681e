"""The ``perflab`` command: a thin shell over the Python API, one module per verb group.

Each module of this package adds its verbs to ``perflab.cli.app.main`` when imported; the
table ``perflab.cli.app.VERBS`` says which module holds which verb, so only that one is
imported when the verb runs.
"""

from perflab.cli.app import main

__all__ = ["main"]
