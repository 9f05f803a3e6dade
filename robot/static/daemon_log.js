// robotd's own log, followed: the newest lines from api/logs?after=SEQ, at most LINES of them in the page.
//
// Each line is set as text (never as HTML), so a log message with markup in it shows as written.

import {api} from "./api.js";

const LINES = 200;

function clockOf(unixSeconds) {
  return new Date(unixSeconds * 1000).toLocaleTimeString(undefined, {hour: "2-digit", minute: "2-digit", second: "2-digit"});
}

export class DaemonLog {
  constructor(list, follow) {
    Object.assign(this, {list, follow, after: 0, busy: false});
  }

  async refresh() {
    if (this.busy) return;
    this.busy = true;
    try {
      const page = await api(`api/logs?after=${this.after}&limit=${LINES}`, {timeoutMs: 8000});
      if (page.last_seq < this.after) this.after = 0; // robotd restarted: its numbers begin again
      this.add(page);
    } catch {
      /* the connection banner says when robotd is away; the next poll tries again */
    } finally {
      this.busy = false;
    }
  }

  add(page) {
    const items = [];
    if (page.missed && this.after) items.push(this.item({level: "INFO", t: null, logger: "",
      message: `… ${page.missed} line${page.missed === 1 ? "" : "s"} not shown (robotd keeps the newest only)`}));
    for (const line of page.lines) items.push(this.item(line));
    this.after = Math.max(this.after, page.last_seq);
    if (!items.length) return;
    const atBottom = this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 4;
    this.list.append(...items);
    while (this.list.childElementCount > LINES) this.list.firstElementChild.remove();
    if (this.follow.checked && (atBottom || this.list.scrollTop === 0)) this.list.scrollTop = this.list.scrollHeight;
  }

  item(line) {
    const item = document.createElement("li");
    item.dataset.level = line.level;
    const time = document.createElement("span");
    time.className = "log-time";
    time.textContent = line.t ? clockOf(line.t) : "";
    const text = document.createElement("span");
    text.textContent = `${line.level === "INFO" ? "" : line.level + " "}${line.logger ? line.logger + ": " : ""}${line.message}`;
    item.append(time, text);
    return item;
  }
}
