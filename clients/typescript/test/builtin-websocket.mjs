//! Run by live.test.mjs under `node --experimental-websocket`: follows a race through the
//! platform's own WebSocket, counting the sockets made with it, and prints what it saw.

import { Racing } from "racing-client";

const Builtin = globalThis.WebSocket;
if (Builtin === undefined) throw new Error("this Node has no WebSocket of its own");
let opened = 0;
globalThis.WebSocket = class extends Builtin {
  constructor(...args) {
    super(...args);
    opened += 1;
  }
};

const racing = new Racing({ apiKey: process.env.KEY, baseUrl: process.env.URL });
const frames = [];
for await (const frame of racing.live({ date: process.env.DAY, race: 1 })) {
  frames.push(frame.type);
  if (frames.length === 3) break;
}
console.log(JSON.stringify({ opened, frames }));
