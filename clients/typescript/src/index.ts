//! The TypeScript client of the racing data service: every operation of the API typed from
//! its own OpenAPI description, polite by default, and `live()`, a live stream of odds and
//! the race day that resumes by itself. See README.md beside this package.

export {
  Racing,
  OPERATIONS,
  type Answer,
  type CallOptions,
  type DocumentPath,
  type GetParameters,
  type Query,
} from "./client.js";
export {
  ApiError,
  BadRequest,
  ConfigurationError,
  ConnectionFailed,
  DecodeError,
  LimitReached,
  LiveError,
  NotFound,
  RacingError,
  RateLimited,
  ServerError,
  Unauthorized,
  Unavailable,
  type ApiErrorInit,
} from "./errors.js";
export {
  EVENT_TYPES,
  FRAME_TYPES,
  LiveStream,
  MAX_CONFLATE_MS,
  TOPICS,
  type EventFrame,
  type LiveFrame,
  type LiveOptions,
} from "./live.js";
export type { Meta, RateLimit, WithMeta } from "./request.js";
export {
  TOLERANCE_S,
  verify,
  Webhooks,
  WebhookVerificationError,
  type NewEndpoint,
  type WebhookHeaders,
  type WebhookPayload,
} from "./webhooks.js";
export { DEFAULT_URL, VERSION, type ClientOptions, type Settings } from "./settings.js";
export type { Target } from "./transport.js";
export type * from "./generated/names.js";
export type { components, operations, paths } from "./generated/openapi.js";
export type { components as socketComponents } from "./generated/asyncapi.js";
