//! The client's errors: one class per kind of answer, each carrying the API's `error` code
//! and `message`, so a caller can tell a missing horse from a spent quota with `instanceof`
//! or with `error`.

import type { ErrorCode } from "./generated/names.js";

/** Anything the client throws (but the `AbortSignal`'s own reason, when a caller aborts). */
export class RacingError extends Error {
  override name = "RacingError";
}

/** The client was set up wrong (no API key, for one): fix the call, do not retry. */
export class ConfigurationError extends RacingError {
  override name = "ConfigurationError";
}

/** An answer did not have the shape the client reads: a client older or newer than the
 * service. Upgrading one of them is the fix, not a retry. */
export class DecodeError extends RacingError {
  override name = "DecodeError";
}

/** The service could not be reached, after the retries allowed. */
export class ConnectionFailed extends RacingError {
  override name = "ConnectionFailed";
}

/** What an `ApiError` is made with. */
export interface ApiErrorInit {
  /** The HTTP status; 0 for an `error` frame of the live stream. */
  status: number;
  /** The API's code (`not_found`, `rate_limited`, ...), or `http_STATUS` when the answer
   * had none. */
  error: ErrorCode | (string & {});
  /** The API's explanation, for people. */
  message: string;
  /** How long the service asked to wait (429, 503), when it said. */
  retryAfterMs?: number | null;
  /** The answer's `X-Request-Id`, to quote to the service's operator. */
  requestId?: string | null;
}

/** The service answered with an error body `{error, message}`. */
export class ApiError extends RacingError {
  override name = "ApiError";
  /** The HTTP status; 0 for an `error` frame of the live stream. */
  readonly status: number;
  /** The API's code: `not_found`, `bad_request`, `rate_limited`, ... */
  readonly error: ErrorCode | (string & {});
  /** How long the service asked to wait, in milliseconds, when it said. */
  readonly retryAfterMs: number | null;
  /** The answer's `X-Request-Id`. */
  readonly requestId: string | null;

  constructor(init: ApiErrorInit) {
    super(`${init.status} ${init.error}: ${init.message}`);
    this.status = init.status;
    this.error = init.error;
    this.message = init.message;
    this.retryAfterMs = init.retryAfterMs ?? null;
    this.requestId = init.requestId ?? null;
  }
}

/** 400 `bad_request` (and the request-shape codes 405, 413, 414, 431): a bad argument; the
 * message says which. The same request gets the same answer. */
export class BadRequest extends ApiError {
  override name = "BadRequest";
}

/** 401 `unauthorized`, or a live connection closed because its key was revoked or
 * expired: the key is missing, wrong or no longer valid. */
export class Unauthorized extends ApiError {
  override name = "Unauthorized";
}

/** 404 `not_found`: no such horse, date, race or odds (or none as of the `as_of` asked). */
export class NotFound extends ApiError {
  override name = "NotFound";
}

/** 429 `rate_limited`: over the key's rate still after the retries allowed, or asked to
 * wait longer than `maxRetryAfterMs`. */
export class RateLimited extends ApiError {
  override name = "RateLimited";
}

/** 503 `unavailable`: the service is starting or overloaded, still after the retries. */
export class Unavailable extends ApiError {
  override name = "Unavailable";
}

/** 500 `internal` or another 5xx: a fault of the service's; its log has the details. */
export class ServerError extends ApiError {
  override name = "ServerError";
}

/** 409 `limit_reached`: a webhook endpoint more than the key's plan allows. Remove one,
 * or take a plan with more. */
export class LimitReached extends ApiError {
  override name = "LimitReached";
}

/** An `error` frame answering a message of the live stream's (a bad subscription). */
export class LiveError extends ApiError {
  override name = "LiveError";
}

const BY_CODE: Record<ErrorCode, typeof ApiError> = {
  bad_request: BadRequest,
  method_not_allowed: BadRequest,
  body_not_accepted: BadRequest,
  uri_too_long: BadRequest,
  headers_too_large: BadRequest,
  unauthorized: Unauthorized,
  not_found: NotFound,
  limit_reached: LimitReached,
  rate_limited: RateLimited,
  unavailable: Unavailable,
  internal: ServerError,
};

/** The error of an error answer: its class by the API's code, else by the status. */
export function apiError(init: ApiErrorInit): ApiError {
  const byCode = Object.hasOwn(BY_CODE, init.error) ? BY_CODE[init.error as ErrorCode] : undefined;
  const status = init.status;
  const byStatus =
    status === 401
      ? Unauthorized
      : status === 404
        ? NotFound
        : status === 429
          ? RateLimited
          : status === 503
            ? Unavailable
            : status >= 500
              ? ServerError
              : BadRequest;
  // A 429 is always a RateLimited, whatever its body said.
  const cls = status === 429 ? RateLimited : (byCode ?? byStatus);
  return new cls(init);
}
