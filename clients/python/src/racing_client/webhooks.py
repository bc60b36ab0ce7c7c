"""Webhooks: the key's endpoints (`Racing.webhooks`, `AsyncRacing.webhooks`), and `verify()`,
the check of a delivery a receiver makes, by the rules of the `standardwebhooks` package.

A delivery is a `POST` whose `webhook-signature` header lists `v1,` and the base64
HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes the
endpoint's secret (`whsec_` then base64) decodes to; `verify()` checks one of them against
the body as received, and the timestamp against the clock.

`Webhooks`' endpoint methods are written by `tools/unasync.py` from `AsyncWebhooks`' below:
change them there and run it. `__init__` and `_send` are written by hand in each class."""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, TypeVar

import httpx

from . import models
from ._core import Core, error_of, retry_after
from ._decode import decode
from .errors import ConnectionFailed, RacingError

__all__ = ["WebhookVerificationError", "verify", "Webhooks", "AsyncWebhooks"]

TOLERANCE = 5 * 60
"""How far a delivery's `webhook-timestamp` may be from the clock, either way, in seconds."""

M = TypeVar("M", bound=models.Document)


class WebhookVerificationError(RacingError):
    """A delivery that did not verify: a header missing, a timestamp too old or too new, or
    no signature made with the secret. Answer it 4xx and act on nothing of it."""


def _secret_bytes(secret: str) -> bytes:
    text = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
    try:
        # Padded or not, as the package reads it.
        key = base64.b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("the secret is not base64") from None
    if not key:
        raise WebhookVerificationError("the secret is empty")
    return key


def verify(
    headers: Mapping[str, str], body: bytes | str, secret: str, *, now: float | None = None
) -> Any:
    """Checks a delivery as its receiver got it: `headers` (any case), `body` as the bytes
    it came as (never parsed and written again), `secret` the endpoint's `whsec_...`.
    Returns the payload (`{"type", "seq", "published_at", "data"}`), or raises
    `WebhookVerificationError`. `now` is the clock, Unix seconds (default: now)."""
    lower = {k.lower(): v for k, v in headers.items()}
    msg_id, stamp, signatures = (
        lower.get("webhook-id"),
        lower.get("webhook-timestamp"),
        lower.get("webhook-signature"),
    )
    if not (msg_id and stamp and signatures):
        raise WebhookVerificationError("missing required headers")
    try:
        at = int(float(stamp))
    except ValueError:
        raise WebhookVerificationError("invalid signature headers") from None
    clock = time.time() if now is None else now
    if at < clock - TOLERANCE:
        raise WebhookVerificationError("message timestamp too old")
    if at > clock + TOLERANCE:
        raise WebhookVerificationError("message timestamp too new")
    data = body.encode() if isinstance(body, str) else bytes(body)
    mac = hmac.new(_secret_bytes(secret), f"{msg_id}.{at}.".encode() + data, hashlib.sha256)
    expected = mac.digest()
    for signature in signatures.split(" "):
        version, _, value = signature.partition(",")
        if version != "v1":
            continue
        try:
            given = base64.b64decode(value)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(expected, given):
            return json.loads(data)
    raise WebhookVerificationError("no matching signature found")


_PATH = "/api/v1/webhooks"
# Refused before anything was done: safe to send again after the wait the service asks.
_AGAIN = (429, 503)


def _path(endpoint_id: str, action: str = "") -> str:
    return f"{_PATH}/{endpoint_id}" + (f"/{action}" if action else "")


def _answer(core: Core, model: type[M] | None, response: httpx.Response) -> M | None:
    if response.status_code >= 400:
        raise error_of(response)
    if model is None or not response.content:
        return None
    return decode(model, response.json(), strict=core.settings.strict)


class Webhooks:
    """The key's webhook endpoints, as `Racing.webhooks`: each method one request of the
    key's plan. See docs/api.md, Webhooks."""

    def __init__(self, http: httpx.Client, core: Core) -> None:
        self._http = http
        self._core = core

    def _send(
        self,
        method: str,
        path: str,
        model: type[M] | None,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
    ) -> M | None:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._http.request(method, self._core.url(path), json=body, params=params)
            except httpx.TransportError as e:
                # Sent again only where sending twice changes nothing.
                retry = self._core.transport_retry(attempt) if method in ("GET", "DELETE") else None
                if retry is None:
                    raise ConnectionFailed(f"{path}: {e!r}") from e
                time.sleep(retry.delay)
                continue
            if response.status_code in _AGAIN and attempt <= self._core.settings.max_retries:
                wait = retry_after(response.headers)
                if wait is None or wait <= self._core.settings.max_retry_after:
                    time.sleep(wait if wait is not None else self._core.settings.backoff_delay(attempt))
                    continue
            return _answer(self._core, model, response)

    # --- generated from AsyncWebhooks by tools/unasync.py: do not edit ---

    def create(self, url: str, topics: list[str], date: Any = None) -> models.Webhook:
        """Makes an endpoint sent every race-day event of `topics` (`results`, `status`,
        `scratchings`, `cards`), of `date` only if given; the answer holds its `secret`,
        shown this once."""
        body: dict[str, Any] = {"url": url, "topics": list(topics)}
        if date is not None:
            body["date"] = str(date)
        return self._send(  # type: ignore[return-value]
            "POST", _PATH, models.Webhook, body=body
        )

    def list(self) -> models.WebhookList:
        """The key's endpoints, without their secrets."""
        return self._send("GET", _PATH, models.WebhookList)  # type: ignore[return-value]

    def get(self, endpoint_id: str) -> models.Webhook:
        """One endpoint: enabled or not, and why."""
        return self._send("GET", _path(endpoint_id), models.Webhook)  # type: ignore[return-value]

    def delete(self, endpoint_id: str) -> None:
        """Removes an endpoint, and what was owed to it."""
        self._send("DELETE", _path(endpoint_id), None)

    def rotate(self, endpoint_id: str) -> models.Webhook:
        """A new secret (in the answer); the old one signs beside it for 24 hours."""
        return self._send(  # type: ignore[return-value]
            "POST", _path(endpoint_id, "rotate"), models.Webhook
        )

    def test(self, endpoint_id: str) -> models.WebhookTest:
        """Sends the endpoint a `ping` now; what came of it."""
        return self._send(  # type: ignore[return-value]
            "POST", _path(endpoint_id, "test"), models.WebhookTest
        )

    def deliveries(self, endpoint_id: str) -> models.WebhookDeliveries:
        """How far the endpoint has been sent, what is under way, the recent attempts."""
        return self._send(  # type: ignore[return-value]
            "GET", _path(endpoint_id, "deliveries"), models.WebhookDeliveries
        )

    def replay(self, endpoint_id: str, since: int) -> models.Webhook:
        """Sends every event after `since` again (each with its `webhook-id`), and enables
        a disabled endpoint."""
        return self._send(  # type: ignore[return-value]
            "POST", _path(endpoint_id, "replay"), models.Webhook, params={"since": since}
        )

    # --- end of generated code ---


class AsyncWebhooks:
    """`Webhooks` as coroutines, as `AsyncRacing.webhooks`."""

    def __init__(self, http: httpx.AsyncClient, core: Core) -> None:
        self._http = http
        self._core = core

    async def _send(
        self,
        method: str,
        path: str,
        model: type[M] | None,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
    ) -> M | None:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._http.request(method, self._core.url(path), json=body, params=params)
            except httpx.TransportError as e:
                retry = self._core.transport_retry(attempt) if method in ("GET", "DELETE") else None
                if retry is None:
                    raise ConnectionFailed(f"{path}: {e!r}") from e
                await asyncio.sleep(retry.delay)
                continue
            if response.status_code in _AGAIN and attempt <= self._core.settings.max_retries:
                wait = retry_after(response.headers)
                if wait is None or wait <= self._core.settings.max_retry_after:
                    await asyncio.sleep(
                        wait if wait is not None else self._core.settings.backoff_delay(attempt)
                    )
                    continue
            return _answer(self._core, model, response)

    # --- unasync start: tools/unasync.py copies what follows into Webhooks ---

    async def create(self, url: str, topics: list[str], date: Any = None) -> models.Webhook:
        """Makes an endpoint sent every race-day event of `topics` (`results`, `status`,
        `scratchings`, `cards`), of `date` only if given; the answer holds its `secret`,
        shown this once."""
        body: dict[str, Any] = {"url": url, "topics": list(topics)}
        if date is not None:
            body["date"] = str(date)
        return await self._send(  # type: ignore[return-value]
            "POST", _PATH, models.Webhook, body=body
        )

    async def list(self) -> models.WebhookList:
        """The key's endpoints, without their secrets."""
        return await self._send("GET", _PATH, models.WebhookList)  # type: ignore[return-value]

    async def get(self, endpoint_id: str) -> models.Webhook:
        """One endpoint: enabled or not, and why."""
        return await self._send("GET", _path(endpoint_id), models.Webhook)  # type: ignore[return-value]

    async def delete(self, endpoint_id: str) -> None:
        """Removes an endpoint, and what was owed to it."""
        await self._send("DELETE", _path(endpoint_id), None)

    async def rotate(self, endpoint_id: str) -> models.Webhook:
        """A new secret (in the answer); the old one signs beside it for 24 hours."""
        return await self._send(  # type: ignore[return-value]
            "POST", _path(endpoint_id, "rotate"), models.Webhook
        )

    async def test(self, endpoint_id: str) -> models.WebhookTest:
        """Sends the endpoint a `ping` now; what came of it."""
        return await self._send(  # type: ignore[return-value]
            "POST", _path(endpoint_id, "test"), models.WebhookTest
        )

    async def deliveries(self, endpoint_id: str) -> models.WebhookDeliveries:
        """How far the endpoint has been sent, what is under way, the recent attempts."""
        return await self._send(  # type: ignore[return-value]
            "GET", _path(endpoint_id, "deliveries"), models.WebhookDeliveries
        )

    async def replay(self, endpoint_id: str, since: int) -> models.Webhook:
        """Sends every event after `since` again (each with its `webhook-id`), and enables
        a disabled endpoint."""
        return await self._send(  # type: ignore[return-value]
            "POST", _path(endpoint_id, "replay"), models.Webhook, params={"since": since}
        )

    # --- unasync end ---
