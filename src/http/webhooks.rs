//! The webhooks' endpoints under `/api/v1/webhooks`: a key's endpoints made, listed, read,
//! removed, their secret rotated, a `ping` sent, their deliveries read and a replay asked
//! for. Account configuration of the key that calls, not racing data: the only paths of
//! the API that take `POST` and `DELETE` and a request body.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::openapi::{RefOr, Schema};
use utoipa::ToSchema;

use super::error::ApiError;
use super::error::ErrorBody;
use super::query::Query;
use super::route::Component;
use super::state::AppState;
use crate::keys::ring::Identity;
use crate::live::frames::{CardFrame, ResultFrame, RetractionFrame, ScratchingFrame, StatusFrame};
use crate::webhooks::endpoint::{Attempt, DeliveryState, Endpoint};
use crate::webhooks::manage::NewEndpoint;
use crate::webhooks::manage::Problem;

/// The collection's path.
pub const WEBHOOKS_PATH: &str = "/api/v1/webhooks";

/// Every path of the webhooks' endpoints.
pub const PATHS: [&str; 6] = [
    WEBHOOKS_PATH,
    "/api/v1/webhooks/{id}",
    "/api/v1/webhooks/{id}/rotate",
    "/api/v1/webhooks/{id}/test",
    "/api/v1/webhooks/{id}/deliveries",
    "/api/v1/webhooks/{id}/replay",
];

/// Largest request body taken: an endpoint's JSON.
const MAX_BODY: usize = 8 * 1024;

/// The routes, under the key like every path of the API.
pub(super) fn routes() -> Router<AppState> {
    let [all, one, rotated, tested, delivered, replayed] = PATHS;
    Router::new()
        .route(all, post(create).get(list))
        .route(one, get(read).delete(remove))
        .route(rotated, post(rotate))
        .route(tested, post(test))
        .route(delivered, get(deliveries))
        .route(replayed, post(replay))
        .layer(DefaultBodyLimit::max(MAX_BODY))
}

impl From<Problem> for ApiError {
    fn from(problem: Problem) -> ApiError {
        match problem {
            Problem::Invalid(message) => ApiError::BadRequest(message),
            Problem::NotFound(_) => ApiError::NotFound(problem.to_string()),
            Problem::Limit(message) => ApiError::LimitReached(message),
            Problem::Internal(e) => ApiError::Internal(e),
        }
    }
}

/// An endpoint to make.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(examples(json!({
    "url": "https://hooks.example.com/racing", "topics": ["results", "status"]
})))]
pub struct NewWebhook {
    /// Where to send: `https`, to a host whose every address is public (plain `http`
    /// only to the networks the operator allows). At most 2,048 bytes, no credentials,
    /// no fragment. Redirects are not followed.
    url: String,
    /// What to send: any of `results`, `status`, `scratchings`, `cards` (a `retraction`
    /// goes with `results` and with `cards`). Odds are not offered: they move many times
    /// a second; follow them on the socket or the event stream.
    topics: Vec<String>,
    /// Only the events of this race date, `YYYY-MM-DD`; every date if left out.
    #[serde(default)]
    #[schema(format = Date, nullable = false)]
    date: Option<String>,
}

/// An endpoint as the API shows it.
#[derive(Serialize, ToSchema)]
pub struct Webhook {
    /// `ep_` and 16 hex digits.
    id: String,
    /// Where deliveries go.
    url: String,
    /// What it is sent.
    topics: Vec<String>,
    /// Only this race date's events, where it was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = Date, nullable = false)]
    date: Option<String>,
    /// When it was made (RFC 3339).
    #[schema(format = DateTime)]
    created_at: String,
    /// The log's position when it was made: the events after it are sent.
    since: u64,
    /// Whether deliveries are sent to it.
    enabled: bool,
    /// When it was disabled (after a 410, or after every attempt of the retry schedule
    /// failed), if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime, nullable = false)]
    disabled_at: Option<String>,
    /// Why it was disabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    disabled_reason: Option<String>,
    /// Its signing secret, `whsec_` and base64: only in the answer that made it or
    /// rotated it, never shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    secret: Option<String>,
}

impl Webhook {
    fn of(e: Endpoint, secret: Option<String>) -> Webhook {
        let (disabled_at, disabled_reason) = match e.disabled {
            Some(d) => (Some(d.at), Some(d.reason)),
            None => (None, None),
        };
        Webhook {
            enabled: disabled_at.is_none(),
            id: e.id,
            url: e.url,
            topics: e.topics,
            date: e.date,
            created_at: e.created_at,
            since: e.from_seq,
            disabled_at,
            disabled_reason,
            secret,
        }
    }
}

/// A key's endpoints.
#[derive(Serialize, ToSchema)]
pub struct WebhookList {
    /// By id.
    webhooks: Vec<Webhook>,
}

/// What a `ping` came to.
#[derive(Serialize, ToSchema)]
pub struct WebhookTest {
    /// The `webhook-id` it was sent with.
    webhook_id: String,
    /// Whether the receiver answered 2xx.
    delivered: bool,
    /// The receiver's status code, if it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    response_code: Option<u16>,
    /// Why it failed without an answer (refused by the forgery rules, no connection, a
    /// timeout), or the start of a failed answer's body.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    error: Option<String>,
    /// How long it took, milliseconds.
    duration_ms: u64,
}

/// The delivery under way.
#[derive(Serialize, ToSchema)]
pub struct PendingDelivery {
    /// The event's position.
    seq: u64,
    /// Attempts made so far.
    attempts: u32,
    /// When the next is due (RFC 3339).
    #[schema(format = DateTime)]
    next_attempt_at: String,
}

/// An endpoint's deliveries: how far it has been sent, what is under way, the recent
/// attempts.
#[derive(Serialize, ToSchema)]
pub struct WebhookDeliveries {
    /// The endpoint.
    id: String,
    /// Every event up to this position has been delivered (or was not of its topics).
    position: u64,
    /// The delivery under way, with its retries; null when none is.
    pending: Option<PendingDelivery>,
    /// The recent attempts (at most 50), newest first.
    attempts: Vec<Attempt>,
}

impl WebhookDeliveries {
    fn of(e: &Endpoint, state: DeliveryState) -> WebhookDeliveries {
        WebhookDeliveries {
            id: e.id.clone(),
            position: state.position,
            pending: state.pending.map(|p| PendingDelivery {
                seq: p.seq,
                attempts: p.attempts,
                next_attempt_at: jiff::Timestamp::from_millisecond(p.next_at)
                    .map(|t| t.to_string())
                    .unwrap_or_default(),
            }),
            attempts: state.recent.into_iter().rev().collect(),
        }
    }
}

/// A JSON answer with `status`.
fn answer<T: Serialize>(status: StatusCode, body: &T) -> Response {
    (status, Json(body)).into_response()
}

/// Makes an endpoint.
#[utoipa::path(
    post,
    operation_id = "webhook_create",
    path = "/api/v1/webhooks",
    tag = "webhooks",
    summary = "Make a webhook endpoint",
    description = "Registers a URL to be sent every race-day event of the chosen topics \
        (each as one signed `POST` in the Standard Webhooks form: see the `webhooks` of \
        this document and docs/api.md, Webhooks), from the log's position now on. The URL \
        is checked at once: `https`, and every address its host resolves to public (not \
        loopback, private, link-local, multicast, unspecified or reserved, nor this \
        service); it is checked again at every delivery. Answers the endpoint with its \
        `secret`, shown this once. A key may have as many endpoints as its plan allows.",
    request_body(content = NewWebhook, content_type = "application/json"),
    responses(
        (status = 201, description = "Made; the answer holds its secret.", body = Webhook),
        (status = 400, description = "`bad_request`: not JSON of this shape, a URL the rules \
            refuse (the message says which rule), an unknown or unoffered topic, a date that \
            is not a real `YYYY-MM-DD`.", body = ErrorBody),
        (status = 409, description = "`limit_reached`: the key has as many endpoints as its \
            plan allows.", body = ErrorBody),
        (status = 413, description = "`body_not_accepted`: a body over 8 KiB.", body = ErrorBody),
    ),
)]
pub(super) async fn create(
    State(state): State<AppState>,
    Extension(who): Extension<Identity>,
    RawQuery(raw): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &[])?;
    // Over the limit, the same JSON error as every other body refused; axum's own
    // rejection is plain text.
    let body = body.map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::BodyNotAccepted,
        _ => ApiError::BadRequest(e.body_text()),
    })?;
    let new: NewWebhook = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("the body must be an endpoint's JSON: {e}")))?;
    let (endpoint, secret) = state
        .webhooks
        .create(
            &who,
            NewEndpoint {
                url: new.url,
                topics: new.topics,
                date: new.date,
            },
        )
        .await?;
    Ok(answer(
        StatusCode::CREATED,
        &Webhook::of(endpoint, Some(secret)),
    ))
}

/// Lists the key's endpoints.
#[utoipa::path(
    get,
    operation_id = "webhook_list",
    path = "/api/v1/webhooks",
    tag = "webhooks",
    summary = "List the key's webhook endpoints",
    description = "Every endpoint of the key that asks, by id, without their secrets. \
        Takes no query parameters.",
    responses((status = 200, description = "The key's endpoints.", body = WebhookList)),
)]
pub(super) async fn list(
    State(state): State<AppState>,
    Extension(who): Extension<Identity>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &[])?;
    let webhooks = state.webhooks.list(&who);
    let webhooks = webhooks.into_iter().map(|e| Webhook::of(e, None)).collect();
    Ok(answer(StatusCode::OK, &WebhookList { webhooks }))
}

/// Reads one endpoint.
#[utoipa::path(
    get,
    operation_id = "webhook_read",
    path = "/api/v1/webhooks/{id}",
    tag = "webhooks",
    summary = "Get a webhook endpoint",
    description = "One endpoint of the key's, without its secret: whether it is enabled, \
        and why not. Takes no query parameters.",
    params(("id" = String, Path, description = "The endpoint's id, `ep_...`.")),
    responses(
        (status = 200, description = "The endpoint.", body = Webhook),
        (status = 404, description = "`not_found`: no endpoint of that id for this key.",
            body = ErrorBody),
    ),
)]
pub(super) async fn read(
    State(state): State<AppState>,
    Extension(who): Extension<Identity>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &[])?;
    let endpoint = state.webhooks.get(&who, &id).await?;
    Ok(answer(StatusCode::OK, &Webhook::of(endpoint, None)))
}

/// Removes an endpoint.
#[utoipa::path(
    delete,
    operation_id = "webhook_remove",
    path = "/api/v1/webhooks/{id}",
    tag = "webhooks",
    summary = "Remove a webhook endpoint",
    description = "Removes the endpoint and what was owed to it: nothing more is sent. \
        Takes no query parameters.",
    params(("id" = String, Path, description = "The endpoint's id, `ep_...`.")),
    responses(
        (status = 204, description = "Removed."),
        (status = 404, description = "`not_found`: no endpoint of that id for this key.",
            body = ErrorBody),
    ),
)]
pub(super) async fn remove(
    State(state): State<AppState>,
    Extension(who): Extension<Identity>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &[])?;
    state.webhooks.delete(&who, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Rotates an endpoint's secret.
#[utoipa::path(
    post,
    operation_id = "webhook_rotate",
    path = "/api/v1/webhooks/{id}/rotate",
    tag = "webhooks",
    summary = "Rotate a webhook endpoint's secret",
    description = "Gives the endpoint a new secret, shown this once. For 24 hours every \
        delivery carries a signature with each, the new one first, so that a receiver \
        changes over whenever it likes; then the old one stops. Takes no query parameters.",
    params(("id" = String, Path, description = "The endpoint's id, `ep_...`.")),
    responses(
        (status = 200, description = "The endpoint with its new secret.", body = Webhook),
        (status = 404, description = "`not_found`: no endpoint of that id for this key.",
            body = ErrorBody),
    ),
)]
pub(super) async fn rotate(
    State(state): State<AppState>,
    Extension(who): Extension<Identity>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &[])?;
    let (endpoint, secret) = state.webhooks.rotate(&who, &id).await?;
    Ok(answer(StatusCode::OK, &Webhook::of(endpoint, Some(secret))))
}

/// Sends a `ping`.
#[utoipa::path(
    post,
    operation_id = "webhook_test",
    path = "/api/v1/webhooks/{id}/test",
    tag = "webhooks",
    summary = "Send a webhook endpoint a ping",
    description = "Sends the endpoint one `ping` now (`{\"type\":\"ping\",\"seq\",\
        \"published_at\",\"data\":{\"endpoint\",\"url\"}}`), signed as every delivery and \
        under the same rules, enabled or not, and answers what came of it. It is not \
        retried and not listed among the deliveries. Takes no query parameters.",
    params(("id" = String, Path, description = "The endpoint's id, `ep_...`.")),
    responses(
        (status = 200, description = "What the ping came to.", body = WebhookTest),
        (status = 404, description = "`not_found`: no endpoint of that id for this key.",
            body = ErrorBody),
    ),
)]
pub(super) async fn test(
    State(state): State<AppState>,
    Extension(who): Extension<Identity>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &[])?;
    let (webhook_id, posted) = state.webhooks.ping(&who, &id).await?;
    Ok(answer(
        StatusCode::OK,
        &WebhookTest {
            webhook_id,
            delivered: posted.delivered(),
            response_code: posted.status,
            error: posted.error,
            duration_ms: posted.took_ms,
        },
    ))
}

/// Lists an endpoint's deliveries.
#[utoipa::path(
    get,
    operation_id = "webhook_deliveries",
    path = "/api/v1/webhooks/{id}/deliveries",
    tag = "webhooks",
    summary = "A webhook endpoint's recent deliveries",
    description = "How far the endpoint has been sent, the delivery under way with its \
        next attempt, and the recent attempts, newest first: each with the event's `seq`, \
        its `webhook-id`, the attempt's number, time, status (`delivered`, `failed`, \
        `given_up`), the receiver's status code or the error, and the next attempt's time. \
        Takes no query parameters.",
    params(("id" = String, Path, description = "The endpoint's id, `ep_...`.")),
    responses(
        (status = 200, description = "The deliveries.", body = WebhookDeliveries),
        (status = 404, description = "`not_found`: no endpoint of that id for this key.",
            body = ErrorBody),
    ),
)]
pub(super) async fn deliveries(
    State(state): State<AppState>,
    Extension(who): Extension<Identity>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &[])?;
    let (endpoint, delivery) = state.webhooks.deliveries(&who, &id).await?;
    Ok(answer(
        StatusCode::OK,
        &WebhookDeliveries::of(&endpoint, delivery),
    ))
}

/// Asks for a replay.
#[utoipa::path(
    post,
    operation_id = "webhook_replay",
    path = "/api/v1/webhooks/{id}/replay",
    tag = "webhooks",
    summary = "Send a webhook endpoint again what passed after a position",
    description = "Sends the endpoint every event of its topics after `since` again, in \
        order, each with the `webhook-id` it had (a receiver that keeps them takes each \
        once), then goes on as before; a delivery under way is dropped for it. A disabled \
        endpoint is enabled again. Answered at once; the deliveries follow.",
    params(
        ("id" = String, Path, description = "The endpoint's id, `ep_...`."),
        ("since" = u64, Query, description = "A position of the log: an event's `seq`, or \
            an HTTP answer's `Racing-Seq`."),
    ),
    responses(
        (status = 202, description = "Asked; the endpoint as it is now.", body = Webhook),
        (status = 400, description = "`bad_request`: no `since`, one that is not a stream \
            sequence or is past the log, or another query parameter.", body = ErrorBody),
        (status = 404, description = "`not_found`: no endpoint of that id for this key.",
            body = ErrorBody),
    ),
)]
pub(super) async fn replay(
    State(state): State<AppState>,
    Extension(who): Extension<Identity>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let query = Query::parse(raw.as_deref(), &["since"])?;
    let since = query
        .0
        .get("since")
        .ok_or_else(|| ApiError::BadRequest("`since` is required".into()))?;
    let since = super::input::sequence("since", since)?;
    let endpoint = state.webhooks.replay(&who, &id, since).await?;
    Ok(answer(StatusCode::ACCEPTED, &Webhook::of(endpoint, None)))
}

/// Whether the schema `name` is one the webhooks add to the description.
#[cfg(test)]
pub(super) fn is_described_here(name: &str) -> bool {
    let frames = PAYLOADS.map(|(_, _, frame)| (frame.name)());
    [
        "NewWebhook",
        "Webhook",
        "WebhookList",
        "WebhookTest",
        "PendingDelivery",
        "WebhookDeliveries",
        "WebhookAttempt",
    ]
    .contains(&name)
        || frames.iter().any(|f| f == name)
}

/// The payload's `type` of each race-day frame a delivery carries, with its frame's
/// schema.
const PAYLOADS: [(&str, &str, Component); 5] = [
    ("result", "results", Component::of::<ResultFrame>()),
    ("status", "status", Component::of::<StatusFrame>()),
    (
        "scratching",
        "scratchings",
        Component::of::<ScratchingFrame>(),
    ),
    ("card", "cards", Component::of::<CardFrame>()),
    (
        "retraction",
        "results, cards",
        Component::of::<RetractionFrame>(),
    ),
];

/// The `webhooks` of the OpenAPI 3.1 document: the `POST` a receiver is sent, its
/// headers and the payload of each type; the schemas they refer to are added to
/// `schemas`.
pub(super) fn described(schemas: &mut Vec<(String, RefOr<Schema>)>) -> serde_json::Value {
    let mut one_of = Vec::new();
    for (kind, topic, frame) in PAYLOADS {
        (frame.collect)(schemas);
        one_of.push(json!({
            "type": "object",
            "description": format!("A `{kind}` frame (topic `{topic}`)."),
            "required": ["type", "seq", "published_at", "data"],
            "additionalProperties": false,
            "properties": {
                "type": {"type": "string", "enum": [kind]},
                "seq": {"type": "integer", "minimum": 0, "description": "The event's position in the log (its `Racing-Seq`)."},
                "published_at": {"type": "string", "format": "date-time", "pattern": racing_events::Instant::PATTERN, "description": "When JetStream stored the event."},
                "data": {"$ref": format!("#/components/schemas/{}", (frame.name)())},
            },
        }));
    }
    let header = |name: &str, description: &str| json!({"name": name, "in": "header", "required": true, "description": description, "schema": {"type": "string"}});
    let parameters = json!([
        header(
            "webhook-id",
            "`msg_{endpoint}_{seq}`: the same on every attempt and replay \
            of an event to an endpoint; a receiver keeps the ids it has taken, to take each \
            event once."
        ),
        header(
            "webhook-timestamp",
            "When this attempt was signed, in Unix seconds; refuse \
            one more than five minutes from your clock."
        ),
        header(
            "webhook-signature",
            "Space-separated `v1,` and the base64 HMAC-SHA256 of \
            `{webhook-id}.{webhook-timestamp}.{body}` with the endpoint's secret (base64 \
            after `whsec_`); two during the 24 hours after a rotation. Compare in constant \
            time."
        ),
    ]);
    let responses = json!({
        "2XX": {"description": "Taken: the next event follows."},
        "410": {"description": "Gone: the endpoint is disabled and sent nothing more."},
        "default": {"description": "Anything else, or no answer within 15 seconds, is a \
            failure: the same delivery is attempted again after 5 s, 5 min, 30 min, 2 h, 5 h, \
            10 h, 14 h, 20 h and 24 h (later where a 429 or 503 says `Retry-After`), and the \
            endpoint is disabled, and its owner told by mail, after the last. Events after it \
            wait: an endpoint is sent in `seq` order."},
    });
    json!({
        "raceDayEvent": {"post": {
            "summary": "A race-day event of the endpoint's topics",
            "description": "Every status change, scratching, result, card and retraction of \
                the topics an endpoint follows, one `POST` each, in `seq` order, at least once. \
                `data` is the frame the live socket sends for it, byte for byte.",
            "operationId": "webhook_race_day_event",
            "tags": ["webhooks"],
            "parameters": parameters,
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "oneOf": one_of,
                "discriminator": {"propertyName": "type"},
            }}}},
            "responses": responses,
        }},
        "ping": {"post": {
            "summary": "A test of the endpoint",
            "description": "Sent by `POST /api/v1/webhooks/{id}/test`, once, never retried.",
            "operationId": "webhook_ping",
            "tags": ["webhooks"],
            "parameters": parameters,
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "type": "object",
                "required": ["type", "seq", "published_at", "data"],
                "additionalProperties": false,
                "properties": {
                    "type": {"type": "string", "enum": ["ping"]},
                    "seq": {"type": "integer", "minimum": 0, "description": "The log's position when it was sent."},
                    "published_at": {"type": "string", "format": "date-time", "pattern": racing_events::Instant::PATTERN, "description": "When it was sent."},
                    "data": {
                        "type": "object",
                        "required": ["endpoint", "url"],
                        "additionalProperties": false,
                        "properties": {
                            "endpoint": {"type": "string", "description": "The endpoint's id."},
                            "url": {"type": "string", "description": "Its URL."},
                        },
                    },
                },
            }}}},
            "responses": {"2XX": {"description": "Answered."}},
        }},
    })
}
