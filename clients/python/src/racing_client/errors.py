"""The client's errors: one class per kind of answer, each carrying the API's `error` and `message`."""

from __future__ import annotations


class RacingError(Exception):
    """Anything the client raises."""


class ConfigurationError(RacingError):
    """The client was set up wrong (no API key, for one); fix the call, do not retry."""


class DecodeError(RacingError):
    """An answer did not have the shape of its document: a client older or newer than the
    service. Upgrading the client (or the service) is the fix, not a retry."""


class ConnectionFailed(RacingError):
    """The service could not be reached, after the retries allowed."""


class ApiError(RacingError):
    """The service answered with an error body `{error, message}`.

    `status` is the HTTP status, `error` the API's code (`not_found`, `rate_limited`, ...),
    `message` its explanation, `retry_after` the seconds the service asked to wait (429,
    503), if it said; `checkpoint`, on the 503 of a `min_seq` the service had not reached in
    time, the position it holds.
    """

    def __init__(
        self,
        status: int,
        error: str,
        message: str,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        checkpoint: int | None = None,
    ) -> None:
        super().__init__(f"{status} {error}: {message}")
        self.status = status
        self.error = error
        self.message = message
        self.retry_after = retry_after
        self.request_id = request_id
        self.checkpoint = checkpoint


class BadRequest(ApiError):
    """400 `bad_request` (and the request-shape codes 405, 413, 414, 431): a bad argument;
    the message says which. Retrying the same request gives the same answer."""


class Unauthorized(ApiError):
    """401 `unauthorized`, or a live connection closed because its key was revoked or
    expired: the key is missing, wrong or no longer valid."""


class NotFound(ApiError):
    """404 `not_found`: no such horse, date, race or odds (or none as of the `as_of` asked),
    or a `min_seq` or `as_of` past the end of the log."""


class RateLimited(ApiError):
    """429 `rate_limited`: over the key's rate, still after the retries allowed, or asked to
    wait longer than the client's `max_retry_after`."""


class Unavailable(ApiError):
    """503 `unavailable`: the service is starting or overloaded, or has not reached a
    `min_seq` (its `checkpoint` says where it stands), still after the retries."""


class ServerError(ApiError):
    """500 `internal` or another 5xx: a fault of the service's; its log has the details."""


class LiveError(ApiError):
    """An `error` frame answering a message of the live stream's (a bad subscription);
    `status` is 0, as no HTTP status came with it."""


_BY_CODE: dict[str, type[ApiError]] = {
    "bad_request": BadRequest,
    "method_not_allowed": BadRequest,
    "body_not_accepted": BadRequest,
    "uri_too_long": BadRequest,
    "headers_too_large": BadRequest,
    "unauthorized": Unauthorized,
    "not_found": NotFound,
    "rate_limited": RateLimited,
    "unavailable": Unavailable,
    "internal": ServerError,
}


def error_class(status: int, error: str) -> type[ApiError]:
    """The class of an error answer: by the API's code, else by the status."""
    if error in _BY_CODE:
        return _BY_CODE[error]
    if status == 401:
        return Unauthorized
    if status == 404:
        return NotFound
    if status == 429:
        return RateLimited
    if status == 503:
        return Unavailable
    if status >= 500:
        return ServerError
    return BadRequest
