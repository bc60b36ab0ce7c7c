"""The service the tests talk to: the real `racing` binary, `serve --demo`, on free loopback
ports with a data directory of its own, stopped at the end of the session.

The binary is `RACING_BIN`, else the repository's `target/debug/racing` (what
`scripts/test` builds)."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
# Today's first race stays open this long, so its prices move all through the session.
RACE_SECS = 900


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


@dataclass
class Service:
    """A running `racing serve --demo`."""

    url: str
    key: str
    data_dir: Path
    process: subprocess.Popen
    log_path: Path

    def create_key(self, name: str, rate: int, burst: int) -> str:
        """A managed key with a rate of its own (`racing keys create`), once the service
        accepts it."""
        out = subprocess.run(
            [
                str(racing_bin()),
                "keys",
                "create",
                "--data-dir",
                str(self.data_dir),
                "--name",
                name,
                "--rate",
                str(rate),
                "--burst",
                str(burst),
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
            env={**os.environ, "RACING_LOG": "warn"},
        )
        key = out.stdout.strip().splitlines()[-1]

        def accepted():
            r = httpx.get(self.url + "/api/v1/meetings", headers={"X-API-Key": key}, timeout=5)
            return True if r.status_code != 401 else None

        deadline_poll("the new key accepted", 15, accepted)
        return key

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]


@pytest.fixture(scope="session")
def service():
    binary = racing_bin()
    data = Path(tempfile.mkdtemp(prefix="racing-pytest-"))
    port = free_port()
    key = "pytest_" + secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RACING_")}
    env.update(
        RACING_DATA_DIR=str(data),
        RACING_LISTEN=f"127.0.0.1:{port}",
        RACING_ADMIN_LISTEN="127.0.0.1:0",
        RACING_API_KEYS=key,
        RACING_RATE_LIMIT_PER_SEC="100000",
        RACING_RATE_LIMIT_BURST="100000",
        RACING_DEMO_RACE_SECS=str(RACE_SECS),
        RACING_WS_HEARTBEAT_MS="1000",
        RACING_LOG="warn",
    )
    log_path = data / "service.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [str(binary), "serve", "--demo"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    svc = Service(f"http://127.0.0.1:{port}", key, data, process, log_path)
    try:

        def ready():
            if process.poll() is not None:
                raise RuntimeError(f"the service exited with {process.returncode}:\n{svc.log()}")
            try:
                r = httpx.get(svc.url + "/api/v1/racecards/today", headers={"X-API-Key": key}, timeout=2)
            except httpx.TransportError:
                return None
            return True if r.status_code == 200 else None

        deadline_poll("the service ready", 120, ready, every=0.5)
        yield svc
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        # Its nats-server (a child in its session) goes with it; make sure of it.
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if os.environ.get("RACING_KEEP_DATA") is None:
            subprocess.run(["rm", "-rf", str(data)], check=False)


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
