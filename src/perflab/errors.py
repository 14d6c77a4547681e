"""Errors that are the user's to fix: the CLI prints them as one line and exits with their code.

| exit | meaning |
|---|---|
| 0 | all ok |
| 1 | a run failed, timed out or could not be measured (recorded; resume retries the last) |
| 2 | bad input: nothing run, nothing stored |
| 3 | an internal error of perflab (the traceback is written to a file) |
"""


class PerflabError(Exception):
    """Bad input (unknown name, malformed file, impossible request).

    Raised before anything is run or stored, so that nothing is half-done.
    """

    exit_code = 2


class InfraError(PerflabError):
    """The machine, not the input, stopped perflab (a full disk under the store).

    Everything committed before it is intact; running the same command again resumes.
    """

    exit_code = 1


class Unanswerable(PerflabError):
    """The runs were made but cannot answer the question (every run failed, or the base
    set did): exit 1, like a failed run; what was stored stays. The message gives the
    cause, e.g. "the base set failed in 8 of 8 runs: score: … not a finite number"."""

    exit_code = 1


def insecure_refusal(why: str) -> PerflabError:
    """The one refusal of a run whose servers would admit other local users, naming the
    opt-in (``why``: what would be open, e.g. "HTEX unencrypted (encrypted=false)")."""
    return PerflabError(
        f"refused: {why}, so any local user could run code as you while it runs; "
        "pass --allow-insecure to accept that (docs/security.md)"
    )


#: Exit code of an unexpected internal error (a bug: please report it with the traceback).
INTERNAL_ERROR = 3
