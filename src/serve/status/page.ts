// The status page: one self-contained HTML document (styles and script inline, nothing fetched
// from elsewhere, no build step). It holds no data: it loads `/api/status`, then follows
// `/api/events` (server-sent events) to redraw without reloading, falling back to polling. All
// text from servers and the config is put in the page with textContent, never as markup, and the
// Content-Security-Policy only admits this exact script and style (by hash).
import { createHash } from "node:crypto";

const STYLE = `
:root{color-scheme:light dark;--bg:#f7f7f8;--fg:#1b1c1f;--muted:#5d6069;--card:#fff;--line:#dcdde1;
--ok:#1a7f37;--warn:#9a6700;--bad:#c62828;--off:#6e7177;--info:#0a58ca;--auth:#7b3fb5;--bar:#4a6fd1;--focus:#0a58ca}
@media (prefers-color-scheme:dark){:root{--bg:#15161a;--fg:#e6e7ea;--muted:#a1a4ad;--card:#1e2026;--line:#33363f;
--ok:#4ac26b;--warn:#d4a72c;--bad:#ff6b6b;--off:#8b8f98;--info:#6ea8fe;--auth:#c39bf0;--bar:#7c9cf5;--focus:#6ea8fe}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header{display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:baseline;padding:.9rem 1.25rem;border-bottom:1px solid var(--line);background:var(--card)}
header h1{font-size:1.15rem;margin:0}
main{padding:1rem 1.25rem;max-width:1280px}
h2{font-size:1rem;margin:1.4rem 0 .5rem}
.muted{color:var(--muted)}
.live::before{content:"";display:inline-block;width:.55rem;height:.55rem;border-radius:50%;background:var(--off);margin-right:.35rem;vertical-align:middle}
.live.on::before{background:var(--ok)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:.75rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.65rem .8rem;min-width:0;overflow-wrap:anywhere}
.card .warn,.warn{color:var(--warn)}
.card.wide{grid-column:1/-1}
@media (min-width:1000px){.card.wide{grid-column:span 2}}
.card .k{font-size:.78rem;color:var(--muted);text-transform:uppercase;letter-spacing:.03em}
.card .v{font-size:1.3rem;font-weight:600}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:8px;overflow:hidden}
th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
thead th{font-size:.78rem;color:var(--muted);font-weight:600;text-transform:uppercase;letter-spacing:.03em}
tbody th{font-weight:600;overflow-wrap:break-word}
tr:last-child td{border-bottom:0}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:999px;font-size:.8rem;font-weight:600;border:1px solid currentColor;white-space:nowrap}
.s-ok{color:var(--ok)}.s-warn{color:var(--warn)}.s-bad{color:var(--bad)}.s-off{color:var(--off)}.s-info{color:var(--info)}.s-auth{color:var(--auth)}
.err{color:var(--bad);margin-top:.25rem;max-width:56rem;overflow-wrap:anywhere}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.82rem}
.stderr{display:block;margin-top:.2rem;padding:.25rem .4rem;background:var(--bg);border-radius:4px;color:var(--fg);white-space:pre-wrap;overflow-wrap:anywhere}
svg.chart{display:block}
svg.chart .b{fill:var(--bar)}svg.chart .e{fill:var(--bad)}svg.chart .p50{stroke:var(--bar);fill:none;stroke-width:1.5}
svg.chart .p95{stroke:var(--warn);fill:none;stroke-width:1.5;stroke-dasharray:3 2}svg.chart .axis{stroke:var(--line)}
svg.chart .dot.p50{fill:var(--bar);stroke:none}svg.chart .dot.p95{fill:var(--warn);stroke:none}
button{font:inherit;font-size:.82rem;padding:.2rem .6rem;border-radius:6px;border:1px solid var(--line);background:var(--bg);color:var(--fg);cursor:pointer;margin:0 .25rem .25rem 0}
button:hover{border-color:var(--muted)}button:disabled{opacity:.55;cursor:default}
:focus-visible{outline:2px solid var(--focus);outline-offset:2px}
#toast{position:fixed;right:1rem;bottom:1rem;max-width:28rem;background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem;box-shadow:0 4px 16px rgba(0,0,0,.15)}
#toast:empty{display:none}
.note{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
/* Narrow windows: each server (and agent) becomes a block with its fields labelled, never a
   table wider than the window. */
@media (max-width:1000px){
table.rows,table.rows tbody,table.rows tr,table.rows th,table.rows td{display:block;width:auto}
table.rows thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table.rows tr{border-bottom:1px solid var(--line);padding:.35rem 0;display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr))}
table.rows tr>th{grid-column:1/-1}
table.rows tr:last-child{border-bottom:0}
table.rows th,table.rows td{border-bottom:0;padding:.2rem .7rem}
table.rows td[data-label]::before{content:attr(data-label);display:block;font-size:.72rem;color:var(--muted);text-transform:uppercase;letter-spacing:.03em}
table.rows td.num{text-align:left}
}
`;

const SCRIPT = `
"use strict";
(function () {
  var STATES = {
    ready: ["live", "ok"], connecting: ["starting", "warn"], starting: ["starting", "warn"],
    failed: ["failed", "bad"], locked: ["vault locked", "bad"], disabled: ["disabled", "off"],
    cached: ["cached", "info"], needs_auth: ["needs sign-in", "auth"], idle: ["idle", "info"],
    stopped: ["stopped", "off"], not_started: ["not started", "off"]
  };
  function stateOf(s) { return STATES[s] || [String(s).replace(/_/g, " "), "off"]; }
  var csrf = null;
  var signedIn = false;
  var live = false;
  var last = null;

  function h(tag, attrs) {
    var el = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") el.textContent = attrs[k];
      else if (k === "cls") el.className = attrs[k];
      else if (k.slice(0, 2) === "on") el.addEventListener(k.slice(2), attrs[k]);
      else el.setAttribute(k, attrs[k]);
    }
    function add(c) {
      if (c === null || c === undefined || c === false) return;
      if (Array.isArray(c)) c.forEach(add);
      else el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    for (var i = 2; i < arguments.length; i++) add(arguments[i]);
    return el;
  }
  function svg(tag, attrs) {
    var el = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (var k in attrs) el.setAttribute(k, attrs[k]);
    return el;
  }
  function ago(iso) {
    if (!iso) return "";
    var s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m";
    if (s < 86400) return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
    return Math.floor(s / 86400) + "d " + Math.floor((s % 86400) / 3600) + "h";
  }
  function ms(v) {
    if (v === undefined || v === null) return "–";
    return v < 1000 ? Math.round(v) + " ms" : (v / 1000).toFixed(v < 10000 ? 2 : 1) + " s";
  }
  function pct(r) { return (r * 100).toFixed(r > 0 && r < 0.1 ? 1 : 0) + "%"; }

  function callsChart(m, w, hgt, label) {
    var n = m.series.calls.length, max = 1, i;
    for (i = 0; i < n; i++) max = Math.max(max, m.series.calls[i]);
    var el = svg("svg", { "class": "chart", width: w, height: hgt, viewBox: "0 0 " + w + " " + hgt, role: "img",
      "aria-label": label + ": " + m.calls + " calls, " + m.errors + " errors in the last hour" });
    var t = svg("title", {}); t.textContent = label + " — calls per minute over the last hour (errors in red)"; el.appendChild(t);
    el.appendChild(svg("line", { "class": "axis", x1: 0, y1: hgt - 0.5, x2: w, y2: hgt - 0.5 }));
    var bw = w / n;
    for (i = 0; i < n; i++) {
      var c = m.series.calls[i], e = m.series.errors[i];
      if (!c) continue;
      var bh = Math.max(1, (c / max) * (hgt - 2)), eh = c ? (e / c) * bh : 0;
      el.appendChild(svg("rect", { "class": "b", x: (i * bw).toFixed(2), y: (hgt - 1 - bh).toFixed(2), width: Math.max(1, bw - 0.6).toFixed(2), height: (bh - eh).toFixed(2) }));
      if (eh > 0) el.appendChild(svg("rect", { "class": "e", x: (i * bw).toFixed(2), y: (hgt - 1 - eh).toFixed(2), width: Math.max(1, bw - 0.6).toFixed(2), height: eh.toFixed(2) }));
    }
    return el;
  }
  function latencyChart(m, w, hgt, label) {
    var n = m.series.p95.length, max = 1, i;
    for (i = 0; i < n; i++) if (m.series.p95[i] !== null) max = Math.max(max, m.series.p95[i]);
    var el = svg("svg", { "class": "chart", width: w, height: hgt, viewBox: "0 0 " + w + " " + hgt, role: "img",
      "aria-label": label + ": p50 " + ms(m.p50_ms) + ", p95 " + ms(m.p95_ms) + " over the last hour" });
    var t = svg("title", {}); t.textContent = label + " — p50 (solid) and p95 (dashed) latency per minute, peak " + ms(max); el.appendChild(t);
    el.appendChild(svg("line", { "class": "axis", x1: 0, y1: hgt - 0.5, x2: w, y2: hgt - 0.5 }));
    var step = w / n;
    ["p50", "p95"].forEach(function (k) {
      var pts = [];
      for (var j = 0; j < n; j++) {
        var v = m.series[k][j];
        if (v === null) continue;
        pts.push((j * step + step / 2).toFixed(1) + "," + (hgt - 1 - (v / max) * (hgt - 3)).toFixed(1));
      }
      if (pts.length > 1) el.appendChild(svg("polyline", { "class": k, points: pts.join(" ") }));
      // A lone minute has no line to draw: a dot shows it.
      if (pts.length === 1) { var xy = pts[0].split(","); el.appendChild(svg("circle", { "class": k + " dot", cx: xy[0], cy: xy[1], r: 1.8 })); }
    });
    return el;
  }

  function card(k, v) {
    var extras = Array.prototype.slice.call(arguments, 2);
    return h("div", { cls: "card" }, h("div", { cls: "k", text: k }), h("div", { cls: "v", text: v }), extras);
  }
  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }
  function vaultCard(v) {
    var el = card("Vault", v.available ? "available" : "unavailable",
      h("div", { cls: v.available ? "muted" : "err", text: v.available ? (v.detail || "") : (v.reason || "") }),
      v.warning ? h("div", { cls: "warn", role: "note", "data-vault-warning": "", text: "Warning: " + v.warning }) : null);
    // A warning is a paragraph: give it room instead of a tall narrow column.
    if (v.warning || (v.detail && v.detail.length > 60)) el.className += " wide";
    return el;
  }
  function storeCard(s) {
    if (!s) return null;
    var what = s.kind === "postgres" ? "PostgreSQL" : "data directory";
    var detail = s.reachable
      ? what + (s.schema_version !== undefined ? ", schema " + s.schema_version : "") + ", " + s.latency_ms + " ms" + (s.where ? " · " + s.where : "")
      : (s.reason || "unreachable") + (s.problem ? ": " + s.problem : "");
    var ok = s.reachable && !s.reason;
    return card("Store", ok ? "reachable" : (s.reachable ? "degraded" : "unreachable"),
      h("div", { cls: ok ? "muted" : "err", "data-store": "", text: detail }),
      s.reachable && s.reason ? h("div", { cls: "warn", role: "note", text: s.reason }) : null);
  }
  // Spans since the daemon started; lost ones are the spans of sends that failed after retries.
  function tracingCard(t) {
    if (!t) return null;
    var lost = t.spans_failed > 0;
    return card("Traces", lost ? plural(t.spans_failed, "span", "spans") + " lost" : "exporting",
      h("div", { cls: lost ? "err" : "muted", "data-traces": "", text: plural(t.spans_sent, "span", "spans") + " sent" +
        (lost ? " · sends failed: is the collector up?" : "") + " · sample " + pct(t.sample) }),
      h("div", { cls: "muted", text: t.collector }));
  }
  function refusedText(m) { return m.refused ? m.refused + " refused before reaching the server" : ""; }

  function render(d) {
    last = d;
    var root = document.getElementById("app");
    var enabledServers = d.servers.filter(function (s) { return s.enabled; });
    var enabled = enabledServers.length;
    var running = enabledServers.filter(function (s) { return s.state === "ready"; }).length;
    var idle = enabledServers.filter(function (s) { return s.state === "idle"; }).length;
    var trouble = enabledServers.filter(function (s) { return ["failed", "locked", "needs_auth", "not_started"].indexOf(s.state) >= 0; }).length;
    document.getElementById("version").textContent = "v" + d.mcphub.version;
    document.getElementById("uptime").textContent = "up " + ago(d.mcphub.started);
    document.getElementById("who").textContent = d.viewer.kind === "agent" ? "agent " + d.viewer.agent + " (read-only)" :
      (signedIn ? "signed in" : (d.tokens_required ? "" : "loopback, no tokens"));
    document.getElementById("signout").hidden = !signedIn;

    // Idle servers (start: auto) are healthy: their tools are listed from the cache and they start
    // on first use. "Available" counts every enabled server an agent can use; "running" is live.
    var serversCard = enabled === 0
      ? card("Servers", "none enabled", h("div", { cls: "warn", text: "Agents see only mcphub's own tools; add a server with mcphub add." }))
      : card("Servers", (enabled - trouble) + " / " + enabled + " available",
          h("div", { cls: "muted", "data-servers-summary": "", text: running + " running · " + idle + " idle (start on first use)" + (trouble ? " · " + trouble + " with a problem" : "") }));
    var cards = h("section", { "aria-labelledby": "h-sum" }, h("h2", { id: "h-sum", cls: "sr", text: "Summary" }),
      h("div", { cls: "cards" },
        serversCard,
        card("Calls, last hour", String(d.totals.calls), callsChart(d.totals, 160, 28, "All servers")),
        card("Error rate", pct(d.totals.error_rate), h("div", { cls: "muted", text: d.totals.errors + (d.totals.errors === 1 ? " error" : " errors") }),
          d.totals.refused ? h("div", { cls: "muted", text: refusedText(d.totals) + " (not counted)" }) : null),
        card("Latency p50 / p95", ms(d.totals.p50_ms) + " / " + ms(d.totals.p95_ms)),
        vaultCard(d.vault),
        storeCard(d.store),
        tracingCard(d.tracing)));

    // One line per stdio server: how it is confined; the details (paths for the operator) on hover.
    function sandboxLine(b) {
      if (!b) return null;
      if (b.mode === "off") return h("div", { cls: "muted", "data-sandbox": "off", title: "runs with the operator's full rights", text: "not sandboxed" });
      var count = function (x) { return typeof x === "number" ? x : x.length; };
      var list = function (x) { return typeof x === "number" ? x + " path(s)" : (x.length ? x.join(", ") : "nothing"); };
      var w = count(b.write);
      var text = "sandboxed · network " + b.network + " · " + (w ? "writes " + (typeof b.write === "number" ? w + " path(s)" : b.write.join(", ")) : "writes nothing");
      var title = [(b.backend || "sandbox") + (b.live ? "" : " (configured; not running)"), "network: " + b.network, "write: " + list(b.write), "read: " + list(b.read)];
      if (b.roots !== undefined) title.push("roots: " + list(b.roots));
      if (b.hidden) title.push("protected paths covered: " + b.hidden);
      (b.notes || []).forEach(function (n) { title.push(n); });
      return h("div", { cls: "muted", "data-sandbox": b.network, title: title.join("\\n"), text: text });
    }

    var rows = d.servers.map(function (s) {
      var st = stateOf(s.state);
      var err = s.error ? h("div", { cls: "err" }, s.error, s.stderr_line ? h("code", { cls: "stderr", title: "last stderr line (redacted)", text: s.stderr_line }) : null) :
        (s.last_error ? h("div", { cls: "muted" }, "last error " + ago(s.last_error.at) + " ago: " + s.last_error.message,
          s.last_error.stderr_line ? h("code", { cls: "stderr", text: s.last_error.stderr_line }) : null) : null);
      var acts = h("td", { "data-label": "Actions" });
      if (csrf && d.viewer.kind === "operator") {
        if (s.enabled) {
          acts.appendChild(h("button", { type: "button", "data-action": "reconnect", "aria-label": "Reconnect " + s.name, onclick: function () { act(s.name, "reconnect", this); } }, "Reconnect"));
          acts.appendChild(h("button", { type: "button", "data-action": "disable", "aria-label": "Disable " + s.name, onclick: function () { act(s.name, "disable", this); } }, "Disable"));
        } else {
          acts.appendChild(h("button", { type: "button", "data-action": "enable", "aria-label": "Enable " + s.name, onclick: function () { act(s.name, "enable", this); } }, "Enable"));
        }
      }
      var lastCall = s.last_call ? "last call " + ago(s.last_call) + " ago" : "no calls this hour";
      var stateNote = s.failing_since ? "failing for " + ago(s.failing_since) + ", retrying" :
        s.state === "ready" ? "up " + ago(s.since) :
        s.state === "idle" ? "idle for " + ago(s.since) + "; starts on first use" : "for " + ago(s.since);
      var toolsNote = s.catalog === "cached" ? "cached" + (s.listed_at ? " " + ago(s.listed_at) + " ago" : "") : s.catalog === "none" && s.enabled ? "not listed yet" : null;
      var defs = null;
      if (s.definitions) {
        defs = h("div", { "data-definitions": "" },
          s.definitions.changed.map(function (c) {
            return h("div", { cls: "err" }, c.tool + " changed since approved (" + c.changes.join("; ") + "); calls refused until: ",
              h("code", { text: "mcphub approve " + c.tool }),
              c.description ? h("div", { cls: "muted", text: "before: " + c.description.before }) : null,
              c.description ? h("div", { cls: "muted", text: "after: " + c.description.after }) : null);
          }),
          s.definitions.awaiting_approval.length ? h("div", { cls: "err" }, s.definitions.awaiting_approval.length + " tool(s) await a first approval: " + s.definitions.awaiting_approval.join(", ") + "; ",
            h("code", { text: "mcphub approve " + s.name })) : null,
          s.definitions.unreadable ? h("div", { cls: "err", text: "definitions file unreadable: " + s.definitions.unreadable }) : null);
      }
      return h("tr", { "data-server": s.name, "data-state": s.state },
        h("th", { scope: "row" }, h("div", { text: s.name }), s.description ? h("div", { cls: "muted", text: s.description }) : null, defs),
        h("td", { "data-label": "State" }, h("span", { cls: "badge s-" + st[1], "data-state-label": "", text: st[0] }),
          h("div", { cls: "muted", "data-state-note": "", text: stateNote }), err),
        h("td", { "data-label": "Transport" }, h("div", { text: s.transport }), s.server_version ? h("div", { cls: "muted", text: s.server_version }) : null, sandboxLine(s.sandbox)),
        h("td", { cls: "num", "data-label": "Tools", "data-catalog": s.catalog }, h("span", { "data-tools": "", text: String(s.tools) }), toolsNote ? h("div", { cls: "muted", text: toolsNote }) : null,
          s.limits.concurrent_calls ? h("div", { cls: "muted", "data-limits": "", text: s.limits.in_flight + " / " + s.limits.concurrent_calls.limit + " in flight" + (s.limits.concurrent_calls.queue ? " · " + s.limits.queued + " / " + s.limits.concurrent_calls.queue + " queued" : "") }) : null),
        h("td", { "data-label": "Calls / min (1 h)" }, callsChart(s.metrics, 150, 28, s.name),
          h("div", { cls: "muted", "data-calls": "", text: [plural(s.metrics.calls, "call", "calls"), pct(s.metrics.error_rate) + " errors", refusedText(s.metrics), lastCall].filter(Boolean).join(" · ") })),
        h("td", { "data-label": "Latency (1 h)" }, latencyChart(s.metrics, 150, 28, s.name), h("div", { cls: "muted", text: "p50 " + ms(s.metrics.p50_ms) + " · p95 " + ms(s.metrics.p95_ms) })),
        acts);
    });
    var servers = h("section", { "aria-labelledby": "h-servers" }, h("h2", { id: "h-servers", text: "Servers" }),
      h("table", { cls: "rows" }, h("thead", {}, h("tr", {}, ["Server", "State", "Transport", "Tools", "Calls / min (1 h)", "Latency (1 h)", "Actions"].map(function (t) { return h("th", { scope: "col", text: t }); }))),
        h("tbody", {}, rows.length ? rows : [h("tr", {}, h("td", { colspan: "7", cls: "muted", text: "No servers configured." }))])));

    function limitsText(l) {
      var parts = [];
      if (l.calls_per_minute) parts.push(l.calls_per_minute.last_minute + " / " + l.calls_per_minute.limit + " calls this minute");
      if (l.concurrent_calls) parts.push(l.in_flight + " / " + l.concurrent_calls.limit + " in flight");
      return parts.join(" · ");
    }
    var arows = d.agents.map(function (a) {
      var scope = a.servers === "all" ? "all servers" : (a.servers.length ? a.servers.join(", ") : "no servers");
      if (a.allowed_tools !== undefined) scope += " · " + a.allowed_tools + " allowed tools";
      return h("tr", { "data-agent": a.name },
        h("th", { scope: "row" }, h("div", { text: a.name }), a.type ? h("div", { cls: "muted", text: a.type + (a.mode ? " · " + a.mode : "") }) : null),
        h("td", { "data-label": "Scope" }, h("div", { text: a.disabled ? "disabled" : scope }), limitsText(a.limits) ? h("div", { cls: "muted", "data-limits": "", text: limitsText(a.limits) }) : null),
        h("td", { cls: "num", "data-label": "Tokens", text: String(a.tokens) }),
        h("td", { cls: "num", "data-label": "Sessions", text: String(a.sessions) }),
        h("td", { "data-label": "Last activity", text: a.last_activity ? ago(a.last_activity) + " ago" : "–" }));
    });
    var agents = h("section", { "aria-labelledby": "h-agents" }, h("h2", { id: "h-agents", text: "Agents" }),
      h("table", { cls: "rows" }, h("thead", {}, h("tr", {}, ["Agent", "Scope", "Tokens", "Sessions", "Last activity"].map(function (t) { return h("th", { scope: "col", text: t }); }))),
        h("tbody", {}, arows.length ? arows : [h("tr", {}, h("td", { colspan: "5", cls: "muted", text: "No agents configured." }))])));

    var foot = h("p", { cls: "muted" }, "Updated " + new Date(d.generated).toLocaleTimeString() + " · catalogue " + d.catalog_revision.slice(-8) +
      " · expose " + d.expose + (d.config_path ? " · config " + d.config_path : ""));
    var focused = document.activeElement && document.activeElement.getAttribute("aria-label");
    root.replaceChildren(cards, servers, agents, foot);
    // Redrawing replaces the buttons: keep keyboard focus where it was.
    if (focused) { var again = root.querySelector('[aria-label="' + CSS.escape(focused) + '"]'); if (again) again.focus(); }
  }

  function say(text, bad) {
    var t = document.getElementById("toast");
    t.textContent = text;
    t.className = bad ? "s-bad" : "";
    clearTimeout(say.timer);
    say.timer = setTimeout(function () { t.textContent = ""; }, 6000);
  }

  function act(server, action, button) {
    button.disabled = true;
    fetch("/api/servers/" + encodeURIComponent(server) + "/" + action, {
      method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf }, body: "{}"
    }).then(function (r) {
      return r.json().then(function (b) { say(b.message || (r.ok ? "done" : "failed"), !r.ok); });
    }).catch(function () { say("the daemon did not answer", true); })
      .then(function () { button.disabled = false; refresh(); });
  }

  function setLive(on) {
    live = on;
    var el = document.getElementById("live");
    el.className = "live" + (on ? " on" : "");
    el.textContent = on ? "live" : "reconnecting…";
  }

  function needSignIn() {
    setLive(false);
    document.getElementById("live").textContent = "signed out";
    document.getElementById("app").replaceChildren(h("div", { cls: "note", role: "alert" },
      h("h2", { text: "Sign in needed" }),
      h("p", {}, "This daemon requires a sign-in. On this machine run ", h("code", { text: "mcphub open" }), " and open the link it prints (it works once, for two minutes).")));
  }

  function refresh() {
    return fetch("/api/status", { credentials: "same-origin", headers: { Accept: "application/json" } }).then(function (r) {
      if (r.status === 401) { needSignIn(); return false; }
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.json().then(function (d) {
        if (d.csrf) csrf = d.csrf;
        signedIn = !!d.signed_in;
        render(d);
        return true;
      });
    });
  }

  var poll = null;
  function follow() {
    if (!window.EventSource) { startPolling(); return; }
    var es = new EventSource("/api/events");
    es.addEventListener("status", function (ev) { setLive(true); render(JSON.parse(ev.data)); });
    es.addEventListener("signed_out", function () { es.close(); needSignIn(); });
    es.onopen = function () { setLive(true); };
    es.onerror = function () {
      setLive(false);
      // The browser retries on its own; a stream it gave up on is reopened after a fresh load.
      if (es.readyState === 2) { es.close(); setTimeout(function () { refresh().then(function (ok) { if (ok) follow(); }, startPolling); }, 3000); }
    };
  }
  function startPolling() {
    if (poll) return;
    poll = setInterval(function () { refresh().catch(function () { setLive(false); }); }, 5000);
  }

  document.getElementById("signout").addEventListener("click", function () {
    fetch("/logout", { method: "POST", credentials: "same-origin", headers: { "X-CSRF-Token": csrf || "" } }).then(function () { signedIn = false; needSignIn(); });
  });
  setInterval(function () { if (last) render(last); }, 15000); // keeps "x ago" current between events
  refresh().then(function (ok) { if (ok) follow(); }, function (e) { console.error(e); setLive(false); startPolling(); });
})();
`;

const sha = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

/** Served with every page: only our own inline script and style run; the page cannot be framed. */
export const PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha(SCRIPT)}`,
  `style-src ${sha(STYLE)}`,
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** For the script-free pages (sign in needed, link invalid, signed in). */
export const NOTE_CSP = ["default-src 'none'", `style-src ${sha(STYLE)}`, "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join("; ");

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>mcphub status</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>mcphub</h1>
<span id="version" class="muted"></span>
<span id="uptime" class="muted"></span>
<span id="live" class="live" role="status" aria-live="polite">connecting…</span>
<span id="who" class="muted"></span>
<button type="button" id="signout" hidden>Sign out</button>
</header>
<main id="app" aria-busy="false"><p class="muted">Loading…</p></main>
<div id="toast" role="status" aria-live="polite"></div>
<script>${SCRIPT}</script>
</body>
</html>
`;

/** A small script-free page with one message (the three below). */
function notePage(title: string, body: string, head = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${head}<title>mcphub: ${title}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** The answer to a browser that is not signed in (no data, nothing to act on). */
export const SIGN_IN_HTML = notePage(
  "sign in needed",
  `<div class="note" role="alert">
<h1>Sign in needed</h1>
<p>This mcphub daemon requires a sign-in. On this machine run <code>mcphub open</code> and open the link it prints (it works once, for two minutes).</p>
</div>`,
);

/** After a link was redeemed: a same-origin hop to the clean URL, so the cookie is sent with it. */
export const SIGNED_IN_HTML = notePage("signed in", `<p>Signed in. <a href="/">Continue to the status page</a>.</p>`, `<meta http-equiv="refresh" content="0;url=/">\n`);

export const LINK_INVALID_HTML = notePage(
  "link not valid",
  `<div class="note" role="alert">
<h1>This sign-in link is not valid</h1>
<p>It was already used, it expired (links last two minutes), or it belongs to another mcphub data directory. Run <code>mcphub open</code> for a new one.</p>
</div>`,
);
