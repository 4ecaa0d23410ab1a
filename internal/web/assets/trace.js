// trace.js: the words sagasu itself writes into a trace ("Search the
// knowledge base…", "Draft: …", the Reflection's verdicts, a plan's
// steps), in the page's language. The agents write them in English into
// the run's log, which the CLI, MCP clients and exports read too; the page
// recognises each by its fixed wording and says it with i18n.js. Text a
// pattern does not know (a model's thought, a document's words, an error)
// shows as written.
//
// Each entry: the pattern of the whole text, the message key, the names of
// its groups, and which groups are sagasu's words too (said again). `from`
// is the wording as the Go code writes it (TestTraceWordsMatchTheAgents
// checks each is still there, so a reworded message shows up in a test
// rather than untranslated on the page).
import { t, has } from './i18n.js';

const P = [
  // ReAct + Reflection (internal/agent/react)
  { re: /^Search the knowledge base for the question's words\.$/, key: 'trace.search', from: "Search the knowledge base for the question's words." },
  { re: /^No sentence of the results answers it; search again with the topic words only\.$/, key: 'trace.searchAgain', from: 'No sentence of the results answers it; search again with the topic words only.' },
  { re: /^The model answered without searching( \([\s\S]*\))?; search the knowledge base for the question first\.$/, key: 'trace.searchFirst', args: ['said'], from: 'search the knowledge base for the question first' },
  { re: /^Also search the knowledge base for the question in its own words\.$/, key: 'trace.alsoQuestion', from: 'Also search the knowledge base for the question in its own words.' },
  { re: /^The question refers back to the conversation: search for its words with the topic it refers to \(([\s\S]*)\)\.$/, key: 'trace.searchFollowUp', args: ['topic'], from: 'The question refers back to the conversation: search for its words with the topic it refers to (%s).' },
  { re: /^Also search the knowledge base for the question in its own words, with the topic it refers back to \(([\s\S]*)\)\.$/, key: 'trace.alsoQuestionFollowUp', args: ['topic'], from: 'Also search the knowledge base for the question in its own words, with the topic it refers back to (%s).' },
  { re: /^The model answered without searching( \([\s\S]*\))?; search the knowledge base with the query it wrote when asked for one\.$/, key: 'trace.searchOwnQuery', args: ['said'], from: 'search the knowledge base with the query it wrote when asked for one' },
  { re: /^The model wrote its call to (\S+) as text; it is run as a call\.$/, key: 'trace.textCall', args: ['tool'], from: 'as text; it is run as a call.' },
  { re: /^(\d+) turns used: answer with what was found\.$/, key: 'trace.turnsUsed', args: ['n'], from: 'turns used: answer with what was found.' },
  { re: /^Draft: ([\s\S]*)$/, key: 'trace.draft', args: ['text'], from: '"Draft: "' },
  { re: /^(\d+) passages$/, key: 'trace.passages', args: ['n'], from: '"%d passages"' },
  { re: /^(\d+) new passages$/, key: 'trace.newPassages', args: ['n'], from: '"%d new passages"' },
  { re: /^Review your draft answer before it is shown\.\n[\s\S]*$/, key: 'trace.review', keepBody: true, from: 'Review your draft answer before it is shown.' },
  {
    re: /^accuracy (ok|needs work) \(([\s\S]*?)\); relevance (ok|needs work) \(([\s\S]*?)\); style (ok|needs work) \(([\s\S]*?)\)((?:\nunsupported: [^\n]*)*)$/,
    key: 'trace.reflection', args: ['accuracy', 'accuracyNote', 'relevance', 'relevanceNote', 'style', 'styleNote', 'unsupported'],
    say: ['accuracy', 'accuracyNote', 'relevance', 'relevanceNote', 'style', 'styleNote', 'unsupported'],
    from: '"accuracy %s (%s); relevance %s (%s); style %s (%s)"',
  },
  { re: /^ok$/, key: 'trace.ok', from: 'return "ok"' },
  { re: /^needs work$/, key: 'trace.needsWork', from: 'return "needs work"' },
  { re: /^((?:\nunsupported: [^\n]*)+)$/, lines: 'unsupported' },
  { re: /^unsupported: ([\s\S]*)$/, key: 'trace.unsupported', args: ['text'], say: ['text'], from: '"\\nunsupported: "' },
  { re: /^(\d+) of (\d+) sentences backed by their cited passages(?:; (\d+) dropped)?$/, key: 'trace.accuracyNote', args: ['n', 'of', 'dropped'], alt: { dropped: 'trace.accuracyNoteDropped' }, from: 'sentences backed by their cited passages' },
  { re: /^(\d+) of (\d+) topic words of the question addressed(?: \(not: (.*)\))?$/, key: 'trace.relevanceNote', args: ['n', 'of', 'missing'], alt: { missing: 'trace.relevanceNoteMissing' }, from: 'topic words of the question addressed' },
  { re: /^the question has no topic words to check$/, key: 'trace.noTopicWords', from: 'the question has no topic words to check' },
  { re: /^(\d+) of (\d+) sentences in (Japanese|English|the question's language)(?:; (\d+) of (\d+) in です・ます style)?$/, key: 'trace.styleNote', args: ['n', 'of', 'lang', 'polite', 'politeOf'], alt: { polite: 'trace.styleNotePolite' }, say: ['lang'], from: 'sentences in %s' },
  { re: /^Japanese$/, key: 'trace.lang.ja', from: '"Japanese"' },
  { re: /^English$/, key: 'trace.lang.en', from: '"English"' },
  { re: /^the question's language$/, key: 'trace.lang.question', from: "the question's language" },
  { re: /^empty answer$/, key: 'trace.emptyAnswer', from: '"empty answer"' },
  { re: /^nothing in the index answers the question$/, key: 'trace.nothing', from: 'nothing in the index answers the question' },
  // A dropped sentence: "its text (why)", the claim checker's reasons.
  { fn: dropped },
  { re: /^no citation$/, key: 'trace.reason.noCitation', from: '"no citation"' },
  { re: /^a code block with no cited sentence before it$/, key: 'trace.reason.codeUncited', from: 'a code block with no cited sentence before it' },
  { re: /^the code is not in the cited passages$/, key: 'trace.reason.codeMissing', from: 'the code is not in the cited passages' },
  { re: /^cites \[(\d+)\], which no search of this run returned$/, key: 'trace.reason.unknownCite', args: ['n'], from: '"cites [%d], which no search of this run returned"' },
  { re: /^cites (\d+) passages; at most (\d+) may back one sentence$/, key: 'trace.reason.tooManyCites', args: ['n', 'max'], from: '"cites %d passages; at most %d may back one sentence"' },
  { re: /^the number (.+) is not in the cited passages$/, key: 'trace.reason.number', args: ['number'], from: '"the number %s is not in the cited passages"' },
  { re: /^(".+") is not in the cited passages$/, key: 'trace.reason.name', args: ['name'], from: '"%q is not in the cited passages"' },
  { re: /^only (\d+)% of its words are in the cited passages \(missing: (.*)\)$/, key: 'trace.reason.words', args: ['percent', 'missing'], from: '"only %.0f%% of its words are in the cited passages (missing: %s)"' },
  { re: /^model: ([\s\S]*); asking again without tools$/, key: 'trace.modelRetry', args: ['error'], from: '; asking again without tools' },
  { re: /^model: ([\s\S]*)$/, key: 'trace.modelError', args: ['error'], from: '"model: "' },
  { re: /^empty reply$/, key: 'trace.emptyReply', from: '"empty reply"' },

  // Plan-and-Act (internal/agent/planact)
  { re: /^Not covered: ([\s\S]*); refine the query$/, key: 'trace.notCovered', args: ['why'], say: ['why'], from: '"Not covered: "' },
  { re: /^aspect "(.*)" is not covered by the results of "(.*)" \(score ([\d.]+)\)$/, key: 'trace.aspectNotCovered', args: ['aspect', 'query', 'score'], from: 'is not covered by the results of' },
  { re: /^Step (\d+) (done|failed|pending|skipped|running): ([\s\S]*)$/, key: 'trace.stepStatus', args: ['n', 'status', 'result'], status: 'status', from: '"Step %d %s: %s"' },
  { re: /^Replan (\d+) \(([\s\S]*?)\):\n([\s\S]*)$/, key: 'trace.replan', args: ['n', 'why', 'plan'], say: ['why', 'plan'], from: '"Replan %d (%s):\\n%s"' },
  { re: /^((?:\d+\. \[\w+\] [^\n]*\n?)+)$/, lines: 'plan' },
  { re: /^(\d+)\. \[(\w+)\] ([^\n]*?)((?: — [^\n]*?)?)( {2}<- current)?$/, key: 'trace.planStep', args: ['n', 'status', 'text', 'result', 'current'], status: 'status', say: ['text', 'current'], from: '"%d. [%s] %s"' },
  { re: /^ {2}<- current$/, key: 'trace.current', from: '"  <- current"' },
  { re: /^Find out about ([\s\S]*)$/, key: 'trace.findOut', args: ['aspect'], from: '"Find out about "' },
  { re: /^Recalled (\d+) similar past runs: ([\s\S]*)$/, key: 'trace.recalled', args: ['n', 'runs'], from: 'similar past runs: ' },
  { re: /^Decision after step (\d+): (\w+)\. ([\s\S]*)$/, key: 'trace.decision', args: ['n', 'decision', 'reason'], say: ['reason'], decision: 'decision', from: '"Decision after step %d: %s. %s"' },
  { re: /^Should replan: ([\s\S]*)$/, key: 'trace.shouldReplan', args: ['why'], say: ['why'], from: '"Should replan: "' },
  { re: /^Step answered in text: ([\s\S]*)$/, key: 'trace.answeredInText', args: ['text'], from: '"Step answered in text: "' },
  { re: /^The model asked for (\d+) tool calls; one step runs one, the first \((.*)\)\.$/, key: 'trace.oneCall', args: ['n', 'tool'], from: 'tool calls; one step runs one, the first (%s).' },
  { re: /^step (\d+) observed something new$/, key: 'trace.observedNew', args: ['n'], from: '"step %d observed something new"' },
  { re: /^Step (\d+) failed: ([\s\S]*)$/, key: 'trace.stepFailed', args: ['n', 'result'], from: '"Step %d failed: %s"' },
  { re: /^MCP servers: ([\s\S]*)$/, key: 'trace.mcpError', args: ['error'], from: '"MCP servers: "' },
  { re: /^recall past runs: ([\s\S]*)$/, key: 'trace.recallError', args: ['error'], from: '"recall past runs: "' },
  { re: /^plan the research: ([\s\S]*)$/, key: 'trace.planError', args: ['error'], from: '"plan the research: "' },
  { re: /^the planner says the goal cannot be reached: ([\s\S]*)$/, key: 'trace.unreachable', args: ['why'], from: '"the planner says the goal cannot be reached: "' },
  { re: /^the knowledge base covers none of the goal's aspects \((.*)\)$/, key: 'trace.coversNone', args: ['missing'], from: "the knowledge base covers none of the goal's aspects" },
  { re: /^all (\d+) aspects covered$/, key: 'trace.allCovered', args: ['n'], from: '"all %d aspects covered"' },
  { re: /^(\d+) of (\d+) aspects covered; not found: (.*)$/, key: 'trace.someCovered', args: ['n', 'of', 'missing'], from: '"%d of %d aspects covered; not found: %s"' },
  { re: /^step (\d+) took (\d+) tool calls without finishing$/, key: 'trace.tooManyCalls', args: ['n', 'calls'], from: '"step %d took %d tool calls without finishing"' },
  { re: /^every step is done but the goal is not reported reached$/, key: 'trace.notReached', from: 'every step is done but the goal is not reported reached' },
  { re: /^the planner asked for a new plan$/, key: 'trace.newPlan', from: '"the planner asked for a new plan"' },
  { re: /^(plan|evaluate|replan): ([\s\S]*)$/, key: 'trace.unreadable', args: ['what', 'error'], from: 'rc.ParseFailure("plan: "' },

  // The evaluation's advice (internal/loop, the search tab's evaluation)
  { re: /^(\d+) of (\d+) aspects found; search for (.*)$/, key: 'eval.reason.refine', args: ['n', 'of', 'missing'], from: '"%s; search for %s"' },
  { re: /^all (\d+) aspects found \(confidence ([\d.]+) ≥ ([\d.]+)\)$/, key: 'eval.reason.allFound', args: ['n', 'confidence', 'min'], from: '"all %d aspects found (confidence %.2f ≥ %.2f)"' },
  { re: /^usable \(confidence ([\d.]+) ≥ ([\d.]+)\), but (.*) is still missing: one focused query may find it$/, key: 'eval.reason.usable', args: ['confidence', 'min', 'missing'], from: 'is still missing: one focused query may find it' },
  { re: /^no results: search with fewer or more common words$/, key: 'eval.reason.broaden', from: '"no results: search with fewer or more common words"' },
  { re: /^all aspects found but only (\d+)% of results are on the goal: add distinctive words$/, key: 'eval.reason.narrow', args: ['percent'], from: 'of results are on the goal: add distinctive words' },
  { re: /^(\d+) of (\d+) aspects found; the index lacks the words of (.*): index documents about them$/, key: 'eval.reason.indexMore', args: ['n', 'of', 'missing'], from: '"%s; the index lacks the words of %s: index documents about them"' },
  { re: /^no results, and the index lacks the words of (.*): index documents about them$/, key: 'eval.reason.noResultsIndexMore', args: ['missing'], from: '"no results, and the index lacks the words of %s: index documents about them"' },
  { re: /^text reply$/, key: 'trace.textReply', from: '"text reply"' },
  { re: /^no results$/, key: 'trace.noResults', from: '"no results"' },
];

// dropped says "sentence (reason)" when reason is one of the checker's.
function dropped(s) {
  for (let at = s.indexOf(' ('); at >= 0; at = s.indexOf(' (', at + 1)) {
    if (!s.endsWith(')')) return null;
    const reason = s.slice(at + 2, -1);
    const said = say(reason);
    if (said !== reason) return t('trace.dropped', { text: s.slice(0, at), reason: said });
  }
  return null;
}

// patterns is the table, for the test that holds it to the Go code.
export const patterns = P;

// say returns text in the page's language when sagasu wrote it, and text
// itself otherwise.
export function say(text) {
  const s = String(text ?? '');
  if (!s) return s;
  for (const p of P) {
    if (p.fn) {
      const out = p.fn(s);
      if (out != null) return out;
      continue;
    }
    const m = s.match(p.re);
    if (!m) continue;
    if (p.lines) {
      if (!s.includes('\n')) continue; // one line: the entry for the line says it
      return s.split('\n').map((l) => (l ? say(l) : l)).join('\n');
    }
    const vars = {};
    (p.args || []).forEach((name, k) => {
      let v = m[k + 1] ?? '';
      if (p.say?.includes(name)) v = say(v);
      if (p.status === name && has(`status.${v}`)) v = t(`status.${v}`);
      if (p.decision === name && has(`trace.decide.${v}`)) v = t(`trace.decide.${v}`);
      vars[name] = v;
    });
    // A message with an optional part has a second wording with it.
    const alt = Object.entries(p.alt || {}).find(([name]) => vars[name]);
    return t(alt ? alt[1] : p.key, vars);
  }
  return s;
}

// keepsBody reports whether a step's body shows what was written (a
// prompt the model read) rather than its translation.
export function keepsBody(text) {
  return P.some((p) => p.keepBody && p.re.test(String(text ?? '')));
}

// observationFrom is the wording observation() knows, as the Go code
// writes it (for the same test).
export const observationFrom = ['" (lines %d-%d)\\n%s"', '"no results"', '"\\n\\nMore: call %s again with the same arguments and cursor %q."'];

// observation says a tool's observation the page's way: its "(lines a-b)"
// labels, "no results" and the "More: …" hint; the passages' own text stays.
export function observation(text) {
  return String(text ?? '')
    .replace(/ \(lines (\d+)-(\d+)\)$/gm, (all, from, to) => t('trace.lines', { from, to }))
    .replace(/^no results$/gm, () => t('trace.noResults'))
    .replace(/^More: call (\S+) again with the same arguments and cursor "([^"]*)"\.$/gm, (all, tool, cursor) => t('trace.more', { tool, cursor }));
}
