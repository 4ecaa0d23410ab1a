package web

import (
	"encoding/json"
	"fmt"
	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// The page's API as an OpenAPI 3.1 document, served at /api/openapi.json.
// Request and response schemas are derived from the Go types the handlers
// decode and encode (as the MCP server derives its tools' schemas), with
// the limits the handlers check added by hand; TestOpenAPICoversRoutes
// checks that every route Handler registers is described and that nothing
// else is.

// op describes one route.
type op struct {
	summary string
	params  []param
	// body is the JSON request body's schema; nil for none.
	body *jsonschema.Schema
	// ok is the success status; out its JSON schema, or stream describes
	// the server-sent events answered instead, whose names are events.
	ok     int
	out    *jsonschema.Schema
	stream string
	events []string
	// links name operations that take a field of the answer (OpenAPI
	// links, which fuzzers follow): link name -> operationId, parameter,
	// JSON pointer into the answer.
	links []link
	// errs are the error statuses the route answers besides those every
	// route may (401, 403, 413, 429).
	errs []int
}

// link is an OpenAPI link from an answer's field to an operation's
// parameter.
type link struct{ name, operationID, param, pointer string }

// param is a query, header or path parameter.
type param struct {
	in, name, desc string
	required       bool
	schema         *jsonschema.Schema
}

// bodyOf is schemaOf for a request body: decode refuses nulls, so no field
// of it is nullable.
func bodyOf[T any](tune ...func(*jsonschema.Schema)) *jsonschema.Schema {
	s := schemaOf[T](tune...)
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
	}
	return s
}

// schemaOf derives T's schema, json.RawMessage being any JSON value, and
// applies tune.
func schemaOf[T any](tune ...func(*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		panic(fmt.Sprintf("openapi: schema of %T: %v", *new(T), err)) // a programming error, caught by the tests
	}
	for _, f := range tune {
		f(s)
	}
	return s
}

// opInput is the input schema of the registry's operation name.
func opInput(name string) *jsonschema.Schema {
	op, ok := tools.Ops(tools.DefOptions{}).Find(name)
	if !ok {
		panic("openapi: no operation " + name) // a programming error, caught by the tests
	}
	return op.Input
}

// field returns the schema of a property, for tuning.
func field(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p := s.Properties[name]
	if p == nil {
		panic("openapi: no property " + name) // a programming error, caught by the tests
	}
	return p
}

// Tunings: what the handlers check beyond the types.
func nonBlank(s *jsonschema.Schema) { s.Pattern = `\S` }
func between(lo, hi float64) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) { s.Minimum, s.Maximum = &lo, &hi }
}
func oneOf(vals ...string) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		for _, v := range vals {
			s.Enum = append(s.Enum, v)
		}
	}
}
func nonEmpty(s *jsonschema.Schema) { one := 1; s.MinItems = &one }

// maxSafe is the largest integer every JSON reader holds exactly (2^53-1):
// the bound of IDs and sequence numbers the API takes.
const maxSafe = 1<<53 - 1

func stringSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }

// streamParams are the parameters of every event stream: where it resumes.
func streamParams() []param {
	return []param{
		{in: "query", name: "after", desc: "replay the events after this sequence number (an EventSource sends Last-Event-ID instead)",
			schema: &jsonschema.Schema{Type: "integer", Minimum: ptr(0.0), Maximum: ptr(float64(maxSafe))}},
		{in: "header", name: "Last-Event-ID", desc: "the id of the last event received, which EventSource sends when it reconnects",
			schema: &jsonschema.Schema{Type: "string", Pattern: `^[0-9]{1,15}$`}},
	}
}

func ptr[T any](v T) *T { return &v }

// operations describes every route, by its http.ServeMux pattern.
func operations() map[string]op {
	sourceTypes := []string{"file", "text", "url", "github", "gist"}
	return map[string]op{
		"GET /api/openapi.json": {summary: "This document", ok: 200, out: &jsonschema.Schema{Type: "object"}},
		"GET /api/info":         {summary: "How the server answers (offline or a model) and the index's size", ok: 200, out: schemaOf[infoOutput]()},

		"GET /api/threads": {summary: "Chat threads, the most recent first", ok: 200, out: schemaOf[[]runView]()},
		"POST /api/threads": {summary: "Start a chat thread", ok: 201, out: schemaOf[created](),
			body:  bodyOf[threadInput](),
			links: []link{{"ask", "post_threads_id_ask", "id", "/id"}, {"events", "get_threads_id_events", "id", "/id"}}},
		"POST /api/threads/{id}/ask": {summary: "Ask a question in a thread; the turn's steps and answer stream from the thread's events", ok: 202,
			body: bodyOf[askInput](func(s *jsonschema.Schema) { nonBlank(field(s, "question")); between(0, 20)(field(s, "k")) }),
			out:  schemaOf[askAccepted](), errs: []int{400, 404, 409}},
		"POST /api/threads/{id}/stop": {summary: "Stop the thread's turn", ok: 202, out: schemaOf[stopping](), errs: []int{409}},
		"GET /api/threads/{id}/events": {summary: "The thread's events, then new ones as they come", ok: 200, errs: []int{400, 404},
			params: streamParams(),
			stream: "Server-sent events, each id the event's sequence number: turn, step (a graph event), delta (a piece of a streamed answer), question, answer, spans, turn_error, status.",
			events: []string{react.ThreadTurn, react.ThreadStep, "delta", react.ThreadQuestion, react.ThreadAnswer, react.ThreadSpans, react.ThreadError, "status"}},

		"POST /api/search": {summary: "Search the index (semantic and hybrid need an index with embeddings: 409 without; 503 while the embedder or the index's server cannot be reached)", ok: 200, out: schemaOf[searchOutput](), errs: []int{400, 409, 503},
			links: []link{{"passage", "get_chunks_id", "id", "/results/0/chunkId"}, {"source", "get_source", "ref", "/results/0/source/id"}},
			// sagasu_query's input, checked by its schema.
			body: opInput(tools.NameQuery)},
		"POST /api/ops/{name}": {summary: "Run an operation of sagasu's registry by name (search and loop groups): the body is its input, the answer its output, the same JSON as `sagasu X --json` and MCP's structuredContent; `sagasu tools` lists the schemas",
			ok: 200, out: &jsonschema.Schema{Type: "object"}, errs: []int{400, 404, 409, 503},
			params: []param{{in: "path", name: "name", required: true, schema: func() *jsonschema.Schema {
				s := stringSchema()
				oneOf(opNames(PageGroups)...)(s)
				return s
			}()}},
			body: &jsonschema.Schema{Type: "object"}},
		"POST /api/evaluate": {summary: "Judge results against a goal (recorded in the agent cache)", ok: 200, out: schemaOf[tools.EvaluateOutput](), errs: []int{400, 404},
			body: bodyOf[evaluateInput](func(s *jsonschema.Schema) {
				nonBlank(field(s, "goal"))
				nonEmpty(field(s, "chunkIds"))
				between(-maxSafe, maxSafe)(field(s, "chunkIds").Items)
			})},
		"GET /api/chunks/{id}": {summary: "One passage, cut to 4000 characters", ok: 200, out: schemaOf[chunkOutput](), errs: []int{400, 404},
			params: []param{{in: "path", name: "id", required: true, schema: &jsonschema.Schema{Type: "string", Pattern: `^-?[0-9]{1,15}$`}}}},
		"GET /api/source": {summary: "A source, or one section of it, cut to 256 KiB", ok: 200, out: schemaOf[sourceOutput](), errs: []int{400, 404},
			params: []param{
				{in: "query", name: "ref", required: true, desc: "source ID, URI or a unique end of its URI", schema: &jsonschema.Schema{Type: "string", MinLength: ptr(1)}},
				{in: "query", name: "section", desc: "a heading or heading path", schema: stringSchema()},
			}},

		"GET /api/runs": {summary: "Agent runs, the most recent first", ok: 200, out: schemaOf[[]runView]()},
		"POST /api/runs": {summary: "Start a Plan-and-Act run toward a goal; its events stream from the run's events", ok: 202, out: schemaOf[runAccepted](), errs: []int{400, 409, 429},
			body:  bodyOf[runInput](func(s *jsonschema.Schema) { nonBlank(field(s, "goal")) }),
			links: []link{{"run", "get_runs_id", "id", "/id"}, {"stop", "post_runs_id_stop", "id", "/id"}}},
		"GET /api/runs/{id}": {summary: "A run: its plan, outcome and timeline", ok: 200, out: schemaOf[runDetail](), errs: []int{404}},
		"POST /api/runs/{id}/resume": {summary: "Resume a stopped run from its last completed step, with the settings it recorded (its MCP servers, models, limits) and the given ones over them", ok: 202, out: schemaOf[runAccepted](), errs: []int{400, 404, 409, 429},
			body: bodyOf[resumeInput]()},
		"POST /api/runs/{id}/stop": {summary: "Stop a running run", ok: 202, out: schemaOf[stopping](), errs: []int{409}},
		"GET /api/runs/{id}/events": {summary: "The run's events, then new ones as they come", ok: 200, errs: []int{400, 404},
			params: streamParams(),
			stream: "Server-sent events, each id the event's sequence number: state (the plan), a graph event by its type (thought, action, observation, ...), outcome, status."},

		"DELETE /api/runs/{id}":        deleteOp("an agent run"),
		"GET /api/runs/{id}/export":    exportOp("an agent run", "its plan, steps, answer, sources and outcome"),
		"DELETE /api/threads/{id}":     deleteOp("a chat thread"),
		"GET /api/threads/{id}/export": exportOp("a chat thread", "its questions and cited answers"),
		"POST /api/runs/prune": {summary: "Delete the agent runs and chat threads a retention rule selects: older than olderThan (30d), or beyond the newest keep of each kind; without either the configured runs.keep_days and runs.keep (400 when none is set). Running runs are kept; dryRun deletes nothing.",
			ok: 200, out: schemaOf[runs.PruneOutput](), errs: []int{400},
			body: bodyOf[runs.PruneInput](func(s *jsonschema.Schema) {
				oneOf("", store.RunAgent, store.RunChat)(field(s, "kind"))
				between(0, 1e6)(field(s, "keep"))
			})},

		"GET /api/cache": {summary: "The agent cache's records and agent-cache.md", ok: 200, out: schemaOf[tools.ReadCacheOutput](), errs: []int{400, 404},
			params: []param{
				{in: "query", name: "kind", schema: &jsonschema.Schema{Type: "string", Enum: []any{"", "evaluations", "refinements", "stages", "sessions"}}},
				{in: "query", name: "goal", desc: "only records of this goal", schema: stringSchema()},
				{in: "query", name: "id", desc: "one record, with its data", schema: stringSchema()},
				{in: "query", name: "limit", schema: &jsonschema.Schema{Type: "integer", Minimum: ptr(1.0), Maximum: ptr(100.0)}},
			}},
		"GET /api/sources": {summary: "The index's sources", ok: 200, out: schemaOf[tools.ListOutput](), errs: []int{400},
			links: []link{{"source", "get_source", "ref", "/sources/0/id"}},
			params: []param{
				{in: "query", name: "type", schema: &jsonschema.Schema{Type: "string", Enum: append([]any{""}, anys(sourceTypes)...)}},
				{in: "query", name: "glob", desc: "only sources whose URI matches this glob", schema: stringSchema()},
			}},
		"POST /api/index": {summary: "Add a folder, file, glob or URL to the index (403: outside the roots or a dotfile; 404: no such path); progress streams from the job's events", ok: 202, out: schemaOf[jobAccepted](), errs: []int{400, 404},
			body:  bodyOf[indexInput](func(s *jsonschema.Schema) { nonBlank(field(s, "path")) }),
			links: []link{{"progress", "get_jobs_id_events", "id", "/job"}}},
		"GET /api/jobs/{id}/events": {summary: "An index job's progress", ok: 200, errs: []int{400, 404},
			params: streamParams(),
			stream: "Server-sent events: start, progress, then done (the report) or failed.",
			events: []string{"start", "progress", "done", "failed"}},
	}
}

// deleteOp describes the deletion of one run of a kind.
func deleteOp(what string) op {
	return op{summary: "Delete " + what + " with its whole log (409: it is running; force=true deletes one a killed process left, never one this server drives)",
		ok: 200, out: schemaOf[runs.DeleteOutput](), errs: []int{400, 404, 409},
		params: []param{{in: "query", name: "force", desc: "delete it even though its status is running", schema: &jsonschema.Schema{Type: "string", Enum: []any{"true", "false"}}}}}
}

// exportOp describes the export of one run of a kind.
func exportOp(what, md string) op {
	return op{summary: "Export " + what + ": json is its header, recorded settings and every event; md a readable transcript (" + md + "). No secret is exported.",
		ok: 200, out: schemaOf[runs.ExportOutput](), errs: []int{400, 404},
		params: []param{{in: "query", name: "format", schema: &jsonschema.Schema{Type: "string", Enum: []any{"json", "md"}}}}}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

var pathParam = regexp.MustCompile(`\{([a-zA-Z]+)\}`)

// openAPI builds the document of the routes (http.ServeMux patterns); a
// route without a description is an error.
func openAPI(routes []string) ([]byte, error) {
	ops := operations()
	errSchema := schemaOf[errorOutput]()
	paths := map[string]map[string]any{}
	for _, pattern := range routes {
		o, ok := ops[pattern]
		if !ok {
			return nil, fmt.Errorf("route %q is not described in openapi.go", pattern)
		}
		method, path, _ := strings.Cut(pattern, " ")
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
			if !slices.ContainsFunc(o.params, func(p param) bool { return p.in == "path" && p.name == m[1] }) {
				params = append(params, map[string]any{"in": "path", "name": m[1], "required": true, "schema": map[string]any{"type": "string", "minLength": 1}})
			}
		}
		for _, p := range o.params {
			params = append(params, map[string]any{"in": p.in, "name": p.name, "required": p.required, "description": p.desc, "schema": p.schema})
		}
		if method == http.MethodPost {
			params = append(params, map[string]any{"in": "header", "name": "X-Sagasu", "required": true,
				"description": "1: the page sends it with every change; another site cannot without a CORS preflight this server never grants",
				"schema":      map[string]any{"type": "string", "enum": []string{"1"}}})
		}
		responses := map[string]any{}
		if o.stream != "" {
			responses[fmt.Sprint(o.ok)] = map[string]any{"description": o.stream, "content": map[string]any{"text/event-stream": map[string]any{"schema": sseSchema(o.events)}}}
		} else {
			ok := map[string]any{"description": "OK", "content": map[string]any{"application/json": map[string]any{"schema": o.out}}}
			if len(o.links) > 0 {
				links := map[string]any{}
				for _, l := range o.links {
					links[l.name] = map[string]any{"operationId": l.operationID, "parameters": map[string]any{l.param: "$response.body#" + l.pointer}}
				}
				ok["links"] = links
			}
			responses[fmt.Sprint(o.ok)] = ok
		}
		errs := append([]int{401, 403, 413, 429}, o.errs...)
		if o.body != nil && !slices.Contains(errs, 400) {
			errs = append(errs, 400) // a body that is not the JSON the route takes
		}
		for _, code := range errs {
			responses[fmt.Sprint(code)] = map[string]any{"description": http.StatusText(code) + ": the error says what to do",
				"content": map[string]any{"application/json": map[string]any{"schema": errSchema}}}
		}
		operation := map[string]any{"summary": o.summary, "operationId": operationID(method, path), "responses": responses}
		if len(params) > 0 {
			operation["parameters"] = params
		}
		if o.body != nil {
			operation["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": o.body}}}
		}
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(method)] = operation
	}
	return json.MarshalIndent(map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "sagasu serve", "version": "1",
			"description": "The JSON and server-sent-event API of sagasu's web page. Every request needs the server's token: " +
				"Authorization: Bearer TOKEN (the link `sagasu serve` prints carries it after #token=; no cookie is accepted). Requests that change anything (POST) also need X-Sagasu: 1. " +
				"Bodies are at most 1 MiB; at most 8 chat turns, agent runs and index jobs run at once, and at most 32 live streams are open (429 past either)."},
		"servers":    []any{map[string]any{"url": "/"}},
		"security":   []any{map[string]any{"bearer": []string{}}},
		"components": map[string]any{"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
		"paths":      paths,
	}, "", " ")
}

// sseSchema is the schema of one server-sent event: its id (the sequence
// number, when the event can be replayed), its name (one of names, when
// given) and its data, a JSON value as text.
func sseSchema(names []string) map[string]any {
	event := map[string]any{"type": "string"}
	if len(names) > 0 {
		event["enum"] = names
	}
	return map[string]any{"type": "object", "required": []string{"event", "data"}, "properties": map[string]any{
		"id": map[string]any{"type": "string", "pattern": "^[0-9]+$"}, "event": event,
		"data": map[string]any{"type": "string", "contentMediaType": "application/json"},
	}}
}

// operationID names an operation from its method and path:
// "POST /api/threads/{id}/ask" is post_threads_id_ask.
func operationID(method, path string) string {
	path = strings.NewReplacer("/api/", "", "{", "", "}", "", "/", "_", ".", "_").Replace(path)
	return strings.ToLower(method) + "_" + path
}

// openapi serves the document.
func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(s.doc)
}
