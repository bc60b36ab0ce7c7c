//! The OpenAPI 3.1 description of the API, generated from the code: an operation for
//! each row of the route table (its parameters from the handler's, its body's schema
//! derived by `racing_projections` from the types that render the documents), the
//! `#[utoipa::path]` attributes of the router's handlers (the WebSocket, the description
//! itself), and what every operation shares. The description is served as JSON at
//! `/api/v1/openapi.json` and as a self-contained HTML page at `/api/v1/docs` (see
//! `html`), each rendered once, behind the key like every other `/api/v1` path.

mod html;

use std::sync::LazyLock;

use axum::extract::RawQuery;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use serde_json::json;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{
    HttpMethod, Operation, OperationBuilder, ParameterBuilder, ParameterIn,
};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::{
    Components, ContentBuilder, Ref, RefOr, Required, Response as ApiResponse, ResponseBuilder,
    Schema,
};
use utoipa::OpenApi;

use super::described::{
    DOCS_PATH, ODDS_SOCKET_PATH, OPENAPI_PATH, PUBLIC_PATHS, REFERENCE_TAG, TITLE, VERSION,
};
use super::error::ErrorBody;
use super::error::{ApiError, UNAUTHORIZED_MESSAGE};
use super::input::MinSeq;
use super::query::Query;
use super::respond::with_type;
use super::route::{Arg, Component, Declared, In, Route};
use super::state::AppState;
use super::table::ROUTES;

/// Name of the security scheme of the `X-API-Key` header.
const KEY_HEADER_SCHEME: &str = "api_key";
/// Name of the security scheme of the WebSocket's `?api_key=`.
const KEY_QUERY_SCHEME: &str = "api_key_query";

/// The description, built once from the code.
pub static SPEC: LazyLock<utoipa::openapi::OpenApi> = LazyLock::new(describe);

/// The description as served: serialised once.
static SPEC_JSON: LazyLock<Bytes> =
    LazyLock::new(|| Bytes::from(serde_json::to_vec(&*SPEC).unwrap_or_default()));

/// The HTML reference as served: rendered once.
static DOCS_HTML: LazyLock<Bytes> = LazyLock::new(|| Bytes::from(html::render(&SPEC)));

/// The routes of the description and the reference; both are rendered here, at start-up,
/// so that a request never pays for it and a broken description shows at once.
pub(super) fn routes() -> Router<AppState> {
    LazyLock::force(&SPEC_JSON);
    LazyLock::force(&DOCS_HTML);
    Router::new()
        .route(OPENAPI_PATH, get(openapi_json))
        .route(DOCS_PATH, get(docs_page))
}

/// The description and the reference at [`PUBLIC_PATHS`], for a browser with no key;
/// the reference's link to the description is relative, so it works from either place.
pub(super) fn public_routes() -> Router {
    Router::new()
        .route(PUBLIC_PATHS[0], get(docs_page))
        .route(PUBLIC_PATHS[1], get(openapi_json))
}

/// The OpenAPI 3.1 document of this API: every endpoint, its parameters and responses,
/// the document schemas, the error body and the key scheme.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "reference",
    summary = "This OpenAPI 3.1 document",
    description = "The description of every endpoint, generated from the service's code. \
        Takes no query parameters.",
    responses(
        (status = 200, description = "The OpenAPI 3.1 document.", body = Object),
        (status = 400, description = "A query parameter (there are none).", body = ErrorBody),
    )
)]
pub(super) async fn openapi_json(RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &[])?;
    Ok(with_type(SPEC_JSON.clone(), "application/json"))
}

/// The same description as a readable page, with no external script, style or font.
#[utoipa::path(
    get,
    path = "/api/v1/docs",
    tag = "reference",
    summary = "This reference as an HTML page",
    description = "A self-contained page (no script, no external style or font) rendered \
        from this OpenAPI document. Takes no query parameters.",
    responses(
        (status = 200, description = "The HTML page.", body = String, content_type = "text/html"),
        (status = 400, description = "A query parameter (there are none).", body = ErrorBody),
    )
)]
pub(super) async fn docs_page(RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    Query::parse(raw.as_deref(), &[])?;
    Ok(with_type(DOCS_HTML.clone(), "text/html; charset=utf-8"))
}

const API_DESCRIPTION: &str = "A read-only JSON API over horse racing data: horse \
profiles and form, results by date and by race, race cards for today and by date, the \
current odds of a race, a live odds WebSocket and its Server-Sent Events form, and signed \
webhooks of the race day (the `webhooks` of this document).

Every request carries an API key in the `X-API-Key` header (the WebSocket also takes it \
as the query parameter `api_key`). A missing or wrong key gets 401 on any path and any \
method, before routing, so nothing about the data leaks without one. `/api/v1/` answers an \
index of links to the reference and every endpoint.

Only `GET` (and `HEAD`, which answers the same headers without a body) is allowed; any \
other method gets 405 with `Allow: GET, HEAD`, and a request with a body gets 413 unread. \
The one exception is `/api/v1/webhooks`, a key's webhook endpoints: account configuration, \
not racing data, which takes `POST` and `DELETE` and a JSON body.

Every error answers `{\"error\": CODE, \"message\": TEXT}`; see the `ErrorBody` schema for \
the codes.

Units: `distance` in metres, `weight` in pounds, `total_stakes` in whole Hong Kong \
dollars, `win_odds` decimal (stake included, so at least 1.0), `finish_time` as `m:ss.cc` \
(minutes, seconds, hundredths). Dates are `YYYY-MM-DD`.

Documents may gain fields within v1 (additive changes only): ignore fields you do not \
know. Each successful answer carries a strong `ETag` and `Cache-Control: private, \
no-cache`; send the tag back in `If-None-Match` to get 304 while the document is unchanged.

History: every data answer (and its 304) carries `Racing-Seq`, the stream sequence it \
reflects; a WebSocket `subscribe` with it as `since` resumes right after the answer, \
missing and repeating nothing. Every document endpoint takes `as_of=SEQ` and answers the \
document exactly as it was served once the log up to `SEQ` had been applied. A race's \
odds moves are pages of `/api/v1/odds/{date}/{race_number}/history`, and \
`/api/v1/changes` lists every document that changed since a point of the log.

Rate limits: each key has a token bucket; every answer past the key check carries \
`RateLimit` and `RateLimit-Policy` (IETF draft-ietf-httpapi-ratelimit-headers-08); over \
the limit, 429 with `Retry-After` in seconds.";

/// What the description holds besides the route table: the service, the router's
/// handlers, the tags and the key scheme.
#[derive(OpenApi)]
#[openapi(
    info(
        description = API_DESCRIPTION,
        license(name = "MIT", identifier = "MIT"),
    ),
    paths(
        super::live::odds_socket,
        super::sse::live_events,
        super::webhooks::create,
        super::webhooks::list,
        super::webhooks::read,
        super::webhooks::remove,
        super::webhooks::rotate,
        super::webhooks::test,
        super::webhooks::deliveries,
        super::webhooks::replay,
        openapi_json,
        docs_page,
        super::asyncapi::asyncapi_json
    ),
    security(("api_key" = [])),
    tags(
        (name = "meetings", description = "Which dates have meetings, and what is known of each."),
        (name = "horses", description = "Horse profiles and form, and horses by name."),
        (name = "results", description = "Race results by date and by race."),
        (name = "racecards", description = "Race cards: declared runners, scratchings removed."),
        (name = "odds", description = "Current, past and live win odds."),
        (name = "people", description = "Jockeys and trainers: their rides, places and seasons."),
        (name = "changes", description = "The change feed: every document that changed since a point of the log."),
        (name = "webhooks", description = "A key's webhook endpoints: each sent every race-day event of its topics as a signed POST (the payloads are this document's `webhooks`)."),
        (name = "reference", description = "The API's index, this description as JSON and as a page, and the WebSocket's AsyncAPI description."),
    ),
)]
struct ApiDoc;

/// The whole description: the route table's operations first, in its order, then the
/// router's, then what every operation shares.
fn describe() -> utoipa::openapi::OpenApi {
    let mut api = ApiDoc::openapi();
    // Title and version from one place, which the AsyncAPI document reads too.
    api.info.title = TITLE.to_owned();
    api.info.version = VERSION.to_owned();
    let mut schemas = Vec::new();
    (Component::of::<ErrorBody>().collect)(&mut schemas);
    let mut paths = utoipa::openapi::Paths::new();
    for route in ROUTES.iter() {
        paths.add_path_operation(route.path, vec![HttpMethod::Get], operation(route));
        (route.doc.body.collect)(&mut schemas);
        for p in route.handler.params() {
            (p.schema.collect)(&mut schemas);
        }
        (<Option<MinSeq> as Arg>::declared().schema.collect)(&mut schemas);
    }
    let others = std::mem::take(&mut api.paths.paths);
    paths.paths.extend(others);
    api.paths = paths;
    // OpenAPI 3.1's `webhooks`, which utoipa has no field for: written beside `paths`.
    let webhooks = super::webhooks::described(&mut schemas);
    let top = api.extensions.get_or_insert_with(Default::default);
    top.insert("webhooks".into(), webhooks);
    let components = api.components.get_or_insert_with(Components::new);
    components.schemas.extend(schemas);
    components.schemas.values_mut().for_each(instants);
    share(&mut api);
    api
}

/// Gives every instant of `schema` (a string of `format: date-time`) the one pattern the
/// service writes instants in, [`racing_events::Instant::PATTERN`]: UTC, `Z`, milliseconds.
fn instants(schema: &mut RefOr<Schema>) {
    use utoipa::openapi::schema::{AdditionalProperties, ArrayItems, KnownFormat, SchemaFormat};
    let RefOr::T(schema) = schema else {
        return;
    };
    match schema {
        Schema::Object(o) => {
            if matches!(
                o.format,
                Some(SchemaFormat::KnownFormat(KnownFormat::DateTime))
            ) {
                o.pattern = Some(racing_events::Instant::PATTERN.to_owned());
            }
            o.properties.values_mut().for_each(instants);
            if let Some(AdditionalProperties::RefOr(s)) = o.additional_properties.as_deref_mut() {
                instants(s);
            }
        }
        Schema::Array(a) => {
            if let ArrayItems::RefOrSchema(s) = &mut a.items {
                instants(s);
            }
        }
        Schema::OneOf(x) => x.items.iter_mut().for_each(instants),
        Schema::AllOf(x) => x.items.iter_mut().for_each(instants),
        Schema::AnyOf(x) => x.items.iter_mut().for_each(instants),
        _ => {}
    }
}

/// A row's operation: its parameters, its 200 and its own errors.
fn operation(route: &Route) -> Operation {
    let doc = &route.doc;
    let body = |description: &str, schema: String| {
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name(schema)))
                    .build(),
            )
            .build()
    };
    // Every read of the table takes `min_seq`, or the header that says the same.
    let min_seq = <Option<MinSeq> as Arg>::declared();
    let position = ParameterBuilder::new()
        .name("Racing-Min-Seq")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "As the query parameter `min_seq` (with both, the larger counts): answer only \
             once the read models hold the log up to this stream sequence.",
        ))
        .schema(Some(Ref::from_schema_name((min_seq.schema.name)())))
        .build();
    let mut op = OperationBuilder::new()
        .tag(doc.tag)
        .summary(Some(doc.summary))
        .description(Some(format!("{} {POSITION}", doc.description)))
        .operation_id(Some(doc.id))
        .parameters(Some(
            route
                .handler
                .params()
                .iter()
                .chain([&min_seq])
                .map(parameter)
                .chain([position]),
        ))
        .response("200", {
            let mut ok = body(doc.ok, (doc.body.name)().into_owned());
            if doc.tag != REFERENCE_TAG {
                ok.headers.insert("Racing-Seq".into(), racing_seq());
            }
            ok
        });
    let mut past = false;
    for (status, description) in doc.errors {
        let description = if *status == "404" {
            past = true;
            format!("{description} {PAST_THE_LOG}")
        } else {
            (*description).to_owned()
        };
        op = op.response(*status, body(&description, "ErrorBody".into()));
    }
    if !past {
        op = op.response(
            "404",
            body(&format!("`not_found`: {PAST_THE_LOG}"), "ErrorBody".into()),
        );
    }
    op.build()
}

/// What every read of the table says of `min_seq`, after its own description.
const POSITION: &str = "With `min_seq` (or the header `Racing-Min-Seq`), answered only once \
    the read models hold the log up to that stream sequence: waited for up to a limit (2 s \
    by default), then a 503 with the checkpoint they hold.";

/// The 404 every read of the table may give for a position past the end of the log.
const PAST_THE_LOG: &str = "A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the \
    log: no event has that position yet.";

/// A handler's parameter as OpenAPI describes it.
fn parameter(p: &Declared) -> utoipa::openapi::path::Parameter {
    let place = match p.place {
        In::Path => ParameterIn::Path,
        In::Query => ParameterIn::Query,
    };
    ParameterBuilder::new()
        .name(p.name)
        .parameter_in(place)
        .description(Some(p.doc))
        .required(if p.required {
            Required::True
        } else {
            Required::False
        })
        .schema(Some(Ref::from_schema_name((p.schema.name)())))
        .build()
}

// ---- Shared responses and headers, added to every operation. ----

/// `(status, component name, description, example message)` of the responses any
/// operation can give, whatever its path.
const COMMON_ERRORS: [(&str, &str, &str, &str); 9] = [
    (
        "400",
        "BadRequest",
        "`bad_request`: a malformed path segment, or an unknown, repeated or bad query \
         parameter; the message says which.",
        "unknown query parameter `page` (this endpoint takes no query parameters)",
    ),
    (
        "401",
        "Unauthorized",
        "`unauthorized`: a missing or wrong key, on any path and any method, checked \
         before routing. Always exactly this body.",
        UNAUTHORIZED_MESSAGE,
    ),
    (
        "405",
        "MethodNotAllowed",
        "`method_not_allowed`: any method but GET and HEAD on this path (`Allow: GET, \
         HEAD`). Listed on the GET operation because OpenAPI has no place for the answers \
         to undeclared methods.",
        "only GET and HEAD are allowed",
    ),
    (
        "413",
        "BodyNotAccepted",
        "`body_not_accepted`: the request has a body; the API is read-only and reads none.",
        "the API takes no request body",
    ),
    (
        "414",
        "UriTooLong",
        "`uri_too_long`: the request target (path and query) is over 2,048 bytes.",
        "the request target is over 2048 bytes",
    ),
    (
        "429",
        "RateLimited",
        "`rate_limited`: over the key's request rate (come back after `Retry-After` \
         seconds), or, on the WebSocket, too many open connections for the key.",
        "too many requests for this key; retry in 1 s",
    ),
    (
        "431",
        "HeadersTooLarge",
        "`headers_too_large`: more than 64 header fields or 16 KiB of headers.",
        "at most 64 header fields and 16384 header bytes are accepted",
    ),
    (
        "500",
        "Internal",
        "`internal`: a bug; the details are in the service's log only.",
        "internal error",
    ),
    (
        "503",
        "Unavailable",
        "`unavailable`: the read models are still being built at start-up, the service is \
         at its in-flight limit, or the request took over the time limit (`Retry-After: 1`); \
         a read with `min_seq` (or `Racing-Min-Seq`, or an `as_of` past the checkpoint) \
         whose position the read models here did not reach within the wait (`Retry-After: \
         1`, the checkpoint they hold in `Racing-Checkpoint` and the body's `checkpoint`); \
         or, for a managed key, the key registry has been out of reach for too long to \
         check the key for revocation (`Retry-After: 5`).",
        "the read models are still being built from the log; retry shortly",
    ),
];

fn string_schema() -> RefOr<Schema> {
    ObjectBuilder::new().schema_type(Type::String).into()
}

fn integer_schema() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(0))
        .into()
}

fn response_header(schema: RefOr<Schema>, description: &str) -> utoipa::openapi::header::Header {
    HeaderBuilder::new()
        .schema(schema)
        .description(Some(description))
        .build()
}

fn etag() -> utoipa::openapi::header::Header {
    response_header(
        string_schema(),
        "Strong validator of the body (a quoted 128-bit hash). Send it back in \
         `If-None-Match` to get 304 while the document is unchanged.",
    )
}

fn cache_control() -> utoipa::openapi::header::Header {
    response_header(
        string_schema(),
        "`private, no-cache`: keep a copy, but revalidate before each use (results can be \
         amended at any time). A document `as_of` a point of the log never changes: \
         `private, max-age=31536000, immutable`.",
    )
}

fn racing_seq() -> utoipa::openapi::header::Header {
    response_header(
        integer_schema(),
        "The stream sequence the answer reflects: for a document, where the log stood when \
         it last changed (it has answered the same since), or its `as_of`; for a page of \
         history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` \
         misses nothing after the answer and repeats nothing in it; it is also an `as_of` \
         that answers this document again.",
    )
}

fn rate_limit_headers() -> [(&'static str, utoipa::openapi::header::Header); 2] {
    [
        (
            "RateLimit",
            response_header(
                string_schema(),
                "What is left of the key's quota: `\"default\";r=REMAINING;t=SECONDS` until \
                 it is full again (draft-ietf-httpapi-ratelimit-headers-08).",
            ),
        ),
        (
            "RateLimit-Policy",
            response_header(
                string_schema(),
                "The key's quota: `\"default\";q=BURST;w=WINDOW` (BURST requests per WINDOW \
                 seconds).",
            ),
        ),
    ]
}

fn retry_after(description: &str) -> utoipa::openapi::header::Header {
    response_header(integer_schema(), description)
}

fn error_response(code_and_when: &str, message: &str, status: &str) -> ApiResponse {
    let code = match status {
        "400" => "bad_request",
        "401" => "unauthorized",
        "404" => "not_found",
        "405" => "method_not_allowed",
        "409" => "limit_reached",
        "413" => "body_not_accepted",
        "414" => "uri_too_long",
        "429" => "rate_limited",
        "431" => "headers_too_large",
        "500" => "internal",
        _ => "unavailable",
    };
    let mut response = ResponseBuilder::new().description(code_and_when).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ErrorBody")))
            .example(Some(json!({"error": code, "message": message})))
            .build(),
    );
    match status {
        "405" => {
            response = response.header("Allow", response_header(string_schema(), "`GET, HEAD`"));
            for (name, h) in rate_limit_headers() {
                response = response.header(name, h);
            }
        }
        "429" => {
            response = response.header(
                "Retry-After",
                retry_after("Seconds until a request will be accepted again."),
            );
            for (name, h) in rate_limit_headers() {
                response = response.header(name, h);
            }
        }
        "503" => {
            response = response
                .header(
                    "Retry-After",
                    retry_after("`1` (`5` for a key not checked): retry in a second."),
                )
                .header(
                    "Racing-Checkpoint",
                    response_header(
                        integer_schema(),
                        "Only for a position not reached in time: the checkpoint the read \
                         models hold.",
                    ),
                );
        }
        _ => {}
    }
    response.build()
}

fn not_modified() -> ApiResponse {
    let mut response = ResponseBuilder::new()
        .description(
            "Not modified: the `If-None-Match` of the request matches the current `ETag` \
             (or is `*`). No body. On the data endpoints, with the 200's `Racing-Seq`.",
        )
        .header("ETag", etag())
        .header("Cache-Control", cache_control());
    for (name, h) in rate_limit_headers() {
        response = response.header(name, h);
    }
    response.build()
}

/// Fills in what every operation shares: the key schemes, the error responses any request
/// can meet, the `If-None-Match` parameter and the caching and rate-limit headers.
fn share(api: &mut utoipa::openapi::OpenApi) {
    let components = api.components.get_or_insert_with(Components::new);
    components.security_schemes.insert(
        KEY_HEADER_SCHEME.into(),
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            "X-API-Key",
            "The key sent to a subscriber by e-mail. Keep it out of version control \
             and browser code. The header name is case-insensitive.",
        ))),
    );
    components.security_schemes.insert(
        KEY_QUERY_SCHEME.into(),
        SecurityScheme::ApiKey(ApiKey::Query(ApiKeyValue::with_description(
            "api_key",
            "The key as a query parameter: only on the live odds WebSocket and its event \
             stream (`/api/v1/live`), for clients that cannot set headers (a WebSocket \
             upgrade, an `EventSource`). Never logged.",
        ))),
    );
    for (status, name, when, message) in COMMON_ERRORS {
        components
            .responses
            .insert(name.into(), error_response(when, message, status).into());
    }
    components
        .responses
        .insert("NotModified".into(), not_modified().into());

    for (path, item) in api.paths.paths.iter_mut() {
        if path.starts_with(super::webhooks::WEBHOOKS_PATH) {
            for op in [&mut item.get, &mut item.post, &mut item.delete]
                .into_iter()
                .flatten()
            {
                complete_account(op);
            }
            continue;
        }
        let socket = path == ODDS_SOCKET_PATH || path == super::sse::LIVE_EVENTS_PATH;
        for op in [&mut item.get].into_iter().flatten() {
            complete(op, socket);
        }
    }
}

/// Adds to an operation of the key's account (its webhook endpoints) what it shares with
/// every other: the rate-limit headers and the errors any request can meet but a read's
/// 405 and 304 (these paths are not cached, and take what their methods say).
fn complete_account(op: &mut Operation) {
    let responses = &mut op.responses.responses;
    for (status, response) in responses.iter_mut() {
        if let RefOr::T(response) = response {
            if !status.starts_with('1') {
                for (name, h) in rate_limit_headers() {
                    response.headers.insert(name.into(), h);
                }
            }
        }
    }
    for (status, name, ..) in COMMON_ERRORS {
        if status != "405" {
            responses
                .entry(status.into())
                .or_insert_with(|| Ref::new(format!("#/components/responses/{name}")).into());
        }
    }
}

/// Adds to one operation what every operation shares.
fn complete(op: &mut Operation, socket: bool) {
    let responses = &mut op.responses.responses;
    for (status, response) in responses.iter_mut() {
        let RefOr::T(response) = response else {
            continue;
        };
        if status.starts_with('2') && !socket {
            response.headers.insert("ETag".into(), etag());
            response
                .headers
                .insert("Cache-Control".into(), cache_control());
        }
        if !status.starts_with('1') {
            for (name, h) in rate_limit_headers() {
                response.headers.insert(name.into(), h);
            }
        }
    }
    if socket {
        let headers = op.parameters.get_or_insert_with(Vec::new);
        for (name, pattern, what) in super::live::UPGRADE_HEADERS {
            headers.push(
                ParameterBuilder::new()
                    .name(name)
                    .parameter_in(ParameterIn::Header)
                    .required(Required::True)
                    .description(Some(what))
                    .schema(Some(
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .pattern(Some(pattern)),
                    ))
                    .build(),
            );
        }
    }
    if !socket {
        responses.insert(
            "304".into(),
            Ref::new("#/components/responses/NotModified").into(),
        );
        op.parameters.get_or_insert_with(Vec::new).push(
            ParameterBuilder::new()
                .name("If-None-Match")
                .parameter_in(ParameterIn::Header)
                .required(Required::False)
                .description(Some(
                    "The `ETag` of a copy the client holds: 304 with no body while it is \
                     still current.",
                ))
                .schema(Some(string_schema()))
                .build(),
        );
    }
    for (status, name, ..) in COMMON_ERRORS {
        responses
            .entry(status.into())
            .or_insert_with(|| Ref::new(format!("#/components/responses/{name}")).into());
    }
}

#[cfg(test)]
mod tests;
