// Package otlptest is a small OTLP/HTTP trace receiver for tests: an HTTP
// server on loopback that accepts POST /v1/traces with a protobuf
// ExportTraceServiceRequest (gzip or not), decodes it with the
// OpenTelemetry protocol's own Go types (go.opentelemetry.io/proto/otlp)
// and keeps the spans, answering as a collector does. It is what an
// exporter talks to in a test, in place of a Collector or Jaeger.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened for assertions.
type Span struct {
	Name     string
	TraceID  string
	SpanID   string
	ParentID string
	Kind     string
	Start    time.Time
	End      time.Time
	Attrs    map[string]any
	Error    bool
	Message  string // status message
	Service  string // resource service.name
	Scope    string // instrumentation scope
}

// Receiver collects what exporters send.
type Receiver struct {
	// URL is the base endpoint (http://127.0.0.1:PORT), what
	// OTEL_EXPORTER_OTLP_ENDPOINT takes.
	URL string

	srv      *httptest.Server
	mu       sync.Mutex
	spans    []Span
	requests int
	headers  []http.Header
}

// Start runs a receiver until the test ends.
func Start(t testing.TB) *Receiver {
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL
	t.Cleanup(r.srv.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	if req.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "content type "+ct+" is not application/x-protobuf", http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &msg); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.requests++
	r.headers = append(r.headers, req.Header.Clone())
	for _, rs := range msg.ResourceSpans {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, flatten(s, service, ss.GetScope().GetName()))
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func flatten(s *tracepb.Span, service, scope string) Span {
	sp := Span{
		Name:    s.Name,
		TraceID: hex.EncodeToString(s.TraceId),
		SpanID:  hex.EncodeToString(s.SpanId),
		Kind:    s.Kind.String(),
		Start:   time.Unix(0, int64(s.StartTimeUnixNano)),
		End:     time.Unix(0, int64(s.EndTimeUnixNano)),
		Attrs:   map[string]any{},
		Error:   s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR,
		Message: s.GetStatus().GetMessage(),
		Service: service,
		Scope:   scope,
	}
	if len(s.ParentSpanId) > 0 {
		sp.ParentID = hex.EncodeToString(s.ParentSpanId)
	}
	for _, kv := range s.Attributes {
		sp.Attrs[kv.Key] = value(kv.Value)
	}
	return sp
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.Values {
			out = append(out, value(e))
		}
		return out
	}
	return fmt.Sprint(v)
}

// Spans returns the spans received so far, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Requests counts the export requests received.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Headers returns the headers of each export request.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Named returns the received spans whose name is name.
func (r *Receiver) Named(name string) []Span {
	var out []Span
	for _, s := range r.Spans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}
