// client.js: how the page talks to its server. The token travels only in
// an Authorization header, never in a cookie: a browser sends a cookie for
// 127.0.0.1 to every port, so any other local service the user visits would
// receive it. The link `sagasu serve` prints carries the token in its
// fragment (#token=...), which no request, log or Referer ever contains;
// the page moves it into this origin's storage (origins differ by port) and
// takes it out of the address bar.

const key = 'sagasu.token';

// adopt takes a token from the address (#token=, or ?token= from an older
// link), keeps it and removes it from the address and the history entry.
function adopt() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const query = new URLSearchParams(location.search);
  const given = hash.get('token') || query.get('token');
  if (!given) return;
  try { localStorage.setItem(key, given); } catch { /* storage off: keep it for this page only */ }
  adopted = given;
  hash.delete('token');
  query.delete('token');
  const rest = hash.toString();
  const search = query.toString();
  history.replaceState(history.state, '', location.pathname + (search ? `?${search}` : '') + (rest ? `#${rest}` : ''));
}
let adopted = '';
adopt();

function token() {
  try { return localStorage.getItem(key) || adopted; } catch { return adopted; }
}

function headers(extra = {}) {
  const h = { 'X-Sagasu': '1', ...extra };
  const tok = token();
  if (tok) h.Authorization = `Bearer ${tok}`;
  return h;
}

// api calls the server; writes carry X-Sagasu: 1, which other sites
// cannot send without a preflight this server never grants.
export async function api(path, opts = {}) {
  const init = { method: opts.method || 'GET', headers: headers() };
  if (opts.body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(opts.body);
  }
  const res = await fetch(path, init);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw Object.assign(new Error(data.error || `${res.status} ${res.statusText}`), { status: res.status });
  return data;
}

// stream follows a server-sent event stream as EventSource does, but with
// the token in a header (EventSource cannot send one). Listeners get
// { data, lastEventId }; a dropped or ended stream reconnects after the
// server's retry (3 s by default) with Last-Event-ID, so the server replays
// what was missed; an HTTP error ends it with an 'error' event whose
// message says why. close() stops it for good.
export function stream(path) {
  const listeners = new Map();
  const ctl = { closed: false, abort: null };
  let last = '';
  let retry = 3000;
  const emit = (type, ev) => { for (const fn of listeners.get(type) || []) fn(ev); };
  const source = {
    addEventListener(type, fn) {
      if (!listeners.has(type)) listeners.set(type, []);
      listeners.get(type).push(fn);
    },
    close() {
      ctl.closed = true;
      ctl.abort?.abort();
    },
  };

  // dispatch hands one parsed event to its listeners (the spec's rules: no
  // data, no event; the type defaults to message).
  const dispatch = (ev) => {
    if (ev.id !== undefined) last = ev.id;
    if (!ev.data.length || ctl.closed) return;
    emit(ev.event || 'message', { data: ev.data.join('\n'), lastEventId: last });
  };

  async function connect() {
    const abort = new AbortController();
    ctl.abort = abort;
    const h = headers({ Accept: 'text/event-stream' });
    if (last !== '') h['Last-Event-ID'] = last;
    let res;
    try {
      res = await fetch(path, { headers: h, signal: abort.signal, cache: 'no-store' });
    } catch {
      return true; // the network: try again
    }
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      emit('error', { message: body.error || `${res.status} ${res.statusText}`, status: res.status });
      return false;
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    let ev = { data: [] };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        // A line ends at CRLF, LF or CR; a CR at the very end may be the
        // first half of a CRLF, so it waits for the next piece.
        let m;
        while ((m = /\r\n|\n|\r(?!$)/.exec(buf))) {
          const line = buf.slice(0, m.index);
          buf = buf.slice(m.index + m[0].length);
          if (line === '') { dispatch(ev); ev = { data: [] }; continue; }
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          let value = colon < 0 ? '' : line.slice(colon + 1);
          if (value.startsWith(' ')) value = value.slice(1);
          if (field === 'data') ev.data.push(value);
          else if (field === 'event') ev.event = value;
          else if (field === 'id' && !value.includes('\0')) ev.id = value;
          else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
        }
      }
    } catch {
      // dropped, or closed by close(): the loop below decides
    }
    return true;
  }

  (async () => {
    while (!ctl.closed) {
      if (!(await connect()) || ctl.closed) return;
      await new Promise((r) => setTimeout(r, retry));
    }
  })();
  return source;
}
