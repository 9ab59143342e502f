// The chat page of crowdvision-agent: asks `ask` with server-sent events over fetch, shows
// tokens as they come, tool steps, charts drawn from tool results, and citations in a side
// panel. Conversations are kept by the server: the URL names one (`?c=ID`), a reload shows it
// again, the side list opens the others. `?share=TOKEN` shows a shared conversation read-only.
// No library, no other origin; all text is set as text or built as nodes, never as HTML.
// Signing in at the organisation's identity provider lives in signin.js.
"use strict";

const CREDENTIAL_KEY = "crowdvision.credential";
const SVG = "http://www.w3.org/2000/svg";

const state = {
  history: [],
  controller: null,
  // The conversation the server keeps for this page; null until the first question.
  conversationId: new URLSearchParams(location.search).get("c"),
  // False when the server keeps no conversations (CONVERSATIONS=false): history is sent.
  keeping: true,
  // Whether the server knows who asks: nothing of one's own is fetched before.
  loggedIn: false,
};

const REASONS = [
  ["wrong_figure", "Wrong figure"],
  ["wrong_building", "Wrong building or room"],
  ["wrong_language", "Wrong language"],
  ["missing_source", "Missing source"],
  ["not_helpful", "Not helpful"],
  ["other", "Other"],
];

function $(id) {
  return document.getElementById(id);
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// ----- identity -------------------------------------------------------------------------

function credential() {
  try {
    return JSON.parse(sessionStorage.getItem(CREDENTIAL_KEY) || "null");
  } catch (_) {
    return null;
  }
}

function base64Utf8(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  bytes.forEach((b) => (binary += String.fromCharCode(b)));
  return btoa(binary);
}

function identityHeaders() {
  const given = credential();
  if (!given || !given.value) return {};
  if (given.kind === "claims") return { "X-Gateway-Claims": base64Utf8(given.value) };
  return { Authorization: "Bearer " + given.value };
}

// Shows who the page asks as; true when someone is logged in.
async function showWho() {
  state.loggedIn = false;
  const who = await whoIsIt();
  if (state.loggedIn) {
    loadConversations();
    if (state.conversationId && !$("log").children.length) openConversation(state.conversationId);
  } else {
    $("conversations").textContent = "";
  }
  return who;
}

async function whoIsIt() {
  const who = $("who");
  try {
    const response = await fetch("whoami", { headers: identityHeaders() });
    const notLoggedIn = signIn.offered
      ? "Not logged in. Sign in with your organisation's account."
      : "Not logged in. Log in through your organisation's gateway, or paste a token with “Log in”.";
    if (response.status === 401) {
      who.textContent = "That credential was refused. " + notLoggedIn;
      return;
    }
    if (!response.ok) {
      who.textContent = "Cannot tell who you are right now (" + response.status + ").";
      return;
    }
    const user = await response.json();
    if (!user.logged_in) {
      who.textContent = notLoggedIn;
      $("login-toggle").textContent = signIn.offered ? "Use a token" : "Log in";
      return;
    }
    state.loggedIn = true;
    $("login-toggle").textContent = signIn.offered ? "Use a token" : "Change login";
    const roles = user.roles.length ? user.roles.join(", ") : "no role";
    const domains = user.domains.length ? " · " + user.domains.join(", ") : "";
    who.textContent = "Asking as " + user.sub + " (" + roles + ")" + domains;
  } catch (_) {
    who.textContent = "The agent cannot be reached.";
  }
}

function setUpLogin() {
  const toggle = $("login-toggle");
  const section = $("login");
  toggle.addEventListener("click", () => {
    const open = section.hidden;
    section.hidden = !open;
    toggle.setAttribute("aria-expanded", String(open));
    if (open) $("credential").focus();
  });
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const kind = new FormData(event.target).get("kind");
    const value = $("credential").value.trim();
    if (kind === "claims") {
      try {
        JSON.parse(value);
      } catch (_) {
        setStatus("The claims are not JSON.");
        return;
      }
    }
    sessionStorage.setItem(CREDENTIAL_KEY, JSON.stringify({ kind, value }));
    $("credential").value = "";
    section.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
    toggle.focus();
    showWho();
  });
  $("logout").addEventListener("click", () => {
    sessionStorage.removeItem(CREDENTIAL_KEY);
    $("credential").value = "";
    showWho();
  });
}

// ----- asking ---------------------------------------------------------------------------

function setStatus(text) {
  $("status").textContent = text;
}

function busy(on) {
  $("ask").disabled = on;
  $("stop").disabled = !on;
}

// One exchange in the log: the question, the steps, the answer, its charts and its details.
function newTurn(question) {
  const item = element("article", "turn");
  item.setAttribute("aria-label", question);
  item.appendChild(element("p", "question", question));
  const answer = element("div", "answer");
  const steps = element("ul", "steps");
  steps.setAttribute("aria-label", "Steps");
  const text = element("div", "text");
  const charts = element("div", "charts");
  const meta = element("p", "meta");
  answer.append(steps, text, charts, meta);
  item.appendChild(answer);
  $("log").appendChild(item);
  return { item, answerBox: answer, steps, text, charts, meta, shown: "", calls: [] };
}

// Streamed text without its citation markers (they become footnotes when the answer is done).
function renderStreamed(turn) {
  turn.text.textContent = turn.shown.replace(/\[\^[^\]\s]*\]?/g, "");
  turn.text.classList.add("streaming");
}

function addStep(turn, event) {
  const step = element("li", "step");
  const details = element("details");
  const summary = element("summary", null, event.tool + " …");
  const args = element("pre", "arguments", JSON.stringify(event.arguments, null, 1));
  details.append(summary, args);
  step.appendChild(details);
  turn.steps.appendChild(step);
  turn.calls.push({ tool: event.tool, summary });
}

function finishStep(turn, event) {
  const open = turn.calls.find((c) => c.tool === event.tool && !c.done);
  if (open) {
    open.done = true;
    open.summary.textContent =
      event.tool + (event.ok ? " ✓ " : " ✗ ") + event.summary + " (" + event.ms + " ms)";
  }
  if (event.chart) turn.charts.appendChild(drawChart(event.chart));
}

// ----- safe Markdown --------------------------------------------------------------------

// Markdown as nodes, never HTML: paragraphs, headings, lists, tables, **strong**, *emphasis*
// and `code`. A link shows its text and its address as text; nothing becomes clickable.
// `marker(id)` turns a citation marker into a node (or null to drop it).
function renderMarkdown(container, text, marker) {
  const kindOf = (line) =>
    /^\s*\|/.test(line) ? "table"
      : /^\s*[-*+] /.test(line) ? "ul"
      : /^\s*\d+[.)] /.test(line) ? "ol"
      : /^#{1,6} /.test(line) ? "heading"
      : "text";
  for (const block of text.replace(/\r\n/g, "\n").split(/\n{2,}/)) {
    const groups = [];
    for (const line of block.split("\n")) {
      if (!line.trim()) continue;
      const kind = kindOf(line);
      const last = groups[groups.length - 1];
      if (last && last.kind === kind && kind !== "heading") last.lines.push(line);
      else groups.push({ kind, lines: [line] });
    }
    for (const group of groups) container.appendChild(markdownGroup(group, marker));
  }
}

function markdownGroup(group, marker) {
  if (group.kind === "table" && group.lines.length >= 2) return markdownTable(group.lines, marker);
  if (group.kind === "ul" || group.kind === "ol") {
    const list = element(group.kind);
    for (const line of group.lines) {
      const item = element("li");
      inline(item, line.replace(/^\s*(?:[-*+]|\d+[.)]) /, ""), marker);
      list.appendChild(item);
    }
    return list;
  }
  if (group.kind === "heading") {
    const heading = element("p", "heading");
    const strong = element("strong");
    inline(strong, group.lines[0].replace(/^#+ /, ""), marker);
    heading.appendChild(strong);
    return heading;
  }
  const paragraph = element("p");
  inline(paragraph, group.lines.join("\n"), marker);
  return paragraph;
}

function markdownTable(lines, marker) {
  const cells = (line) => line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
  const rows = lines.filter((line) => !/^\s*\|?[\s:|-]+\|?\s*$/.test(line) || !line.includes("-"));
  const table = element("table", "md-table");
  rows.forEach((line, i) => {
    const row = element("tr");
    for (const cell of cells(line)) {
      const node = element(i === 0 ? "th" : "td");
      inline(node, cell, marker);
      row.appendChild(node);
    }
    (i === 0 ? table.appendChild(element("thead")) : table.tBodies[0] || table.appendChild(element("tbody"))).appendChild(row);
  });
  return table;
}

function inline(parent, text, marker) {
  const pattern = /(\[\^[^\]\s]+\]|\*\*[^*]+\*\*|`[^`]+`|\*[^*\s][^*]*\*|\[[^\]]+\]\([^)\s]+\))/;
  for (const part of text.split(pattern)) {
    if (!part) continue;
    let found;
    if ((found = /^\[\^([^\]\s]+)\]$/.exec(part))) {
      const node = marker ? marker(found[1]) : null;
      if (node) parent.appendChild(node);
    } else if ((found = /^\*\*([^*]+)\*\*$/.exec(part))) {
      parent.appendChild(element("strong", null, found[1]));
    } else if ((found = /^`([^`]+)`$/.exec(part))) {
      parent.appendChild(element("code", null, found[1]));
    } else if ((found = /^\*([^*]+)\*$/.exec(part))) {
      parent.appendChild(element("em", null, found[1]));
    } else if ((found = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(part))) {
      parent.appendChild(document.createTextNode(found[1] + " (" + found[2] + ")"));
    } else {
      parent.appendChild(document.createTextNode(part));
    }
  }
}

// The final answer: text with its valid markers as numbered footnote buttons.
function renderAnswer(turn, response) {
  // A marker whose passage does not support its sentence is not offered as a source.
  const unsupported = new Set((response.retrieval && response.retrieval.unsupported_citations) || []);
  const byId = new Map(
    response.citations.filter((c) => !unsupported.has(c.chunk_id)).map((c) => [c.chunk_id, c]),
  );
  const numbers = new Map();
  const text = turn.text;
  text.classList.remove("streaming");
  text.textContent = "";
  renderMarkdown(text, response.answer, (id) => {
    const citation = byId.get(id);
    if (!citation) return null;
    if (!numbers.has(citation.chunk_id)) numbers.set(citation.chunk_id, numbers.size + 1);
    return footnote(numbers.get(citation.chunk_id), citation);
  });
  const cost = response.cost ? response.cost.provider_usd ?? response.cost.estimated_usd : null;
  turn.meta.textContent =
    (response.model || "shared answer") +
    (response.usage ? " · " + response.usage.total_tokens + " tokens" : "") +
    (cost != null ? " · $" + cost.toFixed(4) : "");
}

function footnote(number, citation) {
  const sup = element("sup");
  const button = element("button", "footnote", String(number));
  button.type = "button";
  button.setAttribute("aria-label", "Source " + number + ": " + citation.source);
  button.addEventListener("click", () => openPanel(citation, button));
  sup.appendChild(button);
  return sup;
}

function openPanel(citation, opener) {
  const panel = $("panel");
  $("panel-source").textContent = citation.source;
  $("panel-section").textContent = citation.section;
  $("panel-text").textContent = "";
  renderMarkdown($("panel-text"), citation.excerpt || "", null);
  panel.hidden = false;
  panel.returnFocus = opener;
  panel.focus();
}

function closePanel() {
  const panel = $("panel");
  panel.hidden = true;
  if (panel.returnFocus) panel.returnFocus.focus();
}

// Reads server-sent events from a fetch response, calling `handle(name, data)` for each.
async function readEvents(response, handle) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) handle(name, JSON.parse(data.join("\n")));
    }
  }
}

// ----- conversations --------------------------------------------------------------------

function showConversationInUrl(id) {
  const url = new URL(location.href);
  url.search = id ? "?c=" + encodeURIComponent(id) : "";
  history.replaceState(null, "", url);
  $("share").disabled = !id;
}

// The conversation this page keeps its turns in, made on the first question.
async function conversationFor(question) {
  if (state.conversationId || !state.keeping || !state.loggedIn) return state.conversationId;
  const response = await fetch("conversations", {
    method: "POST",
    headers: Object.assign({ "Content-Type": "application/json" }, identityHeaders()),
    body: JSON.stringify({ title: question }),
  });
  if (response.status === 404) {
    state.keeping = false;
    return null;
  }
  if (!response.ok) return null;
  state.conversationId = (await response.json()).id;
  showConversationInUrl(state.conversationId);
  return state.conversationId;
}

async function loadConversations() {
  const list = $("conversations");
  const query = $("search").value.trim();
  const response = await fetch("conversations?limit=50" + (query ? "&q=" + encodeURIComponent(query) : ""), {
    headers: identityHeaders(),
  }).catch(() => null);
  if (!response || !response.ok) {
    $("sidebar").hidden = response && response.status === 404;
    return;
  }
  list.textContent = "";
  for (const conversation of (await response.json()).conversations) {
    const item = element("li");
    const open = element("button", "conversation", conversation.title || "Untitled");
    open.type = "button";
    if (conversation.id === state.conversationId) open.setAttribute("aria-current", "true");
    open.addEventListener("click", () => openConversation(conversation.id));
    item.appendChild(open);
    list.appendChild(item);
  }
}

async function openConversation(id) {
  const response = await fetch("conversations/" + encodeURIComponent(id), { headers: identityHeaders() });
  if (response.status === 404) {
    setStatus("That conversation is not there any more.");
    state.conversationId = null;
    showConversationInUrl(null);
    return;
  }
  if (!response.ok) {
    setStatus("The conversation could not be opened (" + response.status + "): log in, then reload.");
    return;
  }
  const conversation = await response.json();
  state.conversationId = conversation.id;
  state.history = [];
  $("log").textContent = "";
  $("share-link").hidden = true;
  closePanel();
  showConversationInUrl(conversation.id);
  for (const kept of conversation.turns) {
    const turn = newTurn(kept.question);
    renderAnswer(turn, Object.assign({ retrieval: {} }, kept));
    addFeedback(turn, conversation.id, kept.id);
  }
  setStatus("");
  loadConversations();
}

async function share() {
  if (!state.conversationId) return;
  const response = await fetch("conversations/" + encodeURIComponent(state.conversationId) + "/share", {
    method: "POST",
    headers: Object.assign({ "Content-Type": "application/json" }, identityHeaders()),
    body: JSON.stringify({}),
  });
  const note = $("share-link");
  note.hidden = false;
  if (!response.ok) {
    note.textContent = "Could not share: " + (await errorMessage(response));
    return;
  }
  const made = await response.json();
  const link = new URL(location.href);
  link.search = "?share=" + made.token;
  note.textContent = "Share link (for signed-in people; each sees only what they may): ";
  const field = element("input", "share-url");
  field.readOnly = true;
  field.value = link.toString();
  field.setAttribute("aria-label", "Share link");
  note.appendChild(field);
  field.select();
}

// ----- feedback -------------------------------------------------------------------------

function addFeedback(turn, conversationId, turnId) {
  if (!conversationId || turnId == null) return;
  const bar = element("div", "feedback");
  const up = element("button", "thumb up", "👍 Good");
  const down = element("button", "thumb down", "👎 Bad");
  up.type = down.type = "button";
  up.setAttribute("aria-label", "Good answer");
  down.setAttribute("aria-label", "Bad answer");
  const said = element("span", "said");
  said.setAttribute("role", "status");
  const send = async (body) => {
    const response = await fetch("feedback", {
      method: "POST",
      headers: Object.assign({ "Content-Type": "application/json" }, identityHeaders()),
      body: JSON.stringify(Object.assign({ conversation_id: conversationId, turn_id: turnId }, body)),
    });
    said.textContent = response.ok ? "Thanks, noted." : "Not noted: " + (await errorMessage(response));
  };
  up.addEventListener("click", () => send({ rating: "up" }));
  down.addEventListener("click", () => {
    if (bar.querySelector("form")) return;
    const form = element("form", "complaint");
    const reason = element("select");
    reason.name = "reason";
    reason.setAttribute("aria-label", "What was wrong");
    for (const [value, label] of REASONS) {
      const option = element("option", null, label);
      option.value = value;
      reason.appendChild(option);
    }
    const comment = element("input");
    comment.name = "comment";
    comment.placeholder = "What should it have said? (optional)";
    comment.setAttribute("aria-label", "Comment");
    const submit = element("button", null, "Send");
    submit.type = "submit";
    form.append(reason, comment, submit);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = comment.value.trim();
      send({ rating: "down", reason: reason.value, comment: text || undefined });
      form.remove();
    });
    bar.insertBefore(form, said);
    reason.focus();
  });
  bar.append(up, down, said);
  turn.answerBox.appendChild(bar);
}

// ----- a shared conversation ------------------------------------------------------------

async function showShare(token) {
  $("ask-form").hidden = true;
  $("sidebar").hidden = true;
  const note = $("shared-note");
  note.hidden = false;
  const response = await fetch("shares/" + encodeURIComponent(token), { headers: identityHeaders() });
  if (response.status === 401) {
    note.textContent = "Log in to see this shared conversation.";
    return;
  }
  if (!response.ok) {
    note.textContent = "This share does not exist, was revoked, or has expired.";
    return;
  }
  const shared = await response.json();
  note.textContent = "Shared conversation (read-only): " + shared.title;
  for (const kept of shared.turns) {
    const turn = newTurn(kept.question);
    const readable = kept.citations.filter((c) => !c.restricted);
    renderAnswer(turn, { answer: kept.answer, citations: readable, retrieval: {} });
    const restricted = kept.citations.length - readable.length;
    if (restricted > 0) {
      turn.meta.textContent = restricted + (restricted === 1 ? " restricted source" : " restricted sources") + " not shown.";
    }
  }
}

async function ask(question) {
  const turn = newTurn(question);
  const controller = new AbortController();
  state.controller = controller;
  busy(true);
  setStatus("Answering…");
  let finished = false;
  try {
    const response = await fetch("ask", {
      method: "POST",
      headers: Object.assign({ "Content-Type": "application/json" }, identityHeaders()),
      body: JSON.stringify(
        (await conversationFor(question))
          ? { question, stream: true, conversation_id: state.conversationId }
          : { question, stream: true, history: state.history },
      ),
      signal: controller.signal,
    });
    if (!response.ok) {
      showError(turn, response.status, await errorMessage(response));
      return;
    }
    await readEvents(response, (name, data) => {
      if (name === "token") {
        turn.shown += data.text;
        renderStreamed(turn);
      } else if (name === "retract") {
        turn.shown = "";
        renderStreamed(turn);
      } else if (name === "tool_call") {
        addStep(turn, data);
      } else if (name === "tool_result") {
        finishStep(turn, data);
      } else if (name === "done") {
        finished = true;
        renderAnswer(turn, data);
        addFeedback(turn, data.conversation_id, data.turn_id);
        state.history.push({ role: "user", content: question });
        state.history.push({ role: "assistant", content: data.answer });
        setStatus("");
        loadConversations();
      } else if (name === "error") {
        finished = true;
        showError(turn, null, data.error.message);
      }
    });
    if (!finished) showError(turn, null, "The answer was cut off.");
  } catch (error) {
    if (error.name === "AbortError") {
      turn.text.classList.remove("streaming");
      turn.meta.textContent = "Stopped.";
      setStatus("Stopped.");
    } else {
      showError(turn, null, "The agent cannot be reached.");
    }
  } finally {
    state.controller = null;
    busy(false);
  }
}

async function errorMessage(response) {
  try {
    return (await response.json()).error.message;
  } catch (_) {
    return response.statusText;
  }
}

function showError(turn, status, message) {
  const text =
    status === 401
      ? "You are not logged in: log in through your organisation's gateway, or paste a token with “Log in”."
      : message;
  const alert = element("p", "error", text);
  alert.setAttribute("role", "alert");
  turn.text.classList.remove("streaming");
  turn.item.appendChild(alert);
  setStatus("");
}

// ----- charts ---------------------------------------------------------------------------

function svg(tag, attributes, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function shortTime(text) {
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return text;
  return date.toISOString().slice(5, 16).replace("T", " ");
}

function format(value) {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function drawChart(chart) {
  const figure = element("figure", "chart");
  figure.appendChild(element("figcaption", null, chart.title));
  figure.appendChild(chart.kind === "series" ? drawSeries(chart) : drawBars(chart));
  return figure;
}

function drawSeries(chart) {
  const width = 360, height = 170, left = 92, right = 10, top = 12, bottom = 36;
  const unit = chart.unit ? " " + chart.unit : "";
  const values = chart.points.flatMap((p) => [p.value, p.min ?? p.value, p.max ?? p.value]);
  const low = Math.min(...values), high = Math.max(...values);
  const span = high - low || 1;
  const times = chart.points.map((p) => new Date(p.at).getTime());
  const first = Math.min(...times), last = Math.max(...times);
  const x = (i) =>
    left + (last > first ? (times[i] - first) / (last - first) : 0.5) * (width - left - right);
  const y = (v) => top + (1 - (v - low) / span) * (height - top - bottom);
  const label =
    chart.title + unit + ", " + shortTime(chart.from) + " to " + shortTime(chart.to) +
    ", from " + format(low) + unit + " to " + format(high) + unit;
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label });
  root.appendChild(svg("title", {}, label));
  root.appendChild(svg("line", { x1: left, y1: top, x2: left, y2: height - bottom, class: "axis" }));
  root.appendChild(svg("line", { x1: left, y1: height - bottom, x2: width - right, y2: height - bottom, class: "axis" }));
  root.appendChild(svg("text", { x: left - 4, y: y(high) + 4, class: "y-label", "text-anchor": "end" }, "max " + format(high) + unit));
  root.appendChild(svg("text", { x: left - 4, y: y(low), class: "y-label", "text-anchor": "end" }, "min " + format(low) + unit));
  root.appendChild(svg("text", { x: left, y: height - bottom + 14, class: "x-label" }, shortTime(chart.from)));
  root.appendChild(svg("text", { x: width - right, y: height - bottom + 14, class: "x-label", "text-anchor": "end" }, shortTime(chart.to)));
  root.appendChild(svg("text", { x: (left + width) / 2, y: height - 4, class: "unit", "text-anchor": "middle" }, "window " + shortTime(chart.from) + " – " + shortTime(chart.to) + (chart.unit ? " · " + chart.unit : "")));
  const line = chart.points.map((p, i) => `${x(i).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
  root.appendChild(svg("polyline", { points: line, class: "series" }));
  chart.points.forEach((p, i) => {
    const dot = svg("circle", { cx: x(i).toFixed(1), cy: y(p.value).toFixed(1), r: 2.5, class: "point" });
    dot.appendChild(svg("title", {}, shortTime(p.at) + ": " + format(p.value) + unit));
    root.appendChild(dot);
  });
  return root;
}

function drawBars(chart) {
  const row = 26, width = 320, labelWidth = 110;
  const height = chart.rooms.length * row + 8;
  const most = Math.max(1, ...chart.rooms.map((r) => Math.max(r.count, r.capacity ?? 0)));
  const label = chart.title + ": " + chart.rooms
    .map((r) => r.room + " " + r.count + (r.capacity != null ? " of " + r.capacity : ""))
    .join(", ");
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label });
  root.appendChild(svg("title", {}, label));
  chart.rooms.forEach((r, i) => {
    const top = 4 + i * row, scale = (width - labelWidth - 70) / most;
    root.appendChild(svg("text", { x: 0, y: top + 15, class: "bar-label" }, r.room.slice(0, 16)));
    if (r.capacity != null) {
      root.appendChild(svg("rect", { x: labelWidth, y: top + 3, width: r.capacity * scale, height: 16, class: "capacity" }));
    }
    root.appendChild(svg("rect", { x: labelWidth, y: top + 3, width: Math.max(1, r.count * scale), height: 16, class: "count" }));
    const text = r.count + (r.capacity != null ? " of " + r.capacity : "");
    root.appendChild(svg("text", { x: width - 4, y: top + 15, class: "bar-value", "text-anchor": "end" }, text));
  });
  return root;
}

// ----- start ----------------------------------------------------------------------------

async function start() {
  setUpLogin();
  setUpSignIn();
  await finishSignIn();
  await loadSignIn();
  await refreshIfDue();
  const shared = new URLSearchParams(location.search).get("share");
  if (shared) {
    whoIsIt();
    showShare(shared);
    return;
  }
  showWho();
  $("share").addEventListener("click", share);
  let searching = null;
  $("search").addEventListener("input", () => {
    clearTimeout(searching);
    searching = setTimeout(loadConversations, 250);
  });
  $("ask-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const question = $("question").value.trim();
    if (!question || state.controller) return;
    $("question").value = "";
    ask(question);
  });
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("ask-form").requestSubmit();
    }
  });
  $("stop").addEventListener("click", () => {
    if (state.controller) state.controller.abort();
    $("question").focus();
  });
  $("new").addEventListener("click", () => {
    state.history = [];
    state.conversationId = null;
    showConversationInUrl(null);
    $("share-link").hidden = true;
    loadConversations();
    $("log").textContent = "";
    closePanel();
    setStatus("New conversation.");
    $("question").focus();
  });
  $("panel-close").addEventListener("click", closePanel);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !$("panel").hidden) closePanel();
  });
}

document.addEventListener("DOMContentLoaded", start);
