"""Every endpoint, read through the client strictly (a field the client does not know is an
error), and the client's documents checked against the service's own `/openapi.json`."""

from __future__ import annotations

import dataclasses
import datetime
import inspect
import types
import typing

import httpx
import pytest

import racing_client
from racing_client import live, models
from racing_client._core import Endpoints
from racing_client._decode import json_name, wire_fields


@pytest.fixture(scope="module")
def racing(service):
    with racing_client.Racing(service.key, service.url, strict=True) as client:
        yield client


@pytest.fixture(scope="module")
def openapi(service):
    return httpx.get(service.url + "/openapi.json", timeout=10).json()


def _expected_type(prop: dict, schemas: dict) -> tuple[str, bool]:
    """The Python type a schema property reads as, and whether it may be null."""
    if "oneOf" in prop:
        # One of several: `null` makes it nullable, the others are a union, in order.
        members = [m for m in prop["oneOf"] if m.get("type") != "null"]
        nullable = len(members) < len(prop["oneOf"])
        kinds = [_expected_type(m, schemas) for m in members]
        return " | ".join(k for k, _ in kinds), nullable or any(n for _, n in kinds)
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[-1]
        if schemas[name].get("type") != "object":
            # A named value (`ErrorCode`, an enum of strings): its type.
            return _expected_type(schemas[name], schemas)
        return name, False
    kinds = prop.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    nullable = "null" in kinds
    (kind,) = [k for k in kinds if k != "null"]
    if kind == "array":
        inner, _ = _expected_type(prop["items"], schemas)
        return f"list[{inner}]", nullable
    if kind == "string":
        return ("date" if prop.get("format") == "date" else "str"), nullable
    return {"integer": "int", "number": "float", "boolean": "bool"}[kind], nullable


def _actual_type(tp) -> tuple[str, bool]:
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        inner = [_actual_type(a)[0] for a in args if a is not type(None)]
        return " | ".join(inner), type(None) in args
    if typing.get_origin(tp) is list:
        return f"list[{_actual_type(args[0])[0]}]", False
    if tp is datetime.date:
        return "date", False
    return tp.__name__, False


def _webhook_frames(openapi) -> set[str]:
    """The socket's frames a webhook payload carries as its `data`: classes of the stream
    (`live.EVENTS`), checked against the AsyncAPI document below."""
    body = openapi["webhooks"]["raceDayEvent"]["post"]["requestBody"]["content"]["application/json"]
    return {p["properties"]["data"]["$ref"].rsplit("/", 1)[-1] for p in body["schema"]["oneOf"]}


def test_every_schema_of_the_api_is_a_document_with_the_same_fields(openapi):
    schemas = openapi["components"]["schemas"]
    frames = _webhook_frames(openapi)
    assert frames == {"StatusFrame", "ScratchingFrame", "ResultFrame", "CardFrame", "RetractionFrame"}
    objects = {name: s for name, s in schemas.items() if s.get("type") == "object" and name not in frames}
    assert len(objects) >= 20, sorted(objects)
    for name, schema in objects.items():
        cls = getattr(models, name, None)
        assert cls is not None and dataclasses.is_dataclass(cls), f"no document class for schema {name}"
        fields = {json_name(f): (f, tp) for f, tp in wire_fields(cls)}
        assert list(fields) == list(schema["properties"]), f"{name}: fields differ from the schema's"
        _check_fields(name, fields, schema, schemas)


def _check_fields(name: str, fields: dict, schema: dict, schemas: dict, aliases: dict | None = None) -> None:
    """Each property of `schema` read by its field in `fields` as the schema types it (a
    schema named in `aliases` by the client's name for it), with a default exactly where it
    is not required."""
    required = set(schema.get("required", []))
    for prop_name, prop in schema["properties"].items():
        if prop_name not in fields:
            continue
        f, tp = fields[prop_name]
        has_default = f.default is not dataclasses.MISSING
        assert has_default == (prop_name not in required), f"{name}.{prop_name}: required differs"
        want, nullable = _expected_type(prop, schemas)
        for schema_name, client_name in (aliases or {}).items():
            want = want.replace(schema_name, client_name)
        got, optional = _actual_type(tp)
        assert got == want, f"{name}.{prop_name}: {got}, the schema says {want}"
        if nullable or prop_name not in required:
            assert optional, f"{name}.{prop_name} may be null or absent but is not Optional"


def test_every_frame_of_the_socket_is_a_frame_class_with_the_same_fields(service):
    # The socket's AsyncAPI description, which the service checks its own frames against:
    # every frame `live()` yields is read by a class with the same fields.
    asyncapi = httpx.get(service.url + "/asyncapi.json", timeout=10).json()
    schemas = asyncapi["components"]["schemas"]
    frames = {
        "snapshot": models.Snapshot,
        "heartbeat": models.Heartbeat,
        "market": models.MarketUpdate,
        **live.EVENTS,
    }
    sent = {
        op["messages"][0]["$ref"].rsplit("/", 1)[-1]
        for op in asyncapi["operations"].values()
        if op["action"] == "receive"
    }
    # The rest are the session's own business, never yielded.
    assert sent == set(frames) | {"welcome", "pong", "error", "replay_end"}, sorted(sent)
    # The socket's name of a runner's prices; the documents in the frames have the API's.
    aliases = {"RunnerPrice": "RunnerOdds"}
    classes = {
        asyncapi["components"]["messages"][kind]["payload"]["$ref"].rsplit("/", 1)[-1]: cls
        for kind, cls in frames.items()
    }
    checked = set()
    while pending := set(classes) - checked:
        name = pending.pop()
        checked.add(name)
        cls, schema = classes[name], schemas[name]
        fields = {json_name(f): (f, tp) for f, tp in wire_fields(cls)}
        wire = set(schema["properties"]) - set(getattr(cls, "_ignored", ()))
        assert set(fields) == wire, (
            f"{name}: {cls.__name__} reads {sorted(fields)}, the schema has {sorted(wire)}"
        )
        _check_fields(name, fields, schema, schemas, aliases)
        # And the documents it holds (a result, a card, runners' prices), in turn.
        for prop in schema["properties"].values():
            ref = prop.get("$ref") or prop.get("items", {}).get("$ref")
            if ref and schemas[ref.rsplit("/", 1)[-1]].get("type") == "object":
                held = ref.rsplit("/", 1)[-1]
                classes.setdefault(held, getattr(models, aliases.get(held, held)))
    assert {"RaceResult", "CardRace", "RunnerPrice"} <= checked, sorted(checked)


def test_every_operation_of_the_api_has_a_client_method(openapi):
    # The WebSocket is `live()`; the descriptions (OpenAPI, and AsyncAPI of the socket) and
    # their HTML page are no documents.
    served = set(openapi["paths"]) - {
        "/ws/live/odds",
        "/api/v1/live",
        "/api/v1/openapi.json",
        "/api/v1/asyncapi.json",
        "/api/v1/docs",
    }
    # The key's webhook endpoints are `webhooks`' (below).
    served = {p for p in served if not p.startswith("/api/v1/webhooks")}
    # (API path, client method, the call it makes, the method's names of query parameters)
    methods = [
        ("/api/v1/", "index", Endpoints.index(), {}),
        ("/api/v1/meetings", "meetings", Endpoints.meetings(), {"from": "from_date", "to": "to_date"}),
        ("/api/v1/horses", "horses", Endpoints.horses("ab"), {}),
        ("/api/v1/horses/{horse_no}", "horse", Endpoints.horse("A1"), {}),
        ("/api/v1/horses/{horse_no}/form", "form", Endpoints.form("A1"), {}),
        (
            "/api/v1/horses/{horse_no}/analysis",
            "horse_analysis",
            Endpoints.horse_analysis("A1"),
            {"from": "from_date", "to": "to_date"},
        ),
        ("/api/v1/results/{date}", "results", Endpoints.results("D"), {}),
        ("/api/v1/results/{date}/{race_number}", "result", Endpoints.result("D", 1), {}),
        ("/api/v1/racecards/today", "racecard", Endpoints.racecard("today"), {}),
        ("/api/v1/racecards/{date}", "racecard", Endpoints.racecard("D"), {}),
        ("/api/v1/odds/{date}/{race_number}", "odds", Endpoints.odds("D", 1), {}),
        (
            "/api/v1/odds/{date}/{race_number}/history",
            "odds_history_page",
            Endpoints.odds_history("D", 1),
            {},
        ),
        ("/api/v1/jockeys", "jockeys", Endpoints.jockeys(), {}),
        ("/api/v1/jockeys/{id}", "jockey", Endpoints.jockey("x"), {}),
        (
            "/api/v1/jockeys/{id}/analysis",
            "jockey_analysis",
            Endpoints.jockey_analysis("x"),
            {"from": "from_date", "to": "to_date"},
        ),
        ("/api/v1/trainers", "trainers", Endpoints.trainers(), {}),
        ("/api/v1/trainers/{id}", "trainer", Endpoints.trainer("x"), {}),
        (
            "/api/v1/trainers/{id}/analysis",
            "trainer_analysis",
            Endpoints.trainer_analysis("x"),
            {"from": "from_date", "to": "to_date"},
        ),
        ("/api/v1/changes", "changes_page", Endpoints.changes(), {}),
    ]
    assert {m[0] for m in methods} == served
    for template, name, c, renamed in methods:
        op = openapi["paths"][template]["get"]
        schema = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        assert c.model.__name__ == schema.rsplit("/", 1)[-1], (
            f"{template}: the client reads {c.model.__name__}"
        )
        taken = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
        for client in (racing_client.Racing, racing_client.AsyncRacing):
            params = set(inspect.signature(getattr(client, name)).parameters)
            for query in taken:
                assert renamed.get(query, query) in params, (
                    f"{client.__name__}.{name}: no argument for `{query}`"
                )


def test_each_endpoint_answers_a_typed_document_with_its_position(racing):
    index = racing.index()
    assert index.docs == "/docs" and index.openapi == "/openapi.json"
    assert {"horses", "results", "racecards", "odds"} <= {e.family for e in index.endpoints}
    card = racing.racecard()
    assert isinstance(card.date, datetime.date) and card.races
    assert card.meta.status == 200 and card.racing_seq and card.as_of == card.racing_seq
    assert card.meta.etag and card.meta.rate_limit is not None
    same_card = racing.racecard(card.date)
    assert same_card.races == card.races

    meetings = racing.meetings()
    run = [m for m in meetings.meetings if m.results > 0]
    assert run, meetings
    day = run[-1]
    results = racing.results(day.date, day.venue)
    assert results.date == day.date and results.races
    race = results.races[0]
    one = racing.result(day.date, race.race_number, day.venue)
    assert (one.race_name, one.runners) == (race.race_name, race.runners)

    runner = one.runners[0]
    profile = racing.horse(runner.horse_no)
    assert profile.horse_no == runner.horse_no and profile.starts >= 1
    form = racing.form(runner.horse_no, limit=5)
    assert 1 <= len(form.form) <= 5 and form.horse_no == runner.horse_no
    found = racing.horses(profile.horse_name[:4])
    assert any(h.horse_no == profile.horse_no for h in found.horses) or len(found.horses) == 20

    # A document as of an earlier point of the log answers with that point.
    earlier = racing.horse(runner.horse_no, as_of=profile.racing_seq)
    assert earlier == profile and earlier.as_of == profile.racing_seq

    # A race already run, whose moves are all in: today's may have had two or fewer yet
    # (just after midnight in Hong Kong), and a page of two would then have no `next`.
    odds = racing.odds(day.date, race.race_number, day.venue)
    assert odds.race_number == race.race_number and odds.odds and odds.seq > 0
    history = racing.odds_history_page(day.date, race.race_number, day.venue, limit=2)
    assert len(history.moves) == 2 and history.next == history.moves[-1].seq

    jockeys = racing.jockeys()
    jockey = racing.jockey(jockeys.jockeys[0].id)
    assert jockey.id == jockeys.jockeys[0].id and jockey.rides == jockeys.jockeys[0].rides
    assert racing.jockeys(name=jockey.name[:3]).jockeys
    trainers = racing.trainers()
    trainer = racing.trainer(trainers.trainers[0].id)
    assert trainer.name == trainers.trainers[0].name and trainer.seasons

    changes = racing.changes_page(limit=3)
    assert len(changes.changes) >= 3 and changes.racing_seq


def test_errors_carry_the_api_code_and_message(racing, service):
    with pytest.raises(racing_client.NotFound) as nf:
        racing.horse("Z999")
    assert (nf.value.status, nf.value.error) == (404, "not_found") and "Z999" in nf.value.message
    with pytest.raises(racing_client.BadRequest) as bad:
        racing.results("2026-02-30")
    assert bad.value.error == "bad_request" and "date" in bad.value.message
    with racing_client.Racing("wrong-key", service.url) as stranger:
        with pytest.raises(racing_client.Unauthorized) as denied:
            stranger.meetings()
    assert denied.value.message == "Invalid or missing API key"


def test_the_key_comes_from_the_environment(service, monkeypatch):
    monkeypatch.setenv("RACING_API_KEY", service.key)
    monkeypatch.setenv("RACING_URL", service.url)
    with racing_client.Racing() as racing:
        assert racing.meetings().meta.status == 200
    monkeypatch.delenv("RACING_API_KEY")
    with pytest.raises(racing_client.ConfigurationError):
        racing_client.Racing()


def test_list_documents_become_data_frames(racing):
    pytest.importorskip("pandas")
    # A horse of a race already run has form whatever the hour (today's first runner may
    # not have run yet).
    day = [m for m in racing.meetings().meetings if m.results][-1]
    results = racing.results(day.date, day.venue)
    form = racing.form(results.races[0].runners[0].horse_no)
    frame = form.to_pandas()
    assert len(frame) == len(form.form) >= 1
    columns = {"horse_no", "date", "position", "win_odds", "class"}
    assert columns <= set(frame.columns)
    # A list with nothing in it still gives its columns.
    empty = dataclasses.replace(form, form=[]).to_pandas()
    assert len(empty) == 0 and list(empty.columns) == list(frame.columns)
    assert len(results.to_pandas()) == sum(len(r.runners) for r in results.races)
    history = racing.odds_history_page(racing.racecard().date, 1, limit=5)
    assert len(history.to_pandas()) == sum(len(m.odds) for m in history.moves)


def test_the_market_the_form_and_the_records_by_condition(racing):
    # Today's card: every runner with its form as of today; the figures as printed cards
    # write them.
    card = racing.racecard()
    runner = card.races[0].runners[0]
    assert runner.form is not None and len(runner.form.figures.replace("/", "")) <= 6
    assert runner.form.runs >= len(runner.form.figures.replace("/", "").replace("W", ""))

    # A past race's market: the book is the implied probabilities summed.
    day = [m for m in racing.meetings().meetings if m.results][-1]
    race = racing.results(day.date, day.venue).races[0]
    odds = racing.odds(day.date, race.race_number, day.venue)
    book = sum(r.win_prob for r in odds.odds if r.win_prob is not None) * 100
    assert odds.market.win_book_pct is not None and abs(odds.market.win_book_pct - book) < 0.1
    assert odds.market.favourites
    history = racing.odds_history_page(day.date, race.race_number, day.venue, limit=2)
    assert history.moves[0].market.favourites

    # Records by condition: the breakdowns add up to the whole.
    horse = race.runners[0].horse_no
    analysis = racing.horse_analysis(horse)
    assert analysis.subject == "horse" and analysis.id == horse and analysis.overall.runs >= 1
    assert sum(r.runs for r in analysis.by_venue) == analysis.overall.runs
    assert sum(r.runs for r in analysis.by_distance) == analysis.overall.runs
    jockey = racing.jockey_analysis(racing.jockeys().jockeys[0].id, from_date=day.date, to_date=day.date)
    assert jockey.from_ == day.date and jockey.by_trainer is not None and jockey.by_jockey is None
    assert racing.horse_analysis(horse, as_of=analysis.racing_seq) == analysis
    with pytest.raises(racing_client.NotFound):
        racing.trainer_analysis("nobody-at-all")


def test_records_by_condition_become_a_data_frame(racing):
    pytest.importorskip("pandas")
    runner = racing.racecard().races[0].runners[0]
    analysis = racing.trainer_analysis(racing.trainers().trainers[0].id)
    frame = analysis.to_pandas()
    assert set(frame["by"]) >= {"overall", "venue", "distance", "jockey"}
    overall = frame[frame["by"] == "overall"].iloc[0]
    assert overall["runs"] == analysis.overall.runs
    assert frame[frame["by"] == "venue"]["runs"].sum() == analysis.overall.runs
    assert runner.horse_no


def test_every_operation_of_the_webhooks_has_a_client_method(openapi):
    # (API path, method, the client's method, the model it answers)
    operations = [
        ("/api/v1/webhooks", "post", "create", "Webhook"),
        ("/api/v1/webhooks", "get", "list", "WebhookList"),
        ("/api/v1/webhooks/{id}", "get", "get", "Webhook"),
        ("/api/v1/webhooks/{id}", "delete", "delete", None),
        ("/api/v1/webhooks/{id}/rotate", "post", "rotate", "Webhook"),
        ("/api/v1/webhooks/{id}/test", "post", "test", "WebhookTest"),
        ("/api/v1/webhooks/{id}/deliveries", "get", "deliveries", "WebhookDeliveries"),
        ("/api/v1/webhooks/{id}/replay", "post", "replay", "Webhook"),
    ]
    described = {
        (path, method)
        for path, item in openapi["paths"].items()
        if path.startswith("/api/v1/webhooks")
        for method in item
        if method in ("get", "post", "delete")
    }
    assert described == {(p, m) for p, m, _, _ in operations}
    for path, method, name, model in operations:
        responses = openapi["paths"][path][method]["responses"]
        ok = next(r for s, r in responses.items() if s.startswith("2"))
        schema = ok.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref")
        assert (schema.rsplit("/", 1)[-1] if schema else None) == model, path
        for client in (racing_client.webhooks.Webhooks, racing_client.webhooks.AsyncWebhooks):
            hints = typing.get_type_hints(getattr(client, name))
            returned = hints["return"]
            assert (None if returned is type(None) else returned.__name__) == model, (client, name)
