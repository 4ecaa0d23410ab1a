// Package wire holds what the llm drivers share about HTTP: an http.Client
// that notes the status, Retry-After and error body of each answer, so a
// driver builds the same llm.APIError whatever its vendor's SDK keeps, and
// the wording of malformed and broken answers.
package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/llm"
)

// Recorder notes the last HTTP answer of one call.
type Recorder struct {
	mu          sync.Mutex
	status      int
	header      http.Header
	body        []byte // error answers only, at most 64 KiB
	contentType string
	bodyRead    bool // the whole body arrived
}

type recorderKey struct{}

// Record returns a context under which Client's requests note their
// answers in the returned Recorder.
func Record(ctx context.Context) (context.Context, *Recorder) {
	r := &Recorder{}
	return context.WithValue(ctx, recorderKey{}, r), r
}

// Status is the HTTP status of the last answer, 0 if none came.
func (r *Recorder) Status() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// ContentType is the Content-Type of the last answer.
func (r *Recorder) ContentType() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.contentType
}

// BodyRead reports whether the whole body of the last answer was read, so
// that an error after it is about its content, not its transfer.
func (r *Recorder) BodyRead() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodyRead
}

// APIError builds the error for a recorded answer of 400 or more, and
// returns nil for any other.
func (r *Recorder) APIError(driver, endpoint, keyEnv string) *llm.APIError {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status < 400 {
		return nil
	}
	code, msg, delay := errorBody(r.body)
	retryAfter := llm.ParseRetryAfter(r.header, time.Now())
	if retryAfter == 0 {
		retryAfter = delay
	}
	return &llm.APIError{
		Driver: driver, Endpoint: endpoint, Status: r.status, Code: code, Message: msg,
		RetryAfter: retryAfter, KeyEnv: keyEnv,
	}
}

// Client returns a copy of hc (or of a default client when nil) whose
// transport fills the Recorder found in each request's context.
func Client(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		copied := *hc
		c = &copied
	}
	c.Transport = recording{next: c.Transport}
	return c
}

type recording struct{ next http.RoundTripper }

func (t recording) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	rec, ok := req.Context().Value(recorderKey{}).(*Recorder)
	if err != nil || !ok {
		return resp, err
	}
	var body []byte
	if resp.StatusCode >= 400 && resp.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	rec.mu.Lock()
	rec.status, rec.header, rec.body = resp.StatusCode, resp.Header.Clone(), body
	rec.contentType = resp.Header.Get("Content-Type")
	rec.bodyRead = false
	rec.mu.Unlock()
	if resp.Body != nil {
		resp.Body = &watchedBody{ReadCloser: resp.Body, rec: rec}
	}
	return resp, nil
}

// watchedBody notes in its Recorder when the body has been read to its end.
type watchedBody struct {
	io.ReadCloser
	rec *Recorder
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.rec.mu.Lock()
		b.rec.bodyRead = true
		b.rec.mu.Unlock()
	}
	return n, err
}

// errorBody reads the vendors' error bodies: OpenAI's
// {"error":{"message","type","code"}}, Anthropic's
// {"type":"error","error":{"type","message"}}, Gemini's
// {"error":{"code","message","status","details"}} (where a detail may give
// a reason such as API_KEY_INVALID, which becomes the code, or a
// RetryInfo retryDelay such as "37s"), and plain {"error":"..."} or
// {"message":"..."}; anything else is quoted (clipped) as the message.
func errorBody(body []byte) (code, msg string, retryDelay time.Duration) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		var obj struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Status  string          `json:"status"`
			Code    json.RawMessage `json:"code"`
			Details []struct {
				Reason     string `json:"reason"`
				RetryDelay string `json:"retryDelay"`
			} `json:"details"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && (obj.Message != "" || obj.Type != ""):
			var c string
			_ = json.Unmarshal(obj.Code, &c) // Gemini's code is the number already in the status
			switch {
			case c != "":
				code = c
			case obj.Status != "":
				code = obj.Status
			default:
				code = obj.Type
			}
			for _, d := range obj.Details {
				if d.Reason != "" {
					code = d.Reason
				}
				if dur, err := time.ParseDuration(d.RetryDelay); err == nil && dur > 0 {
					retryDelay = dur
				}
			}
			return code, obj.Message, retryDelay
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return "", s, 0
		case v.Message != "":
			return "", v.Message, 0
		}
	}
	return "", clip.Line(string(body), 300), 0
}

// Malformed is the error for an answer the driver could not read.
func Malformed(driver, endpoint string, cause error) error {
	// The cause may quote the whole body: keep the message short.
	return fmt.Errorf("%s API at %s: %w: %s", driver, endpoint, llm.ErrMalformed, clip.Runes(cause.Error(), 300))
}

// Incomplete is the error for a stream that ended early: cause is what
// broke it (nil when it just stopped), got how much had arrived.
func Incomplete(driver, endpoint string, deltas int, cause error) error {
	if cause == nil {
		return fmt.Errorf("%s stream from %s: %w (after %d deltas)", driver, endpoint, llm.ErrIncomplete, deltas)
	}
	return fmt.Errorf("%s stream from %s: %w (after %d deltas): %w", driver, endpoint, llm.ErrIncomplete, deltas, cause)
}

// StreamedError is the error of an error event inside a stream that began
// well (llama-server sends one when the model's reply fails to parse as a
// tool call after the stream began): an *llm.APIError whose status is the
// event's numeric code when that is an HTTP error status, else 500. Nil
// when data holds no error object.
func (e Endpoint) StreamedError(data []byte) *llm.APIError {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &v) != nil || len(v.Error) == 0 {
		return nil
	}
	var num struct {
		Code int `json:"code"`
	}
	status := http.StatusInternalServerError
	if json.Unmarshal(v.Error, &num) == nil && num.Code >= 400 && num.Code <= 599 {
		status = num.Code
	}
	code, msg, _ := errorBody(data)
	if msg == "" {
		msg = string(v.Error)
	}
	return &llm.APIError{Driver: e.Driver, Endpoint: e.Base, Status: status, Code: code, Message: msg, KeyEnv: e.KeyEnv}
}
