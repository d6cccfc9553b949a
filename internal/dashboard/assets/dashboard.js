// The dashboard page: polls api/dashboard and redraws. No framework and
// nothing from another host; every text node is set with textContent, so
// names from the ledger or the warehouse can never become markup. Amounts
// arrive as exact decimal strings and are shown as such (with thousands
// separators added by text): a float is used only for bar heights. Every
// time is shown in UTC, never in the browser's zone.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const TIMINGS = ["EARLY", "ON_TIME", "LATE"];
  const HOUR = 3600e3, DAY = 24 * HOUR;
  const LIVE_HOURS = 12;
  const every = Number(document.body.dataset.refreshMs) || 300000;
  // period says the refresh period as a person would: "5 s", "2 min".
  const period = (ms) => (ms >= 60e3 && ms % 60e3 === 0 ? ms / 60e3 + " min" : ms / 1000 + " s");

  // group inserts thousands separators into a string of digits, by text.
  function group(int) {
    const neg = int.startsWith("-");
    let d = neg ? int.slice(1) : int, out = "";
    while (d.length > 3) {
      out = "," + d.slice(-3) + out;
      d = d.slice(0, -3);
    }
    return (neg ? "-" : "") + d + out;
  }

  // money writes an exact decimal string with separators and at least two
  // decimals, by text.
  function money(s) {
    let [int, frac = ""] = String(s).split(".");
    if (frac.length < 2) frac = (frac + "00").slice(0, 2);
    return group(int) + "." + frac + " €";
  }

  const count = (n) => group(String(n));

  // euros labels an axis value with a unit: 1,500 € / 25 k€ / 1.2 M€.
  function euros(v) {
    const a = Math.abs(v), trim = (x) => String(Math.round(x * 10) / 10);
    if (a >= 1e6) return trim(v / 1e6) + " M€";
    if (a >= 1e4) return trim(v / 1e3) + " k€";
    const [i, f] = String(Math.round(v * 100) / 100).split(".");
    return group(i) + (f ? "." + f : "") + " €";
  }

  const pad2 = (n) => String(n).padStart(2, "0");
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const hhmm = (d) => pad2(d.getUTCHours()) + ":" + pad2(d.getUTCMinutes());
  const day = (d) => d.getUTCDate() + " " + MONTHS[d.getUTCMonth()];
  const isoDay = (d) => d.getUTCFullYear() + "-" + pad2(d.getUTCMonth() + 1) + "-" + pad2(d.getUTCDate());
  const stamp = (d) => isoDay(d) + " " + hhmm(d) + ":" + pad2(d.getUTCSeconds());

  function duration(sec) {
    const neg = sec < 0;
    sec = Math.abs(Math.round(sec));
    const d = Math.floor(sec / 86400), h = Math.floor((sec % 86400) / 3600), m = Math.floor((sec % 3600) / 60), s = sec % 60;
    const parts = [];
    if (d) parts.push(d + "d");
    if (d || h) parts.push(h + "h");
    if (d || h || m) parts.push(m + "m");
    if (!d) parts.push(s + "s");
    return (neg ? "-" : "") + parts.join(" ");
  }

  // ago says how long before the server's clock (snap.now) t was.
  const ago = (t, snap) => duration((Date.parse(snap.now) - Date.parse(t)) / 1000) + " ago";

  function el(tag, attrs, text) {
    const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // breakable puts a line-break opportunity after each "/", so that a long
  // object name wraps between its folders, never inside a word.
  function breakable(parent, s) {
    const parts = s.split("/");
    parts.forEach((p, i) => {
      parent.append(p + (i < parts.length - 1 ? "/" : ""));
      if (i < parts.length - 1) parent.append(el("wbr"));
    });
    return parent;
  }

  const timingClass = (t) => (TIMINGS.includes(t) ? "t-" + t : "t-other");

  // --- filters -------------------------------------------------------------

  const form = document.getElementById("filters");
  const fPais = document.getElementById("f-pais"), fFrom = document.getElementById("f-from"), fTo = document.getElementById("f-to");
  // The aggregation chosen: its options are the server's declared ones,
  // the default is left out of the URL.
  const fAgg = document.getElementById("f-agg"), fKey = document.getElementById("f-key");
  let query = new URLSearchParams(location.search);

  function loadFilter() {
    fAgg.value = query.get("aggregation") || fAgg.dataset.default;
    fKey.value = query.get("key") || "";
    fFrom.value = query.get("from") || "";
    fTo.value = query.get("to") || "";
  }

  // wanted is the countries the URL asks for, as the server reads them.
  const wanted = () => (query.get("pais") || "").split(",").map((p) => p.trim().toUpperCase()).filter(Boolean);

  // syncCountries offers every country seen and each one the URL asks for,
  // and selects exactly those the URL asks for: what the note says shown.
  function syncCountries(countries) {
    const want = wanted();
    const have = [...fPais.options].map((o) => o.value);
    const all = [...new Set([...countries, ...want])].sort();
    if (all.join() !== have.join()) {
      fPais.replaceChildren();
      for (const c of all) fPais.append(el("option", { value: c }, c));
    }
    for (const o of fPais.options) o.selected = want.includes(o.value);
  }

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    query = new URLSearchParams();
    const paises = [...fPais.selectedOptions].map((o) => o.value).filter(Boolean);
    if (fAgg.value && fAgg.value !== fAgg.dataset.default) query.set("aggregation", fAgg.value);
    if (paises.length) query.set("pais", paises.join(","));
    if (fKey.value.trim()) query.set("key", fKey.value.trim());
    if (fFrom.value) query.set("from", fFrom.value);
    if (fTo.value) query.set("to", fTo.value);
    history.replaceState(null, "", "?" + query.toString());
    refreshNow();
  });
  // Another aggregation has other keys: its choice drops the key filters
  // and applies at once.
  fAgg.addEventListener("change", () => {
    for (const o of fPais.options) o.selected = false;
    fKey.value = "";
    form.requestSubmit();
  });
  document.getElementById("f-reset").addEventListener("click", () => {
    query = new URLSearchParams();
    history.replaceState(null, "", location.pathname);
    loadFilter();
    refreshNow();
  });

  // --- health cards --------------------------------------------------------

  function renderCards(snap) {
    const err = snap.errors || {};
    const set = (id, main, sub, cls) => {
      const dd = document.getElementById(id);
      dd.replaceChildren(el("strong", {}, main));
      if (sub) dd.append(el("span", { class: "sub" }, sub));
      dd.parentElement.className = "card" + (cls ? " " + cls : "");
    };
    const wm = snap.watermark;
    if (wm) set("watermark", stamp(new Date(wm.at)), "lag " + duration(wm.lag_seconds) + " behind processing time " + stamp(new Date(snap.now)), wm.lag_seconds > 3600 ? "warn" : "");
    else set("watermark", err.watermark ? "unknown" : "none yet", err.watermark ? "" : "no order accepted", err.watermark ? "warn" : "");
    const fr = snap.freshness || {};
    if (fr.last_order_accepted) set("last-order", stamp(new Date(fr.last_order_accepted)), ago(fr.last_order_accepted, snap));
    else set("last-order", err.stream ? "unknown" : "none yet", err.stream ? "stream state not readable here" : "");
    if (fr.last_file_loaded) {
      const f = fr.last_file_loaded;
      set("last-file", stamp(new Date(f.finished_at)), ago(f.finished_at, snap));
      const name = breakable(el("span", { class: "object", title: "gs://" + f.bucket + "/" + f.name + " (generation " + f.generation + ")" }), f.name);
      document.getElementById("last-file").append(name);
    } else set("last-file", err.files ? "unknown" : "none yet");
    const d = snap.discards || {};
    // The counts are of the discards received in the last day, not ever.
    const recent = d.since ? ", last " + Math.round((Date.parse(snap.now) - Date.parse(d.since)) / HOUR) + " h" : "";
    set("dead-letters", err.discards ? "unknown" : count(d.dead_letters || 0), "invalid messages" + recent, d.dead_letters > 0 ? "warn" : "");
    set("too-late", err.discards ? "unknown" : count(d.too_late || 0), "orders after the allowed lateness" + recent, d.too_late > 0 ? "warn" : "");
    const ow = snap.open_windows;
    const failing = (ow && ow.failing) || [];
    if (ow && failing.length) set("open-windows", count(ow.windows), count(ow.cells) + " (window, country) cells, " + count(ow.failing_cells) + " failing windows", "warn");
    else if (ow) set("open-windows", count(ow.windows), count(ow.cells) + " (window, country) cells");
    else set("open-windows", "unknown", err.stream ? "stream state not readable here" : "");
  }

  // --- charts --------------------------------------------------------------

  function size(svg, width, height) {
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
  }

  // timeTicks picks a tick step of 1, 3, 6 or 12 hours or 1, 2 or 7 days
  // for at most most labelled ticks over [t0, t1].
  function timeTicks(t0, t1, most) {
    const steps = [HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY];
    const step = steps.find((s) => (t1 - t0) / s <= most) || 7 * DAY;
    const ticks = [];
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) ticks.push(t);
    return { step, ticks };
  }

  function timeAxis(plot, x, t0, t1, left, right, base, cls, most) {
    const { step, ticks } = timeTicks(t0, t1, most);
    let prevDay = null;
    for (const t of ticks) {
      const d = new Date(t), tx = x(t);
      plot.append(el("svg:line", { x1: tx, x2: tx, y1: base, y2: base + 5, class: "axis" }));
      const newDay = day(d) !== prevDay;
      if (step < DAY) {
        plot.append(el("svg:text", { x: tx, y: base + 17, "text-anchor": "middle", class: cls, "data-t": d.toISOString() }, hhmm(d)));
        if (newDay) plot.append(el("svg:text", { x: tx, y: base + 31, "text-anchor": "middle", class: "day" }, day(d)));
      } else {
        plot.append(el("svg:text", { x: tx, y: base + 17, "text-anchor": "middle", class: "day", "data-t": d.toISOString() }, day(d)));
      }
      prevDay = day(d);
    }
    plot.append(el("svg:line", { x1: left, x2: right, y1: base, y2: base, class: "axis" }));
  }

  // wmMarker draws W as a dashed line at its time; the label goes to the
  // line's left when the right edge is near, so it is never cut off.
  function wmMarker(plot, x, wmAt, top, base, right, label) {
    const wx = x(wmAt), flip = wx + 8 * label.length > right + 16;
    plot.append(el("svg:line", { x1: wx, x2: wx, y1: top - 6, y2: base, class: "wm", "data-at": new Date(wmAt).toISOString() }));
    plot.append(el("svg:text", { x: flip ? wx - 4 : wx + 4, y: top - 8, "text-anchor": flip ? "end" : "start", class: "wm-label" }, label));
  }

  // niceStep picks 1, 2 or 5 times a power of ten for about four grid lines.
  function niceStep(max) {
    const raw = max / 4, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (raw <= m * p) return m * p;
    return 10 * p;
  }

  function emptyChart(svg, plot, snap) {
    const msg = snap.errors && snap.errors.bars ? "Sales unknown: the dashboard view could not be read (see above)."
      : snap.filter ? "No panes match the filter."
      : "No panes in the " + rangeText(snap) + ": publish orders and let the watermark tick, or choose a From day for older windows.";
    size(svg, 640, 60);
    svg.setAttribute("aria-label", msg);
    plot.append(el("svg:text", { x: 16, y: 34, class: "empty" }, msg));
  }

  // rangeText says which event-time range the bars were read from: the
  // default's "last 24 h", or an explicit range's days ("now" when open).
  function rangeText(snap) {
    const r = snap.range;
    if (!r) return "newest windows";
    if (r.last_hours) return "last " + r.last_hours + " h";
    return isoDay(new Date(r.from)) + " to " + (r.until ? isoDay(new Date(Date.parse(r.until) - DAY)) : "now");
  }

  // span is the event-time range a chart covers: the filter's days when
  // set, else the bars', widened to the watermark when it is near.
  function span(snap, bars) {
    let t0 = Math.min(...bars.map((b) => Date.parse(b.window_start)));
    let t1 = Math.max(...bars.map((b) => Date.parse(b.window_end)));
    const f = snap.filter;
    if (f && f.from) t0 = Date.parse(f.from);
    if (f && f.to) t1 = Date.parse(f.to) + DAY;
    return [t0, t1];
  }

  // renderTimeline draws every window in view on one time axis with a log
  // scale, so an hour of 30 € stays visible beside a day of millions.
  function renderTimeline(snap) {
    const svg = document.getElementById("timeline"), plot = document.getElementById("tl-plot");
    plot.replaceChildren();
    const bars = snap.bars || [];
    if (!bars.length) return emptyChart(svg, plot, snap);
    const totals = new Map();
    for (const b of bars) {
      const t = totals.get(b.window_start) || { start: b.window_start, end: b.window_end, sum: 0, n: 0, early: false };
      t.sum += parseFloat(b.importe) || 0;
      t.n += b.pedidos;
      // One provisional country makes the hour's total provisional.
      t.early = t.early || b.timing === "EARLY";
      totals.set(b.window_start, t);
    }
    const width = 1150, height = 230, left = 78, right = width - 20, top = 24, base = 180;
    size(svg, width, height);
    let [t0, t1] = span(snap, bars);
    const wmAt = snap.watermark ? Date.parse(snap.watermark.at) : NaN;
    if (!isNaN(wmAt) && !snap.filter) { t0 = Math.min(t0, wmAt); t1 = Math.max(t1, wmAt); }
    // Over days, whole UTC days: the axis starts on a labelled midnight.
    if (t1 - t0 > 2 * DAY) { t0 = Math.floor(t0 / DAY) * DAY; t1 = Math.ceil(t1 / DAY) * DAY; }
    const x = (t) => left + ((t - t0) / (t1 - t0)) * (right - left);
    const max = Math.max(...[...totals.values()].map((t) => t.sum), 1);
    const decades = Math.max(1, Math.ceil(Math.log10(max)));
    const y = (v) => base - (Math.log10(Math.max(v, 1)) / decades) * (base - top);
    for (let k = 0; k <= decades; k++) {
      const v = Math.pow(10, k);
      plot.append(el("svg:line", { x1: left, x2: right, y1: y(v), y2: y(v), class: "grid" }));
      plot.append(el("svg:text", { x: left - 8, y: y(v) + 4, "text-anchor": "end", class: "tick ytick" }, euros(v)));
    }
    plot.append(el("svg:text", { x: 14, y: (top + base) / 2, class: "axis-title", transform: "rotate(-90 14 " + (top + base) / 2 + ")", "text-anchor": "middle" }, "€ per hour (log)"));
    // The live panel's hours, shaded, so the two charts read together.
    const liveEnd = Math.max(...bars.map((b) => Date.parse(b.window_end)));
    const ls = Math.max(t0, liveEnd - LIVE_HOURS * HOUR);
    plot.append(el("svg:rect", { x: x(ls), y: top, width: Math.max(1, x(liveEnd) - x(ls)), height: base - top, class: "live-span" }));
    // Anchored at the band's right edge: the band ends at the newest hour,
    // usually the chart's right edge, so the label runs back into the chart.
    plot.append(el("svg:text", { x: Math.min(x(liveEnd), right) - 3, y: top + 11, "text-anchor": "end", class: "live-label" }, "live chart below"));
    const hourW = Math.max(4, x(t0 + HOUR) - x(t0) - 1);
    for (const t of totals.values()) {
      const s = Date.parse(t.start), bx = x(s), by = y(t.sum);
      const g = el("svg:g", { class: t.early ? "tbar early" : "tbar", "data-window": t.start, "data-total": String(Math.round(t.sum * 100) / 100) });
      g.append(
        el("svg:title", {}, day(new Date(s)) + " " + hhmm(new Date(s)) + "–" + hhmm(new Date(t.end)) + " UTC · " + euros(t.sum) + " · " + count(t.n) + " orders" +
          (t.early ? " · EARLY: provisional, may still grow" : "")),
        el("svg:rect", { x: bx, y: Math.min(by, base - 2), width: hourW, height: Math.max(base - by, 2) }),
      );
      plot.append(g);
    }
    timeAxis(plot, x, t0, t1, left, right, base, "tl-hour", 14);
    plot.append(el("svg:text", { x: right, y: height - 4, "text-anchor": "end", class: "axis-title" }, "event time (UTC)"));
    if (!isNaN(wmAt) && wmAt >= t0 && wmAt <= t1) wmMarker(plot, x, wmAt, top, base, right, "W " + day(new Date(wmAt)) + " " + hhmm(new Date(wmAt)));
    svg.setAttribute("aria-label", "Sales per hour: " + totals.size + " windows from " + stamp(new Date(t0)) + " to " + stamp(new Date(t1)) + " UTC, log scale");
  }

  // renderChart draws the last LIVE_HOURS hours in view per country on a
  // time axis with its own linear scale.
  function renderChart(snap) {
    const svg = document.getElementById("chart"), plot = document.getElementById("plot");
    plot.replaceChildren();
    const all = snap.bars || [];
    if (!all.length) return emptyChart(svg, plot, snap);
    const wmAt = snap.watermark ? Date.parse(snap.watermark.at) : NaN;
    const t1 = Math.max(...all.map((b) => Date.parse(b.window_end)));
    const t0 = t1 - LIVE_HOURS * HOUR;
    const bars = all.filter((b) => Date.parse(b.window_start) >= t0);
    const width = 1150, height = 330, left = 86, right = width - 20, top = 70, base = 270;
    size(svg, width, height);
    const x = (t) => left + ((t - t0) / (t1 - t0)) * (right - left);
    const max = Math.max(...bars.map((b) => Math.abs(parseFloat(b.importe)) || 0)) || 1;
    const step = niceStep(max), top_ = Math.ceil(max / step) * step;
    const y = (v) => base - (v / top_) * (base - top);
    if (!isNaN(wmAt)) {
      const ce = Math.min(wmAt, t1);
      if (ce > t0) plot.append(el("svg:rect", { x: left, y: top - 8, width: x(ce) - left, height: base - top + 8, class: "closed" }));
    }
    for (let v = 0; v <= top_ + step / 2; v += step) {
      plot.append(el("svg:line", { x1: left, x2: right, y1: y(v), y2: y(v), class: "grid" }));
      plot.append(el("svg:text", { x: left - 8, y: y(v) + 4, "text-anchor": "end", class: "tick ytick" }, euros(v)));
    }
    plot.append(el("svg:text", { x: 14, y: (top + base) / 2, class: "axis-title", transform: "rotate(-90 14 " + (top + base) / 2 + ")", "text-anchor": "middle" }, "€ per hour"));
    const slot = x(t0 + HOUR) - x(t0);
    const byWindow = new Map();
    for (const b of bars) {
      if (!byWindow.has(b.window_start)) byWindow.set(b.window_start, []);
      byWindow.get(b.window_start).push(b);
    }
    for (const [start, group] of byWindow) {
      const s = Date.parse(start), inner = slot * 0.84, gap = 3;
      const bw = Math.max(3, (inner - gap * (group.length - 1)) / group.length);
      group.forEach((b, i) => {
        const bx = x(s) + slot * 0.08 + i * (bw + gap), v = parseFloat(b.importe) || 0;
        const by = Math.min(y(v), base - 2), bh = Math.max(base - y(v), 2), cx = bx + bw / 2;
        const d = new Date(s), g = el("svg:g", {
          class: "bar", "data-window": b.window_start, "data-pais": b.pais,
          "data-timing": b.timing, "data-importe": b.importe, "data-pane": String(b.pane_index),
        });
        g.append(
          el("svg:title", {}, b.pais + " · " + day(d) + " " + hhmm(d) + "–" + hhmm(new Date(b.window_end)) + " UTC · " + money(b.importe) +
            " · " + count(b.pedidos) + " orders · " + count(b.unidades) + " units · " + b.timing + " (pane " + b.pane_index + ")"),
          el("svg:rect", { x: bx, y: by, width: bw, height: bh, class: timingClass(b.timing) }),
          el("svg:text", { class: "timing", transform: "translate(" + (cx + 4) + "," + (by - 5) + ") rotate(-90)" }, b.timing),
          el("svg:text", { x: cx, y: base - 4, "text-anchor": "middle", class: "pais" }, b.pais),
        );
        plot.append(g);
      });
    }
    timeAxis(plot, x, t0, t1, left, right, base, "hour", LIVE_HOURS);
    plot.append(el("svg:text", { x: right, y: height - 4, "text-anchor": "end", class: "axis-title" }, "event time (UTC), window start"));
    if (!isNaN(wmAt) && wmAt >= t0 && wmAt <= t1) wmMarker(plot, x, wmAt, top, base, right, "W " + hhmm(new Date(wmAt)));
    svg.setAttribute("aria-label", "Sales per hour and country, " + day(new Date(t0)) + " " + hhmm(new Date(t0)) + " to " + day(new Date(t1)) + " " + hhmm(new Date(t1)) + " UTC: " + bars.length + " bars");
  }

  // --- tables --------------------------------------------------------------

  function swatch(timing) {
    const s = el("svg:svg", { width: 14, height: 11, "aria-hidden": "true" });
    s.append(el("svg:rect", { width: 14, height: 11, class: timingClass(timing) }));
    return s;
  }

  function placeholder(body, cols, text) {
    const tr = el("tr");
    tr.append(el("td", { colspan: String(cols), class: "none" }, text));
    body.append(tr);
  }

  function renderBarTable(snap) {
    const body = document.querySelector("#bars tbody");
    body.replaceChildren();
    if (!(snap.bars || []).length) placeholder(body, 7, snap.errors && snap.errors.bars ? "unknown" : "No panes yet.");
    for (const b of snap.bars || []) {
      const d = new Date(b.window_start);
      const tr = el("tr", { "data-window": b.window_start, "data-pais": b.pais });
      const timing = el("td", { class: "timing" }), badge = el("span", { class: "badge" });
      badge.append(swatch(b.timing), b.timing);
      timing.append(badge);
      tr.append(
        el("td", {}, day(d) + " " + hhmm(d) + "–" + hhmm(new Date(b.window_end))),
        el("td", { class: "pais" }, b.pais),
        el("td", { class: "num importe" }, money(b.importe)),
        el("td", { class: "num" }, count(b.pedidos)),
        el("td", { class: "num" }, count(b.unidades)),
        timing,
        el("td", { class: "num" }, String(b.pane_index)),
      );
      body.append(tr);
    }
  }

  const when = (t) => (t ? stamp(new Date(t)) : "–");

  function renderDiscards(snap) {
    const d = snap.discards || {}, bad = snap.errors && snap.errors.discards;
    const dead = document.querySelector("#dead tbody"), late = document.querySelector("#late tbody");
    dead.replaceChildren();
    late.replaceChildren();
    if (!(d.latest_dead_letters || []).length) placeholder(dead, 3, bad ? "unknown" : "None.");
    for (const r of d.latest_dead_letters || []) {
      const tr = el("tr");
      tr.append(el("td", { class: "when" }, when(r.received_at)), el("td", { class: "id" }, r.pedido_id || "–"), el("td", { class: "reason" }, r.reason));
      dead.append(tr);
    }
    if (!(d.latest_too_late || []).length) placeholder(late, 4, bad ? "unknown" : "None.");
    for (const r of d.latest_too_late || []) {
      const tr = el("tr"), w = r.window_start ? new Date(r.window_start) : null;
      tr.append(el("td", { class: "when" }, when(r.received_at)), el("td", { class: "id" }, r.pedido_id || "–"), el("td", { class: "when" }, when(r.event_time)),
        el("td", {}, w ? day(w) + " " + hhmm(w) : "–"));
      late.append(tr);
    }
  }

  function renderOpen(snap) {
    const body = document.querySelector("#open tbody");
    body.replaceChildren();
    const ow = snap.open_windows;
    if (!ow || !ow.latest.length) placeholder(body, 4, ow ? "None." : "unknown");
    for (const w of (ow && ow.latest) || []) {
      const s = new Date(w.window_start), tr = el("tr");
      tr.append(el("td", {}, day(s) + " " + hhmm(s) + "–" + hhmm(new Date(w.window_end))), el("td", {}, w.pais),
        el("td", { class: "num" }, count(w.panes)), el("td", {}, w.on_time));
      body.append(tr);
    }
  }

  function renderFailing(snap) {
    const body = document.querySelector("#failing tbody");
    body.replaceChildren();
    const ow = snap.open_windows;
    if (!ow || !(ow.failing || []).length) placeholder(body, 4, ow ? "None." : "unknown");
    for (const f of (ow && ow.failing) || []) {
      const s = f.window_start && new Date(f.window_start), tr = el("tr", { class: "warn" });
      tr.append(el("td", { title: f.document }, s ? day(s) + " " + hhmm(s) + "–" + hhmm(new Date(f.window_end)) : f.document),
        el("td", {}, f.pais), el("td", {}, f.since ? stamp(new Date(f.since)) : ""), el("td", { class: "reason" }, f.error));
      body.append(tr);
    }
  }

  function renderFiles(snap) {
    const body = document.querySelector("#files tbody");
    body.replaceChildren();
    const files = snap.files || [];
    if (!files.length) return placeholder(body, 8, snap.errors && snap.errors.files ? "unknown" : "No file ingested yet.");
    for (const f of files) {
      const notes = [];
      if (f.reason) notes.push(f.reason);
      for (const [code, n] of Object.entries(f.rejects || {}).sort()) notes.push(code + ": " + count(n));
      const tr = el("tr", { "data-object": f.object });
      const name = el("td", { class: "object", title: "gs://" + f.bucket + "/" + f.name + " · generation " + f.generation });
      const slash = f.name.lastIndexOf("/");
      breakable(name.appendChild(el("span", { class: "dir" })), f.name.slice(0, slash + 1));
      name.append(el("span", { class: "base" }, f.name.slice(slash + 1)));
      const q = el("td", { class: "num quarantined" + (f.quarantined > 0 ? " some" : "") }, count(f.quarantined));
      if (f.quarantine_url && f.quarantined > 0) {
        q.append(" ", el("a", { class: "qlink", href: f.quarantine_url, download: f.quarantine.split("/").pop(), title: "quarantine file " + f.quarantine }, "download"));
      }
      tr.append(
        name,
        el("td", { class: "state state-" + f.state }, f.state),
        el("td", {}, f.feed || ""),
        el("td", { class: "num read" }, count(f.read)),
        el("td", { class: "num loaded" }, count(f.loaded)),
        q,
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
    syncCountries(snap.countries || []);
    if (snap.aggregation) document.getElementById("agg-name").textContent = snap.aggregation;
    renderCards(snap);
    renderTimeline(snap);
    renderChart(snap);
    renderBarTable(snap);
    renderDiscards(snap);
    renderOpen(snap);
    renderFailing(snap);
    renderFiles(snap);
    renderErrors(snap.errors);
    // The note says which range is shown, so that a chart of the last day
    // is never taken for all the data there is.
    const f = snap.filter, note = [];
    if (f) {
      if (f.pais) note.push(f.pais.join(", "));
      if (f.key) note.push(f.key.join(", "));
    }
    note.push(rangeText(snap));
    markInvalid("");
    const fNote = document.getElementById("f-note");
    fNote.classList.remove("refused");
    fNote.textContent = f ? "showing " + note.join(" · ") : "showing the newest windows of the " + rangeText(snap) + " (From and To choose other days)";
    const status = document.getElementById("status");
    status.classList.remove("stale");
    status.textContent = "Updated " + stamp(new Date(snap.now)) + " UTC (server clock) · refreshes every " + period(every);
    document.body.dataset.updated = snap.now;
  }

  // markInvalid flags the control of the parameter the server refused, and
  // clears the others.
  function markInvalid(param) {
    for (const [p, c] of [["aggregation", fAgg], ["pais", fPais], ["key", fKey], ["from", fFrom], ["to", fTo]]) {
      if (p === param) c.setAttribute("aria-invalid", "true");
      else c.removeAttribute("aria-invalid");
    }
  }

  // refused shows a filter the server would not apply: the reason, the
  // control at fault, and no figures at all, since any would not be the
  // ones asked for. The page keeps polling: Reset or a fix shows figures.
  function refused(r) {
    const msg = r.error || "the filter was refused";
    syncCountries([]);
    for (const id of ["watermark", "last-order", "last-file", "dead-letters", "too-late", "open-windows"]) {
      const dd = document.getElementById(id);
      dd.replaceChildren(el("strong", {}, "–"), el("span", { class: "sub" }, "filter refused"));
      dd.parentElement.className = "card";
    }
    for (const [svgId, plotId] of [["timeline", "tl-plot"], ["chart", "plot"]]) {
      const svg = document.getElementById(svgId), plot = document.getElementById(plotId);
      plot.replaceChildren();
      size(svg, 900, 60);
      svg.setAttribute("aria-label", "Filter refused: " + msg);
      plot.append(el("svg:text", { x: 16, y: 34, class: "empty" }, "Filter refused (" + msg + "): nothing shown."));
    }
    for (const [sel, cols] of [["#bars", 7], ["#dead", 3], ["#late", 4], ["#open", 4], ["#failing", 4], ["#files", 8]]) {
      const body = document.querySelector(sel + " tbody");
      body.replaceChildren();
      placeholder(body, cols, "Filter refused.");
    }
    renderErrors({ filter: msg });
    delete document.body.dataset.updated;
    markInvalid(r.param || "");
    const fNote = document.getElementById("f-note");
    fNote.classList.add("refused");
    fNote.textContent = "filter refused: " + msg + " · nothing shown; correct it or press Reset";
    const status = document.getElementById("status");
    status.classList.add("stale");
    status.textContent = "Filter refused by the server · refreshes every " + period(every);
  }

  let timer = null, seq = 0;

  async function refresh() {
    clearTimeout(timer);
    const mine = ++seq;
    try {
      const resp = await fetch("api/dashboard" + (query.toString() ? "?" + query.toString() : ""), { cache: "no-store" });
      if (resp.status === 400 && (resp.headers.get("Content-Type") || "").startsWith("application/json")) {
        const refusal = await resp.json();
        if (mine === seq) refused(refusal);
        return;
      }
      if (!resp.ok) throw new Error("HTTP " + resp.status + ": " + (await resp.text()).trim());
      const snap = await resp.json();
      if (mine === seq) render(snap);
    } catch (err) {
      const status = document.getElementById("status");
      status.classList.add("stale");
      const shown = document.body.dataset.updated ? "showing the figures of " + stamp(new Date(document.body.dataset.updated)) + " UTC" : "nothing shown yet";
      status.textContent = "Could not refresh (" + err.message + "); " + shown + ". Retrying every " + period(every) + ".";
    } finally {
      if (mine === seq) timer = setTimeout(refresh, every);
    }
  }
  const refreshNow = () => refresh();

  loadFilter();
  refresh();
})();
