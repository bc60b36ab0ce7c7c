"""The service the tests talk to: the real `racing` binary, `serve --demo`, on free loopback
ports with a data directory of its own, stopped at the end of the session.

The binary is `RACING_BIN`, else the repository's `target/debug/racing` (what
`scripts/test` builds)."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
# Today's first race stays open this long, so its prices move all through the session.
RACE_SECS = 900
# The demo's heartbeat interval, the service's default: a reader's timeout of the same length
# meets the heartbeat of a quiet stream, as it does against a deployment.
HEARTBEAT_SECS = 5


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def racing_bin() -> Path:
    path = Path(os.environ.get("RACING_BIN") or REPO / "target" / "debug" / "racing")
    if not path.is_file():
        pytest.exit(f"no racing binary at {path}: build it (cargo build) or set RACING_BIN", returncode=2)
    return path


def deadline_poll(what: str, seconds: float, check, every: float = 0.2):
    """Calls `check` until it returns something other than None, for at most `seconds`."""
    end = time.monotonic() + seconds
    while True:
        found = check()
        if found is not None:
            return found
        if time.monotonic() > end:
            raise TimeoutError(f"{what}: not within {seconds} s")
        time.sleep(every)


class Service:
    """A `racing serve` on a loopback port with a data directory of its own; `stop()` and
    `start()` again keep both, as a restart does."""

    def __init__(self, *, demo: bool, env: dict[str, str] | None = None) -> None:
        self.data_dir = Path(tempfile.mkdtemp(prefix="racing-pytest-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.key = "pytest_" + secrets.token_hex(16)
        self.demo = demo
        self.log_path = self.data_dir / "service.log"
        self.process: subprocess.Popen | None = None
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("RACING_")}
        self.env.update(
            RACING_DATA_DIR=str(self.data_dir),
            RACING_LISTEN=f"127.0.0.1:{self.port}",
            RACING_ADMIN_LISTEN="127.0.0.1:0",
            RACING_API_KEYS=self.key,
            RACING_RATE_LIMIT_PER_SEC="100000",
            RACING_RATE_LIMIT_BURST="100000",
            RACING_WS_HEARTBEAT_MS="1000",
            RACING_LOG="warn",
        )
        # The caller's settings win over these.
        self.env.update(env or {})

    def start(self) -> None:
        """Starts it and waits until its read models are built (the API answers 200)."""
        args = [str(racing_bin()), "serve"] + (["--demo"] if self.demo else [])
        with open(self.log_path, "ab") as log:
            # A session of its own, so that its nats-server can be ended with it.
            self.process = subprocess.Popen(
                args, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        process = self.process
        # The demo's season is there once today's card is; without it, once the API answers.
        ready_path = "/api/v1/racecards/today" if self.demo else "/api/v1/meetings"

        def ready():
            if process.poll() is not None:
                raise RuntimeError(f"the service exited with {process.returncode}:\n{self.log()}")
            try:
                r = httpx.get(self.url + ready_path, headers={"X-API-Key": self.key}, timeout=2)
            except httpx.TransportError:
                return None
            return True if r.status_code == 200 else None

        deadline_poll("the service ready", 120, ready, every=0.3)

    def stop(self) -> None:
        """Stops it (SIGTERM: live sockets are closed with 1001), and its nats-server."""
        process = self.process
        if process is None:
            return
        self.process = None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def racing(self, *args: str, stdin: str | None = None) -> str:
        """Runs a `racing` command against this service's data directory; its output."""
        out = subprocess.run(
            [str(racing_bin()), *args, "--data-dir", str(self.data_dir)],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "RACING_LOG": "warn"},
        )
        if out.returncode != 0:
            raise RuntimeError(f"racing {' '.join(args)}: {out.returncode}\n{out.stderr}")
        return out.stdout

    def create_key(self, name: str, rate: int, burst: int) -> str:
        """A managed key with a rate of its own (`racing keys create`), once the service
        accepts it."""
        output = self.racing("keys", "create", "--name", name, "--rate", str(rate), "--burst", str(burst))
        key = output.strip().splitlines()[-1]

        def accepted():
            r = httpx.get(self.url + "/api/v1/meetings", headers={"X-API-Key": key}, timeout=5)
            return True if r.status_code != 401 else None

        deadline_poll("the new key accepted", 15, accepted)
        return key

    def publish(self, events: list[tuple[str, dict]]) -> int:
        """Publishes each `(type, data)` as one event (`racing publish`), as a feeder does;
        the stream sequence of the last (from its `line N: seq S` lines)."""
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines = [
            json.dumps({"event_id": str(uuid.uuid4()), "type": kind, "occurred_at": now, "data": data})
            for kind, data in events
        ]
        out = self.racing("publish", "-", stdin="\n".join(lines) + "\n")
        return max((int(seq) for seq in re.findall(r": seq (\d+)", out)), default=0)

    def applied(self, seq: int) -> None:
        """Waits until the service has applied the log up to `seq`: a read with `min_seq`
        answers 200 (a 503 says it has not yet, within the read's wait)."""

        def done():
            r = httpx.get(
                f"{self.url}/api/v1/meetings", params={"min_seq": seq}, headers={"X-API-Key": self.key}, timeout=10
            )
            return True if r.status_code == 200 else None

        deadline_poll(f"the log applied up to {seq}", 30, done)

    def publish_odds(self, date: str, race_number: int, prices: list[float]) -> None:
        """Publishes one `OddsUpdated` per price for runner A001 at Sha Tin."""
        self.publish(
            [
                (
                    "OddsUpdated",
                    {
                        "date": date,
                        "race_number": race_number,
                        "venue": "Sha Tin",
                        "odds": [{"horse_no": "A001", "win_odds": price}],
                    },
                )
                for price in prices
            ]
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def shell_variables(self) -> dict[str, str]:
        """What the demo banner's `shell:` line exports (`KEY`, `URL`, `DAY`, `RACE`,
        `HORSE`, `SEQ`), once the service has printed it."""

        def printed():
            for line in self.log_path.read_text(errors="replace").splitlines():
                _, shell, export = line.partition("shell:")
                if shell and export.split()[:1] == ["export"]:
                    return dict(word.split("=", 1) for word in export.split()[1:])
            return None

        return deadline_poll("the demo banner's shell: line", 30, printed)


@pytest.fixture(scope="session")
def service():
    """The demo, with today's first race open all session so that its prices keep moving."""
    svc = Service(
        demo=True,
        env={
            "RACING_DEMO_RACE_SECS": str(RACE_SECS),
            "RACING_WS_HEARTBEAT_MS": str(HEARTBEAT_SECS * 1000),
            # Webhook receivers of the tests listen on loopback.
            "RACING_WEBHOOK_ALLOW_NETWORKS": "127.0.0.0/8",
        },
    )
    try:
        svc.start()
        yield svc
    finally:
        svc.remove()


class CuttableProxy:
    """A TCP relay in front of the service, on a loopback port of its own, whose
    connections the test can cut (and refuse for a while): a dropped network, with the
    service still running and publishing."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.refusing = False
        self.accepted = 0
        self._pairs: list[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = []
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refusing:
            writer.transport.abort()
            return
        self.accepted += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._pairs.append((writer, up_writer))
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pipe(src, dst))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            dst.transport.abort()

    def cut(self) -> None:
        """Drops every connection at once (no close handshake) and refuses new ones."""
        self.refusing = True
        for a, b in self._pairs:
            a.transport.abort()
            b.transport.abort()
        self._pairs.clear()

    def restore(self) -> None:
        self.refusing = False

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
