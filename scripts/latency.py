"""How soon an odds move, a status and a result reach the socket and HTTP: the figures of
docs/data.md. Run by `scripts/latency`, which builds the release binary and the Python
client's virtual environment first.

A fresh `racing serve` (release, its own NATS, an empty store) is given one race's card;
a WebSocket client follows the race's `odds`, `status` and `results`. Then, one at a time,
each kind of event is published with `racing publish` while an HTTP client asks for the
document it changes every millisecond or so. Each latency is counted from the event's
`published_at` (when JetStream stored it, as its frame says) to the frame's arrival, and to
the first HTTP answer showing it (a new `ETag`), on this machine's one clock.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import httpx
import websockets

RACING = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("target/release/racing")
ROUNDS = int(os.environ.get("LATENCY_ROUNDS", "30"))
DAY = (date.today() + timedelta(days=2)).isoformat()
RUNNERS = [("A001", "FIRST LIGHT", "Z Purton", "J Size"), ("A002", "SECOND WIND", "H Bowman", "C S Shum")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def event(kind: str, data: dict) -> str:
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return json.dumps({"event_id": str(uuid.uuid4()), "type": kind, "occurred_at": now, "data": data})


def card() -> str:
    runners = [
        {"horse_no": no, "horse_name": name, "jockey": j, "trainer": t, "draw": i + 1, "weight": 126}
        for i, (no, name, j, t) in enumerate(RUNNERS)
    ]
    return event("RaceCardDeclared", {"date": DAY, "venue": "Sha Tin", "race_number": 1,
                                      "race_name": "LATENCY HANDICAP", "distance": 1200,
                                      "class": "Class 4", "runners": runners})


def result(n: int) -> str:
    runners = [
        {"position": i + 1, "horse_no": no, "horse_name": name, "jockey": j, "trainer": t,
         "finish_time": f"1:09.{10 + n % 80 + i:02d}", "win_odds": 3.5 + i, "dead_heat": False,
         "status": None}
        for i, (no, name, j, t) in enumerate(RUNNERS)
    ]
    return event("RaceResultPublished", {"date": DAY, "venue": "Sha Tin", "race_number": 1,
                                         "race_name": "LATENCY HANDICAP", "distance": 1200,
                                         "going": "GOOD", "runners": runners})


def odds(n: int) -> str:
    return event("OddsUpdated", {"date": DAY, "venue": "Sha Tin", "race_number": 1,
                                 "odds": [{"horse_no": "A001", "win_odds": round(2.0 + n / 10, 1)}]})


def status(n: int) -> str:
    return event("RaceStatusChanged", {"date": DAY, "venue": "Sha Tin", "race_number": 1,
                                       "status": "suspended" if n % 2 else "open"})


# What each kind changes: the frame type it comes as, and the document that shows it.
KINDS = {
    "odds move": (odds, "odds", f"/api/v1/odds/{DAY}/1"),
    "status": (status, "status", f"/api/v1/odds/{DAY}/1"),
    "result": (result, "result", f"/api/v1/results/{DAY}/1"),
}


def publish(data_dir: Path, line: str) -> None:
    subprocess.run([str(RACING), "publish", "-", "--data-dir", str(data_dir)], input=line + "\n",
                   text=True, check=True, capture_output=True, env={**os.environ, "RACING_LOG": "warn"})


async def one(http: httpx.AsyncClient, ws, data_dir: Path, kind: str, n: int) -> tuple[float, float]:
    make, frame_type, path = KINDS[kind]
    before = (await http.get(path)).headers.get("etag")
    loop = asyncio.get_running_loop()
    publishing = loop.run_in_executor(None, publish, data_dir, make(n))
    seen_http = None
    frame_at = published = None
    while seen_http is None or frame_at is None:
        if frame_at is None:
            try:
                text = await asyncio.wait_for(ws.recv(), timeout=0.001)
                frame = json.loads(text)
                if frame.get("type") == frame_type:
                    frame_at = time.time()
                    published = frame["published_at"]
            except asyncio.TimeoutError:
                pass
        if seen_http is None:
            answer = await http.get(path)
            if answer.status_code == 200 and answer.headers.get("etag") != before:
                seen_http = time.time()
    await publishing
    stored = datetime.fromisoformat(published[:26].rstrip("Z") + "+00:00").timestamp()
    return (frame_at - stored) * 1000, (seen_http - stored) * 1000


async def main() -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="racing-latency-"))
    port, key = free_port(), "latency_" + secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RACING_")}
    env.update(RACING_DATA_DIR=str(data_dir), RACING_LISTEN=f"127.0.0.1:{port}",
               RACING_ADMIN_LISTEN="127.0.0.1:0", RACING_API_KEYS=key, RACING_LOG="warn",
               RACING_RATE_LIMIT_PER_SEC="1000000", RACING_RATE_LIMIT_BURST="1000000")
    service = subprocess.Popen([str(RACING), "serve"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url, headers={"X-API-Key": key}) as http:
            for _ in range(600):
                try:
                    if (await http.get("/api/v1/meetings")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
            publish(data_dir, card())
            publish(data_dir, odds(0))
            publish(data_dir, result(0))
            while (await http.get(f"/api/v1/results/{DAY}/1")).status_code != 200:
                await asyncio.sleep(0.05)
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws/live/odds?api_key={key}") as ws:
                await ws.send(json.dumps({"type": "subscribe", "date": DAY, "race_number": 1,
                                          "topics": ["odds", "status", "results"]}))
                await asyncio.sleep(1)
                while True:
                    try:
                        await asyncio.wait_for(ws.recv(), timeout=0.2)
                    except asyncio.TimeoutError:
                        break
                figures = {kind: ([], []) for kind in KINDS}
                for n in range(1, ROUNDS + 1):
                    for kind in random.sample(list(KINDS), len(KINDS)):
                        socket_ms, http_ms = await one(http, ws, data_dir, kind, n)
                        figures[kind][0].append(socket_ms)
                        figures[kind][1].append(http_ms)
        print(f"racing at {url}, {ROUNDS} of each, ms from JetStream storing the event:")
        print(f"{'event':12} {'socket p50':>11} {'p90':>7} {'max':>7}   {'HTTP p50':>9} {'p90':>7} {'max':>7}")
        for kind, (on_socket, on_http) in figures.items():
            row = []
            for values in (on_socket, on_http):
                ordered = sorted(values)
                row += [statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))], ordered[-1]]
            print(f"{kind:12} {row[0]:11.1f} {row[1]:7.1f} {row[2]:7.1f}   {row[3]:9.1f} {row[4]:7.1f} {row[5]:7.1f}")
    finally:
        service.terminate()
        try:
            service.wait(timeout=20)
        except subprocess.TimeoutExpired:
            service.kill()
        subprocess.run(["rm", "-rf", str(data_dir)], check=False)


asyncio.run(main())
