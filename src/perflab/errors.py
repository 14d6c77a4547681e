"""Errors that are the user's to fix: the CLI prints them once and exits 2."""


class PerflabError(Exception):
    """Bad input (unknown name, malformed file, impossible request).

    Raised before anything is run or stored, so that nothing is half-done.
    """
