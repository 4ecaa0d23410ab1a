// app.js: the page of `sagasu serve`. Every piece of document text and
// model output is set with textContent (or md.js, which does the same).
import { el, render, renderClaims } from './md.js';

const $ = (s) => document.querySelector(s);

// api calls the server; writes carry X-Sagasu: 1, which other sites
// cannot send without a preflight this server never grants.
async function api(path, opts = {}) {
  const init = { method: opts.method || 'GET', headers: { 'X-Sagasu': '1' } };
  if (opts.body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(opts.body);
  }
  const res = await fetch(path, init);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error || `${res.status} ${res.statusText}`);
  return data;
}

function notice(msg) {
  const n = $('#notice');
  n.textContent = msg || '';
  n.hidden = !msg;
}

// ---- tabs ----
const loaders = {};
for (const b of document.querySelectorAll('nav [data-tab]')) {
  b.addEventListener('click', () => {
    for (const o of document.querySelectorAll('nav [data-tab]')) o.setAttribute('aria-pressed', String(o === b));
    for (const t of document.querySelectorAll('.tab')) t.hidden = t.id !== `tab-${b.dataset.tab}`;
    notice('');
    loaders[b.dataset.tab]?.();
  });
}

async function loadInfo() {
  try {
    const info = await api('/api/info');
    $('#mode').textContent = `mode: ${info.mode} · ${info.index.sources} sources, ${info.index.chunks} chunks`;
    $('#run-mcp').replaceChildren(...(info.mcpServers || []).map((name) => {
      const label = el('label', 'inline');
      const box = el('input');
      box.type = 'checkbox';
      box.name = 'mcp';
      box.value = name;
      label.append(box, document.createTextNode(` ${name}`));
      return label;
    }));
    if (!info.index.sources) notice('The index is empty: add a folder or a URL on the Index tab (or run sagasu index DIR) before asking.');
  } catch (e) { notice(e.message); }
}

// ---- chat ----
const chat = { thread: null, source: null, turns: [], current: null, running: false };

function setRunning(on) {
  chat.running = on;
  $('#stop').hidden = !on;
  $('#send').disabled = on;
}

async function loadThreads() {
  const list = $('#thread-list');
  try {
    const threads = await api('/api/threads');
    list.replaceChildren(...threads.map((t) => {
      const li = el('li');
      const b = el('button', t.id === chat.thread ? 'current' : '', t.title || t.id);
      b.type = 'button';
      b.title = t.id;
      b.addEventListener('click', () => openThread(t.id));
      li.append(b);
      return li;
    }));
  } catch (e) { notice(e.message); }
}

function newTurn(question) {
  const turn = { steps: [], node: el('article', 'turn'), answer: null, streamed: '', result: null };
  turn.node.append(el('p', 'question', question));
  turn.answer = el('div', 'answer');
  turn.node.append(turn.answer);
  const steps = el('button', 'steps-toggle', 'steps');
  steps.type = 'button';
  steps.addEventListener('click', () => showTrace(turn));
  turn.node.append(steps);
  $('#turns').append(turn.node);
  chat.turns.push(turn);
  chat.current = turn;
  showTrace(turn);
  return turn;
}

// stepNode renders one graph.Event as a collapsible step.
function stepNode(ev) {
  const d = el('details', `step ${ev.type}`);
  const s = el('summary');
  s.append(el('span', 'kind', ev.type));
  let head = ev.text || '';
  if (ev.type === 'action') head = `${ev.tool} ${ev.arguments ? JSON.stringify(ev.arguments) : ''}`;
  if (ev.type === 'observation') head = `${ev.tool}${ev.ok === false ? ' (failed)' : ''}: ${ev.observation || ''}`;
  if (ev.type === 'usage') head = `${ev.tokens?.in || 0} tokens in, ${ev.tokens?.out || 0} out`;
  s.append(document.createTextNode(' ' + head.slice(0, 160)));
  if (ev.latency_ms) s.append(el('span', 'ms', ` ${ev.latency_ms} ms`));
  d.append(s);
  d.append(el('pre', 'step-body', ev.observation || ev.text || (ev.arguments ? JSON.stringify(ev.arguments, null, 2) : '')));
  return d;
}

function showTrace(turn) {
  const list = $('#trace-list');
  list.replaceChildren(...turn.steps.map((ev) => { const li = el('li'); li.append(stepNode(ev)); return li; }));
  chat.traceTurn = turn;
}

function addStep(turn, ev) {
  turn.steps.push(ev);
  if (chat.traceTurn === turn) {
    const li = el('li');
    li.append(stepNode(ev));
    $('#trace-list').append(li);
  }
}

function renderAnswer(turn, spans) {
  const r = turn.result;
  const onCite = (n) => openCitation(r, n);
  const box = turn.answer;
  box.replaceChildren();
  const meta = el('p', 'meta', `${r.mode === 'llm' ? r.model || 'model' : 'offline'} · ${r.turns} turn(s) · ${r.tookMs} ms`);
  box.append(spans && spans.length ? renderClaims(r.answer, spans, onCite) : render(r.answer, onCite));
  if (r.stopped) box.append(el('p', 'warn', `Stopped early: ${r.stopped}; this is the best cited answer so far.`));
  for (const u of r.reflection?.unsupported || []) box.append(el('p', 'dropped', `Dropped (not backed by its sources): ${u}`));
  if (r.citations?.length) {
    const ol = el('ol', 'citations');
    ol.setAttribute('aria-label', 'Citations');
    for (const c of r.citations) {
      const li = el('li');
      const b = el('button', 'cite-link', `[${c.n}] ${c.source.uri}:${c.lines[0]}-${c.lines[1]}${c.heading ? '  ' + c.heading : ''}`);
      b.type = 'button';
      b.addEventListener('click', () => openCitation(r, c.n));
      li.append(b);
      ol.append(li);
    }
    box.append(ol);
  }
  box.append(meta);
}

async function openCitation(result, n) {
  const c = result.citations?.find((x) => x.n === n);
  const panel = $('#cite-panel');
  panel.hidden = false;
  panel.replaceChildren(el('h2', '', `Citation [${n}]`));
  if (!c) { panel.append(el('p', '', 'This marker cites nothing the run kept.')); return; }
  panel.append(el('p', 'uri', `${c.source.title || c.source.uri}`));
  panel.append(el('p', 'meta', `${c.source.uri} · lines ${c.lines[0]}–${c.lines[1]}${c.heading ? ' · ' + c.heading : ''}`));
  const q = el('blockquote', 'quote', c.quote.length > 2000 ? c.quote.slice(0, 2000) + '…' : c.quote);
  panel.append(q);
  const passage = el('pre', 'passage');
  panel.append(passage);
  const links = el('p', 'row');
  const open = (label, section) => {
    const b = el('button', '', label);
    b.type = 'button';
    b.addEventListener('click', () => openSource(panel, c.source.id, section));
    links.append(b);
  };
  if (c.heading) open('open section', c.heading);
  open('open source', '');
  panel.append(links);
  try {
    const p = await api(`/api/chunks/${c.chunkId}`);
    passage.textContent = p.passage.text + (p.truncated ? '\n… (cut: open source for the rest)' : '');
  } catch (e) { passage.textContent = e.message; }
}

async function openSource(panel, ref, section) {
  let box = panel.querySelector('.source-body');
  if (!box) { box = el('div', 'source-body'); panel.append(box); }
  box.replaceChildren(el('p', 'meta', 'loading…'));
  try {
    const q = new URLSearchParams({ ref });
    if (section) q.set('section', section);
    const s = await api(`/api/source?${q}`);
    box.replaceChildren(
      el('h3', '', `${s.source.uri}${s.section ? ' › ' + s.section : ''} (lines ${s.lines[0]}–${s.lines[1]})`),
      el('pre', 'source-text', s.content),
    );
    if (s.truncated) box.append(el('p', 'warn', `Shown: the first ${s.content.length} of ${s.totalBytes} bytes.`));
  } catch (e) { box.replaceChildren(el('p', 'warn', e.message)); }
}

function openThread(id) {
  if (chat.source) chat.source.close();
  chat.thread = id;
  chat.turns = [];
  chat.current = null;
  $('#turns').replaceChildren();
  $('#trace-list').replaceChildren();
  $('#cite-panel').hidden = true;
  setRunning(false);
  loadThreads();
  if (!id) return;
  // EventSource reconnects by itself with Last-Event-ID; the server
  // replays from the store what the page missed.
  const es = new EventSource(`/api/threads/${encodeURIComponent(id)}/events`);
  chat.source = es;
  const on = (type, fn) => es.addEventListener(type, (m) => fn(JSON.parse(m.data)));
  // A turn runs from its turn event to its spans or turn_error; status
  // says whether one runs when the stream (re)connects.
  on('turn', (d) => { newTurn(d.question).pending = true; setRunning(true); });
  on('question', (d) => {
    if (chat.current?.pending && !chat.current.result) return; // shown at its turn event
    newTurn(d.text);
  });
  on('step', (ev) => { if (chat.current) addStep(chat.current, ev); });
  on('delta', (d) => {
    const t = chat.current;
    if (!t || t.result) return;
    t.streamed += d.text;
    t.answer.replaceChildren(render(t.streamed));
  });
  on('answer', (r) => {
    let t = chat.current;
    if (!t || t.result) t = newTurn(r.question);
    t.result = r;
    t.pending = false;
    if (!t.steps.length) for (const ev of r.trace || []) addStep(t, ev);
    renderAnswer(t, null);
  });
  on('spans', (d) => { setRunning(false); if (chat.current?.result) renderAnswer(chat.current, d.spans); });
  on('turn_error', (d) => {
    setRunning(false);
    const t = chat.current;
    if (t) { t.pending = false; t.answer.replaceChildren(el('p', 'warn', d.error)); t.result = t.result || { failed: true }; }
  });
  on('status', (d) => setRunning(d.running));
}

$('#new-thread').addEventListener('click', () => { openThread(null); $('#message').focus(); });

$('#ask-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const q = $('#message').value.trim();
  if (!q) return;
  notice('');
  try {
    if (!chat.thread) {
      const t = await api('/api/threads', { method: 'POST', body: { title: q } });
      openThread(t.id);
    }
    await api(`/api/threads/${encodeURIComponent(chat.thread)}/ask`, { method: 'POST', body: { question: q, offline: $('#offline').checked } });
    $('#message').value = '';
  } catch (err) { notice(err.message); }
});
$('#message').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); $('#ask-form').requestSubmit(); }
});
$('#stop').addEventListener('click', async () => {
  try { await api(`/api/threads/${encodeURIComponent(chat.thread)}/stop`, { method: 'POST', body: {} }); } catch (e) { notice(e.message); }
});
loaders.chat = loadThreads;

// ---- search ----
let lastResults = [];
function highlight(parent, text, terms) {
  const words = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).filter(Boolean);
  if (!words.length) { parent.append(text); return; }
  const re = new RegExp(`(${words.join('|')})`, 'gi');
  text.split(re).forEach((part, i) => parent.append(i % 2 ? el('mark', '', part) : document.createTextNode(part)));
}

$('#search-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  notice('');
  const body = { query: $('#q').value, mode: $('#search-mode').value, k: Number($('#search-k').value) || 10, glob: $('#search-glob').value.trim() };
  if ($('#search-type').value) body.types = [$('#search-type').value];
  try {
    const r = await api('/api/search', { method: 'POST', body });
    lastResults = r.results;
    $('#search-info').textContent = `${r.results.length} result(s), ${r.mode}, ${r.tookMs} ms`;
    $('#results').replaceChildren(...r.results.map((h) => {
      const li = el('li', 'result');
      li.append(el('p', 'uri', `${h.source.uri}:${h.lines[0]}-${h.lines[1]}${h.heading ? '  ' + h.heading : ''}  (${h.score.toFixed(3)})`));
      const p = el('p', 'snippet');
      highlight(p, h.snippet, r.terms);
      li.append(p);
      const row = el('p', 'row');
      for (const [label, section] of [['open section', h.heading], ['open source', '']]) {
        if (label === 'open section' && !section) continue;
        const b = el('button', '', label);
        b.type = 'button';
        b.addEventListener('click', () => { const panel = $('#source-panel'); panel.hidden = false; openSource(panel, h.source.id, section); });
        row.append(b);
      }
      li.append(row);
      return li;
    }));
    if (!$('#eval-goal').value) $('#eval-goal').value = body.query;
  } catch (err) { notice(err.message); }
});

$('#eval-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const out = $('#eval-out');
  try {
    const r = await api('/api/evaluate', { method: 'POST', body: { goal: $('#eval-goal').value, query: $('#q').value, chunkIds: lastResults.map((h) => h.chunkId) } });
    out.replaceChildren(
      el('p', '', `confidence ${r.confidence.toFixed(2)} · coverage ${r.coverage.toFixed(2)} · relevance ${r.relevance.toFixed(2)}`),
      el('p', '', `found: ${(r.foundAspects || []).join('; ') || '—'}`),
      el('p', '', `missing: ${(r.missingAspects || []).join('; ') || '—'}`),
      el('p', '', `next: ${r.recommendations.action} — ${r.recommendations.reason}`),
    );
  } catch (err) { out.replaceChildren(el('p', 'warn', err.message)); }
});

// ---- agent runs ----
const runs = { source: null, id: null };
async function loadRuns() {
  try {
    const list = await api('/api/runs');
    $('#run-list').replaceChildren(...list.map((r) => {
      const li = el('li');
      const b = el('button', r.id === runs.id ? 'current' : '', `${r.running ? 'running' : r.status} · ${r.title}`);
      b.type = 'button';
      b.title = r.id;
      b.addEventListener('click', () => openRun(r.id));
      li.append(b);
      return li;
    }));
  } catch (e) { notice(e.message); }
}

async function showRun(id) {
  let r;
  try { r = await api(`/api/runs/${encodeURIComponent(id)}`); } catch (e) { if (runs.id === id) $('#run-view').replaceChildren(el('p', 'meta', e.message)); return; }
  if (runs.id !== id) return;
  const v = $('#run-view');
  const head = el('div', 'run-head');
  head.append(el('h2', '', r.run.title));
  const status = r.run.running ? 'running' : (r.outcome?.status || r.run.status);
  head.append(el('p', 'meta run-status', `${r.run.id} · ${status}${r.outcome?.reason ? ' — ' + r.outcome.reason : ''}`));
  if (r.error) head.append(el('p', 'warn', r.error));
  if (r.settings) head.append(el('p', 'meta run-settings', settingsText(r.settings)));
  const row = el('p', 'row');
  if (r.run.running) {
    const b = el('button', '', 'Stop');
    b.type = 'button';
    b.addEventListener('click', () => api(`/api/runs/${encodeURIComponent(id)}/stop`, { method: 'POST', body: {} }).catch((e) => notice(e.message)));
    row.append(b);
  } else if (status !== 'success') {
    const b = el('button', '', 'Resume');
    b.type = 'button';
    b.addEventListener('click', () => api(`/api/runs/${encodeURIComponent(id)}/resume`, { method: 'POST', body: {} }).then(() => openRun(id)).catch((e) => notice(e.message)));
    row.append(b);
  }
  head.append(row);
  const plan = el('ol', 'plan');
  plan.setAttribute('aria-label', 'Plan');
  for (const s of r.state?.plan || []) {
    const li = el('li', `plan-step ${s.status}`);
    li.append(el('span', 'badge', s.status), document.createTextNode(' ' + s.text));
    if (s.result) li.append(el('p', 'meta', s.result.slice(0, 300)));
    plan.append(li);
  }
  const answer = el('div', 'md run-answer');
  if (r.state?.answer) answer.append(render(r.state.answer));
  const timeline = el('ol', 'timeline');
  timeline.setAttribute('aria-label', 'Timeline');
  for (const ev of r.events || []) { const li = el('li'); li.append(stepNode(ev)); timeline.append(li); }
  v.replaceChildren(head, el('h3', '', `Plan${r.state?.replans ? ` (replanned ${r.state.replans}×)` : ''}`), plan, answer, el('h3', '', 'Timeline'), timeline);
}

function openRun(id) {
  if (runs.source) runs.source.close();
  runs.id = id;
  loadRuns();
  showRun(id);
  let pending = false;
  const es = new EventSource(`/api/runs/${encodeURIComponent(id)}/events`);
  runs.source = es;
  const refresh = () => {
    if (pending) return;
    pending = true;
    setTimeout(() => { pending = false; showRun(id); loadRuns(); }, 150);
  };
  for (const t of ['plan', 'replan', 'thought', 'action', 'observation', 'answer', 'error', 'state']) es.addEventListener(t, refresh);
  // The run is over once it has an outcome and the server says it no
  // longer runs (it logs the outcome first): show it once more and stop
  // listening.
  let ended = false;
  es.addEventListener('outcome', () => { ended = true; refresh(); });
  es.addEventListener('status', (m) => {
    refresh();
    if (ended && !JSON.parse(m.data).running) es.close();
  });
}

// settingsText says what a run runs with: its MCP servers, models, limits.
function settingsText(s) {
  const parts = [];
  if (s.mcp?.length) parts.push(`MCP: ${s.mcp.join(', ')}`);
  for (const role of ['planner', 'executor']) {
    const m = s[role];
    if (m) parts.push(`${role}: ${m.driver}/${m.model} (temperature ${m.temperature}, ${m.maxTokens} tokens${m.thinkingBudget != null ? `, thinking ${m.thinkingBudget}` : ''})`);
  }
  if (s.offline || (!s.planner && !s.executor)) parts.push('offline');
  if (s.limits) parts.push(`limits: ${s.limits.maxToolCalls} tool calls, ${s.limits.maxDuration}`);
  return parts.join(' · ');
}

// runSettings reads the form's settings; empty fields keep the configuration's.
function runSettings() {
  const out = {};
  const text = (id, key) => { const v = $(id).value.trim(); if (v) out[key] = v; };
  const num = (id, key) => { const v = $(id).value.trim(); if (v !== '') out[key] = Number(v); };
  text('#run-planner', 'plannerModel');
  text('#run-executor', 'executorModel');
  num('#run-temperature', 'temperature');
  num('#run-max-tokens', 'maxTokens');
  num('#run-thinking', 'thinkingBudget');
  num('#run-tool-calls', 'maxToolCalls');
  text('#run-duration', 'maxDuration');
  return out;
}

$('#run-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  notice('');
  const mcp = [...document.querySelectorAll('#run-mcp input:checked')].map((b) => b.value);
  try {
    const r = await api('/api/runs', { method: 'POST', body: { goal: $('#goal').value, mcp, settings: runSettings() } });
    openRun(r.id);
  } catch (err) { notice(err.message); }
});
loaders.runs = loadRuns;

// ---- agent cache ----
async function loadCache() {
  const kind = $('#cache-kind').value;
  try {
    const c = await api(`/api/cache?${new URLSearchParams({ kind })}`);
    $('#cache-list').replaceChildren(...c.records.map((r) => {
      const li = el('li');
      li.append(el('span', 'badge', r.kind), document.createTextNode(` ${r.timestamp} · ${r.goal}${r.query ? ' · ' + r.query : ''}${r.score != null ? ' · ' + r.score.toFixed(2) : ''}`));
      if (r.summary) li.append(el('p', 'meta', r.summary));
      return li;
    }));
    if (!c.records.length) $('#cache-list').append(el('li', 'meta', 'No records yet: search with the loop, evaluate results or run the agent.'));
    $('#cache-summary').replaceChildren(render(c.summaryMarkdown || ''));
  } catch (e) { notice(e.message); }
}
$('#cache-load').addEventListener('click', loadCache);
$('#cache-kind').addEventListener('change', loadCache);
loaders.cache = loadCache;

// ---- index ----
async function loadSources() {
  try {
    const l = await api('/api/sources');
    $('#index-stats').textContent = `${l.index.sources} sources, ${l.index.chunks} chunks, ${l.index.vectors} vectors`;
    $('#source-table tbody').replaceChildren(...l.sources.map((s) => {
      const tr = el('tr');
      for (const v of [s.uri, s.type, s.chunks, s.bytes, s.indexedAt]) tr.append(el('td', '', String(v)));
      return tr;
    }));
  } catch (e) { notice(e.message); }
}
$('#index-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  notice('');
  const out = $('#index-progress');
  try {
    const j = await api('/api/index', { method: 'POST', body: { path: $('#index-path').value } });
    const es = new EventSource(`/api/jobs/${j.job}/events`);
    es.addEventListener('progress', (m) => { out.textContent = JSON.parse(m.data).text; });
    es.addEventListener('done', (m) => {
      const d = JSON.parse(m.data);
      out.textContent = `done: ${d.added} added, ${d.updated} updated, ${d.unchanged} unchanged, ${d.chunks} chunks${d.skipped.length ? `, ${d.skipped.length} skipped` : ''}`;
      es.close(); loadSources(); loadInfo();
    });
    es.addEventListener('failed', (m) => { out.textContent = JSON.parse(m.data).error; es.close(); });
  } catch (err) { notice(err.message); }
});
loaders.index = loadSources;

loadInfo();
loadThreads();
