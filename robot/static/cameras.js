// The live camera views of the run tab: one MJPEG <img> per camera robotd reports.

function byId(id) {
  return document.getElementById(id);
}

export class CameraView {
  constructor() {
    this.box = byId("cameras");
    this.key = "";
    this.wanted = false;
  }

  /** Show the cameras of api/status; rebuilt only when the list or a camera's health changes. True if rebuilt. */
  show(cameras) {
    const key = JSON.stringify(cameras.map((c) => [c.name, c.open, c.error]));
    if (key === this.key) return false; // unchanged: keep the streams running
    this.key = key;
    if (!cameras.length) {
      const note = document.createElement("p");
      note.className = "caption";
      note.textContent = "No camera configured.";
      this.box.replaceChildren(note);
      return true;
    }
    this.box.replaceChildren(...cameras.map((camera) => this.figure(camera)));
    this.streams(this.wanted);
    return true;
  }

  figure(camera) {
    const figure = document.createElement("figure");
    figure.className = "camera";
    figure.dataset.camera = camera.name;
    if (camera.open) {
      const img = document.createElement("img");
      img.alt = `Live view of camera ${camera.name}`;
      img.dataset.stream = `stream/${encodeURIComponent(camera.name)}`;
      img.addEventListener("error", () => {
        if (!img.getAttribute("src")) return; // released on purpose
        img.removeAttribute("src");
        setTimeout(() => this.streams(this.wanted), 3000); // the stream broke (robotd restarting?): try again
      });
      figure.append(img);
    }
    if (camera.error) {
      const error = document.createElement("p");
      error.className = "camera-error";
      error.textContent = camera.error;
      figure.append(error);
    }
    const caption = document.createElement("figcaption");
    caption.textContent = `${camera.name} (${camera.kind})`;
    figure.append(caption);
    return figure;
  }

  /** Hold the streams only while they can be seen: each one is a connection, and CPU on the Pi. */
  streams(on, restart = false) {
    this.wanted = on;
    for (const img of this.box.querySelectorAll("img[data-stream]")) {
      if (on && (restart || !img.getAttribute("src"))) img.src = img.dataset.stream;
      if (!on) img.removeAttribute("src");
    }
  }
}
