package web

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPICoversRoutes: the document served describes every API route
// Handler registers and nothing else, each route it names reaches its
// handler, and real answers match the documented schemas.
func TestOpenAPICoversRoutes(t *testing.T) {
	f := newFixture(t, "", docs)
	_, registered := f.srv.routes()
	documented := slices.Collect(maps.Keys(operations()))
	slices.Sort(registered)
	slices.Sort(documented)
	if !slices.Equal(registered, documented) {
		t.Fatalf("routes registered %v\ndocumented %v", registered, documented)
	}
	if _, err := openAPI(append(registered, "GET /api/undocumented")); err == nil || !strings.Contains(err.Error(), "/api/undocumented") {
		t.Errorf("a route missing from the document: %v, want an error naming it", err)
	}

	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if code := f.call(t, "GET", "/api/openapi.json", nil, &doc); code != http.StatusOK || doc.OpenAPI != "3.1.0" {
		t.Fatalf("GET /api/openapi.json: %d, version %q", code, doc.OpenAPI)
	}
	n := 0
	for path, ops := range doc.Paths {
		for method, o := range ops {
			n++
			if o["responses"] == nil || o["operationId"] == nil {
				t.Errorf("%s %s has no responses or operationId", method, path)
			}
			// Reaches a handler: the mux's own 404 and 405 are plain text.
			res, _ := f.send(t, strings.ToUpper(method), strings.ReplaceAll(path, "{id}", "0"), "{}")
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && ct != "text/event-stream" {
				t.Errorf("%s %s answered %d %q: not one of the API's handlers", method, path, res.StatusCode, ct)
			}
		}
	}
	if n != len(registered) {
		t.Errorf("the document has %d operations, the server %d routes", n, len(registered))
	}

	// Real answers against the documented schemas.
	ops := operations()
	check := func(pattern string, body any) {
		t.Helper()
		method, path, _ := strings.Cut(pattern, " ")
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = strings.NewReader(string(b))
		}
		req, _ := http.NewRequest(method, f.ts.URL+path, rd)
		req.Header.Set("X-Sagasu", "1")
		f.auth(req)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var got any
		if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
			t.Fatalf("%s: %v", pattern, err)
		}
		o := ops[pattern]
		want := o.out
		if res.StatusCode != o.ok {
			want = schemaOf[errorOutput]()
		}
		resolved, err := want.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := resolved.Validate(got); err != nil {
			t.Errorf("%s answered %d, which does not match its schema: %v\n%v", pattern, res.StatusCode, err, got)
		}
	}
	check("GET /api/info", nil)
	check("POST /api/threads", map[string]string{"title": "t"})
	check("GET /api/threads", nil)
	check("POST /api/search", map[string]any{"query": "rotate keys"})
	check("GET /api/sources", nil)
	check("GET /api/runs", nil)
	check("GET /api/cache", nil)
}
