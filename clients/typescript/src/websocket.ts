//! The little of a WebSocket the client uses: what the browser's, Node's own (Node 22 and
//! later) and the `ws` package's all have, so that the socket transport is written once.

/** A WebSocket as the browser's API describes it, the parts the client uses. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open", listener: () => void): void;
  addEventListener(type: "message", listener: (event: { readonly data: unknown }) => void): void;
  addEventListener(
    type: "close",
    listener: (event: { readonly code: number; readonly reason: string }) => void,
  ): void;
  addEventListener(type: "error", listener: (event: unknown) => void): void;
}

/** The largest frame the client takes, as the service's own limit on frames it sends. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
