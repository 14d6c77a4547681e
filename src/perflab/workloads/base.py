"""The workload interface: which callable is submitted, with which arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from perflab.errors import PerflabError


class Workload:
    """A kind of task. ``params`` declares accepted parameters with their defaults.

    Task functions live at module level so engines pickle them by reference: the workers
    import perflab rather than receiving code.
    """

    name: ClassVar[str] = ""
    params: ClassVar[dict[str, Any]] = {}

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.p = self.resolve_params(params or {})

    @classmethod
    def resolve_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(params) - set(cls.params))
        if unknown:
            accepted = ", ".join(sorted(cls.params)) or "none"
            raise PerflabError(
                f"workload {cls.name!r} takes no parameter {', '.join(unknown)} "
                f"(accepts: {accepted})"
            )
        merged = {**cls.params, **params}
        for key, value in merged.items():
            default = cls.params[key]
            try:
                merged[key] = type(default)(value)
            except (TypeError, ValueError):
                raise PerflabError(
                    f"workload {cls.name!r}: parameter {key}={value!r} "
                    f"is not a {type(default).__name__}"
                ) from None
            if isinstance(merged[key], int | float) and merged[key] < 0:
                raise PerflabError(f"workload {cls.name!r}: parameter {key} must be >= 0")
        return merged

    def function(self) -> Callable[..., Any]:
        raise NotImplementedError

    def args(self) -> tuple[Any, ...]:
        return ()

    def check(self, result: Any) -> bool:
        """Whether a task's result is the one expected (a wrong result fails the run)."""
        return True
