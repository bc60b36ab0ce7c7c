"""Webhooks through the client against the real service: endpoints made, listed, tested,
replayed and removed, and every delivery a receiver on loopback gets checked by
`webhooks.verify()` and by the `standardwebhooks` package alike."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import time

import pytest
import standardwebhooks

import racing_client
from racing_client import webhooks


class Receiver:
    """A receiver on loopback keeping every delivery it is sent, answering 200."""

    def __init__(self) -> None:
        self.got: list[tuple[dict[str, str], bytes]] = []
        got = self.got

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the standard library's name
                body = self.rfile.read(int(self.headers["content-length"]))
                got.append((dict(self.headers.items()), body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hook"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def wait(self, count: int, seconds: float = 30) -> list[tuple[dict[str, str], bytes]]:
        deadline = time.monotonic() + seconds
        while len(self.got) < count:
            assert time.monotonic() < deadline, f"{len(self.got)} of {count} deliveries"
            time.sleep(0.05)
        return list(self.got)

    def close(self) -> None:
        self._server.shutdown()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def test_an_endpoint_is_sent_its_topics_signed_as_standard_webhooks_verify(service, receiver):
    with racing_client.Racing(service.key, service.url, strict=True) as racing:
        card = racing.racecard()
        made = racing.webhooks.create(receiver.url, ["cards", "scratchings", "status"], date=card.date)
        assert made.secret and made.secret.startswith("whsec_") and made.enabled
        assert made.date == card.date
        listed = racing.webhooks.list()
        assert [w.id for w in listed.webhooks] == [made.id]
        assert listed.webhooks[0].secret is None
        # A ping first, then today's race day from the start of the log.
        ping = racing.webhooks.test(made.id)
        assert ping.delivered and ping.response_code == 200
        racing.webhooks.replay(made.id, since=0)
        got = receiver.wait(1 + len(card.races))
        deliveries = racing.webhooks.deliveries(made.id)
        racing.webhooks.delete(made.id)
        with pytest.raises(racing_client.NotFound):
            racing.webhooks.get(made.id)
    package = standardwebhooks.Webhook(made.secret)
    kinds = []
    for headers, body in got:
        payload = webhooks.verify(headers, body, made.secret)
        assert package.verify(body, headers) == payload
        kinds.append(payload["type"])
    assert kinds[0] == "ping" and got[0][0]["webhook-id"] == ping.webhook_id
    assert "card" in kinds, kinds
    seqs = [json.loads(b)["seq"] for _, b in got[1:]]
    assert seqs == sorted(set(seqs)), "in seq order, each once"
    assert all(a.status == "delivered" for a in deliveries.attempts)
    # A delivery tampered with, or checked with another secret, or late, does not verify.
    headers, body = got[1]
    for bad in (
        lambda: webhooks.verify(headers, body + b" ", made.secret),
        lambda: webhooks.verify(headers, body, "whsec_" + "A" * 44),
        lambda: webhooks.verify(headers, body, made.secret, now=time.time() + 600),
        lambda: webhooks.verify({}, body, made.secret),
    ):
        with pytest.raises(webhooks.WebhookVerificationError):
            bad()


def test_the_async_client_manages_endpoints_and_the_service_refuses_what_it_must(service, receiver):
    async def run():
        async with racing_client.AsyncRacing(service.key, service.url, strict=True) as racing:
            made = await racing.webhooks.create(receiver.url, ["results"])
            rotated = await racing.webhooks.rotate(made.id)
            assert rotated.secret and rotated.secret != made.secret
            ping = await racing.webhooks.test(made.id)
            with pytest.raises(racing_client.BadRequest) as odds:
                await racing.webhooks.create(receiver.url, ["odds"])
            with pytest.raises(racing_client.BadRequest) as metadata:
                await racing.webhooks.create("https://169.254.169.254/latest", ["results"])
            await racing.webhooks.delete(made.id)
            return made, rotated, ping, odds.value, metadata.value

    made, rotated, ping, odds, metadata = asyncio.run(asyncio.wait_for(run(), 60))
    headers, body = receiver.wait(1)[0]
    assert ping.delivered
    # Signed with both secrets during the rotation's grace: either verifies.
    assert webhooks.verify(headers, body, made.secret)["type"] == "ping"
    assert webhooks.verify(headers, body, rotated.secret)["type"] == "ping"
    assert "/api/v1/live" in odds.message
    assert "link-local" in metadata.message
