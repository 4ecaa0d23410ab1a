package mcpserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Cursors are opaque to clients and tamper-evident: a JSON state signed
// with HMAC-SHA256 under a key that lives as long as the server. A cursor
// names the tool and a hash of the arguments it pages through, so it cannot
// be replayed against another request, and carries a hash of what came
// before its offset, so a cursor whose index has changed under it is
// refused rather than silently skipping or repeating results.

// cursorState is what a cursor carries.
type cursorState struct {
	Tool   string `json:"t"`
	Args   string `json:"a"`           // hash of the arguments that define the list
	Offset int    `json:"o"`           // where the next page starts
	Seen   string `json:"s,omitempty"` // hash of what precedes Offset
	Issued int64  `json:"i"`           // unix seconds
}

// cursors issues and opens cursors.
type cursors struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

func newCursors(key []byte, ttl time.Duration, now func() time.Time) (*cursors, error) {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("cursor key: %w", err)
		}
	}
	if ttl <= 0 {
		ttl = time.Hour
	}
	if now == nil {
		now = time.Now
	}
	return &cursors{key: key, ttl: ttl, now: now}, nil
}

func (c *cursors) sign(payload string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// issue returns the cursor for st, issued at at. A response is rendered
// several times while it is fitted to its budget, and every rendering must
// be the same but for its shape, or the size it states would be another
// rendering's: a handler reads the clock once (cursors.now) and issues
// every cursor of its response at that instant.
func (c *cursors) issue(st cursorState, at time.Time) string {
	st.Issued = at.Unix()
	raw, _ := json.Marshal(st)
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + c.sign(payload)
}

// Cursor errors; each names the cursor argument and tells the agent what
// to do.
var (
	errCursorInvalid = errors.New("cursor: invalid cursor: it was altered, or it comes from another sagasu server (cursors last as long as the server that issued them); repeat the call without a cursor")
	errCursorOther   = errors.New("cursor: this cursor belongs to a different request: pass the same arguments as the call that returned it, adding only the cursor")
	errCursorStale   = errors.New("cursor: stale cursor: the index changed since this cursor was issued; repeat the call without a cursor to start again")
)

// open verifies a cursor for tool and the arguments hash args.
func (c *cursors) open(tok, tool, args string) (cursorState, error) {
	payload, sig, ok := strings.Cut(strings.TrimSpace(tok), ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(c.sign(payload))) {
		return cursorState{}, errCursorInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return cursorState{}, errCursorInvalid
	}
	var st cursorState
	if err := json.Unmarshal(raw, &st); err != nil || st.Offset < 0 {
		return cursorState{}, errCursorInvalid
	}
	if st.Tool != tool {
		return cursorState{}, fmt.Errorf("cursor: this cursor was issued by %s, not %s: pass it to %s with the same arguments", st.Tool, tool, st.Tool)
	}
	if st.Args != args {
		return cursorState{}, errCursorOther
	}
	if age := c.now().Sub(time.Unix(st.Issued, 0)); age > c.ttl {
		return cursorState{}, fmt.Errorf("cursor: expired cursor: it was issued %s ago and cursors last %s; repeat the call without a cursor", age.Round(time.Second), c.ttl)
	}
	return st, nil
}

// hashOf hashes values as JSON: the identity of a request or of what a page
// follows.
func hashOf(v ...any) string {
	raw, _ := json.Marshal(v)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12])
}
