"""One registry per plugin kind (engine, workload, ...): adding a plugin is one new file."""

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from perflab.errors import PerflabError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps a public name to a plugin class; unknown names give a PerflabError listing the known."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in self._items:
                raise RuntimeError(f"{self.kind} {name!r} registered twice")
            self._items[name] = obj
            return obj

        return deco

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise PerflabError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
