//! The WebSocket in Node: Node's own where it has one (Node 22 and later), else the `ws`
//! package's; both send the key in `X-API-Key`, where no log of a URL can show it.
//! package.json's `imports` picks this file for Node, websocket-browser.ts elsewhere.

import { ConfigurationError } from "./errors.js";
import { MAX_FRAME_BYTES, type WebSocketLike } from "./websocket.js";

type Constructor = new (
  url: string,
  init: { headers: Record<string, string>; maxPayload?: number },
) => WebSocketLike;

/** A WebSocket to `url`, opening, with `headers` on its upgrade request. */
export async function openWebSocket(url: string, headers: Record<string, string>): Promise<WebSocketLike> {
  // Node's own takes headers in its second argument (undici's WebSocketInit).
  const builtin = (globalThis as unknown as { WebSocket?: Constructor }).WebSocket;
  if (builtin !== undefined) return new builtin(url, { headers });
  let ws: { WebSocket: unknown };
  try {
    ws = await import("ws");
  } catch (e) {
    throw new ConfigurationError("live() needs the ws package before Node 22: npm install ws", { cause: e });
  }
  const WebSocket = ws.WebSocket as Constructor;
  return new WebSocket(url, { headers, maxPayload: MAX_FRAME_BYTES });
}
