// app.js: the page of `sagasu serve`. Every piece of document text and
// model output is set with textContent (or md.js, which does the same).
import { el, render, renderClaims, renderPassage, renderSnippet, headingPath } from './md.js';
import { say, observation, keepsBody } from './trace.js';
import { t, has, num, date, apply, set as setLang, current as lang } from './i18n.js';
import { api, stream } from './client.js';

const $ = (s) => document.querySelector(s);

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
    $('#mode').textContent = t('mode.badge', { mode: info.mode === 'offline' ? t('chat.offline') : info.mode, sources: num(info.index.sources), chunks: num(info.index.chunks) });
    $('#run-mcp').replaceChildren(...(info.mcpServers || []).map((name) => {
      const label = el('label', 'inline');
      const box = el('input');
      box.type = 'checkbox';
      box.name = 'mcp';
      box.value = name;
      label.append(box, document.createTextNode(` ${name}`));
      return label;
    }));
    if (!info.index.sources) notice(t('notice.empty'));
  } catch (e) { notice(e.message); }
}

// ---- lifecycle: export and delete agent runs and chat threads ----
const lifecyclePath = (kind, id) => `/api/${kind === 'chat' ? 'threads' : 'runs'}/${encodeURIComponent(id)}`;

// exportRun downloads a run or thread as JSON or Markdown.
async function exportRun(kind, id, format) {
  const out = await api(`${lifecyclePath(kind, id)}/export?format=${format}`);
  const a = el('a');
  a.href = URL.createObjectURL(new Blob([out.content], { type: format === 'md' ? 'text/markdown' : 'application/json' }));
  a.download = out.filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// deleteRun deletes a run or thread after the user confirms; a run whose
// status is still running (left by a killed process) takes a second
// confirmation. It reports whether it deleted.
async function deleteRun(kind, id) {
  if (!window.confirm(t(`life.confirm.${kind}`, { id }))) return false;
  // Stop following it first: the stream the server ends on the delete
  // would otherwise reconnect to a run that is gone (a 404).
  const follow = unfollow(kind, id);
  // A view's read that is already under way finishes first, so it does not
  // meet the run gone.
  if (kind === 'agent') await runs.reading;
  try {
    try {
      await api(lifecyclePath(kind, id), { method: 'DELETE' });
    } catch (e) {
      if (e.status !== 409 || !window.confirm(`${e.message}\n\n${t('life.force')}`)) throw e;
      await api(`${lifecyclePath(kind, id)}?force=true`, { method: 'DELETE' });
    }
  } catch (e) {
    follow();
    throw e;
  }
  return true;
}

// unfollow closes the open view's event stream when it follows id, and
// returns what follows it again (for a delete that did not happen).
function unfollow(kind, id) {
  if (kind === 'agent' && runs.id === id && runs.source) {
    runs.source.close();
    runs.source = null;
    return () => openRun(id);
  }
  if (kind === 'chat' && chat.thread === id && chat.source) {
    chat.source.close();
    chat.source = null;
    return () => openThread(id);
  }
  return () => {};
}

// lifecycleButtons are the export and delete buttons of one run or thread.
function lifecycleButtons(kind, id, onDeleted) {
  const button = (label, fn) => {
    const b = el('button', 'life', label);
    b.type = 'button';
    b.addEventListener('click', () => fn().catch((e) => notice(e.message)));
    return b;
  };
  return [
    button(t('life.exportJSON'), () => exportRun(kind, id, 'json')),
    button(t('life.exportMD'), () => exportRun(kind, id, 'md')),
    button(t('life.delete'), async () => { if (await deleteRun(kind, id)) onDeleted(); }),
  ];
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
  const steps = el('button', 'steps-toggle', t('chat.steps'));
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
  s.append(el('span', 'kind', has(`step.${ev.type}`) ? t(`step.${ev.type}`) : ev.type));
  // The words sagasu writes (not a model's, not a document's) in the
  // page's language; an answer is the answer as written.
  const text = ev.type === 'answer' ? ev.text || '' : say(ev.text);
  const obs = observation(ev.observation);
  let head = text;
  if (ev.type === 'action') head = `${ev.tool} ${ev.arguments ? JSON.stringify(ev.arguments) : ''}`;
  if (ev.type === 'observation') head = `${ev.tool || text}${ev.ok === false ? t('step.failed') : ''}: ${obs}`;
  if (ev.type === 'usage') head = t('step.tokens', { in: num(ev.tokens?.in || 0), out: num(ev.tokens?.out || 0) });
  s.append(document.createTextNode(' ' + head.slice(0, 160)));
  if (ev.latency_ms) s.append(el('span', 'ms', t('step.ms', { ms: num(ev.latency_ms) })));
  d.append(s);
  d.append(el('pre', 'step-body', obs || (keepsBody(ev.text) ? ev.text : text) || (ev.arguments ? JSON.stringify(ev.arguments, null, 2) : '')));
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
  const meta = el('p', 'meta', t('chat.meta', { how: r.mode === 'llm' ? r.model || t('chat.model') : t('chat.offlineMode'), turns: num(r.turns), ms: num(r.tookMs) }));
  box.append(spans && spans.length ? renderClaims(r.answer, spans, onCite) : render(r.answer, onCite));
  if (r.stopped) box.append(el('p', 'warn', t('chat.stopped', { reason: say(r.stopped) })));
  for (const u of r.reflection?.unsupported || []) box.append(el('p', 'dropped', t('chat.dropped', { text: say(u) })));
  if (r.citations?.length) {
    const ol = el('ol', 'citations');
    ol.setAttribute('aria-label', t('chat.citations'));
    for (const c of r.citations) {
      const li = el('li');
      const b = el('button', 'cite-link', `[${c.n}] ${c.source.uri}:${c.lines[0]}-${c.lines[1]}`);
      if (c.heading) headingPath(b.appendChild(el('span', 'heading')), c.heading);
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
  panel.replaceChildren(el('h2', '', t('cite.title', { n })));
  if (!c) { panel.append(el('p', '', t('cite.none'))); return; }
  panel.append(headingPath(el('p', 'uri'), c.source.title || c.source.uri));
  const meta = el('p', 'meta', t('cite.lines', { uri: c.source.uri, from: c.lines[0], to: c.lines[1] }));
  if (c.heading) { meta.append(document.createTextNode(' · ')); headingPath(meta.appendChild(el('span', 'heading')), c.heading); }
  panel.append(meta);
  // The quote and the passage are Markdown, rendered as the chat's answers are.
  const q = el('blockquote', 'quote');
  q.append(renderPassage(c.quote.length > 2000 ? c.quote.slice(0, 2000) + '…' : c.quote));
  panel.append(q);
  const passage = el('div', 'passage md-passage');
  panel.append(passage);
  const links = el('p', 'row');
  const open = (label, section) => {
    const b = el('button', '', label);
    b.type = 'button';
    b.addEventListener('click', () => openSource(panel, c.source.id, section));
    links.append(b);
  };
  if (c.heading) open(t('cite.openSection'), c.heading);
  open(t('cite.openSource'), '');
  panel.append(links);
  try {
    const p = await api(`/api/chunks/${c.chunkId}`);
    passage.replaceChildren(renderPassage(p.passage.text));
    if (p.truncated) passage.append(el('p', 'meta', t('cite.cut')));
  } catch (e) { passage.textContent = e.message; }
}

async function openSource(panel, ref, section) {
  let box = panel.querySelector('.source-body');
  if (!box) { box = el('div', 'source-body'); panel.append(box); }
  box.replaceChildren(el('p', 'meta', t('source.loading')));
  try {
    const q = new URLSearchParams({ ref });
    if (section) q.set('section', section);
    const s = await api(`/api/source?${q}`);
    const head = el('h3');
    const [before, after] = t('source.head', { uri: s.source.uri, section: '\u0000', from: s.lines[0], to: s.lines[1] }).split('\u0000');
    head.append(document.createTextNode(before));
    if (s.section) { head.append(document.createTextNode(' › ')); headingPath(head, s.section); }
    head.append(document.createTextNode(after ?? ''));
    box.replaceChildren(head, el('pre', 'source-text', s.content));
    if (s.truncated) box.append(el('p', 'warn', t('source.shown', { shown: num(s.content.length), total: num(s.totalBytes) })));
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
  const actions = $('#thread-actions');
  actions.hidden = !id;
  actions.replaceChildren(...(id ? lifecycleButtons('chat', id, () => openThread(null)) : []));
  if (!id) return;
  // The stream reconnects by itself with Last-Event-ID; the server
  // replays from the store what the page missed.
  const es = stream(`/api/threads/${encodeURIComponent(id)}/events`);
  chat.source = es;
  const on = (type, fn) => es.addEventListener(type, (m) => fn(JSON.parse(m.data)));
  es.addEventListener('error', (e) => { if (e.message) notice(e.message); });
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
// highlight marks the query's words in the text nodes under parent.
function highlight(parent, terms) {
  const words = terms.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).filter(Boolean);
  if (!words.length) return;
  const re = new RegExp(`(${words.join('|')})`, 'gi');
  const walk = document.createTreeWalker(parent, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walk.nextNode()) nodes.push(walk.currentNode);
  for (const n of nodes) {
    const parts = n.data.split(re);
    if (parts.length > 1) n.replaceWith(...parts.map((part, i) => (i % 2 ? el('mark', '', part) : document.createTextNode(part))));
  }
}

$('#search-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  notice('');
  const body = { query: $('#q').value, mode: $('#search-mode').value, k: Number($('#search-k').value) || 10, glob: $('#search-glob').value.trim() };
  if ($('#search-type').value) body.types = [$('#search-type').value];
  try {
    const r = await api('/api/search', { method: 'POST', body });
    lastResults = r.results;
    $('#search-info').textContent = t('search.info', { n: num(r.results.length), mode: r.mode, ms: num(r.tookMs) });
    $('#results').replaceChildren(...r.results.map((h) => {
      const li = el('li', 'result');
      const uri = el('p', 'uri', `${h.source.uri}:${h.lines[0]}-${h.lines[1]}`);
      if (h.heading) headingPath(uri.appendChild(el('span', 'heading')), h.heading);
      uri.append(el('span', 'score', num(h.score, 3)));
      li.append(uri);
      // The snippet is markdown: md.js renders it (text nodes only; code
      // when the chunk starts inside a code block), then the query's words are marked.
      const p = el('div', 'snippet md-snippet');
      p.append(renderSnippet(h.snippet, h.text));
      highlight(p, r.terms);
      li.append(p);
      const row = el('p', 'row');
      for (const [label, section] of [[t('cite.openSection'), h.heading], [t('cite.openSource'), '']]) {
        if (label === t('cite.openSection') && !section) continue;
        const b = el('button', '', label);
        b.type = 'button';
        b.addEventListener('click', () => { const panel = $('#source-panel'); panel.hidden = false; openSource(panel, h.source.id, section); });
        row.append(b);
      }
      li.append(row);
      return li;
    }));
    // The evaluation judges these results: it shows once there are some.
    $('#eval-box').hidden = !r.results.length;
    $('#eval-out').replaceChildren();
  } catch (err) { notice(err.message); }
});

$('#eval-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const out = $('#eval-out');
  try {
    const r = await api('/api/evaluate', { method: 'POST', body: { goal: $('#eval-goal').value, query: $('#q').value, chunkIds: lastResults.map((h) => h.chunkId) } });
    out.replaceChildren(
      el('p', '', t('eval.scores', { confidence: num(r.confidence, 2), coverage: num(r.coverage, 2), relevance: num(r.relevance, 2) })),
      el('p', '', t('eval.found', { list: (r.foundAspects || []).join('; ') || '—' })),
      el('p', '', t('eval.missing', { list: (r.missingAspects || []).join('; ') || '—' })),
      el('p', '', t('eval.next', { action: has(`eval.action.${r.next.action}`) ? t(`eval.action.${r.next.action}`) : r.next.action, reason: say(r.next.reason) })),
    );
  } catch (err) { out.replaceChildren(el('p', 'warn', err.message)); }
});

// ---- agent runs ----
const statusLabel = (s) => (has(`status.${s}`) ? t(`status.${s}`) : s);
const runs = { source: null, id: null, reading: null };
async function loadRuns() {
  try {
    const list = await api('/api/runs');
    $('#run-list').replaceChildren(...list.map((r) => {
      const li = el('li');
      const b = el('button', r.id === runs.id ? 'current' : '', `${statusLabel(r.running ? 'running' : r.status)} · ${r.title}`);
      b.type = 'button';
      b.title = r.id;
      b.addEventListener('click', () => openRun(r.id));
      li.append(b);
      return li;
    }));
  } catch (e) { notice(e.message); }
}

function showRun(id) {
  const reading = readRun(id).finally(() => { if (runs.reading === reading) runs.reading = null; });
  runs.reading = reading;
  return reading;
}

async function readRun(id) {
  let r;
  try { r = await api(`/api/runs/${encodeURIComponent(id)}`); } catch (e) { if (runs.id === id) $('#run-view').replaceChildren(el('p', 'meta', e.message)); return; }
  if (runs.id !== id) return;
  const v = $('#run-view');
  const head = el('div', 'run-head');
  head.append(el('h2', '', r.run.title));
  const status = r.run.running ? 'running' : (r.outcome?.status || r.run.status);
  head.append(el('p', 'meta run-status', `${r.run.id} · ${statusLabel(status)}${r.outcome?.reason ? ' — ' + say(r.outcome.reason) : ''}`));
  if (r.error) head.append(el('p', 'warn', r.error));
  if (r.settings) head.append(el('p', 'meta run-settings', settingsText(r.settings)));
  const row = el('p', 'row');
  if (r.run.running) {
    const b = el('button', '', t('runs.stop'));
    b.type = 'button';
    b.addEventListener('click', () => api(`/api/runs/${encodeURIComponent(id)}/stop`, { method: 'POST', body: {} }).catch((e) => notice(e.message)));
    row.append(b);
  } else if (status !== 'success') {
    const b = el('button', '', t('runs.resume'));
    b.type = 'button';
    b.addEventListener('click', () => api(`/api/runs/${encodeURIComponent(id)}/resume`, { method: 'POST', body: {} }).then(() => openRun(id)).catch((e) => notice(e.message)));
    row.append(b);
  }
  row.append(...lifecycleButtons('agent', id, () => {
    if (runs.source) runs.source.close();
    runs.source = null;
    runs.id = null;
    $('#run-view').replaceChildren();
    loadRuns();
  }));
  head.append(row);
  const plan = el('ol', 'plan');
  plan.setAttribute('aria-label', t('runs.plan'));
  for (const s of r.state?.plan || []) {
    const li = el('li', `plan-step ${s.status}`);
    li.append(el('span', 'badge', statusLabel(s.status)), document.createTextNode(' ' + say(s.text)));
    if (s.result) li.append(el('p', 'meta', say(s.result).slice(0, 300)));
    plan.append(li);
  }
  const answer = el('div', 'md run-answer');
  if (r.state?.answer) answer.append(render(r.state.answer));
  const timeline = el('ol', 'timeline');
  timeline.setAttribute('aria-label', t('runs.timeline'));
  for (const ev of r.events || []) { const li = el('li'); li.append(stepNode(ev)); timeline.append(li); }
  v.replaceChildren(head, el('h3', '', r.state?.replans ? t('runs.replanned', { n: num(r.state.replans) }) : t('runs.plan')), plan, answer, el('h3', '', t('runs.timeline')), timeline);
}

function openRun(id) {
  if (runs.source) runs.source.close();
  runs.id = id;
  loadRuns();
  showRun(id);
  let pending = false;
  const es = stream(`/api/runs/${encodeURIComponent(id)}/events`);
  runs.source = es;
  const refresh = () => {
    if (pending) return;
    pending = true;
    // Once the view stops following this stream (another run opened, or
    // this one deleted), a refresh still waiting does nothing.
    setTimeout(() => { pending = false; if (runs.source === es) { showRun(id); loadRuns(); } }, 150);
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
  if (s.mcp?.length) parts.push(t('runs.settingsMCP', { servers: s.mcp.join(', ') }));
  for (const role of ['planner', 'executor']) {
    const m = s[role];
    if (!m) continue;
    const thinking = m.thinkingBudget != null ? t('runs.settingsThinking', { n: num(m.thinkingBudget) }) : '';
    parts.push(t('runs.settingsModel', { role: t(`runs.role.${role}`), driver: m.driver, model: m.model, temperature: m.temperature, tokens: num(m.maxTokens), thinking }));
  }
  if (s.offline || (!s.planner && !s.executor)) parts.push(t('chat.offline'));
  if (s.limits) parts.push(t('runs.settingsLimits', { calls: num(s.limits.maxToolCalls), duration: s.limits.maxDuration }));
  return parts.join(' · ');
}

// runSettings reads the form's settings; empty fields keep the configuration's.
function runSettings() {
  const out = {};
  const text = (id, key) => { const v = $(id).value.trim(); if (v) out[key] = v; };
  const number = (id, key) => { const v = $(id).value.trim(); if (v !== '') out[key] = Number(v); };
  text('#run-planner', 'plannerModel');
  text('#run-executor', 'executorModel');
  number('#run-temperature', 'temperature');
  number('#run-max-tokens', 'maxTokens');
  number('#run-thinking', 'thinkingBudget');
  number('#run-tool-calls', 'maxToolCalls');
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
      li.append(el('span', 'badge', has(`cache.${r.kind}`) ? t(`cache.${r.kind}`) : r.kind), document.createTextNode(` ${date(r.timestamp)} · ${r.goal}${r.query ? ' · ' + r.query : ''}${r.score != null ? ' · ' + num(r.score, 2) : ''}`));
      if (r.summary) li.append(el('p', 'meta', r.summary));
      return li;
    }));
    if (!c.records.length) $('#cache-list').append(el('li', 'meta', t('cache.empty')));
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
    $('#index-stats').textContent = t('index.stats', { sources: num(l.index.sources), chunks: num(l.index.chunks), vectors: num(l.index.vectors) });
    // The folders a watch keeps in step: when each was last in step, and
    // whether a sync is being written now.
    $('#index-roots').replaceChildren(...(l.roots || []).map((r) => {
      const at = r.syncedAt ? date(r.syncedAt) : t('index.notyet');
      let text = t(r.watching ? 'index.watching' : 'index.watched', { root: r.root, at });
      if (r.syncing) text += t('index.syncing');
      if (r.pending) text += t('index.pending', { n: num(r.pending) });
      if (r.error) text += t('index.failed', { error: r.error });
      if (r.notice) text += ' · ' + r.notice;
      return el('li', 'meta', text);
    }));
    $('#source-table tbody').replaceChildren(...l.sources.map((s) => {
      const tr = el('tr');
      for (const v of [s.uri, s.type, num(s.chunks), num(s.bytes), date(s.indexedAt)]) tr.append(el('td', '', String(v)));
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
    const es = stream(`/api/jobs/${j.job}/events`);
    es.addEventListener('progress', (m) => { out.textContent = JSON.parse(m.data).text; });
    es.addEventListener('done', (m) => {
      const d = JSON.parse(m.data);
      out.textContent = t('index.done', { added: num(d.added), updated: num(d.updated), unchanged: num(d.unchanged), chunks: num(d.chunks) }) + (d.skipped.length ? t('index.skipped', { n: num(d.skipped.length) }) : '');
      es.close(); loadSources(); loadInfo();
    });
    es.addEventListener('failed', (m) => { out.textContent = JSON.parse(m.data).error; es.close(); });
    es.addEventListener('error', (e) => { if (e.message) out.textContent = e.message; });
  } catch (err) { notice(err.message); }
});
loaders.index = loadSources;

// ---- language ----
// The switch rewrites the page's words at once, then reloads what the open
// tab and thread show, so their labels follow too.
const langSelect = $('#lang');
langSelect.value = lang();
langSelect.addEventListener('change', () => {
  setLang(langSelect.value);
  loadInfo();
  loaders[document.querySelector('nav [aria-pressed="true"]')?.dataset.tab]?.();
  if (chat.thread) openThread(chat.thread);
});
apply();

loadInfo();
loadThreads();
