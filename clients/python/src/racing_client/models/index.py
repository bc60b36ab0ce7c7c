"""The API's index (`/api/v1/`) and the endpoints it lists."""

from __future__ import annotations

from dataclasses import dataclass

from ._base import Document, Model


@dataclass(kw_only=True)
class ApiEndpoint(Model):
    """One endpoint as the API's index lists it."""

    family: str
    """The reference's tag: `meetings`, `horses`, `results`, `racecards`, `odds`, `people`,
    `changes`."""
    path: str
    """Its path template: each `{name}` is a parameter."""
    summary: str
    docs: str
    """Its section of the HTML reference."""


@dataclass(kw_only=True)
class ApiIndex(Document):
    """The API's index (`/api/v1/`): links to the reference, the socket and every endpoint."""

    about: str
    version: str
    key: str
    """Which of the links need the key."""
    docs: str
    openapi: str
    asyncapi: str
    live_odds: str
    pricing: str
    endpoints: list[ApiEndpoint]
