"""The body of the service's error answers (the exceptions the client raises are
`racing_client.errors`)."""

from __future__ import annotations

from dataclasses import dataclass

from ._base import Model


@dataclass(kw_only=True)
class ErrorBody(Model):
    """The body of every error answer."""

    error: str
    """A stable code: `bad_request`, `not_found`, `rate_limited`, ..."""
    message: str
    checkpoint: int | None = None
    """Only on the 503 of a `min_seq` not reached in time: the position the service holds."""
