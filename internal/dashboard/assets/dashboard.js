// The dashboard page: polls api/dashboard and redraws. No framework; every
// text node is set with textContent, so names from the ledger or the
// warehouse can never become markup. Amounts arrive as exact decimal
// strings and are shown as such: a float is used only for bar heights.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const TIMINGS = ["EARLY", "ON_TIME", "LATE"];
  const every = Number(document.body.dataset.refreshMs) || 5000;

  // money pads an exact decimal string to at least two decimals, by text.
  function money(s) {
    let [int, frac = ""] = String(s).split(".");
    if (frac.length < 2) frac = (frac + "00").slice(0, 2);
    return int + "." + frac + " €";
  }

  const pad2 = (n) => String(n).padStart(2, "0");
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const hhmm = (d) => pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes());
  const day = (d) => d.getUTCDate() + " " + MONTHS[d.getUTCMonth()];
  const stamp = (d) => d.getUTCFullYear() + "-" + pad2(d.getUTCMonth() + 1) + "-" + pad2(d.getUTCDate()) + " " + hhmm(d) + ":" + pad2(d.getUTCSeconds());

  function duration(sec) {
    const neg = sec < 0;
    sec = Math.abs(sec);
    const h = Math.floor(sec / 3600), m = Math.floor((sec % 3600) / 60), s = sec % 60;
    const parts = [];
    if (h) parts.push(h + "h");
    if (h || m) parts.push(m + "m");
    parts.push(s + "s");
    return (neg ? "-" : "") + parts.join(" ");
  }

  function el(tag, attrs, text) {
    const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function timingClass(t) {
    return TIMINGS.includes(t) ? "t-" + t : "t-other";
  }

  function renderWatermark(snap) {
    const p = document.getElementById("watermark");
    p.replaceChildren();
    const wm = snap.watermark;
    if (!wm) {
      p.textContent = snap.errors && snap.errors.watermark ? "unknown" : "none yet: no order accepted";
      return;
    }
    p.append("W = ", el("strong", { id: "wm-at" }, stamp(new Date(wm.at)) + " UTC"),
      ", lag ", el("strong", { id: "wm-lag" }, duration(wm.lag_seconds)),
      " behind processing time " + stamp(new Date(snap.now)) + " UTC");
  }

  // niceStep picks 1, 2 or 5 times a power of ten for about four grid lines.
  function niceStep(max) {
    const raw = max / 4, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (raw <= m * p) return m * p;
    return 10 * p;
  }

  function renderChart(snap) {
    const svg = document.getElementById("chart");
    const plot = document.getElementById("plot");
    plot.replaceChildren();
    const bars = snap.bars || [];
    const groups = [];
    for (const b of bars) {
      const g = groups[groups.length - 1];
      if (g && g.start === b.window_start) g.bars.push(b);
      else groups.push({ start: b.window_start, end: b.window_end, bars: [b] });
    }
    const barW = 26, barGap = 6, groupGap = 28, left = 70, right = 20, top = 76, plotH = 200, bottom = 50;
    const groupW = (g) => g.bars.length * barW + (g.bars.length - 1) * barGap;
    const size = (width, height) => {
      svg.setAttribute("width", width);
      svg.setAttribute("height", height);
      svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    };
    if (!groups.length) {
      const msg = snap.errors && snap.errors.bars ? "Sales unknown: the dashboard view could not be read (see above)."
        : "No panes yet: publish orders and let the watermark tick.";
      size(640, 60);
      svg.setAttribute("aria-label", msg);
      plot.append(el("svg:text", { x: 16, y: 34, class: "empty" }, msg));
      return;
    }
    const width = Math.max(480, left + groups.reduce((s, g) => s + groupW(g) + groupGap, 0) + right);
    const height = top + plotH + bottom;
    size(width, height);
    const base = top + plotH;
    svg.setAttribute("aria-label", "Sales per hour and country: " + bars.length + " bars over " + groups.length + " hours");

    const max = Math.max(...bars.map((b) => Math.abs(parseFloat(b.importe)) || 0)) || 1;
    const step = niceStep(max), top_ = Math.ceil(max / step) * step;
    const y = (v) => base - (v / top_) * plotH;
    for (let v = 0; v <= top_ + step / 2; v += step) {
      plot.append(el("svg:line", { x1: left, x2: width - right, y1: y(v), y2: y(v), class: "grid" }));
      plot.append(el("svg:text", { x: left - 8, y: y(v) + 4, "text-anchor": "end", class: "tick" }, String(Math.round(v * 100) / 100)));
    }

    const wmAt = snap.watermark ? Date.parse(snap.watermark.at) : NaN;
    let x = left + groupGap / 2, wmX = null, prevDay = null;
    for (const g of groups) {
      const w = groupW(g), start = Date.parse(g.start), end = Date.parse(g.end);
      const gx = x - groupGap / 2, gw = w + groupGap;
      if (!isNaN(wmAt) && end <= wmAt) {
        plot.append(el("svg:rect", { x: gx, y: top - 8, width: gw, height: plotH + 8, class: "closed" }));
      }
      if (!isNaN(wmAt) && start <= wmAt && wmAt < end) wmX = gx + ((wmAt - start) / (end - start)) * gw;
      const d = new Date(g.start);
      plot.append(el("svg:text", { x: x + w / 2, y: base + 30, "text-anchor": "middle", class: "hour" }, hhmm(d)));
      if (day(d) !== prevDay) {
        plot.append(el("svg:text", { x: x + w / 2, y: base + 44, "text-anchor": "middle", class: "tick" }, day(d)));
        prevDay = day(d);
      }
      g.bars.forEach((b, i) => {
        const bx = x + i * (barW + barGap), v = parseFloat(b.importe) || 0;
        const by = Math.min(y(v), base - 2), bh = Math.max(base - y(v), 2);
        const cx = bx + barW / 2;
        const grp = el("svg:g", {
          class: "bar", "data-window": b.window_start, "data-pais": b.pais,
          "data-timing": b.timing, "data-importe": b.importe, "data-pane": String(b.pane_index),
        });
        grp.append(
          el("svg:title", {}, b.pais + " · " + hhmm(d) + "–" + hhmm(new Date(g.end)) + " UTC · " + money(b.importe) +
            " · " + b.pedidos + " orders · " + b.unidades + " units · " + b.timing + " (pane " + b.pane_index + ")"),
          el("svg:rect", { x: bx, y: by, width: barW, height: bh, class: timingClass(b.timing) }),
          el("svg:text", { class: "timing", transform: "translate(" + (cx + 4) + "," + (by - 5) + ") rotate(-90)" }, b.timing),
          el("svg:text", { x: cx, y: base + 14, "text-anchor": "middle", class: "pais" }, b.pais),
        );
        plot.append(grp);
      });
      x += w + groupGap;
    }
    if (!isNaN(wmAt) && wmX === null) wmX = wmAt >= Date.parse(groups[groups.length - 1].end) ? x - groupGap / 2 : left;
    if (wmX !== null) {
      plot.append(el("svg:line", { x1: wmX, x2: wmX, y1: top - 14, y2: base, class: "wm" }));
      plot.append(el("svg:text", { x: wmX + 4, y: top - 18, class: "wm-label" }, "W " + hhmm(new Date(wmAt))));
    }
    plot.append(el("svg:line", { x1: left, x2: width - right, y1: base, y2: base, class: "axis" }));
  }

  function swatch(timing) {
    const s = el("svg:svg", { width: 14, height: 11, "aria-hidden": "true" });
    s.append(el("svg:rect", { width: 14, height: 11, class: timingClass(timing) }));
    return s;
  }

  function renderBarTable(snap) {
    const body = document.querySelector("#bars tbody");
    body.replaceChildren();
    if (!(snap.bars || []).length) {
      const tr = el("tr");
      tr.append(el("td", { colspan: "7" }, snap.errors && snap.errors.bars ? "unknown" : "No panes yet."));
      body.append(tr);
    }
    for (const b of snap.bars || []) {
      const d = new Date(b.window_start);
      const tr = el("tr", { "data-window": b.window_start, "data-pais": b.pais });
      const timing = el("td", { class: "timing" });
      const badge = el("span", { class: "badge" });
      badge.append(swatch(b.timing), b.timing);
      timing.append(badge);
      tr.append(
        el("td", {}, day(d) + " " + hhmm(d) + "–" + hhmm(new Date(b.window_end))),
        el("td", { class: "pais" }, b.pais),
        el("td", { class: "num importe" }, money(b.importe)),
        el("td", { class: "num" }, String(b.pedidos)),
        el("td", { class: "num" }, String(b.unidades)),
        timing,
        el("td", { class: "num" }, String(b.pane_index)),
      );
      body.append(tr);
    }
  }

  function renderFiles(snap) {
    const body = document.querySelector("#files tbody");
    body.replaceChildren();
    const files = snap.files || [];
    if (!files.length) {
      const tr = el("tr");
      tr.append(el("td", { colspan: "8" }, snap.errors && snap.errors.files ? "unknown" : "No file ingested yet."));
      body.append(tr);
      return;
    }
    for (const f of files) {
      const notes = [];
      if (f.reason) notes.push(f.reason);
      for (const [code, n] of Object.entries(f.rejects || {}).sort()) notes.push(code + ": " + n);
      const tr = el("tr", { "data-object": f.object });
      tr.append(
        el("td", { class: "object" }, f.object),
        el("td", { class: "state state-" + f.state }, f.state),
        el("td", {}, f.feed || ""),
        el("td", { class: "num read" }, String(f.read)),
        el("td", { class: "num loaded" }, String(f.loaded)),
        el("td", { class: "num quarantined" + (f.quarantined > 0 ? " some" : "") }, String(f.quarantined)),
        el("td", {}, f.finished_at ? stamp(new Date(f.finished_at)) : "–"),
        el("td", { class: "notes" }, notes.join("; ")),
      );
      body.append(tr);
    }
  }

  function renderErrors(errors) {
    const box = document.getElementById("errors");
    box.replaceChildren();
    const entries = Object.entries(errors || {});
    box.hidden = entries.length === 0;
    for (const [part, msg] of entries) box.append(el("p", { "data-part": part }, part + ": " + msg));
  }

  function render(snap) {
    renderWatermark(snap);
    renderChart(snap);
    renderBarTable(snap);
    renderFiles(snap);
    renderErrors(snap.errors);
    const status = document.getElementById("status");
    status.classList.remove("stale");
    status.textContent = "Updated " + new Date().toLocaleTimeString() + " · refreshes every " + every / 1000 + " s";
    document.body.dataset.updated = snap.now;
  }

  async function refresh() {
    try {
      const resp = await fetch("api/dashboard", { cache: "no-store" });
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      render(await resp.json());
    } catch (err) {
      const status = document.getElementById("status");
      status.classList.add("stale");
      status.textContent = "Could not refresh (" + err.message + "); showing the last figures. Retrying every " + every / 1000 + " s.";
    } finally {
      setTimeout(refresh, every);
    }
  }

  refresh();
})();
