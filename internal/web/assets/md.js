// md.js: a small, safe Markdown renderer. It never parses HTML: every
// piece of document text or model output becomes a text node, and only
// these constructs become elements: fenced code blocks, inline code,
// **strong**, *emphasis*, lists, pipe tables, > quotes, links to http(s)
// addresses (other links show their text only), and [n] citation markers
// (buttons, when onCite is given).
import { t } from './i18n.js';

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
export { el };

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\n]+\*)|(\[[^\]\n]+\]\((https?:\/\/[^\s)]+)\))|(\[(\d{1,3})\])|(\[([^\]\n]+)\]\([^\s)]*\))/g;

// inline appends text to parent with inline Markdown applied.
export function inline(parent, text, onCite) {
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) parent.append(document.createTextNode(text.slice(last, m.index)));
    last = m.index + m[0].length;
    if (m[1]) parent.append(el('code', '', m[1].slice(1, -1)));
    else if (m[2]) parent.append(el('strong', '', m[2].slice(2, -2)));
    else if (m[3]) parent.append(el('em', '', m[3].slice(1, -1)));
    else if (m[4]) {
      const a = el('a', '', m[4].slice(1, m[4].indexOf('](')));
      a.href = m[5]; // the pattern admits http(s) only
      a.rel = 'noopener noreferrer';
      a.target = '_blank';
      parent.append(a);
    } else if (m[6]) {
      const n = Number(m[7]);
      if (onCite) {
        const b = el('button', 'cite', `[${n}]`);
        b.type = 'button';
        b.dataset.n = String(n);
        b.title = t('cite.open', { n });
        b.addEventListener('click', () => onCite(n));
        parent.append(b);
      } else parent.append(document.createTextNode(m[6]));
    } else if (m[8]) {
      // A link to anything but http(s) (a relative page, javascript:):
      // its text only (inline markup applied), never an address the page
      // would follow.
      inline(parent, m[9], onCite);
    }
  }
  if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
}

// render returns a fragment with text rendered as Markdown blocks.
export function render(text, onCite) {
  const frag = document.createDocumentFragment();
  const lines = String(text ?? '').split('\n');
  let para = [], list = null;
  const flush = () => {
    if (para.length) {
      const p = el('p');
      inline(p, para.join(' '), onCite);
      frag.append(p);
      para = [];
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*```/.test(line)) {
      flush(); list = null;
      const code = [];
      for (i++; i < lines.length && !/^\s*```/.test(lines[i]); i++) code.push(lines[i]);
      const pre = el('pre');
      pre.append(el('code', '', code.join('\n')));
      frag.append(pre);
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line)) {
      flush(); list = null;
      const table = el('table');
      const cells = (l) => l.trim().slice(1, -1).split('|').map((c) => c.trim());
      for (let first = true; i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i]); i++) {
        if (/^\s*\|[\s:|-]+\|\s*$/.test(lines[i])) continue; // the header's rule
        const tr = el('tr');
        for (const c of cells(lines[i])) { const td = el(first ? 'th' : 'td'); inline(td, c, onCite); tr.append(td); }
        table.append(tr);
        first = false;
      }
      i--;
      frag.append(table);
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush(); list = null;
      const quoted = [];
      for (; i < lines.length && /^\s*>/.test(lines[i]); i++) quoted.push(lines[i].replace(/^\s*>\s?/, ''));
      i--;
      const bq = el('blockquote');
      bq.append(render(quoted.join('\n'), onCite));
      frag.append(bq);
      continue;
    }
    const item = line.match(/^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$/);
    if (item) {
      flush();
      const tag = item[1] ? 'ol' : 'ul';
      if (!list || list.tagName.toLowerCase() !== tag) { list = el(tag); frag.append(list); }
      const li = el('li');
      inline(li, item[2], onCite);
      list.append(li);
      continue;
    }
    const h = line.match(/^(#{1,6})\s+(.*)$/);
    if (h) {
      flush(); list = null;
      const e = el(`h${Math.min(6, h[1].length + 2)}`);
      inline(e, h[2], onCite);
      frag.append(e);
      continue;
    }
    if (line.trim() === '') { flush(); list = null; continue; }
    list = null;
    para.push(line.trim());
  }
  flush();
  return frag;
}

// renderClaims renders an answer sentence by sentence: each claim's span
// (UTF-8 byte offsets, as the server measures them) is marked supported,
// unsupported or unchecked by the claim checker.
export function renderClaims(answer, spans, onCite) {
  const bytes = new TextEncoder().encode(answer);
  const dec = new TextDecoder();
  const frag = el('div', 'claims');
  let at = 0;
  // A line that starts with "> " (a quoted passage) goes into a blockquote
  // until the line ends; box is where text goes now.
  let box = frag, lineStart = true;
  const quoteAt = (text) => {
    if (!lineStart || !/^>\s?/.test(text)) return text;
    box = el('blockquote', 'quote');
    frag.append(box);
    return text.replace(/^>\s?/, '');
  };
  const plain = (from, to) => {
    if (to <= from) return;
    for (const piece of dec.decode(bytes.slice(from, to)).split(/(\n)/)) {
      if (piece === '\n') { box = frag; frag.append(piece); lineStart = true; continue; }
      if (piece) { inline(box, quoteAt(piece), onCite); lineStart = false; }
    }
  };
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    if (s.start < at || s.end > bytes.length || s.end <= s.start) continue;
    plain(at, s.start);
    const text = quoteAt(dec.decode(bytes.slice(s.start, s.end)));
    lineStart = false;
    const state = !s.checked ? 'unchecked' : s.supported ? 'supported' : 'unsupported';
    const span = el(s.code ? 'pre' : 'span', `claim ${state}`);
    span.title = t(`claim.${state}`);
    span.dataset.claim = state;
    if (s.code) span.append(el('code', '', text.replace(/^```\w*\n?|```\s*$/g, '')));
    else inline(span, text, onCite);
    box.append(span);
    at = s.end;
  }
  plain(at, bytes.length);
  return frag;
}
