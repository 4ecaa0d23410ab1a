// A real MCP client for sagasu's integration tests: the official TypeScript
// SDK, installed by scripts/mcp-clients.sh into .tools/mcp-clients (named by
// $SAGASU_MCP_CLIENTS). Modes:
//
//   check       list tools, call every tool and validate its structuredContent
//               against its outputSchema (ajv), read a resource, follow a
//               cursor, send bad input, cancel an index run mid-way; prints a
//               JSON report and writes every result to --out.
//   bench       time sagasu_search over queries (one JSON object a line with
//               a "text" field, as BEIR's queries.jsonl); prints p50/p99.
//   transcript  a multi-aspect goal followed as the replies say: search →
//               evaluate → refine → search (→ get); writes the JSON-RPC
//               messages both ways and each reply's contradictions to --out,
//               and fails when a reply contradicts itself.
//
// Transport: --stdio "<command> <args...>" (JSON array) with --cwd, or
// --url http://127.0.0.1:PORT/mcp [--token T].
import { createRequire } from "node:module";
import { writeFileSync, readFileSync } from "node:fs";
import path from "node:path";

const clients = process.env.SAGASU_MCP_CLIENTS;
if (!clients) {
  console.error("SAGASU_MCP_CLIENTS is not set: run scripts/mcp-clients.sh and point it at .tools/mcp-clients");
  process.exit(2);
}
const require = createRequire(path.join(clients, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const Ajv = require("ajv");

function flags(argv) {
  const out = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith("--")) out[argv[i].slice(2)] = argv[++i];
    else out._.push(argv[i]);
  }
  return out;
}
const opt = flags(process.argv.slice(2));
const mode = opt._[0];

const log = []; // JSON-RPC messages, for the transcript
async function connect() {
  let transport;
  if (opt.url) {
    const headers = opt.token ? { Authorization: `Bearer ${opt.token}` } : {};
    transport = new StreamableHTTPClientTransport(new URL(opt.url), { requestInit: { headers } });
  } else {
    const [command, ...args] = JSON.parse(opt.stdio);
    transport = new StdioClientTransport({ command, args, cwd: opt.cwd, stderr: "inherit" });
  }
  const send = transport.send.bind(transport);
  transport.send = async (msg, o) => {
    log.push({ direction: "client→server", message: msg });
    return send(msg, o);
  };
  const client = new Client({ name: "sagasu-test-client", version: "1.0.0" });
  await client.connect(transport);
  const onmessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    log.push({ direction: "server→client", message: msg });
    onmessage(msg, extra);
  };
  return client;
}

const text = (res) => (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");

async function check() {
  const client = await connect();
  const report = { transport: opt.url ? "http" : "stdio", checks: [], failures: [], results: [] };
  const ok = (name, cond, detail = "") => {
    report.checks.push(name);
    if (!cond) report.failures.push(`${name}: ${detail}`);
  };
  report.protocolVersion = client.getServerVersion ? client.getServerVersion() : null;

  const { tools } = await client.listTools();
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validators = {};
  // Tools list an output schema only where programs read the answer by
  // field; the others still send structuredContent (an object).
  for (const t of tools) validators[t.name] = t.outputSchema ? ajv.compile(t.outputSchema) : ajv.compile({ type: "object" });
  ok("tools/list lists 20 tools", tools.length === 20, tools.map((t) => t.name).join(","));

  async function call(name, args, options) {
    const res = await client.callTool({ name, arguments: args }, undefined, options);
    report.results.push({ tool: name, arguments: args, result: res });
    return res;
  }
  async function good(name, args) {
    const res = await call(name, args);
    ok(`${name} succeeds`, !res.isError, text(res));
    const valid = validators[name](res.structuredContent);
    ok(`${name} structuredContent matches outputSchema`, valid, JSON.stringify(validators[name].errors));
    ok(`${name} has a text rendering`, text(res).length > 0);
    return res.structuredContent || {};
  }
  async function bad(name, args, want) {
    let res;
    try {
      res = await call(name, args);
    } catch (e) {
      ok(`${name} rejects ${JSON.stringify(args)}`, String(e).includes(want), String(e));
      return;
    }
    ok(`${name} rejects ${JSON.stringify(args)}`, res.isError && text(res).includes(want), text(res));
  }

  const goal = "understand how to configure the sidebar and the theme";
  const s1 = await good("sagasu_search", { goal, query: "sidebar", options: { k: 2, detail: "detailed" } });
  ok("sagasu_search returns results", (s1.results || []).length === 2);
  ok("sagasu_search offers a cursor", !!s1.nextCursor);
  const s2 = await good("sagasu_search", { goal, query: "sidebar", options: { k: 2, detail: "detailed" }, cursor: s1.nextCursor });
  ok("the cursor leads to the next page", s2.offset === 2 && s2.results[0].rank === 3, JSON.stringify(s2.results?.[0]));
  const sum = await good("sagasu_search", { goal: "サイドバーの設定を理解する", query: "サイドバー 設定" });
  const ans = await good("sagasu_ask", { question: "How do I configure the sidebar?", offline: true, includeTrace: true });
  ok("sagasu_ask answers with citations", (ans.citations || []).length > 0 && /\[\d+\]/.test(ans.answer || ""), JSON.stringify(ans).slice(0, 400));
  ok("sagasu_ask shows its steps", (ans.trace || []).some((s) => s.type === "reflection"), JSON.stringify(ans.trace || []).slice(0, 400));
  ok("summary stays under 5,000 tokens", sum.estimatedTokens > 0 && sum.estimatedTokens <= 5000);
  ok("a search says one next step", !!sum.next && !!sum.next.action && !("hints" in sum) && !("recommendation" in sum), JSON.stringify(sum.next));
  await good("sagasu_search", { goal, query: "theme", options: { k: 10, detail: "full", includeDebug: true } });
  const q = await good("sagasu_query", { query: "sidebar", k: 3, wholeSection: true });
  await good("sagasu_get", { source: q.results[0].source.id });
  const l = await good("sagasu_list", { limit: 2 });
  await good("sagasu_list", { limit: 2, cursor: l.nextCursor });
  const ev = await good("sagasu_evaluate", { goal, query: "sidebar", chunkIds: q.results.map((r) => r.chunkId), iteration: 1 });
  ok("sagasu_evaluate uses the seed's fields", "next" in ev && "shouldContinue" in ev && "missingAspects" in ev);
  await good("sagasu_evaluate", { goal, query: "sidebar", results: [{ content: "Configure the sidebar in config.js.", score: 1, metadata: { uri: "a.md" } }] });
  const rf = await good("sagasu_refine_query", { currentQuery: "sidebar", goal, missingAspects: ev.missingAspects, strategy: "broaden" });
  ok("sagasu_refine_query refines", !!rf.refinedQuery);
  const st = await good("sagasu_plan_execute_stage", { goal, queryOptions: { k: 3 } });
  ok("a plan was made", !!st.plan && st.plan.stages.length > 0);
  await good("sagasu_plan_execute_stage", { planId: st.planId, stageIndex: 0, plan: st.plan, queryOptions: { k: 3, mode: "hybrid" } });
  // What the tools returned goes back into sagasu_evaluate as it came.
  for (const [from, results] of [["sagasu_query", q.results], ["sagasu_search detailed", s1.results], ["sagasu_search summary", sum.results], ["sagasu_plan_execute_stage", st.results]]) {
    const fed = await call("sagasu_evaluate", { goal, results });
    ok(`sagasu_evaluate takes ${from}'s results as they came`, !fed.isError && fed.structuredContent.results === results.length, text(fed));
  }
  // The autonomous loop, bounded, recorded as one session; a client's own
  // steps toward one goal share a session.
  const lp = await good("sagasu_loop", { goal, query: "sidebar", maxIterations: 3, k: 3 });
  ok("sagasu_loop stays within maxIterations", lp.iterations.length >= 1 && lp.iterations.length <= 3, JSON.stringify(lp.iterations));
  const sess = await good("sagasu_read_cache", { sessionId: lp.sessionId });
  ok("sagasu_loop's session is in the agent cache", sess.records.length === 1 && sess.records[0].data.iterations.length === lp.iterations.length && sess.records[0].data.done === true, JSON.stringify(sess.records).slice(0, 300));
  await bad("sagasu_loop", { goal, maxIterations: 11 }, "maxIterations");
  ok("a client's steps toward one goal share a session", !!s1.sessionId && s1.sessionId === s2.sessionId && ev.sessionId === s1.sessionId && rf.sessionId === s1.sessionId, `${s1.sessionId} ${s2.sessionId} ${ev.sessionId} ${rf.sessionId}`);
  await good("sagasu_read_cache", { limit: 5, summary: true });
  const ix = await good("sagasu_index", { text: "# Extra note\n\nThe sidebar can collapse.", title: "extra" });
  ok("sagasu_index adds the text", ix.added + ix.unchanged === 1);
  const dr = await good("sagasu_delete", { glob: "text:*", dryRun: true });
  ok("sagasu_delete dryRun lists and keeps", dr.dryRun === true && dr.deleted === 0 && dr.sources.some((x) => x.title === "extra"), JSON.stringify(dr));
  const del = await good("sagasu_delete", { glob: "text:*" });
  ok("sagasu_delete deletes", del.deleted === dr.sources.length && del.index.sources === dr.index.sources - del.deleted, JSON.stringify(del));

  // A Plan-and-Act run in the background: start returns its ID at once,
  // status reads it until it stops at its one-tool-call limit, resume
  // continues it (with the limit given here) to its answer.
  const waitRun = async (id) => {
    for (let i = 0; i < 1200; i++) {
      const st = await good("sagasu_agent_status", { id });
      if (!st.running) return st;
      await new Promise((r) => setTimeout(r, 50));
    }
    return {};
  };
  const started = await good("sagasu_agent_start", { goal, offline: true, settings: { maxToolCalls: 1, maxDuration: "5m" } });
  ok("sagasu_agent_start returns a run ID while it runs", /^planact-/.test(started.id || "") && started.status === "running", JSON.stringify(started));
  const stopped = await waitRun(started.id);
  ok("sagasu_agent_status reads the run stopped at its limit", stopped.outcome?.status === "stopped" && stopped.outcome?.guard === "max_tool_calls", JSON.stringify(stopped).slice(0, 600));
  ok("the run recorded its settings", stopped.settings?.offline === true && stopped.settings?.limits?.maxToolCalls === 1 && stopped.settings?.limits?.maxDuration === "5m0s", JSON.stringify(stopped.settings));
  await good("sagasu_agent_resume", { id: started.id, settings: { maxToolCalls: 30 } });
  const finished = await waitRun(started.id);
  ok("sagasu_agent_resume continues the run to its answer", finished.outcome?.status === "success" && (finished.plan || []).every((s) => s.status === "done") && finished.results?.length > 0, JSON.stringify(finished).slice(0, 600));
  ok("the resumed run kept its recorded settings", finished.settings?.limits?.maxDuration === "5m0s" && finished.settings?.limits?.maxToolCalls === 30, JSON.stringify(finished.settings));
  await bad("sagasu_agent_status", { id: "planact-none" }, "no such agent run");
  await bad("sagasu_agent_stop", { id: started.id }, "not running");
  // The run's lifecycle: listed, exported as Markdown, deleted.
  const listed = await good("sagasu_runs_list", { kind: "agent" });
  ok("sagasu_runs_list lists the run", (listed.runs || []).some((r) => r.id === started.id), JSON.stringify(listed).slice(0, 400));
  const md = await good("sagasu_runs_export", { id: started.id, format: "md" });
  ok("sagasu_runs_export writes the run's plan and outcome", md.content?.includes("## Plan") && md.content?.includes("## Outcome"), (md.content || "").slice(0, 400));
  await good("sagasu_runs_delete", { ids: [started.id] });
  await bad("sagasu_runs_export", { id: started.id }, "no run");

  // A resource behind a result's resource_link.
  const res = await client.callTool({ name: "sagasu_query", arguments: { query: "sidebar", k: 1 } });
  const link = res.content.find((c) => c.type === "resource_link");
  ok("results link to resources", !!link);
  const rr = await client.readResource({ uri: link.uri });
  ok("the linked resource reads", rr.contents[0].text.length > 0);
  const src = await client.readResource({ uri: `sagasu://source/${q.results[0].source.id}` });
  ok("a source resource reads", src.contents[0].text.length > 0);

  // Bad input: the server answers with an error and keeps serving.
  await bad("sagasu_nope", {}, "unknown tool");
  await bad("sagasu_search", { goal: "x" }, "query");
  await bad("sagasu_search", { goal: "g", query: "x", options: { k: "ten" } }, "k");
  await bad("sagasu_search", { goal: "g", query: "x", options: { k: 11 } }, "k");
  await bad("sagasu_search", { goal, query: "sidebar", options: { k: 2, detail: "detailed" }, cursor: s1.nextCursor.slice(0, -3) + "AAA" }, "invalid cursor");
  await bad("sagasu_index", { file: "/etc/passwd" }, "not inside the allowed roots");
  await bad("sagasu_search", { goal: "g", query: "x", options: { k: -1 } }, "options.k: got -1; give a whole number from 1 to 10");
  await bad("sagasu_delete", { glob: "[" }, "glob: ");

  // Cancel an index run at its first progress notification.
  if (opt.corpus) {
    const ac = new AbortController();
    let progressed = 0;
    let cancelled = false;
    try {
      await client.callTool({ name: "sagasu_index", arguments: { file: opt.corpus } }, undefined, {
        signal: ac.signal,
        onprogress: () => {
          progressed++;
          ac.abort("test cancels mid-index");
        },
        timeout: 600000,
      });
    } catch (e) {
      cancelled = true;
    }
    ok("sagasu_index sends progress notifications", progressed > 0);
    ok("sagasu_index can be cancelled", cancelled);
    const after = await good("sagasu_list", { limit: 1 });
    report.afterCancel = after.index;
  }
  const again = await good("sagasu_query", { query: "sidebar", k: 1 });
  ok("still serving after bad input", again.results.length === 1);
  await client.close();
  report.ok = report.failures.length === 0;
  if (opt.out) writeFileSync(opt.out, JSON.stringify(report.results));
  delete report.results;
  console.log(JSON.stringify(report));
}

async function bench() {
  const client = await connect();
  const queries = readFileSync(opt.queries, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l).text);
  const n = Math.min(Number(opt.n || 300), queries.length);
  const mode = opt.mode || "summary";
  // Warm up: the first call opens caches.
  await client.callTool({ name: "sagasu_search", arguments: { goal: queries[0], query: queries[0] } });
  const times = [];
  const tokens = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const res = await client.callTool({ name: "sagasu_search", arguments: { goal: queries[i], query: queries[i], options: { k: 10, mode } } });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (res.isError) throw new Error(text(res));
    tokens.push(res.structuredContent.estimatedTokens);
  }
  await client.close();
  const pct = (arr, p) => {
    const s = [...arr].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
  };
  console.log(JSON.stringify({ mode, calls: n, p50Ms: pct(times, 50), p99Ms: pct(times, 99), maxMs: Math.max(...times),
    p50Tokens: pct(tokens, 50), maxTokens: Math.max(...tokens) }));
}

// A reply contradicts itself when it recommends two things, or a step its
// own numbers refute; it repeats itself when one chunk comes twice. The
// transcript checks every reply for that.
function contradictions(name, res) {
  const out = [];
  const sc = res.structuredContent || {};
  const t = text(res);
  const nexts = (t.match(/^next:/gm) || []).length;
  if (["sagasu_search", "sagasu_evaluate", "sagasu_refine_query"].includes(name) && nexts !== 1) out.push(`${nexts} next steps in the text`);
  for (const k of ["suggestedMode", "recommendation", "recommendations", "hints", "primaryAction", "nextStep"]) {
    if (k in sc) out.push(`a second recommendation: ${k}`);
  }
  const cov = (sc.summary && sc.summary.coverageStatus) || sc;
  const missing = cov.missingAspects || [];
  const act = sc.next && sc.next.action;
  if (["refine", "broaden", "narrow", "pivot"].includes(act) && missing.length === 0 && cov.status !== "none") out.push(`next ${act} with nothing missing`);
  if (act === "use_results" && cov.status === "none") out.push("use_results with coverage none");
  const ids = (sc.results && Array.isArray(sc.results) ? sc.results : []).map((r) => r.chunkId);
  if (new Set(ids).size !== ids.length) out.push("a chunk twice");
  for (const r of sc.results && Array.isArray(sc.results) ? sc.results : []) {
    if (typeof r.relevance === "number" && (r.relevance < 0 || r.relevance > 1)) out.push(`relevance ${r.relevance}`);
    if (/<[A-Za-z/]|\{ ?#/.test(r.heading || "")) out.push(`markup in a heading: ${r.heading}`);
  }
  for (const topic of (sc.summary && sc.summary.topTopics) || []) if (/<[A-Za-z/]|\{ ?#/.test(topic)) out.push(`markup in a topic: ${topic}`);
  return out;
}

// transcript runs a multi-aspect goal as an agent that follows the replies:
// search, evaluate the results, refine toward what is missing (the call the
// evaluation names), search again (the call the refinement names), and
// read what the last search points at. It writes the JSON-RPC messages both
// ways, and every reply's contradictions (none, when all is well), to --out.
async function transcript() {
  const client = await connect();
  log.length = 0; // from here on: the session itself
  const goal = opt.goal;
  const query = opt.query;
  const steps = [];
  const offered = new Set((await client.listTools()).tools.map((t) => t.name));
  const call = async (name, args) => {
    const res = await client.callTool({ name, arguments: args });
    const found = contradictions(name, res);
    const next = res.structuredContent && res.structuredContent.next;
    if (next && next.tool && !offered.has(next.tool)) found.push(`next names ${next.tool}, which is not offered`);
    steps.push({ tool: name, next, contradictions: found });
    if (res.isError) throw new Error(`${name}: ${text(res)}`);
    return res.structuredContent || {};
  };
  const s1 = await call("sagasu_search", { goal, query });
  const ids = (s1.results || []).map((r) => r.chunkId);
  const ev = await call("sagasu_evaluate", { goal, query, chunkIds: ids });
  const refineArgs = ev.next && ev.next.tool === "sagasu_refine_query" ? ev.next.arguments
    : { goal, currentQuery: query, missingAspects: ev.missingAspects, foundAspects: ev.foundAspects };
  const rf = await call("sagasu_refine_query", refineArgs);
  const s2 = await call("sagasu_search", rf.next && rf.next.tool === "sagasu_search" ? rf.next.arguments : { goal, query: rf.refinedQuery });
  if (s2.next && s2.next.tool === "sagasu_get") await call("sagasu_get", s2.next.arguments);
  await client.close();
  const problems = steps.flatMap((st) => st.contradictions.map((c) => `${st.tool}: ${c}`));
  // --redact keeps the documents' own text out of the file (a held-out set
  // may not be copied): passages and page content become their length.
  const redact = (v) => {
    if (Array.isArray(v)) return v.map(redact);
    if (!v || typeof v !== "object") return v;
    const o = {};
    for (const [k, x] of Object.entries(v)) {
      if (typeof x === "string" && ["content", "line", "snippet"].includes(k)) o[k] = `[document text: ${x.length} characters]`;
      else if (k === "text" && typeof x === "string" && v.type === "text") o[k] = x.replace(/^(\/[^\n]*\(lines [^\n]*\)\n\n)[\s\S]*$/, (_, head) => `${head}[document text]`)
        .replace(/^(- [^\n]*\(\d\.\d\d\): [^\n]* — )[^\n]*$/gm, "$1[document text]");
      else o[k] = redact(x);
    }
    return o;
  };
  const messages = opt.redact ? redact(log) : log;
  writeFileSync(opt.out, JSON.stringify({ goal, query, steps, messages }, null, 2));
  console.log(JSON.stringify({ messages: log.length, steps: steps.map((st) => `${st.tool} -> ${st.next ? st.next.action : "-"}`), contradictions: problems }));
  if (problems.length > 0) process.exit(1);
}

const run = { check, bench, transcript }[mode];
if (!run) {
  console.error("usage: client.mjs check|bench|transcript [--stdio JSON | --url URL] ...");
  process.exit(2);
}
run().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
