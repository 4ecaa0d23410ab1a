package fakeserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/llm"
)

// NewModel builds the driver under test against a fake server.
type NewModel func(t *testing.T, srv *Server) llm.Model

var ask = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}}

// call makes one Chat, or one Stream whose deltas are collected as text.
func call(ctx context.Context, m llm.Model, stream bool, text *string) (*llm.Response, error) {
	if !stream {
		return m.Chat(ctx, ask)
	}
	return m.Stream(ctx, ask, func(d llm.Delta) error { *text += d.Text; return nil })
}

// ErrorCase is one HTTP error answer and what a driver must make of it.
type ErrorCase struct {
	Name       string
	Reply      Reply
	Sentinel   error // errors.Is must hold, when set
	Code       string
	InText     []string // the error text contains each
	RetryAfter time.Duration
}

// CheckErrors runs each case through Chat and through Stream, each against
// a fresh server: the error is an *llm.APIError with the status, code and
// Retry-After of the answer, retryable exactly for 408, 409, 429 and 5xx
// (but not 501), made after a single request (no SDK retries), and never
// showing the key.
func CheckErrors(t *testing.T, driver, key string, newModel NewModel, cases []ErrorCase) {
	t.Helper()
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", tc.Name, stream), func(t *testing.T) {
				srv := New(t, tc.Reply)
				var text string
				_, err := call(context.Background(), newModel(t, srv), stream, &text)
				var ae *llm.APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, tc.Reply.Status, ae.Status)
				assert.Equal(t, driver, ae.Driver)
				assert.Equal(t, tc.Code, ae.Code)
				assert.Equal(t, tc.RetryAfter, ae.RetryAfter)
				if tc.Sentinel != nil {
					assert.ErrorIs(t, err, tc.Sentinel)
				}
				s := ae.Status
				assert.Equal(t, s == 408 || s == 409 || s == 429 || (s >= 500 && s != 501), llm.IsRetryable(err))
				for _, want := range tc.InText {
					assert.Contains(t, err.Error(), want)
				}
				assert.NotContains(t, err.Error(), key)
				assert.Len(t, srv.Requests(), 1, "the SDK's own retries are off")
			})
		}
	}
}

// MalformedCase is an answer a driver cannot read.
type MalformedCase struct {
	Name   string
	Stream bool
	Reply  Reply
}

// CheckMalformed checks that each answer gives an error wrapping
// llm.ErrMalformed that names the driver and its endpoint, is short, and is
// not retryable.
func CheckMalformed(t *testing.T, driver string, newModel NewModel, cases []MalformedCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			srv := New(t, tc.Reply)
			m := newModel(t, srv)
			var text string
			_, err := call(context.Background(), m, tc.Stream, &text)
			require.ErrorIs(t, err, llm.ErrMalformed)
			assert.Contains(t, err.Error(), driver+" API at "+m.Info().Endpoint)
			assert.Less(t, len(err.Error()), 600, "a long body is clipped")
			assert.False(t, llm.IsRetryable(err))
		})
	}
}

// CheckStreamCut streams events that stop before the model finished, once
// ending the response cleanly and once dropping the connection: the text
// delivered is wantText, and the call fails with llm.ErrIncomplete naming
// the endpoint instead of returning the partial text as an answer.
func CheckStreamCut(t *testing.T, newModel NewModel, reply Reply, wantText string) {
	t.Helper()
	for _, abort := range []bool{true, false} {
		t.Run(fmt.Sprintf("connection dropped=%v", abort), func(t *testing.T) {
			rep := reply
			rep.Abort = abort
			srv := New(t, rep)
			m := newModel(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang fails instead of blocking
			defer cancel()
			var text string
			resp, err := call(ctx, m, true, &text)
			require.ErrorIs(t, err, llm.ErrIncomplete)
			assert.Nil(t, resp, "partial text is not returned as an answer")
			assert.Equal(t, wantText, text)
			assert.Contains(t, err.Error(), m.Info().Endpoint)
			assert.True(t, llm.IsRetryable(err), "nothing is lost by retrying a stream the caller has not used")
		})
	}
}
