//! The WebSocket in a browser (and wherever the platform has the standard one and is not
//! Node): the platform's own. It sets no headers on the upgrade, so the key goes as the
//! one query parameter the socket takes, `api_key`, which the service never logs.
//! package.json's `imports` picks this file for browsers, websocket-node.ts for Node.

import type { WebSocketLike } from "./websocket.js";

/** A WebSocket to `url`, opening, with the key of `headers` in its query. */
export async function openWebSocket(url: string, headers: Record<string, string>): Promise<WebSocketLike> {
  const key = headers["X-API-Key"] ?? "";
  return new WebSocket(`${url}?api_key=${encodeURIComponent(key)}`);
}
