// The session of a coding agent that mcpcost measures, driven by the
// official TypeScript MCP SDK client (installed by scripts/mcp-clients.sh;
// $SAGASU_MCP_CLIENTS names the folder). It lists the tools, then makes the
// calls an agent typically makes on a documentation question: list the
// sources, query, search toward a goal (summary), read the section the
// search points at, evaluate, refine, and search again with the refined
// query. Each later call takes its arguments from the replies before it,
// as an agent would. It prints one JSON object: the tools/list result and
// every call with its arguments and result, as the client received them.
//
//   node session.mjs --stdio '["sagasu","--db","x.db","mcp"]' --goal G --query Q
import { createRequire } from "node:module";
import path from "node:path";

const clients = process.env.SAGASU_MCP_CLIENTS;
if (!clients) {
  console.error("SAGASU_MCP_CLIENTS is not set: run scripts/mcp-clients.sh and point it at .tools/mcp-clients");
  process.exit(2);
}
const require = createRequire(path.join(clients, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const opt = {};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) opt[argv[i].replace(/^--/, "")] = argv[i + 1];

const [command, ...args] = JSON.parse(opt.stdio);
const transport = new StdioClientTransport({ command, args, cwd: opt.cwd, stderr: "ignore" });
const client = new Client({ name: "sagasu-cost", version: "1.0.0" });
await client.connect(transport);

const out = { tools: await client.listTools(), calls: [] };
const names = new Set(out.tools.tools.map((t) => t.name));
async function call(name, args) {
  if (!names.has(name)) {
    out.calls.push({ name, arguments: args, missing: true });
    return null;
  }
  const result = await client.callTool({ name, arguments: args });
  out.calls.push({ name, arguments: args, result });
  return result.structuredContent || {};
}
const goal = opt.goal, query = opt.query;

await call("sagasu_list", {});
const q = await call("sagasu_query", { query, k: 5 });
const s1 = await call("sagasu_search", { goal, query });
// Read the section the search points at, else the first result's.
const p = (s1 && s1.primaryAction && s1.primaryAction.parameters) || {};
const next = (s1 && s1.next && s1.next.arguments) || {};
const first = (s1 && (s1.topResults || s1.results || [])[0]) || {};
let get = null;
if ((p.source || next.source) && (s1.primaryAction || s1.next || {}).suggestedTool !== "sagasu_search" && (s1.next || {}).tool !== "sagasu_search") {
  get = { source: p.source || next.source, section: p.section || next.section };
} else if (first.source || first.uri) {
  get = { source: (first.source && (first.source.id || first.source)) || first.uri, section: first.heading };
}
if (get) await call("sagasu_get", Object.fromEntries(Object.entries(get).filter(([, v]) => v)));
const ids = ((q && q.results) || []).map((r) => r.chunkId).filter((x) => x);
const ev = await call("sagasu_evaluate", { goal, query, chunkIds: ids });
const missing = (ev && ev.missingAspects) || [];
const found = (ev && ev.foundAspects) || [];
const rf = await call("sagasu_refine_query", { goal, currentQuery: query, missingAspects: missing, foundAspects: found });
await call("sagasu_search", { goal, query: (rf && rf.refinedQuery) || query, context: { previousQueries: [query] } });
await client.close();
process.stdout.write(JSON.stringify(out));
