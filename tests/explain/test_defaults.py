"""Changed defaults: object addresses are not changes; keywords the run sets are listed."""

from __future__ import annotations

from perflab.explain.defaults import changed_defaults, explicit_keywords

CLS = "parsl.executors:HighThroughputExecutor"


def _p(r: str) -> dict[str, str]:
    return {"repr": r, "module": "m", "function": "HighThroughputExecutor.__init__"}


def test_changes_and_what_is_left_out() -> None:
    a = {
        CLS: {
            "encrypted": _p("False"),
            "sel": _p("<S object at 0x7f1>"),
            "poll": _p("10"),
            "x": _p("<S object at 0x1>"),
        }
    }
    b = {
        CLS: {
            "encrypted": _p("True"),
            "sel": _p("<S object at 0x7f2>"),
            "poll": _p("5"),
            "x": _p("<T object at 0x1>"),
        }
    }
    got = {c.name: c for c in changed_defaults(a, b, explicit_keywords("parsl-htex", {}))}
    assert set(got) == {"encrypted", "poll", "x"}  # "sel" differs only by its address
    assert got["poll"].left_out == "" and got["poll"].transform("parsl")["expr"] == "10"
    assert "explicitly" in got["encrypted"].left_out  # perflab's safety setting
    assert "literal" in got["x"].left_out
    user = explicit_keywords("parsl-htex", {"poll_period": 1})
    assert "poll_period" in user["HighThroughputExecutor"]


def test_a_users_own_program_compares_every_class_of_the_releases_package() -> None:
    from perflab.explain.defaults import classes_for

    parsl = classes_for("command", "python app.py", "parsl")
    # a program may build any Parsl executor, provider or Config: it passes its own keywords
    assert {"parsl.executors:HighThroughputExecutor", "parsl.executors:ThreadPoolExecutor",
            "parsl.providers:LocalProvider", "parsl.config:Config"} == set(parsl)  # fmt: skip
    assert classes_for("parsl-threads", None, "parsl") == (
        "parsl.executors:ThreadPoolExecutor",
        "parsl.config:Config",
    )
    assert classes_for("command", "python app.py", "numpy") == ()  # --config-class says
