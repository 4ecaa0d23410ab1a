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
      const a = el('a');
      inline(a, m[4].slice(1, m[4].indexOf('](')));
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

// dedent removes the indentation every line of a code block shares (a
// block inside a list item is indented with it).
function dedent(lines) {
  const widths = lines.filter((l) => l.trim()).map((l) => l.match(/^ */)[0].length);
  const n = widths.length ? Math.min(...widths) : 0;
  return n ? lines.map((l) => l.slice(n)) : lines;
}

// FENCE is a fenced code block's fence line: ``` or ~~~ (three or more)
// and the info string after it.
const FENCE = /^\s*(`{3,}|~{3,})(.*)$/;

// cells splits a table row into its cells: on pipes that are not escaped
// (`info \| warn` is one cell reading "info | warn").
const cells = (line) => {
  let l = line.trim();
  if (l.startsWith('|')) l = l.slice(1);
  if (l.endsWith('|') && !l.endsWith('\\|')) l = l.slice(0, -1);
  return l.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
};
// A table's header rule: | --- | :-: | (pipes at the ends optional).
const RULE = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
// A row: a line with a pipe that is not escaped.
const hasPipe = (line) => /(?<!\\)\|/.test(line);
const isRule = (line) => RULE.test(line) && hasPipe(line);

// render returns a fragment with text rendered as Markdown blocks. With
// opts.inCode the text starts inside a fenced code block (a passage cut
// out of a longer code sample): its lines are code up to the closing fence.
export function render(text, onCite, opts = {}) {
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
  const code = (from, fence) => {
    const body = [];
    let i = from;
    for (; i < lines.length; i++) {
      const m = lines[i].match(FENCE);
      if (m && (!fence || (m[1][0] === fence[0] && m[1].length >= fence.length && !m[2].trim()))) break;
      body.push(lines[i]);
    }
    if (fence || body.some((l) => l.trim())) {
      const pre = el('pre');
      pre.append(el('code', '', dedent(body).join('\n')));
      frag.append(pre);
    }
    return i; // the closing fence's line (or past the end)
  };
  let i = 0;
  if (opts.inCode) i = code(0, '') + 1;
  for (; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(FENCE);
    if (fence) {
      flush(); list = null;
      i = code(i + 1, fence[1]);
      continue;
    }
    // A container (VitePress ::: tip Title … :::): its title, then its
    // content rendered inside it.
    const box = line.match(/^\s*:::\s*([\w-]+)\s*(.*)$/);
    if (box) {
      flush(); list = null;
      const inner = [];
      for (i++; i < lines.length && !/^\s*:::\s*$/.test(lines[i]); i++) inner.push(lines[i]);
      const div = el('div', `container ${box[1]}`);
      const title = el('p', 'container-title');
      inline(title, box[2] || box[1].toUpperCase(), onCite);
      div.append(title, render(inner.join('\n'), onCite));
      frag.append(div);
      continue;
    }
    if (/^\s*:::\s*$/.test(line)) continue; // the close of a container the passage began inside
    const header = hasPipe(line) && i + 1 < lines.length && isRule(lines[i + 1]) && hasPipe(lines[i + 1]);
    if (header || /^\s*\|.*\|\s*$/.test(line)) {
      flush(); list = null;
      const table = el('table');
      for (let first = true; i < lines.length && lines[i].trim() && hasPipe(lines[i]); i++) {
        if (isRule(lines[i])) continue; // the header's rule
        const tr = el('tr');
        for (const c of cells(lines[i])) { const td = el(first && header ? 'th' : 'td'); inline(td, c, onCite); tr.append(td); }
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
      inline(e, h[2].replace(/\s*\{#[\w-]+\}\s*$/, ''), onCite); // without its {#anchor}
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

// prose reports the share of lines that read as sentences (words that end
// in a full stop), against code, which seldom does.
function prose(lines) {
  const text = lines.filter((l) => l.trim());
  if (!text.length) return -1;
  const sentence = (l) => {
    const s = l.trim().replace(/^(?:[-*+>]|\d+[.)])\s+/, '');
    return /[。！？]/.test(s) || (/[A-Za-z]{2,}(?:\s+\S+){3,}/.test(s) && /[.!?:)]$/.test(s) && !/[;{}=]/.test(s));
  };
  return text.filter(sentence).length / text.length;
}

// codeOnly reports a passage with no fence that is all code: the middle
// of a code sample longer than two chunks. Every line reads as code
// (braces, semicolons, assignments, key: value, comments, indentation)
// and none as a sentence or a Markdown heading.
function codeOnly(lines) {
  const text = lines.filter((l) => l.trim());
  const comment = (l) => /^\s*(?:#|\/\/|\/\*|\*)/.test(l);
  if (text.length < 3 || prose(text.filter((l) => !comment(l))) > 0) return false;
  if (text.some((l) => /^#{1,6}\s/.test(l) || /^\s*(?:[*+]|\d+[.)])\s/.test(l))) return false;
  const code = (l) => /[{}();=<>[\]]|^\s*(?:\/\/|#|--)|^\s*-?\s*[\w.$@'"-]+:(?:\s|$)|^\s{2,}\S/.test(l);
  return text.every(code);
}

// startsInCode reports whether a passage begins inside a fenced code
// block: it was cut out of a document after a fence opened (the second
// chunk of a long code sample). Its fences are then one too many, and the
// first closes a block rather than opening one. A fence with an info
// string (```js) always opens; otherwise the side of the first fence that
// reads as prose is outside the code.
export function startsInCode(text) {
  if (/^---\n/.test(String(text ?? ''))) return false; // front matter opens the document
  const lines = String(text ?? '').split('\n');
  const fences = [];
  lines.forEach((l, i) => { const m = l.match(FENCE); if (m) fences.push({ i, info: m[2].trim() !== '' }); });
  if (!fences.length) return codeOnly(lines);
  if (fences.length % 2 === 0) return false;
  if (fences[0].info) return false;
  // If the first fence opened, fences 1, 3, … close and take no info
  // string; if it closed, fences 2, 4, … do.
  if (fences.some((f, k) => k % 2 === 1 && f.info)) return true;
  if (fences.some((f, k) => k > 0 && k % 2 === 0 && f.info)) return false;
  const before = lines.slice(0, fences[0].i);
  const after = lines.slice(fences[0].i + 1, fences.length > 1 ? fences[1].i : lines.length);
  const pb = prose(before), pa = prose(after);
  if (pb < 0) return false; // nothing before the fence: it opens
  if (pa < 0) return pb < 0.5; // nothing after: it closes unless prose led to it
  return pb < pa || (pb === 0 && pa === 0);
}

// frontMatter turns a leading YAML front matter block into a yaml fence,
// so it reads as YAML and not as prose under a rule.
const frontMatter = (text) => text.replace(/^---\n([\s\S]*?)\n---(\n|$)/, '```yaml\n$1\n```\n');

// renderPassage renders a stored passage (a chunk's text, whole or cut):
// its front matter as YAML, and as code when it starts inside a code block.
export function renderPassage(text, onCite) {
  const s = String(text ?? '');
  return render(frontMatter(s), onCite, { inCode: startsInCode(s) });
}

// renderSnippet renders a search snippet, a window ("…" at a cut) of the
// chunk text full: it starts inside a code block when the chunk does or a
// fence before the window opened one. A window cut mid-line drops that
// line (half a table row or line of code reads worse than none) and shows
// "…" for it.
export function renderSnippet(snippet, full) {
  const s = String(snippet ?? '');
  const cutStart = s.startsWith('…'), cutEnd = s.endsWith('…') && s.length > 1;
  const core = s.slice(cutStart ? 1 : 0, cutEnd ? -1 : undefined);
  let at = full ? full.indexOf(core) : -1;
  if (at < 0 || (!cutStart && !cutEnd)) return renderPassage(s);
  let body = core;
  const first = body.indexOf('\n');
  if (cutStart && full[at - 1] !== '\n' && first >= 0) { body = body.slice(first + 1); at += first + 1; }
  const last = body.lastIndexOf('\n');
  if (cutEnd && last > 0 && full[at + body.length] !== '\n') body = body.slice(0, last);
  let inCode = startsInCode(full);
  if (at === 0) body = frontMatter(body);
  for (const l of full.slice(0, at).split('\n').slice(0, -1)) if (FENCE.test(l)) inCode = !inCode;
  const frag = document.createDocumentFragment();
  if (cutStart) frag.append(el('p', 'cut', '…'));
  frag.append(render(body, undefined, { inCode }));
  if (cutEnd) frag.append(el('p', 'cut', '…'));
  return frag;
}

// headingPath writes a section's heading path ("Guide > `useData` <Badge
// text="composable" />") as it reads on the document's page: inline code
// as code, no backticks; a component tag shows its text as a badge.
export function headingPath(parent, text) {
  const COMPONENT = /<([A-Z][\w-]*)\b([^<>]*?)\/?>(?:([^<]*)<\/\1>)?/g;
  for (const part of String(text ?? '').replace(/\s*\{#[\w-]+\}/g, '').split(/(`[^`\n]+`)/)) {
    if (!part) continue;
    if (/^`[^`\n]+`$/.test(part)) { parent.append(el('code', '', part.slice(1, -1))); continue; }
    let last = 0;
    for (const m of part.matchAll(COMPONENT)) {
      if (m.index > last) inline(parent, part.slice(last, m.index));
      last = m.index + m[0].length;
      const label = (m[2].match(/\btext="([^"]*)"/)?.[1] ?? m[3] ?? '').trim();
      if (label) parent.append(el('span', 'tag', label));
    }
    if (last < part.length) inline(parent, part.slice(last));
  }
  return parent;
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
    if (s.code) span.append(el('code', '', dedent(text.replace(/^\s*(`{3,}|~{3,})[^\n]*\n?|(`{3,}|~{3,})\s*$/g, '').split('\n')).join('\n')));
    else inline(span, text, onCite);
    box.append(span);
    at = s.end;
  }
  plain(at, bytes.length);
  // A code block is a block: the line breaks around it add no space.
  for (const pre of frag.querySelectorAll('pre')) {
    for (const side of ['previousSibling', 'nextSibling']) {
      while (pre[side] && pre[side].nodeType === 3 && !pre[side].data.trim()) pre[side].remove();
    }
  }
  return frag;
}
