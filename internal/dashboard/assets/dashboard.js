// The dashboard page: polls api/dashboard and redraws. No framework and
// nothing from another host; every text node is set with textContent, so
// names from the ledger or the warehouse can never become markup. Amounts
// arrive as exact decimal strings and are shown as such (with thousands
// separators added by text): a float is used only for bar heights. Every
// time is shown in UTC, never in the browser's zone, said once in the
// header; a time carries its date unless it is of the server's today.
// Labels come from the chosen aggregation's declaration (snap.key,
// snap.window): sliding windows overlap, so they are drawn as a series
// over window end and never added up.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const TIMINGS = ["EARLY", "ON_TIME", "LATE"];
  const HOUR = 3600e3, DAY = 24 * HOUR;
  const LIVE_WINDOWS = 12, LIVE_KEYS = 15;
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
  // today is the server's UTC day (snap.now), set at each render: a time
  // of that day is shown without its date, any other with it.
  let today = "";
  const stamp = (d) => (isoDay(d) === today ? "" : isoDay(d) + " ") + hhmm(d);
  // windowText is a window as [start, end): "17:00–18:00" today, else
  // with the start's date.
  const windowText = (s, e) => stamp(s) + "–" + hhmm(e);

  // duration is the one format of a duration for people, as the CLI
  // writes it (render.Duration; the table both follow is
  // internal/render/testdata/durations.txt): two units, the second padded:
  // 262d 13h, 2h05m, 4m05s, 42s.
  function duration(sec) {
    const neg = sec < 0;
    sec = Math.abs(Math.round(sec));
    const d = Math.floor(sec / 86400), h = Math.floor((sec % 86400) / 3600), m = Math.floor((sec % 3600) / 60), s = sec % 60;
    const out = d ? d + "d " + h + "h" : h ? h + "h" + pad2(m) + "m" : m ? m + "m" + pad2(s) + "s" : s + "s";
    return (neg ? "-" : "") + out;
  }

  // spanText says a declared size or period: "1 h", "15 min", "2 d".
  const spanText = (sec) => (sec % 86400 === 0 ? sec / 86400 + " d" : sec % 3600 === 0 ? sec / 3600 + " h" : sec / 60 + " min");

  // Words for an aggregation's key, as its declaration names it.
  const KEY_WORDS = { pais: ["country", "countries", "Country"], sku: ["SKU", "SKUs", "SKU"], cliente_id: ["customer", "customers", "Customer"] };
  const keyWords = (key) => KEY_WORDS[key] || [key || "key", (key || "key") + "s", key || "Key"];

  // fit truncates a label to about px pixels (11 px text), "…" marking the
  // cut; the full text goes in a tooltip.
  function fit(text, px) {
    const most = Math.floor(px / 6.6);
    if (text.length <= most) return text;
    return most < 2 ? "" : text.slice(0, most - 1) + "…";
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
  const fFrom = document.getElementById("f-from"), fTo = document.getElementById("f-to");
  // The aggregation chosen: its options are the server's declared ones,
  // the default is left out of the URL. The key picker lists the keys
  // present, the largest first (snap.keys).
  const fAgg = document.getElementById("f-agg"), fKey = document.getElementById("f-key");
  let query = new URLSearchParams(location.search);

  function loadFilter() {
    fAgg.value = query.get("aggregation") || fAgg.dataset.default;
    fFrom.value = query.get("from") || "";
    fTo.value = query.get("to") || "";
  }

  // wanted is the keys the URL asks for (?key=, and ?pais= of older links).
  const wanted = () => ["pais", "key"].flatMap((p) => (query.get(p) || "").split(",")).map((k) => k.trim()).filter(Boolean);

  // seen keeps the keys offered per aggregation during the visit: a
  // filtered snapshot names only the keys chosen, and the picker must still
  // offer the others.
  const seen = new Map();

  // syncKeys offers the keys present, the largest first, then those seen
  // before and those the URL asks for, and selects exactly the latter: what
  // the note says shown.
  function syncKeys(snap) {
    const want = wanted(), agg = snap.aggregation || fAgg.value;
    const before = seen.get(agg) || [];
    const all = [...new Set([...(snap.keys || []), ...before, ...want])];
    seen.set(agg, all);
    const have = [...fKey.options].map((o) => o.value);
    if (all.join() !== have.join()) {
      fKey.replaceChildren();
      for (const k of all) fKey.append(el("option", { value: k, title: k }, k));
    }
    for (const o of fKey.options) o.selected = want.includes(o.value);
  }

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    query = new URLSearchParams();
    const keys = [...fKey.selectedOptions].map((o) => o.value).filter(Boolean);
    if (fAgg.value && fAgg.value !== fAgg.dataset.default) query.set("aggregation", fAgg.value);
    if (keys.length) query.set("key", keys.join(","));
    if (fFrom.value) query.set("from", fFrom.value);
    if (fTo.value) query.set("to", fTo.value);
    history.replaceState(null, "", "?" + query.toString());
    refreshNow();
  });
  // Another aggregation has other keys: its choice drops the key filters
  // and applies at once.
  fAgg.addEventListener("change", () => {
    for (const o of fKey.options) o.selected = false;
    fKey.replaceChildren();
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
    const cells = " (window, " + keyWords(snap.key)[0] + ") cells";
    if (ow && failing.length) set("open-windows", count(ow.windows), count(ow.cells) + cells + ", " + count(ow.failing_cells) + " failing windows", "warn");
    else if (ow) set("open-windows", count(ow.windows), count(ow.cells) + cells);
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

  // emptyChart says what is missing, in full: the message wraps over
  // lines of the chart's width rather than being cut.
  function emptyChart(svg, plot, snap) {
    const msg = snap.errors && snap.errors.bars ? "Sales unknown: the dashboard view could not be read (see above)."
      : snap.filter ? "No panes of " + snap.aggregation + " match the filter (" + rangeText(snap) + "): choose other keys or days, or press Reset."
      : "No panes of " + snap.aggregation + " in the " + rangeText(snap) + ": publish orders (alpipe publish) and let the watermark tick (alpipe tick), or choose a From day for older windows.";
    wrapped(svg, plot, msg);
  }

  function wrapped(svg, plot, msg) {
    const lines = [];
    for (const w of msg.split(" ")) {
      if (lines.length && (lines[lines.length - 1] + " " + w).length <= 150) lines[lines.length - 1] += " " + w;
      else lines.push(w);
    }
    size(svg, 1150, 30 + 20 * lines.length);
    svg.setAttribute("aria-label", msg);
    const t = el("svg:text", { x: 16, y: 30, class: "empty" });
    lines.forEach((l, i) => t.append(el("svg:tspan", { x: 16, dy: i ? 20 : 0 }, l)));
    plot.append(t);
  }

  // rangeText says which event-time range the bars were read from: the 24 h
  // up to the newest data, the last 24 h of processing time before any
  // order, or an explicit range's days ("now" when open).
  function rangeText(snap) {
    const r = snap.range;
    if (!r) return "newest windows";
    const until = r.until ? new Date(r.until) : null;
    if (r.newest) return r.last_hours + " h up to " + isoDay(until) + " " + hhmm(until) + " UTC, the newest data";
    if (r.last_hours) return "last " + r.last_hours + " h of processing time (no order accepted yet)";
    return isoDay(new Date(r.from)) + " to " + (until ? isoDay(new Date(until - DAY)) : "now");
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

  // windowDecl is the chosen aggregation's window, as declared (an older
  // server's snapshot has none: hourly).
  const windowDecl = (snap) => snap.window && snap.window.size_seconds ? snap.window : { kind: "fixed", size_seconds: 3600, period_seconds: 3600 };
  const sliding = (snap) => windowDecl(snap).kind === "sliding";
  const session = (snap) => windowDecl(snap).kind === "session";
  // spanLabel names a window's extent: "1h", or "session, gap 30m".
  const spanLabel = (snap) => (session(snap) ? "session, gap " + spanText(windowDecl(snap).gap_seconds) : spanText(windowDecl(snap).size_seconds));

  // headings names the charts after the aggregation's declaration.
  function headings(snap) {
    const w = windowDecl(snap), [, many] = keyWords(snap.key), size = spanText(w.size_seconds);
    const set = (id, text) => (document.getElementById(id).textContent = text);
    if (sliding(snap)) {
      set("tl-title", "Sales in the last " + size + ", every " + spanText(w.period_seconds));
      set("tl-sub", "(total of the " + many + " shown, one point per window end; sliding windows overlap, so they are never added; event time; log scale)");
      set("chart-title", "The " + many + " of the newest " + size + " window");
      set("chart-sub", "(the largest " + LIVE_KEYS + ", own linear scale; latest pane of each)");
    } else if (session(snap)) {
      set("tl-title", "Sales per " + spanLabel(snap) + ", every session in view");
      set("tl-sub", "(total of the " + many + " shown; event time, session start; log scale)");
      set("chart-title", "Live sessions per " + keyWords(snap.key)[0] + " (" + spanLabel(snap) + ")");
      set("chart-sub", "(one bar per live session, by its start; sessions merged into another are left out; latest pane of each)");
    } else {
      set("tl-title", "Sales per " + size + " window, every window in view");
      set("tl-sub", "(total of the " + many + " shown; event time; log scale)");
      set("chart-title", "Live " + size + " windows per " + keyWords(snap.key)[0]);
      set("chart-sub", "(the last " + LIVE_WINDOWS + " windows in view, own linear scale; latest pane of each window)");
    }
    for (const e of document.querySelectorAll(".key-title")) e.textContent = keyWords(snap.key)[2];
    for (const e of document.querySelectorAll(".key-one")) e.textContent = keyWords(snap.key)[0];
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
      // One provisional key makes the window's total provisional.
      t.early = t.early || b.timing === "EARLY";
      totals.set(b.window_start, t);
    }
    const width = 1150, height = 230, left = 78, right = width - 20, top = 24, base = 180;
    size(svg, width, height);
    let [t0, t1] = span(snap, bars);
    const wmAt = snap.watermark ? Date.parse(snap.watermark.at) : NaN;
    // Widened to W when it is near the data: an idle source moves W to
    // processing time, which may be months after the newest data.
    if (!isNaN(wmAt) && !snap.filter && wmAt >= t0 - DAY && wmAt <= t1 + DAY) { t0 = Math.min(t0, wmAt); t1 = Math.max(t1, wmAt); }
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
    const w = windowDecl(snap), wsize = w.size_seconds * 1000, period = w.period_seconds * 1000;
    plot.append(el("svg:text", { x: 14, y: (top + base) / 2, class: "axis-title", transform: "rotate(-90 14 " + (top + base) / 2 + ")", "text-anchor": "middle" }, "€ per " + spanText(w.size_seconds) + " (log)"));
    // The live panel's windows, shaded, so the two charts read together.
    const liveEnd = Math.max(...bars.map((b) => Date.parse(b.window_end)));
    const ls = Math.max(t0, liveEnd - (sliding(snap) ? wsize : LIVE_WINDOWS * period));
    plot.append(el("svg:rect", { x: x(ls), y: top, width: Math.max(1, x(liveEnd) - x(ls)), height: base - top, class: "live-span" }));
    // Anchored at the band's right edge: the band ends at the newest window,
    // usually the chart's right edge, so the label runs back into the chart.
    plot.append(el("svg:text", { x: Math.min(x(liveEnd), right) - 3, y: top + 11, "text-anchor": "end", class: "live-label" }, "live chart below"));
    if (sliding(snap)) {
      slidingSeries(plot, [...totals.values()], x, y, snap);
    } else {
      fixedBars(plot, [...totals.values()], x, y, base, Math.max(4, x(t0 + wsize) - x(t0) - 1));
    }
    timeAxis(plot, x, t0, t1, left, right, base, "tl-hour", 14);
    plot.append(el("svg:text", { x: right, y: height - 4, "text-anchor": "end", class: "axis-title" }, sliding(snap) ? "event time, window end" : "event time"));
    if (!isNaN(wmAt) && wmAt >= t0 && wmAt <= t1) wmMarker(plot, x, wmAt, top, base, right, "W " + stamp(new Date(wmAt)));
    svg.setAttribute("aria-label", "Sales per " + spanText(w.size_seconds) + " window: " + totals.size + " windows from " + isoDay(new Date(t0)) + " " + hhmm(new Date(t0)) + " to " + isoDay(new Date(t1)) + " " + hhmm(new Date(t1)) + ", log scale");
  }

  // slidingSeries draws each sliding window's total at its end, joined as
  // a line: the windows overlap, so each point is one window's sales, never
  // a sum of windows.
  function slidingSeries(plot, totals, x, y, snap) {
    totals.sort((a, b) => Date.parse(a.end) - Date.parse(b.end));
    const size = spanText(windowDecl(snap).size_seconds);
    plot.append(el("svg:path", { class: "tl-line", d: totals.map((t, i) => (i ? "L" : "M") + x(Date.parse(t.end)) + " " + y(t.sum)).join(" ") }));
    for (const t of totals) {
      const g = el("svg:g", { class: t.early ? "tpoint early" : "tpoint", "data-window": t.start, "data-end": t.end, "data-total": String(Math.round(t.sum * 100) / 100) });
      g.append(
        el("svg:title", {}, "the " + size + " up to " + stamp(new Date(t.end)) + " (window " + windowText(new Date(t.start), new Date(t.end)) + ") · " + euros(t.sum) + " · " + count(t.n) + " orders" +
          (t.early ? " · EARLY: provisional, may still grow" : "")),
        el("svg:circle", { cx: x(Date.parse(t.end)), cy: y(t.sum), r: 3.5 }),
      );
      plot.append(g);
    }
  }

  function fixedBars(plot, totals, x, y, base, hourW) {
    for (const t of totals) {
      const s = Date.parse(t.start), bx = x(s), by = y(t.sum);
      const g = el("svg:g", { class: t.early ? "tbar early" : "tbar", "data-window": t.start, "data-total": String(Math.round(t.sum * 100) / 100) });
      g.append(
        el("svg:title", {}, windowText(new Date(s), new Date(t.end)) + " · " + euros(t.sum) + " · " + count(t.n) + " orders" +
          (t.early ? " · EARLY: provisional, may still grow" : "")),
        el("svg:rect", { x: bx, y: Math.min(by, base - 2), width: hourW, height: Math.max(base - by, 2) }),
      );
      plot.append(g);
    }
  }

  // renderChart draws the live panel: for fixed windows the last
  // LIVE_WINDOWS windows in view per key on a time axis; for sliding ones
  // the keys of the newest window (renderNewest). Each has its own linear
  // scale.
  function renderChart(snap) {
    const svg = document.getElementById("chart"), plot = document.getElementById("plot");
    plot.replaceChildren();
    const all = snap.bars || [];
    if (!all.length) return emptyChart(svg, plot, snap);
    if (sliding(snap)) return renderNewest(snap, svg, plot, all);
    const wmAt = snap.watermark ? Date.parse(snap.watermark.at) : NaN;
    const w = windowDecl(snap), slotMs = w.size_seconds * 1000;
    const t1 = Math.max(...all.map((b) => Date.parse(b.window_end)));
    const t0 = t1 - LIVE_WINDOWS * slotMs;
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
    plot.append(el("svg:text", { x: 14, y: (top + base) / 2, class: "axis-title", transform: "rotate(-90 14 " + (top + base) / 2 + ")", "text-anchor": "middle" }, "€ per " + (session(snap) ? "session" : spanText(w.size_seconds))));
    const slot = x(t0 + slotMs) - x(t0);
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
        const g = el("svg:g", {
          class: "bar", "data-window": b.window_start, "data-key": b.pais,
          "data-timing": b.timing, "data-importe": b.importe, "data-pane": String(b.pane_index),
        });
        g.append(
          el("svg:title", {}, b.pais + " · " + windowText(new Date(s), new Date(b.window_end)) + " · " + money(b.importe) +
            " · " + count(b.pedidos) + " orders · " + count(b.unidades) + " units · " + b.timing + " (pane " + b.pane_index + ")"),
          el("svg:rect", { x: bx, y: by, width: bw, height: bh, class: timingClass(b.timing) }),
        );
        // Labels only where they fit: a thin bar's key and timing are in
        // its tooltip, never piled into the next bar's.
        if (bw >= 13) g.append(el("svg:text", { class: "timing", transform: "translate(" + (cx + 4) + "," + (by - 5) + ") rotate(-90)" }, b.timing));
        const label = fit(b.pais, bw - 2);
        if (label) g.append(el("svg:text", { x: cx, y: base - 4, "text-anchor": "middle", class: "key inbar" }, label));
        plot.append(g);
      });
    }
    timeAxis(plot, x, t0, t1, left, right, base, "hour", LIVE_WINDOWS);
    plot.append(el("svg:text", { x: right, y: height - 4, "text-anchor": "end", class: "axis-title" }, "event time, window start"));
    if (!isNaN(wmAt) && wmAt >= t0 && wmAt <= t1) wmMarker(plot, x, wmAt, top, base, right, "W " + stamp(new Date(wmAt)));
    svg.setAttribute("aria-label", "Sales per " + spanLabel(snap) + " window and " + keyWords(snap.key)[0] + ", " + windowText(new Date(t0), new Date(t1)) + ": " + bars.length + " bars");
  }

  // renderNewest draws the keys of the newest sliding window, one row
  // each, the largest first: one window's value per key, "the last hour"
  // as the declaration means it, never windows added together.
  function renderNewest(snap, svg, plot, all) {
    const newest = Math.max(...all.map((b) => Date.parse(b.window_start)));
    const rows = all.filter((b) => Date.parse(b.window_start) === newest)
      .sort((a, b) => (parseFloat(b.importe) || 0) - (parseFloat(a.importe) || 0) || (a.pais < b.pais ? -1 : 1)).slice(0, LIVE_KEYS);
    const rowH = 22, top = 30, labelW = 170, left = 16 + labelW, right = 1150 - 120;
    const height = top + rows.length * rowH + 40;
    size(svg, 1150, height);
    const max = Math.max(...rows.map((b) => Math.abs(parseFloat(b.importe)) || 0)) || 1;
    const step = niceStep(max), top_ = Math.ceil(max / step) * step;
    const x = (v) => left + (v / top_) * (right - left);
    const base = top + rows.length * rowH;
    const start = new Date(newest), end = new Date(Date.parse(rows[0].window_end));
    for (let v = 0; v <= top_ + step / 2; v += step) {
      plot.append(el("svg:line", { x1: x(v), x2: x(v), y1: top - 4, y2: base, class: "grid" }));
      plot.append(el("svg:text", { x: x(v), y: base + 16, "text-anchor": "middle", class: "tick ytick" }, euros(v)));
    }
    plot.append(el("svg:text", { x: left, y: top - 12, class: "axis-title" }, "window " + windowText(start, end) + " (the " + spanText(windowDecl(snap).size_seconds) + " up to " + stamp(end) + ")"));
    rows.forEach((b, i) => {
      const v = parseFloat(b.importe) || 0, cy = top + i * rowH;
      const g = el("svg:g", { class: "bar", "data-window": b.window_start, "data-key": b.pais, "data-timing": b.timing, "data-importe": b.importe, "data-pane": String(b.pane_index) });
      g.append(
        el("svg:title", {}, b.pais + " · " + windowText(start, end) + " · " + money(b.importe) + " · " + count(b.pedidos) + " orders · " + count(b.unidades) + " units · " + b.timing + " (pane " + b.pane_index + ")"),
        el("svg:text", { x: left - 8, y: cy + 15, "text-anchor": "end", class: "key" }, fit(b.pais, labelW - 8)),
        el("svg:rect", { x: left, y: cy + 3, width: Math.max(x(v) - left, 2), height: rowH - 6, class: timingClass(b.timing) }),
        el("svg:text", { x: Math.max(x(v), left + 2) + 6, y: cy + 15, class: "timing" }, money(b.importe) + " · " + b.timing),
      );
      plot.append(g);
    });
    plot.append(el("svg:line", { x1: left, x2: left, y1: top - 4, y2: base, class: "axis" }));
    svg.setAttribute("aria-label", "Sales of the " + keyWords(snap.key)[1] + " in the window " + windowText(start, end) + ": " + rows.length + " bars");
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
        el("td", {}, windowText(d, new Date(b.window_end))),
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
        el("td", {}, w ? stamp(w) : "–"));
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
      tr.append(el("td", {}, windowText(s, new Date(w.window_end))), el("td", {}, w.pais),
        el("td", { class: "num" }, count(w.panes)), el("td", {}, w.on_time));
      body.append(tr);
    }
  }

  function renderFailing(snap) {
    const body = document.querySelector("#failing tbody");
    body.replaceChildren();
    const ow = snap.open_windows;
    if (!ow || !(ow.failing || []).length) placeholder(body, 3, ow ? "None." : "unknown");
    for (const f of (ow && ow.failing) || []) {
      const s = f.window_start && new Date(f.window_start), tr = el("tr", { class: "warn" });
      tr.append(el("td", { title: f.document }, s ? windowText(s, new Date(f.window_end)) : f.document),
        el("td", {}, f.since ? stamp(new Date(f.since)) : ""), el("td", { class: "reason" }, f.error));
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

  // --- monitoring -----------------------------------------------------------

  // monChart draws series over the processing time [t0, t1] in the svg of
  // figure id: "line" series as a polyline with a point per sample,
  // "bar" series as one bar per sample, binMs wide (2 px at least). Each
  // point carries data-at and data-value, the figures as the server sent
  // them.
  function monChart(id, t0, t1, series, fmt, binMs) {
    const svg = document.querySelector("#" + id + " svg");
    const W = 360, H = 130, left = 52, right = W - 8, top = 10, base = H - 34;
    size(svg, W, H);
    svg.replaceChildren();
    const all = series.flatMap((s) => s.points.map((p) => p[1]));
    const max = Math.max(1, ...all);
    const x = (t) => left + ((t - t0) / Math.max(1, t1 - t0)) * (right - left);
    const y = (v) => base - (v / max) * (base - top);
    svg.append(el("svg:line", { x1: left, x2: right, y1: base, y2: base, class: "axis" }));
    svg.append(el("svg:line", { x1: left, x2: left, y1: top, y2: base, class: "axis" }));
    svg.append(el("svg:text", { x: left - 4, y: top + 4, "text-anchor": "end", class: "tick" }, fmt(max)));
    svg.append(el("svg:text", { x: left - 4, y: base, "text-anchor": "end", class: "tick" }, fmt(0)));
    const a = new Date(t0), b = new Date(t1);
    svg.append(el("svg:text", { x: left, y: base + 14, "text-anchor": "start", class: "tick" }, stamp(a)));
    svg.append(el("svg:text", { x: right, y: base + 14, "text-anchor": "end", class: "tick" }, stamp(b)));
    if (!all.length) {
      svg.append(el("svg:text", { x: (left + right) / 2, y: (top + base) / 2, "text-anchor": "middle", class: "mon-empty" }, "nothing in this range"));
    }
    series.forEach((s, k) => {
      const g = el("svg:g", { class: "series", "data-series": s.name });
      if (s.kind === "line") {
        if (s.points.length > 1) g.append(el("svg:polyline", { class: "mon-line", points: s.points.map((p) => x(p[0]) + "," + y(p[1])).join(" ") }));
        for (const [t, v] of s.points) {
          const c = el("svg:circle", { class: "mon-pt", cx: x(t), cy: y(v), r: 2.5, "data-at": new Date(t).toISOString(), "data-value": String(v) });
          c.append(el("svg:title", {}, stamp(new Date(t)) + " UTC · " + fmt(v)));
          g.append(c);
        }
      } else {
        const bw = Math.max(2, x(t0 + binMs) - x(t0)) / series.length;
        for (const [t, v] of s.points) {
          if (!v) continue;
          const r = el("svg:rect", { class: "mon-bar " + (s.cls || ""), x: x(t) + k * bw, y: y(v), width: bw, height: base - y(v), "data-at": new Date(t).toISOString(), "data-value": String(v) });
          r.append(el("svg:title", {}, stamp(new Date(t)) + " UTC · " + s.name + " " + fmt(v)));
          g.append(r);
        }
      }
      svg.append(g);
    });
  }

  function monNow(id, text, warn) {
    const fig = document.getElementById(id);
    fig.querySelector(".mon-now").textContent = text;
    fig.className = "mon" + (warn ? " warn" : "");
  }

  function renderMonitor(snap) {
    const m = snap.monitor, box = document.getElementById("monitor");
    box.hidden = !m;
    if (!m) return;
    const t0 = Date.parse(m.from), t1 = Date.parse(m.until);
    setText("mon-sub", "(processing time, " + stamp(new Date(t0)) + " to " + stamp(new Date(t1)) + " UTC; the sales charts below are on event time)");
    const mins = m.minutes || [], at = (s) => Date.parse(s.at);
    const sum = (f) => mins.reduce((n, s) => n + (f(s) || 0), 0);
    const fresh = mins.filter((s) => s.freshness_seconds != null).map((s) => [at(s), s.freshness_seconds]);
    monChart("mon-freshness", t0, t1, [{ name: "freshness", kind: "line", points: fresh }], duration, 60e3);
    const g = m.now || {}, f = g.freshness_seconds;
    monNow("mon-freshness", f == null ? "no tick yet" : "now " + duration(f), f > 3600);
    monChart("mon-lag", t0, t1, [{ name: "system lag", kind: "line", points: mins.map((s) => [at(s), s.system_lag_seconds]) }], duration, 60e3);
    const lag = g.system_lag_seconds || 0;
    monNow("mon-lag", "now " + duration(lag), lag > 600);
    monChart("mon-accepted", t0, t1, [{ name: "accepted", kind: "bar", points: mins.map((s) => [at(s), s.accepted]) }], count, 60e3);
    monNow("mon-accepted", count(sum((s) => s.accepted)) + " in range");
    monChart("mon-discards", t0, t1, [
      { name: "dead letters", kind: "bar", cls: "dead", points: mins.map((s) => [at(s), s.dead_letters]) },
      { name: "too late", kind: "bar", cls: "late", points: mins.map((s) => [at(s), s.too_late]) },
    ], count, 60e3);
    const dead = sum((s) => s.dead_letters), late = sum((s) => s.too_late);
    monNow("mon-discards", count(dead) + " + " + count(late) + " in range", dead + late > 0);
    const hours = m.hours || [];
    monChart("mon-files", t0, t1, [
      { name: "files loaded", kind: "bar", points: hours.map((h) => [Date.parse(h.at), h.files_loaded]) },
      { name: "rows quarantined", kind: "bar", cls: "late", points: hours.map((h) => [Date.parse(h.at), h.rows_quarantined]) },
    ], count, HOUR);
    const q = hours.reduce((n, h) => n + h.rows_quarantined, 0);
    monNow("mon-files", count(hours.reduce((n, h) => n + h.files_loaded, 0)) + " files, " + count(q) + " rows quarantined", q > 0);
    const bl = m.backlog;
    monNow("mon-backlog", bl ? count(bl.undelivered) + " waiting, oldest " + duration(bl.oldest_unacked_age_seconds) : "not measured here", bl && bl.undelivered > 0);
    setText("mon-backlog-note", bl ? "" : m.backlog_note || "");
    const body = document.querySelector("#mon-errors tbody");
    body.replaceChildren();
    if (!(m.errors || []).length) placeholder(body, 2, "No ERROR line since the server started.");
    for (const e of m.errors || []) {
      const tr = el("tr", { class: "warn" });
      tr.append(el("td", { class: "when", title: "processing time " + stamp(new Date(e.at)) + " UTC" }, stamp(new Date(e.logged))), el("td", { class: "line" }, e.text));
      body.append(tr);
    }
  }

  function setText(id, text) {
    document.getElementById(id).textContent = text;
  }

  function renderErrors(errors) {
    const box = document.getElementById("errors");
    box.replaceChildren();
    const entries = Object.entries(errors || {});
    box.hidden = entries.length === 0;
    for (const [part, msg] of entries) box.append(el("p", { "data-part": part }, part + ": " + msg));
  }

  function render(snap) {
    today = isoDay(new Date(snap.now));
    syncKeys(snap);
    headings(snap);
    if (snap.aggregation) document.getElementById("agg-name").textContent = snap.aggregation;
    renderCards(snap);
    renderTimeline(snap);
    renderChart(snap);
    renderBarTable(snap);
    renderDiscards(snap);
    renderOpen(snap);
    renderFailing(snap);
    renderFiles(snap);
    renderMonitor(snap);
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
    fNote.textContent = f ? "showing " + note.join(" · ") : "showing the " + rangeText(snap) + " (From and To choose other days)";
    const status = document.getElementById("status");
    status.classList.remove("stale");
    status.textContent = "Updated " + isoDay(new Date(snap.now)) + " " + hhmm(new Date(snap.now)) + " (server clock) · refreshes every " + period(every);
    document.body.dataset.updated = snap.now;
  }

  // markInvalid flags the control of the parameter the server refused, and
  // clears the others.
  function markInvalid(param) {
    for (const [p, c] of [["aggregation", fAgg], ["pais", fKey], ["key", fKey], ["from", fFrom], ["to", fTo]]) {
      if (p === param) c.setAttribute("aria-invalid", "true");
      else c.removeAttribute("aria-invalid");
    }
  }

  // refused shows a filter the server would not apply: the reason, the
  // control at fault, and no figures at all, since any would not be the
  // ones asked for. The page keeps polling: Reset or a fix shows figures.
  function refused(r) {
    const msg = r.error || "the filter was refused";
    syncKeys({ keys: [], aggregation: fAgg.value });
    for (const id of ["watermark", "last-order", "last-file", "dead-letters", "too-late", "open-windows"]) {
      const dd = document.getElementById(id);
      dd.replaceChildren(el("strong", {}, "–"), el("span", { class: "sub" }, "filter refused"));
      dd.parentElement.className = "card";
    }
    for (const [svgId, plotId] of [["timeline", "tl-plot"], ["chart", "plot"]]) {
      const svg = document.getElementById(svgId), plot = document.getElementById(plotId);
      plot.replaceChildren();
      wrapped(svg, plot, "Filter refused (" + msg + "): nothing shown.");
    }
    for (const [sel, cols] of [["#bars", 7], ["#dead", 3], ["#late", 4], ["#open", 4], ["#failing", 4], ["#files", 8]]) {
      const body = document.querySelector(sel + " tbody");
      body.replaceChildren();
      placeholder(body, cols, "Filter refused.");
    }
    document.getElementById("monitor").hidden = true;
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
