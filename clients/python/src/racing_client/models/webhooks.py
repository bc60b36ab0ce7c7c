"""The key's webhook endpoints, a test of one, and its deliveries."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from ._base import Document, Model


@dataclass(kw_only=True)
class NewWebhook(Model):
    """An endpoint to make (`webhooks.create()`)."""

    url: str
    topics: list[str]
    date: datetime.date | None = None


@dataclass(kw_only=True)
class Webhook(Document):
    """One of the key's webhook endpoints. `secret` only in the answer that made or
    rotated it."""

    id: str
    url: str
    topics: list[str]
    date: datetime.date | None = None
    created_at: str
    since: int
    """The log's position when it was made: the events after it are sent."""
    enabled: bool
    disabled_at: str | None = None
    disabled_reason: str | None = None
    secret: str | None = None


@dataclass(kw_only=True)
class WebhookList(Document):
    """The key's endpoints, by id."""

    webhooks: list[Webhook]


@dataclass(kw_only=True)
class WebhookTest(Document):
    """What a `ping` came to."""

    webhook_id: str
    delivered: bool
    response_code: int | None = None
    error: str | None = None
    duration_ms: int


@dataclass(kw_only=True)
class PendingDelivery(Model):
    """The delivery under way: its event, its attempts so far, when the next is due."""

    seq: int
    attempts: int
    next_attempt_at: str


@dataclass(kw_only=True)
class WebhookAttempt(Model):
    """One attempt of a delivery."""

    seq: int
    webhook_id: str
    type: str
    attempt: int
    at: str
    status: str
    """`delivered`, `failed` (another attempt follows) or `given_up`."""
    response_code: int | None = None
    error: str | None = None
    next_attempt_at: str | None = None
    duration_ms: int


@dataclass(kw_only=True)
class WebhookDeliveries(Document):
    """How far an endpoint has been sent, what is under way, and the recent attempts,
    newest first."""

    id: str
    position: int
    pending: PendingDelivery | None = None
    attempts: list[WebhookAttempt]
