"""The change feed: which documents answer differently, from which `seq` on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._base import Document, Model, _columns, _frame, _row


@dataclass(kw_only=True)
class Change(Model):
    """A document that answers differently from `seq` on."""

    seq: int
    path: str
    """The API path that now answers differently (404 if the document went)."""


@dataclass(kw_only=True)
class Changes(Document):
    """A page of the change feed; `next` is the following page's `since`: a `seq`, or
    `"SEQ.N"` where the page ended inside the changes of one `seq` (after the first N)."""

    changes: list[Change]
    next: int | str | None

    def to_pandas(self) -> Any:
        """One row per change."""
        return _frame((_row(c) for c in self.changes), _columns(Change))
