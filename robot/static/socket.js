// The live event stream: a WebSocket to `ws` (relative to the page) that reconnects with backoff.
//
// The server sends a snapshot first, then one event per message. It closes a
// client that falls behind (code 1013); the next connection's snapshot
// rebuilds the view, so every reconnect simply starts from a snapshot. The
// wait before the next attempt doubles each time (0.5 s up to 15 s).

const FIRST_DELAY_S = 0.5;
const MAX_DELAY_S = 15;

export function socketUrl(path = "ws") {
  const url = new URL(path, document.baseURI);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

export class LiveSocket {
  /**
   * `onSnapshot(message)`, `onEvent(event)` and `onState(state, detail)` where state is
   * "connecting", "open" or "waiting" (detail: seconds until the next attempt and why).
   */
  constructor({onSnapshot, onEvent, onState}) {
    Object.assign(this, {onSnapshot, onEvent, onState});
    this.delay = FIRST_DELAY_S;
    this.socket = null;
    this.timer = null;
  }

  start() {
    clearTimeout(this.timer);
    this.onState("connecting");
    const socket = new WebSocket(socketUrl());
    this.socket = socket;
    socket.addEventListener("message", (message) => this.receive(message));
    socket.addEventListener("close", (close) => {
      if (this.socket !== socket) return;
      this.socket = null;
      const why = close.code === 1013 ? "this page fell behind the event stream" : "connection lost";
      this.retry(why);
    });
  }

  receive(message) {
    let data;
    try {
      data = JSON.parse(message.data);
    } catch {
      return; // not ours
    }
    if (data.kind === "snapshot") {
      this.delay = FIRST_DELAY_S;
      this.onState("open");
      this.onSnapshot(data);
    } else {
      this.onEvent(data);
    }
  }

  retry(why) {
    const wait = this.delay * (0.8 + 0.4 * Math.random());
    this.delay = Math.min(MAX_DELAY_S, this.delay * 2);
    this.onState("waiting", {seconds: wait, why});
    this.timer = setTimeout(() => this.start(), wait * 1000);
  }

  /** Reconnect at once (the user asked, or the page became visible again). */
  now() {
    if (this.socket) return;
    this.delay = FIRST_DELAY_S;
    this.start();
  }

  /** Give up on a connection that looks open but gets no answers (robotd hangs): reconnect with backoff. */
  drop(why) {
    const socket = this.socket;
    if (!socket) return;
    this.socket = null;
    socket.close();
    this.retry(why);
  }
}
