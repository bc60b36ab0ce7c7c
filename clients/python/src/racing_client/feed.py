"""A feeder in Python: typed events of the feed contract, each checked against the feed's
JSON Schema before it is sent, published to the service's NATS JetStream in batches whose
acknowledgements are awaited (and retried, under the same `Nats-Msg-Id`, so a retry is
never a second event), and the feeder's own refusals read back.

Needs the `feed` extra: `pip install "racing-client[feed]"` (nats-py and jsonschema).

    async with await Feeder.connect("nats://nats-1:4222", seed_file="feeder-hkjc.nk") as feeder:
        sent = await feeder.publish([Event(OddsUpdated(date="2026-11-28", race_number=3,
                                                       odds=[RunnerOdds("E271", win_odds=3.5)]))])
        odds = await racing.odds("2026-11-28", 3, min_seq=sent.last_seq)   # an AsyncRacing's read: never older
        for refusal in await feeder.refusals():
            print(refusal.seq, refusal.reason)
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import json
import pathlib
import uuid
from importlib import resources
from typing import Any, ClassVar, Iterable, Optional, Union

try:
    import jsonschema
    import nats
    from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
    from nats.errors import NoRespondersError
    from nats.errors import TimeoutError as NatsTimeoutError
    from nats.js.errors import APIError, NoStreamResponseError, NotFoundError
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError('racing_client.feed needs the "feed" extra: pip install "racing-client[feed]"') from e

from .errors import RacingError

FEEDER_HEADER = "Racing-Feeder"
"""The header that names the feeder, so that the service keeps its refusals for it."""

INBOX_PREFIX = "_INBOX_RACING_FEEDER"
"""Where a feeder may receive JetStream's answers: the only inbox its role may read."""

REFUSAL_READERS = 4
"""How many readings of its refusals a feeder may hold at once, each a consumer named
`refusals_<user>_<n>`, n below this: the only consumers its user may make."""

CONSUMER_NAME_IN_USE = 10013
"""JetStream's error code for a consumer name another reading holds."""


def _data(body: Any) -> dict:
    """A body as the contract writes it: optional fields left out where not given, the
    result runner's present-but-nullable fields kept as `null`."""
    out = {}
    for f in dataclasses.fields(body):
        value = getattr(body, f.name)
        if value is None and f.metadata.get("optional", True):
            continue
        if isinstance(value, list):
            value = [_data(v) if dataclasses.is_dataclass(v) else v for v in value]
        out[f.name] = value
    return out


def _nullable() -> Any:
    """A field that must be present and may be `null`."""
    return dataclasses.field(default=None, metadata={"optional": False})


@dataclasses.dataclass
class HorseProfile:
    """`HorseProfileUpdated`: a whole profile; replaces the previous one."""

    TYPE: ClassVar[str] = "HorseProfileUpdated"
    horse_no: str
    horse_name: str
    country_of_origin: str
    colour: str
    sex: str
    age: int
    trainer: str
    owner: str
    total_stakes: int
    starts: int
    wins: int
    places: int
    """The first three, wins included."""
    seconds: Optional[int] = None
    """With `thirds` or not at all (v1.3); then `places` is `wins + seconds + thirds`."""
    thirds: Optional[int] = None
    sire: Optional[str] = None
    dam: Optional[str] = None
    dam_sire: Optional[str] = None
    import_type: Optional[str] = None
    current_rating: Optional[int] = None
    season_start_rating: Optional[int] = None
    season_stakes: Optional[int] = None

    def subject(self) -> str:
        return f"racing.horses.{self.horse_no}"


@dataclasses.dataclass
class CardRunner:
    horse_no: str
    horse_name: str
    jockey: str
    trainer: str
    draw: int
    weight: int


@dataclasses.dataclass
class RaceCard:
    """`RaceCardDeclared`: a race card; replaces that race's card."""

    TYPE: ClassVar[str] = "RaceCardDeclared"
    date: str
    venue: str
    race_number: int
    race_name: str
    distance: int
    race_class: str
    runners: list[CardRunner]

    def subject(self) -> str:
        return f"racing.cards.{self.date}.{self.race_number}"


@dataclasses.dataclass
class RunnerScratched:
    """`RunnerScratched`: a runner withdrawn from a declared race."""

    TYPE: ClassVar[str] = "RunnerScratched"
    date: str
    race_number: int
    horse_no: str
    venue: Optional[str] = None

    def subject(self) -> str:
        return f"racing.cards.{self.date}.{self.race_number}"


@dataclasses.dataclass
class ResultRunner:
    horse_no: str
    horse_name: str
    jockey: str
    trainer: str
    position: Optional[int] = _nullable()
    finish_time: Optional[str] = _nullable()
    win_odds: Optional[float] = _nullable()
    status: Optional[str] = _nullable()
    dead_heat: bool = False
    lbw: Optional[str] = None
    running_positions: Optional[list[int]] = None
    actual_weight: Optional[int] = None
    declared_weight: Optional[int] = None
    draw: Optional[int] = None


@dataclasses.dataclass
class RaceResult:
    """`RaceResultPublished`: a whole result; an amendment is published again, whole."""

    TYPE: ClassVar[str] = "RaceResultPublished"
    date: str
    venue: str
    race_number: int
    race_name: str
    distance: int
    going: str
    runners: list[ResultRunner]
    race_class: Optional[str] = None

    def subject(self) -> str:
        return f"racing.results.{self.date}.{self.race_number}"


@dataclasses.dataclass
class RunnerOdds:
    horse_no: str
    win_odds: Optional[float] = None
    place_odds: Optional[float] = None


@dataclasses.dataclass
class OddsUpdated:
    """`OddsUpdated`: new prices for some runners of a race."""

    TYPE: ClassVar[str] = "OddsUpdated"
    date: str
    race_number: int
    odds: list[RunnerOdds]
    venue: Optional[str] = None

    def subject(self) -> str:
        return f"racing.odds.{self.date}.{self.race_number}"


@dataclasses.dataclass
class RaceRetracted:
    """`RaceRetracted`: a venue's race withdrawn from every read model."""

    TYPE: ClassVar[str] = "RaceRetracted"
    date: str
    venue: str
    race_number: int
    reason: str

    def subject(self) -> str:
        return f"racing.results.{self.date}.{self.race_number}"


@dataclasses.dataclass
class RaceStatusChanged:
    """`RaceStatusChanged`: open, suspended, off, finished, abandoned or void."""

    TYPE: ClassVar[str] = "RaceStatusChanged"
    date: str
    race_number: int
    status: str
    venue: Optional[str] = None
    reason: Optional[str] = None

    def subject(self) -> str:
        return f"racing.status.{self.date}.{self.race_number}"


Body = Union[
    HorseProfile, RaceCard, RunnerScratched, RaceResult, OddsUpdated, RaceRetracted, RaceStatusChanged
]


@dataclasses.dataclass
class Event:
    """One event: its body, its `event_id` (a fresh UUID unless given: give the same one to
    publish the same event again) and the time of the fact at its source (now unless given)."""

    data: Body
    event_id: uuid.UUID = dataclasses.field(default_factory=uuid.uuid4)
    occurred_at: str = dataclasses.field(
        default_factory=lambda: datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    )

    def envelope(self) -> dict:
        data = _data(self.data)
        # `class` is a Python keyword: the dataclasses call it `race_class`.
        if "race_class" in data:
            data["class"] = data.pop("race_class")
        return {
            "event_id": str(self.event_id),
            "type": self.data.TYPE,
            "occurred_at": self.occurred_at,
            "data": data,
        }

    def subject(self) -> str:
        return self.data.subject()


def schema() -> dict:
    """The feed's JSON Schema (v1.2), as this package carries it: the service's
    `/feed/schema.json`."""
    text = resources.files("racing_client").joinpath("feed_schema.json").read_text()
    return json.loads(text)


_VALIDATORS: dict[str, Any] = {}


def _validator(kind: str) -> Any:
    """The schema of one type's envelope: its errors name the field, where the whole
    schema's `oneOf` would only say that no type matched."""
    if kind not in _VALIDATORS:
        whole = schema()
        one = {k: v for k, v in whole.items() if k != "oneOf"}
        one["$ref"] = f"#/$defs/{kind}Envelope"
        _VALIDATORS[kind] = jsonschema.Draft202012Validator(one)
    return _VALIDATORS[kind]


def check(event: Event) -> list[str]:
    """Why the schema refuses `event`, each reason with the field's path
    (`data/age: 41 is greater than the maximum of 40`); empty if it takes it. The service
    checks a few rules more (its `x-service-only`)."""
    return [
        f"{'/'.join(str(p) for p in error.absolute_path) or 'envelope'}: {error.message}"
        for error in _validator(event.data.TYPE).iter_errors(event.envelope())
    ]


class FeedError(RacingError):
    """A feed that cannot be reached, or refused what the client asked of it."""


@dataclasses.dataclass
class Published:
    """What one `publish()` did: events stored, dropped as duplicates by JetStream, and
    refused here by the schema (never sent), each with its reasons; and the stream
    sequence of each event sent (`seqs`, in the order given; a duplicate's is its first
    copy's) and the highest (`last_seq`): a read with `min_seq=last_seq` sees them all."""

    stored: int = 0
    duplicate: int = 0
    refused: list[tuple[Event, list[str]]] = dataclasses.field(default_factory=list)
    seqs: list[int] = dataclasses.field(default_factory=list)

    @property
    def last_seq(self) -> Optional[int]:
        """The highest stream sequence acknowledged, `None` if nothing was sent."""
        return max(self.seqs, default=None)


@dataclasses.dataclass
class Refusal:
    """An event of this feeder that the service refused."""

    feeder: str
    seq: int
    subject: str
    event_id: Optional[str]
    reason: str
    published_at: str


class Feeder:
    """A connection to the service's NATS as a user of the `feeder` role."""

    def __init__(self, nc: Any, user: str, stream: str) -> None:
        self.nc = nc
        self.js = nc.jetstream()
        self.user = user
        self.stream = stream

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        seed_file: Union[str, pathlib.Path],
        user: Optional[str] = None,
        stream: str = "RACING",
    ) -> "Feeder":
        """Connects with a feeder's nkey seed file; its name (`feeder-hkjc.nk`) is the
        user's, unless `user` says otherwise."""
        path = pathlib.Path(seed_file)
        seed = path.read_text().strip()
        try:
            nc = await nats.connect(
                url,
                nkeys_seed_str=seed,
                inbox_prefix=INBOX_PREFIX,
                connect_timeout=5,
                max_reconnect_attempts=3,
                allow_reconnect=True,
            )
        except Exception as e:  # nats-py raises several kinds
            raise FeedError(f"cannot connect to {url} as {user or path.stem}: {e}") from e
        return cls(nc, user or path.stem, stream)

    async def __aenter__(self) -> "Feeder":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.nc.close()

    async def publish(
        self, events: Iterable[Event], *, batch: int = 256, retries: int = 3, timeout: float = 5.0
    ) -> Published:
        """Checks every event against the schema, then publishes those it takes, `batch`
        at a time, each acknowledgement awaited; one that times out is sent again under the
        same `Nats-Msg-Id`, up to `retries` more times. Raises `FeedError` if an event is
        still unacknowledged then (what was stored stays stored)."""
        result = Published()
        valid = []
        for event in events:
            reasons = check(event)
            if reasons:
                result.refused.append((event, reasons))
            else:
                valid.append(event)
        for start in range(0, len(valid), batch):
            chunk = valid[start : start + batch]
            acks = await asyncio.gather(*(self._send(e, retries, timeout) for e in chunk))
            for ack in acks:
                if ack.duplicate:
                    result.duplicate += 1
                else:
                    result.stored += 1
                result.seqs.append(ack.seq)
        return result

    async def _send(self, event: Event, retries: int, timeout: float) -> Any:
        headers = {"Nats-Msg-Id": str(event.event_id), FEEDER_HEADER: self.user}
        payload = json.dumps(event.envelope(), separators=(",", ":")).encode()
        for attempt in range(retries + 1):
            try:
                return await self.js.publish(event.subject(), payload, timeout=timeout, headers=headers)
            except (asyncio.TimeoutError, NatsTimeoutError, NoRespondersError, NoStreamResponseError) as e:
                if attempt == retries:
                    raise FeedError(f"{event.event_id}: no acknowledgement after {retries + 1} tries: {e}") from e
                await asyncio.sleep(0.2 * 2**attempt)
        raise AssertionError("unreachable")

    async def refusals(self, *, wait: float = 5.0) -> list[Refusal]:
        """The refusals of this feeder's events the service has kept, oldest first (through
        a consumer of its own keys, under one of the names its user may make, delivered
        where only this user may listen)."""
        stream = f"KV_{self.stream}_REFUSALS"
        try:
            for slot in range(REFUSAL_READERS):
                name = f"refusals_{self.user}_{slot}"
                # A second try after removing a consumer a reading left behind.
                for _ in range(2):
                    deliver = f"{self.stream}_REFUSALS_TO.{self.user}.{uuid.uuid4().hex}"
                    subscription = await self.nc.subscribe(deliver)
                    try:
                        info = await self.js.add_consumer(
                            stream,
                            ConsumerConfig(
                                name=name,
                                filter_subject=f"$KV.{self.stream}_REFUSALS.{self.user}.>",
                                deliver_subject=deliver,
                                deliver_policy=DeliverPolicy.ALL,
                                ack_policy=AckPolicy.NONE,
                                inactive_threshold=30.0,
                            ),
                        )
                    except APIError as e:
                        await subscription.unsubscribe()
                        if e.err_code == CONSUMER_NAME_IN_USE:
                            break  # another reading listens to it
                        # Made by another reading: its own while anyone listens to it.
                        try:
                            held = await self.js.consumer_info(stream, name)
                        except NotFoundError:
                            continue
                        if held.push_bound:
                            break
                        await self._remove(stream, name)
                        continue
                    try:
                        if info.delivered is not None and info.delivered.consumer_seq:
                            # One left behind, taken over where it had got to.
                            await self._remove(stream, name)
                            continue
                        ours = f"$JS.ACK.{stream}.{name}."
                        return await self._read(subscription, ours, info.num_pending or 0, wait)
                    finally:
                        await subscription.unsubscribe()
                        await self._remove(stream, name)
            raise FeedError(f"{self.user} reads its refusals {REFUSAL_READERS} times at once already")
        except FeedError:
            raise
        except Exception as e:
            raise FeedError(f"reading the refusals of {self.user}: {e}") from e

    @staticmethod
    async def _read(subscription: Any, ours: str, pending: int, wait: float) -> list[Refusal]:
        """The `pending` messages of the consumer whose acknowledgement subjects start with
        `ours`: another feeder may point a consumer of its own at this subject."""
        found = []
        while pending > 0:
            message = await subscription.next_msg(timeout=wait)
            if not (message.reply or "").startswith(ours):
                continue
            pending -= 1
            if message.data:
                found.append(Refusal(**json.loads(message.data)))
        return found

    async def _remove(self, stream: str, name: str) -> None:
        try:
            await self.js.delete_consumer(stream, name)
        except Exception:  # it goes by itself 30 s after nobody listens to it
            pass
