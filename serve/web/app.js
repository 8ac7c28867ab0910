// The MedGraph web interface: one page, five views (chat, graph explorer, communities, corpus and
// jobs, tiers and admin), talking to the same ingress's JSON API. Text from the server is always
// set as text (never parsed as HTML). Timings the tests and benchmarks read are recorded with
// performance.measure: "medgraph:first-answer-text" and "medgraph:graph-drawn".
import { LANGUAGES, htmlLang, language, languageName, loadStrings, pickLanguage, setLanguage, t } from "./i18n.js";

const state = {
  key: sessionStorage.getItem("medgraph.key") || "",
  session: null,   // the conversation the next question continues
  turns: [],       // {question, text, status, done, error, el}
  tier: "",
  chatRoot: null,
};

// --- small helpers ---------------------------------------------------------------------------

function fill(node, ...children) {
  // replaceChildren without the null/false placeholders of conditional children
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

function headers(json = false) {
  const h = {};
  if (state.key) h.Authorization = `Bearer ${state.key}`;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

async function errorOf(resp) {
  let message = resp.statusText;
  try {
    const body = await resp.json();
    const detail = body.detail ?? body.error?.message ?? body;
    message = typeof detail === "string" ? detail
      : Array.isArray(detail) ? detail.map((e) => `${(e.loc || []).join(".")}: ${e.msg}`).join("; ")
      : JSON.stringify(detail);
  } catch { /* not JSON */ }
  if (resp.status === 401) message = `${message} — ${t("chat.keyNeeded")}`;
  return new ApiError(resp.status, message);
}

async function api(path, { method = "GET", body } = {}) {
  const resp = await fetch(path, { method, headers: headers(body !== undefined),
                                   body: body === undefined ? undefined : JSON.stringify(body) });
  if (!resp.ok) throw await errorOf(resp);
  return resp.json();
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, v);
  return q.toString();
}

function errorBox(err) {
  return el("p", { class: "error", role: "alert" }, `${t("error")}: ${err.message || err}`);
}

function when(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleString(language()) : "—";
}

function where(c) {
  return [(c.section_path || []).join(" › "), c.page ? `${t("passage.page")} ${c.page}` : ""].filter(Boolean).join(", ");
}

// --- the passage dialog: a cited passage with the quoted sentences highlighted ------------------

function sentences(snippet) {
  return String(snippet || "").replace(/\s*…$/, "").split(/(?<=[.!?。！？])\s+/).map((s) => s.trim()).filter((s) => s.length > 3);
}

export function highlight(text, snippet) {
  // the spans of `text` that the snippet's sentences quote (exact matches), merged
  const spans = [];
  for (const s of sentences(snippet)) {
    const at = text.indexOf(s);
    if (at >= 0) spans.push([at, at + s.length]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const parts = [];
  let pos = 0;
  for (const [a, b] of spans) {
    if (a < pos) continue;
    if (a > pos) parts.push(text.slice(pos, a));
    parts.push(el("mark", {}, text.slice(a, b)));
    pos = b;
  }
  parts.push(text.slice(pos));
  return { parts, found: spans.length > 0 };
}

async function openPassage(c) {
  const dialog = document.getElementById("passage");
  document.getElementById("passage-title").textContent = c.title || c.doc_id || c.chunk_id;
  const meta = document.getElementById("passage-meta");
  const body = document.getElementById("passage-text");
  const snippet = c.snippet ?? c.sentence ?? c.text ?? "";
  fill(meta, 
    el("dt", {}, t("passage.source")), el("dd", {}, c.source_id || c.doc_id || "—"),
    el("dt", {}, t("passage.section")), el("dd", {}, (c.section_path || []).join(" › ") || "—"),
    el("dt", {}, t("passage.page")), el("dd", {}, c.page ?? "—"));
  fill(body, t("loading"));
  if (!dialog.open) dialog.showModal();
  try {
    // a remembered conversation (chunk ID memory:<id>) is no stored passage: its quote is all there is
    if (!/^[0-9a-f]{16}$/.test(c.chunk_id || "")) { fill(body, el("mark", {}, snippet)); return; }
    const chunk = await api(`/chunks/${encodeURIComponent(c.chunk_id)}`);
    const { parts, found } = highlight(chunk.text, snippet);
    fill(body, ...(found || !snippet ? parts : [el("mark", {}, snippet), "\n\n", chunk.text]));
    body.querySelector("mark")?.scrollIntoView({ block: "center" });
  } catch (err) {
    fill(body, el("p", {}, t("passage.unavailable")), el("mark", {}, snippet), errorBox(err));
  }
}

// --- chat ------------------------------------------------------------------------------------

function answerNodes(text, citations) {
  // the answer with each [N] a link that opens citation N
  const byNumber = new Map((citations || []).map((c) => [c.number, c]));
  const out = [];
  let pos = 0;
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    out.push(text.slice(pos, m.index));
    const c = byNumber.get(Number(m[1]));
    out.push(c ? el("a", { class: "cite", href: `#cite-${c.number}`, "aria-label": `${t("chat.sources")} ${c.number}: ${c.title}`,
                           onclick: (e) => { e.preventDefault(); openPassage(c); } }, m[0]) : m[0]);
    pos = m.index + m[0].length;
  }
  out.push(text.slice(pos));
  return out;
}

// The hops of a multi-hop question: each sub-query as retrieved, its sub-answer, and the answer's
// citations that come from its passages (or that none supports it).
function hopItems(hops, citations) {
  const number = new Map((citations || []).map((c) => [c.chunk_id, c.number]));
  return hops.map((h) => {
    const cites = (h.passages || []).filter((id) => number.has(id)).map((id) => number.get(id));
    return el("li", { class: h.supported === false ? "hop unsupported" : "hop", value: h.hop, "data-answer": h.answer || "" },
      h.resolved || h.query,
      h.answer ? el("span", { class: "muted" }, ` — ${t("chat.hopAnswer", { x: h.answer })}`) : null,
      cites.length ? el("span", {}, " ", ...cites.map((n) => el("a", { class: "cite", href: `#cite-${n}` }, `[${n}]`))) : null,
      h.supported === false ? el("span", {}, " ", el("span", { class: "badge refused" }, t("chat.hopUnsupported"))) : null);
  });
}

function showHops(turn, hops, citations) {
  fill(turn.el.hops, ...hops.length ? [el("h3", {}, t("chat.hops")), el("ol", {}, ...hopItems(hops, citations))] : []);
}

function renderDone(turn) {
  const d = turn.done;
  const route = d.route || {};
  const reasons = [route.intent, route.entity_score !== undefined ? `E=${route.entity_score} + I=${route.intent_score}` : "",
                   ...(route.cues || []), ...(route.notes || [])].filter(Boolean).join("; ");
  fill(turn.el.answer, ...answerNodes(turn.text, d.citations));
  turn.el.answer.removeAttribute("aria-busy");
  turn.el.status.textContent = "";
  fill(turn.el.meta, 
    d.refused ? el("span", { class: "badge refused" }, t("chat.refused")) : null,
    d.tier ? el("span", { class: "badge" }, `${t("chat.tier")}: ${d.tier}`) : null,
    el("span", { class: "badge" }, `${t("chat.model")}: ${d.model_used || "—"}`),
    reasons ? el("span", { class: "muted" }, ` ${t("chat.route")}: ${reasons}. `) : null,
    (d.retrieval_paths_used || []).length ? el("span", { class: "muted" }, `${t("chat.paths")}: ${d.retrieval_paths_used.join(", ")}`) : null,
    turn.traceUrl ? el("a", { class: "trace", href: turn.traceUrl, target: "_blank", rel: "noopener" }, ` ${t("chat.trace")}`) : null);
  fill(turn.el.sources, ...(d.citations || []).length ? [
    el("h3", {}, t("chat.sources")),
    el("ol", { class: "citations" }, ...d.citations.map((c) => el("li", { id: `cite-${c.number}`, value: c.number },
      el("a", { href: `#cite-${c.number}`, onclick: (e) => { e.preventDefault(); openPassage(c); } }, c.title || c.doc_id),
      ` (${c.source_id || c.doc_id})`, where(c) ? ` — ${where(c)}` : ""))),
  ] : []);
  turn.el.disclaimer.textContent = d.disclaimer || "";
  showHops(turn, (d.agent && d.agent.hops) || [], d.citations);
}

function turnView(turn) {
  turn.el = {
    status: el("p", { class: "status", role: "status", "aria-live": "polite" }),
    answer: el("div", { class: "answer", "aria-busy": "true" }),
    meta: el("p", {}), sources: el("div", {}), disclaimer: el("p", { class: "disclaimer" }),
    hops: el("div", { class: "hops" }),
  };
  return el("section", { class: "card turn", "aria-label": turn.question },
    el("p", { class: "turn-question" }, turn.question), turn.el.hops, turn.el.status, turn.el.answer, turn.el.meta,
    turn.el.sources, turn.el.disclaimer);
}

function handleEvent(turn, event, marks) {
  if (event.error) {
    turn.el.status.textContent = "";
    turn.el.answer.removeAttribute("aria-busy");
    turn.el.answer.after(errorBox({ message: event.error }));
  } else if (event.status === "queued") {
    turn.el.status.textContent = t("chat.queued", { n: event.position });
  } else if (event.status) {
    turn.el.status.textContent = t(`status.${event.status}`);
  } else if (event.hop) {  // a hop as it is retrieved (a hop run again replaces its line)
    turn.hops = [...(turn.hops || []).filter((h) => h.hop !== event.hop.hop), event.hop].sort((a, b) => a.hop - b.hop);
    showHops(turn, turn.hops, []);
  } else if (event.delta !== undefined) {
    turn.text += event.delta;
    turn.el.answer.append(event.delta);
    if (!marks.first) {
      marks.first = true;
      performance.mark("medgraph:first-text");
      performance.measure("medgraph:first-answer-text", "medgraph:submit", "medgraph:first-text");
    }
  } else if (event.done) {
    turn.done = event;
    if (event.session_id) state.session = event.session_id;
    renderDone(turn);
    updateSession();
  }
}

async function ask(question, list) {
  const turn = { question, text: "", done: null };
  state.turns.push(turn);
  list.append(turnView(turn));
  turn.el.status.textContent = t("chat.working");
  performance.clearMarks("medgraph:submit");
  performance.clearMarks("medgraph:first-text");
  performance.mark("medgraph:submit");
  const marks = { first: false };
  const body = { message: question, session_id: state.session || undefined, tier: state.tier || undefined, progress: true };
  try {
    const resp = await fetch("/chat/stream", { method: "POST", headers: headers(true), body: JSON.stringify(body) });
    if (!resp.ok) throw await errorOf(resp);
    turn.traceUrl = resp.headers.get("x-trace-url");  // with tracing on: this request's trace in the tracing UI
    const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        for (const line of frame.split("\n")) if (line.startsWith("data: ")) handleEvent(turn, JSON.parse(line.slice(6)), marks);
      }
    }
  } catch (err) {
    turn.el.status.textContent = "";
    turn.el.answer.removeAttribute("aria-busy");
    turn.el.answer.after(errorBox(err));
  }
}

let sessionLine = null;
function updateSession() {
  if (sessionLine) sessionLine.textContent = state.session ? `${t("chat.session")}: ${state.session.slice(0, 18)}…` : "";
}

function chatView() {
  if (state.chatRoot) return state.chatRoot;
  const list = el("div", { class: "turns" });
  const input = el("textarea", { id: "question", name: "question", required: true, maxlength: 4000 });
  const tier = el("select", { id: "tier", onchange: (e) => { state.tier = e.target.value; } },
    el("option", { value: "" }, t("chat.tierAuto")), ...["small", "medium", "large"].map((x) => el("option", { value: x }, x)));
  const button = el("button", { type: "submit" }, t("chat.ask"));
  sessionLine = el("span", { class: "muted" });
  const form = el("form", {
    onsubmit: async (e) => {
      e.preventDefault();
      const q = input.value.trim();
      if (!q) return;
      input.value = "";
      button.disabled = true;
      try { await ask(q, list); } finally { button.disabled = false; input.focus(); }
    },
  }, el("label", { for: "question" }, t("chat.question")), input,
  el("div", { class: "row" }, button, el("label", { for: "tier" }, t("chat.tier")), tier,
    el("button", { type: "button", class: "secondary", onclick: () => {
      state.session = null; state.turns = []; fill(list); updateSession(); input.focus();
    } }, t("chat.new")), sessionLine));
  input.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); } });
  state.chatRoot = el("div", {}, el("h1", {}, t("chat.title")), el("p", { class: "muted" }, t("chat.empty")), list, form);
  return state.chatRoot;
}

// --- graph explorer --------------------------------------------------------------------------

let cytoscape = null;
const CATEGORY_COLOURS = { Disease: "#c0392b", Drug: "#1f77b4", Procedure: "#2e7d32", Anatomy: "#8e44ad",
                           Physiology: "#d35400", Organism: "#6d4c41", Other: "#607d8b" };

function explorerView(params) {
  const name = el("input", { id: "entity-name", value: params.name || "", required: true, maxlength: 200 });
  const lang = el("select", { id: "entity-lang", "aria-label": t("language") }, el("option", { value: "" }, t("explore.anyLang")),
    ...LANGUAGES.map((l) => el("option", { value: l, selected: params.lang === l }, l)));
  const graph = el("div", { id: "graph", role: "img", "aria-label": t("explore.hint") });
  const card = el("div", { id: "entity-card" });
  const lists = el("div", { id: "entity-lists" });
  const shared = el("div", { id: "edge-passages", "aria-live": "polite" });
  const caption = el("p", { class: "muted", id: "graph-caption" });
  const root = el("div", {}, el("h1", {}, t("explore.title")),
    el("form", { class: "row", onsubmit: (e) => {
      e.preventDefault();
      location.hash = `#/explore?${query({ name: name.value.trim(), lang: lang.value, limit: params.limit })}`;
    } }, el("label", { for: "entity-name" }, t("explore.name")), name, lang, el("button", { type: "submit" }, t("explore.find"))),
    el("div", { class: "explorer" }, el("div", {}, graph, caption, el("p", { class: "muted" }, t("explore.hint"))),
      el("div", {}, card, lists, shared)));
  if (params.name || params.id) {
    exploreFrom(params, { graph, card, lists, shared, caption }).catch((err) => fill(card, errorBox(err)));
  }
  return root;
}

async function exploreFrom(params, view) {
  fill(view.card, t("loading"));
  const limit = Math.min(200, Number(params.limit) || 50);
  const [found, lib] = await Promise.all([
    api(`/graph/entity?${query({ name: params.id ? undefined : params.name, id: params.id, lang: params.lang, limit, names_in: language() })}`),
    cytoscape ? Promise.resolve(cytoscape) : import("./vendor/cytoscape.esm.min.mjs").then((m) => m.default),
  ]);
  cytoscape = lib;
  const g = { nodes: new Map(), edges: new Map(), cy: null, view, lang: params.lang };
  addFound(g, found);
  draw(g, found.mesh_id);
  showEntity(g, found);
}

function addFound(g, found) {
  g.nodes.set(found.mesh_id, { name: found.name, category: found.category });
  for (const n of found.neighbours) if (!g.nodes.has(n.mesh_id)) g.nodes.set(n.mesh_id, { name: n.name, category: n.category });
  for (const e of found.edges) {
    if (!g.nodes.has(e.source) || !g.nodes.has(e.target)) continue;
    const id = [e.source, e.target].sort().join("|");
    g.edges.set(id, { source: e.source, target: e.target, weight: e.weight });
  }
}

function draw(g, focus) {
  performance.clearMarks("medgraph:graph-start");
  performance.mark("medgraph:graph-start");
  const elements = [
    ...[...g.nodes].map(([id, n]) => ({ data: { id, label: n.name, colour: CATEGORY_COLOURS[n.category] || CATEGORY_COLOURS.Other } })),
    ...[...g.edges].map(([id, e]) => ({ data: { id, source: e.source, target: e.target, weight: e.weight } })),
  ];
  const maxWeight = Math.max(1, ...[...g.edges.values()].map((e) => e.weight));
  if (g.cy) g.cy.destroy();
  const cy = cytoscape({
    container: g.view.graph, elements, minZoom: 0.2, maxZoom: 3,
    style: [
      { selector: "node", style: { "background-color": "data(colour)", label: "data(label)", "font-size": 9,
                                   width: 14, height: 14, "text-valign": "bottom", "text-margin-y": 2, color: "#1b1f24" } },
      { selector: `node[id = "${focus}"]`, style: { width: 26, height: 26, "font-size": 12, "font-weight": "bold" } },
      { selector: "edge", style: { width: `mapData(weight, 1, ${maxWeight}, 1, 8)`, "line-color": "#9aa5b1", opacity: 0.7,
                                   "curve-style": "haystack" } },
      { selector: ":selected", style: { "line-color": "#0b5cad", "background-color": "#0b5cad", opacity: 1 } },
    ],
    layout: { name: "cose", animate: false, randomize: true, numIter: 250, nodeRepulsion: () => 6000,
              idealEdgeLength: () => 60, fit: true, padding: 20 },
  });
  g.cy = cy;
  window.medgraph = { cy };  // for the browser tests and the console
  requestAnimationFrame(() => requestAnimationFrame(() => {
    performance.mark("medgraph:graph-end");
    performance.measure("medgraph:graph-drawn", { start: "medgraph:graph-start", end: "medgraph:graph-end",
                                                  detail: { nodes: g.nodes.size, edges: g.edges.size } });
    g.view.graph.dataset.nodes = String(cy.nodes().length);
  }));
  g.view.caption.textContent = t("explore.drawn", { nodes: g.nodes.size, edges: g.edges.size });
  cy.on("tap", "node", (e) => expand(g, e.target.id()));
  cy.on("tap", "edge", (e) => showEdge(g, e.target.data("source"), e.target.data("target")));
}

async function expand(g, id) {
  try {
    const found = await api(`/graph/entity?${query({ id, lang: g.lang, limit: 25, names_in: language() })}`);
    addFound(g, found);
    draw(g, id);
    showEntity(g, found);
  } catch (err) {
    fill(g.view.card, errorBox(err));
  }
}

function showEntity(g, found) {
  const names = Object.entries(found.names || {}).filter(([, v]) => v.length);
  fill(g.view.card, el("section", { class: "card", "aria-label": found.name },
    el("h2", { id: "entity-title" }, `${found.name} (${found.mesh_id})`),
    el("dl", {}, el("dt", {}, t("explore.category")), el("dd", {}, found.category || "—"),
      ...names.flatMap(([lang, list]) => [el("dt", {}, `${t("explore.names")} (${lang})`), el("dd", { lang }, list.slice(0, 6).join("; "))]),
      el("dt", {}, t("explore.communities")),
      el("dd", {}, (found.communities || []).length ? el("ul", {}, ...found.communities.map((c) => el("li", {},
        el("a", { href: `#/communities?${query({ level: c.level, focus: c.community_id })}` }, c.title || c.community_id),
        ` (L${c.level}, ${c.size})`))) : t("none")))));
  const neighbours = [...g.edges.values()].filter((e) => e.source === found.mesh_id || e.target === found.mesh_id)
    .map((e) => ({ id: e.source === found.mesh_id ? e.target : e.source, weight: e.weight })).sort((a, b) => b.weight - a.weight);
  fill(g.view.lists, 
    el("h3", {}, t("explore.neighbours")),
    el("ul", { class: "list-buttons", id: "neighbour-list" }, ...neighbours.map((n) => el("li", {},
      el("button", { type: "button", "data-id": n.id, onclick: () => expand(g, n.id) }, g.nodes.get(n.id)?.name || n.id),
      " ", el("button", { type: "button", class: "edge-button", "aria-label": `${n.weight} ${t("explore.weight")}: ${found.name} – ${g.nodes.get(n.id)?.name}`,
                        onclick: () => showEdge(g, found.mesh_id, n.id) }, `${n.weight} ${t("explore.weight")}`)))));
}

async function showEdge(g, a, b) {
  const box = g.view.shared;
  fill(box, t("loading"));
  try {
    const found = await api(`/graph/edge?${query({ source: a, target: b, limit: 20 })}`);
    fill(box, el("h3", { id: "edge-title" }, `${t("explore.shared")}: ${g.nodes.get(a)?.name || a} – ${g.nodes.get(b)?.name || b}`),
      el("ul", { class: "citations" }, ...found.chunks.map((c) => el("li", {},
        el("a", { href: "#", onclick: (e) => { e.preventDefault(); openPassage({ ...c, snippet: "" }); } }, c.title || c.doc_id),
        ` (${c.source_id || c.doc_id})`, where(c) ? ` — ${where(c)}` : "",
        el("div", { class: "muted" }, c.text.length > 240 ? `${c.text.slice(0, 240)}…` : c.text)))));
  } catch (err) {
    fill(box, errorBox(err));
  }
}

// --- communities -----------------------------------------------------------------------------

const PAGE = 10;

function communitiesView(params) {
  const root = el("div", {}, el("h1", {}, t("comm.title")));
  const body = el("div", {}, t("loading"));
  const level = params.level ?? "";
  const offset = Math.max(0, Number(params.offset) || 0);
  const select = el("select", { id: "comm-level", onchange: (e) => { location.hash = `#/communities?${query({ level: e.target.value })}`; } },
    el("option", { value: "" }, t("comm.all")));
  root.append(el("div", { class: "row" }, el("label", { for: "comm-level" }, t("comm.level")), select), body);
  (async () => {
    // one call: the page, and how many communities each level has (the level menu)
    const page = await api(`/graph/communities?${query({ level, limit: PAGE, offset })}`);
    for (const [l, n] of Object.entries(page.levels || {})) {
      select.append(el("option", { value: l, selected: String(l) === String(level) }, `L${l} (${n})`));
    }
    if (!page.total) { fill(body, el("p", {}, t("comm.none"))); return; }
    const go = (o) => { location.hash = `#/communities?${query({ level, offset: o })}`; };
    fill(body, 
      el("div", { class: "pager" },
        el("button", { type: "button", class: "secondary", disabled: offset === 0, onclick: () => go(Math.max(0, offset - PAGE)) }, t("comm.prev")),
        el("span", { id: "comm-range" }, t("comm.page", { from: offset + 1, to: Math.min(page.total, offset + PAGE), total: page.total })),
        el("button", { type: "button", class: "secondary", disabled: offset + PAGE >= page.total, onclick: () => go(offset + PAGE) }, t("comm.next"))),
      ...page.communities.map((c) => communityCard(c, params.focus)));
    if (params.focus) document.getElementById(`c-${params.focus}`)?.scrollIntoView();
  })().catch((err) => fill(body, errorBox(err)));
  return root;
}

function communityCard(c, focus) {
  return el("section", { class: "card community", id: `c-${c.community_id}`, "aria-label": c.title },
    el("h2", {}, c.title || c.community_id),
    el("p", {}, el("span", { class: "badge" }, `L${c.level}`), el("span", { class: "badge" }, `${c.size} ${t("comm.size")}`),
      focus === c.community_id ? el("strong", {}, " ◀") : null),
    el("p", { class: "summary" }, ...answerNodes(c.summary || "", (c.citations || []).map((x) => ({ ...x, snippet: x.sentence })))),
    el("h3", {}, t("comm.members")),
    el("p", {}, ...(c.top_entities || []).flatMap((m, i) => [i ? ", " : "",
      el("a", { href: `#/explore?${query({ id: m.mesh_id })}` }, m.name)])));
}

// --- corpus and jobs -------------------------------------------------------------------------

let corpusTimer = null;

function corpusView() {
  const root = el("div", {}, el("h1", {}, t("corpus.title")));
  const body = el("div", { "aria-live": "polite" }, t("loading"));
  root.append(body);
  clearTimeout(corpusTimer);  // a previous visit's poll, if any
  const load = async () => {
    try {
      const data = await api("/corpus?limit=20");
      fill(body, ...corpusBody(data));
      const running = data.runs.some((r) => r.status === "running");
      corpusTimer = running ? setTimeout(() => root.isConnected && load(), 2000) : null;
    } catch (err) {
      fill(body, errorBox(err));
    }
  };
  load();
  return root;
}

function corpusBody(data) {
  const counts = Object.entries(data.stores || {}).filter(([, v]) => typeof v === "number");
  const rows = data.runs.map((r) => {
    const s = r.summary || {};
    const seconds = r.finished ? r.finished - r.started : s.elapsed_s;
    const written = s.documents_written !== undefined ? t("corpus.docsChunks", { docs: s.documents_written, chunks: s.chunks_written })
      : s.documents_done !== undefined ? t("corpus.docsChunks", { docs: s.documents_done, chunks: s.chunks })
      : s.communities !== undefined ? `${s.communities} communities` : "—";
    return el("tr", { class: `run run-${r.status}` },
      el("td", {}, r.run_id), el("td", {}, when(r.started)),
      el("td", { class: "num" }, seconds !== undefined ? `${Number(seconds).toFixed(1)} s` : "—"),
      el("td", {}, r.status === "running" ? `${r.status} — ${t("corpus.running")}` : r.status),
      el("td", {}, (r.info?.inputs || [r.info?.job]).filter(Boolean).join(", ")), el("td", {}, written),
      el("td", {}, r.failure_count ? el("details", {}, el("summary", {}, String(r.failure_count)),
        el("ul", {}, ...r.failures.map((f) => el("li", {}, `${f.source} [${f.stage}]: ${f.reason}`)))) : "0"));
  });
  return [
    el("h2", {}, t("corpus.counts")),
    el("table", { id: "store-counts" }, el("tbody", {}, ...counts.map(([k, v]) => el("tr", {}, el("th", { scope: "row" }, k), el("td", { class: "num" }, v))))),
    el("h2", {}, t("corpus.runs")),
    rows.length ? el("table", { id: "runs" },
      el("thead", {}, el("tr", {}, ...["corpus.run", "corpus.started", "corpus.duration", "corpus.status", "corpus.inputs",
                                         "corpus.written", "corpus.failures"].map((k) => el("th", { scope: "col" }, t(k))))),
      el("tbody", {}, ...rows)) : el("p", {}, t("corpus.none")),
  ];
}

// --- tiers and admin -------------------------------------------------------------------------

function adminView() {
  const root = el("div", {}, el("h1", {}, t("admin.title")));
  const body = el("div", {}, t("loading"));
  const once = el("div", { role: "status", "aria-live": "polite", id: "key-once" });
  root.append(once, body);
  const load = async () => {
    try {
      const [status, users] = await Promise.all([api("/admin/status"), api("/admin/users")]);
      fill(body, ...adminBody(status, users, once, load));
    } catch (err) {
      fill(body, errorBox(err), err.status === 401 || err.status === 403 ? el("p", {}, t("admin.needKey")) : null);
    }
  };
  load();
  return root;
}

function showKey(once, body) {
  fill(once, el("p", { class: "notice" }, t("admin.keyOnce", { user: body.user_id })),
    el("p", { class: "key-once", id: "new-key" }, body.api_key));
}

function adminBody(status, users, once, reload) {
  const action = async (fn) => { try { await fn(); } catch (err) { fill(once, errorBox(err)); } await reload(); };
  const engines = Object.entries(status.tiers?.engines || {});
  const usage = status.usage || {};
  const userInput = el("input", { id: "new-user", required: true, maxlength: 64, pattern: "[A-Za-z0-9][A-Za-z0-9._@\\-]{0,63}" });
  const role = el("select", { id: "new-role" }, el("option", { value: "user" }, "user"), el("option", { value: "admin" }, "admin"));
  const c = status.concurrency || {};
  return [
    el("h2", {}, t("admin.tiers")),
    el("p", { class: "muted" }, Object.entries(status.tiers?.map || {}).map(([tier, engine]) => `${tier} → ${engine}`).join(" · ")),
    el("table", { id: "tiers" },
      el("thead", {}, el("tr", {}, ...["admin.engine", "admin.state", "admin.inFlight", "admin.requests", "admin.wakes", "admin.sleeps",
                                         "admin.wakeTime"].map((k) => el("th", { scope: "col" }, t(k))), el("th", {}, ""))),
      el("tbody", {}, ...engines.map(([name, s]) => el("tr", { "data-engine": name },
        el("th", { scope: "row" }, `${name}${s.model ? ` (${s.model})` : ""}`), el("td", { class: "state" }, s.state ?? "—"),
        el("td", { class: "num" }, s.in_flight ?? "—"), el("td", { class: "num" }, s.requests ?? "—"),
        el("td", { class: "num" }, s.wakes ?? "—"), el("td", { class: "num" }, s.sleeps ?? "—"),
        el("td", { class: "num" }, s.wake_s?.p50 != null ? `${s.wake_s.p50.toFixed(3)} s` : "—"),
        el("td", {}, el("button", { type: "button", class: "secondary", onclick: () => action(() => api(`/tiers/${encodeURIComponent(name)}/sleep`, { method: "POST", body: {} })) }, t("admin.sleep")),
          " ", el("button", { type: "button", class: "secondary", onclick: () => action(() => api(`/tiers/${encodeURIComponent(name)}/wake`, { method: "POST", body: {} })) }, t("admin.wake"))))))),
    el("p", { class: "muted" }, t("admin.concurrency", { active: c.active ?? 0, queued: c.queued ?? 0, max: c.max_concurrent ?? "—" })),
    el("h2", {}, t("admin.usage")),
    el("p", { id: "usage-global" }, `${usage.day || ""}: `, usage.global ? t("admin.quota", usage.global) : "—"),
    el("ul", { id: "usage-users" }, ...Object.entries(usage.users || {}).map(([u, n]) => el("li", {},
      `${u}: `, t("admin.quota", { used: n, limit: status.limits?.per_user_daily ?? "—" })))),
    el("h2", {}, t("admin.users")),
    el("table", { id: "users" },
      el("thead", {}, el("tr", {}, ...["admin.user", "admin.role", "admin.keys"].map((k) => el("th", { scope: "col" }, t(k))), el("th", {}, ""))),
      el("tbody", {}, ...users.users.map((u) => el("tr", { "data-user": u.user_id },
        el("th", { scope: "row" }, u.user_id), el("td", {}, u.role), el("td", { class: "num" }, u.active_keys),
        el("td", {}, el("button", { type: "button", class: "secondary", "aria-label": `${t("admin.newKey")}: ${u.user_id}`,
          onclick: () => action(async () => showKey(once, await api(`/admin/users/${encodeURIComponent(u.user_id)}/keys`, { method: "POST", body: {} }))) },
        t("admin.newKey"))))))),
    el("form", { class: "row", onsubmit: (e) => {
      e.preventDefault();
      action(async () => showKey(once, await api("/admin/users", { method: "POST", body: { user_id: userInput.value.trim(), role: role.value } })));
    } }, el("label", { for: "new-user" }, t("admin.newUser")), userInput, el("label", { for: "new-role" }, t("admin.role")), role,
    el("button", { type: "submit" }, t("admin.create"))),
    el("h3", {}, t("admin.keyList")),
    el("table", { id: "keys" },
      el("thead", {}, el("tr", {}, ...["admin.key", "admin.user", "admin.created", "admin.lastUsed", "admin.revoked"].map((k) => el("th", { scope: "col" }, t(k))), el("th", {}, ""))),
      el("tbody", {}, ...users.keys.map((k) => el("tr", {},
        el("td", {}, k.key_id), el("td", {}, k.user_id), el("td", {}, when(k.created_at)), el("td", {}, when(k.last_used_at)),
        el("td", {}, k.revoked_at ? when(k.revoked_at) : "—"),
        el("td", {}, k.revoked_at ? "" : el("button", { type: "button", class: "secondary", "aria-label": `${t("admin.revoke")} ${k.key_id}`,
          onclick: () => action(() => api(`/admin/keys/${k.key_id}`, { method: "DELETE" })) }, t("admin.revoke"))))))),
  ];
}

// --- shell: routing, language, key -----------------------------------------------------------

const VIEWS = { chat: chatView, explore: explorerView, communities: communitiesView, corpus: corpusView, admin: adminView };

function route() {
  const [path, q] = location.hash.replace(/^#\/?/, "").split("?");
  const page = VIEWS[path] ? path : "chat";
  const params = Object.fromEntries(new URLSearchParams(q || ""));
  for (const a of document.querySelectorAll("nav a")) {
    if (a.dataset.page === page) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  const main = document.getElementById("main");
  fill(main, VIEWS[page](params));
  document.title = `MedGraph — ${t(`nav.${page}`)}`;
}

function translateShell() {
  document.documentElement.lang = htmlLang();
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll("[data-i18n-label]")) node.setAttribute("aria-label", t(node.dataset.i18nLabel));
}

async function start() {
  await loadStrings();
  setLanguage(pickLanguage(localStorage.getItem("medgraph.lang"), navigator.languages));
  const select = document.getElementById("ui-lang");
  select.replaceChildren(...LANGUAGES.map((l) => el("option", { value: l }, languageName(l))));
  select.value = language();
  select.addEventListener("change", () => {
    localStorage.setItem("medgraph.lang", select.value);
    setLanguage(select.value);
    state.chatRoot = null;  // rebuilt in the new language; the conversation continues
    state.turns = [];
    translateShell();
    route();
  });
  const key = document.getElementById("api-key");
  key.value = state.key;
  key.addEventListener("change", () => {
    state.key = key.value.trim();
    sessionStorage.setItem("medgraph.key", state.key);
    if (!location.hash.startsWith("#/chat")) route();
  });
  translateShell();
  window.addEventListener("hashchange", route);
  route();
}

start();
