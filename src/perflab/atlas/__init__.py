"""The atlas: unattended regression discovery over a package's commits and releases (see
docs/atlas.md). Pure algorithms (``detect``, ``steps``) apart from the I/O (``store``,
``measure``, ``update``, ``site``)."""
