"""A table of named declarations (run options, metrics): the built-in ones, plus those a test or a plug-in
declares at run time and may remove again. One implementation, so every kind of declaration is extended the
same way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class Declarations(Generic[T]):
    """Items with a ``name``, in declaration order (the built-in ones first). ``what`` names the kind in errors."""

    def __init__(self, what: str, builtin: Iterable[T]) -> None:
        self.what = what
        self._items: dict[str, T] = {}
        for item in builtin:
            self.declare(item)
        self._builtin = frozenset(self._items)

    def declare(self, item: T) -> T:
        """Add ``item``; refused if its name is taken."""
        name: str = item.name  # type: ignore[attr-defined]
        if name in self._items:
            raise ValueError(f"{self.what} {name!r} is already declared")
        self._items[name] = item
        return item

    def undeclare(self, name: str) -> None:
        """Remove an item added by :meth:`declare` after the built-in ones (those stay)."""
        if name in self._builtin:
            raise ValueError(f"{self.what} {name!r} is built in")
        self._items.pop(name, None)

    def declared(self) -> tuple[T, ...]:
        return tuple(self._items.values())

    def names(self) -> tuple[str, ...]:
        return tuple(self._items)

    def get(self, name: str) -> T:
        """The item named ``name`` (``KeyError`` if none is)."""
        return self._items[name]

    def find(self, name: str) -> T | None:
        """The item named ``name``, or None."""
        return self._items.get(name)
