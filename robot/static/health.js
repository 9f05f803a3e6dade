// The Computer card: CPU temperature, throttling, disk, memory and load of the machine robotd runs on
// (api/health), read every few seconds while the run tab is shown.

import {api} from "./api.js";
import {showRows} from "./machine.js";

const PARTS = [["temperature", "CPU temperature"], ["throttling", "Throttling"], ["disk", "Disk"],
               ["memory", "Memory"], ["load", "Load"]];

export class HealthCard {
  constructor(list, note) {
    Object.assign(this, {list, note});
  }

  async refresh() {
    let report;
    try {
      report = await api("api/health", {timeoutMs: 8000});
    } catch (error) {
      this.note.textContent = `Could not read the computer's health: ${error.message}`;
      return;
    }
    this.show(report);
  }

  show(report) {
    showRows(this.list, PARTS.filter(([key]) => report[key]).map(([key, name]) => {
      const part = report[key];
      const bad = part.available && ((key === "throttling" && (part.now || []).length) ||
                                     (key === "temperature" && part.celsius >= 80));
      return [name, part.text, part.available ? (bad ? "bad" : "") : "muted"];
    }));
    this.note.textContent = `Read at ${new Date().toLocaleTimeString()}; every few seconds while this tab is shown.`;
  }
}
