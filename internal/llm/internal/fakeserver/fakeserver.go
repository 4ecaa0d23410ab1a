// Package fakeserver is a scripted HTTP server for the llm drivers'
// protocol tests: each request gets the next scripted Reply (a JSON body,
// an error, or server-sent events that may break off), and every request is
// recorded so a test can check what the driver sent.
package fakeserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reply is one scripted answer.
type Reply struct {
	Status int               // default 200
	Header map[string]string // extra headers, e.g. Retry-After
	// Body is sent as is, with Content-Type application/json unless
	// Header sets one.
	Body string
	// Events, when set, are sent as a text/event-stream instead of Body:
	// each is one event's text, written as given (so a test spells out
	// "event:" and "data:" lines exactly as the vendor does), followed by
	// a blank line, each flushed on its own.
	Events []string
	// CRLF ends each event with "\r\n\r\n" (as Gemini does) instead of
	// "\n\n".
	CRLF bool
	// Hold, with Events, keeps the response open after the events until
	// the client goes away, like a model that is still thinking.
	Hold bool
	// Abort, with Events, drops the connection after the events instead of
	// ending the response cleanly.
	Abort bool
	// Gap, with Events, pauses before each event, like a slow model.
	Gap time.Duration
}

// Received is one request as the server saw it.
type Received struct {
	Method string
	Path   string // with the query string, if any
	Header http.Header
	Body   []byte
}

// JSON decodes the request body; the test fails if it is not JSON.
func (r Received) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("request body is not a JSON object: %v\n%s", err, r.Body)
	}
	return v
}

// Server answers with its replies in order; a request beyond the script
// gets a 599 and fails the test.
type Server struct {
	URL string

	t       testing.TB
	hs      *httptest.Server
	mu      sync.Mutex
	replies []Reply
	got     []Received
}

// New starts a server that stops when the test ends.
func New(t testing.TB, replies ...Reply) *Server {
	s := &Server{t: t, replies: replies}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(hs.Close)
	s.URL, s.hs = hs.URL, hs
	return s
}

// Close stops the server now (it also stops when the test ends).
func (s *Server) Close() { s.hs.Close() }

// Requests returns the requests received so far.
func (s *Server) Requests() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.got...)
}

// Last returns the last request; the test fails if there was none.
func (s *Server) Last() Received {
	s.t.Helper()
	got := s.Requests()
	if len(got) == 0 {
		s.t.Fatal("the server received no request")
	}
	return got[len(got)-1]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.got = append(s.got, Received{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body})
	n := len(s.got)
	var rep Reply
	ok := len(s.replies) > 0
	if ok {
		rep, s.replies = s.replies[0], s.replies[1:]
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("fakeserver: request %d (%s %s) has no scripted reply", n, r.Method, r.URL.Path)
		http.Error(w, "no scripted reply", 599)
		return
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.Events == nil {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, rep.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	fl := w.(http.Flusher)
	end := "\n\n"
	if rep.CRLF {
		end = "\r\n\r\n"
	}
	for _, ev := range rep.Events {
		if rep.Gap > 0 {
			select {
			case <-time.After(rep.Gap):
			case <-r.Context().Done():
				return
			}
		}
		_, _ = fmt.Fprintf(w, "%s%s", strings.TrimRight(ev, "\n"), end)
		fl.Flush()
	}
	if rep.Hold {
		<-r.Context().Done()
		return
	}
	if rep.Abort {
		panic(http.ErrAbortHandler) // closes the connection mid-response
	}
}
