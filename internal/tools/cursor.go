package tools

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/search"
)

// Cursors are opaque to their callers (MCP clients, models calling the
// agents' tools) and tamper-evident: a JSON state signed with HMAC-SHA256
// under a key that lives as long as the process. A cursor
// names the tool and a hash of the arguments it pages through, so it cannot
// be replayed against another request, and carries a hash of what came
// before its offset, so a cursor whose index has changed under it is
// refused rather than silently skipping or repeating results.

// CursorState is what a cursor carries.
type CursorState struct {
	Tool   string `json:"t"`
	Args   string `json:"a"`           // hash of the arguments that define the list
	Offset int    `json:"o"`           // where the next page starts
	Seen   string `json:"s,omitempty"` // hash of what precedes Offset
	Issued int64  `json:"i"`           // unix seconds
}

// Cursors issues and opens cursors.
type Cursors struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// NewCursors returns a Cursors signing with key (nil: a random key, so
// cursors end with the process), valid for ttl (default one hour), stamped
// with now (default time.Now).
func NewCursors(key []byte, ttl time.Duration, now func() time.Time) (*Cursors, error) {
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
	return &Cursors{key: key, ttl: ttl, now: now}, nil
}

func (c *Cursors) sign(payload string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// Now reads the cursors' clock: a handler reads it once per response and
// issues every cursor of the response at that instant.
func (c *Cursors) Now() time.Time { return c.now() }

// Issue returns the cursor for st, issued at at. A response is rendered
// several times while it is fitted to its budget, and every rendering must
// be the same but for its shape, or the size it states would be another
// rendering's: a handler reads the clock once (Now) and issues every
// cursor of its response at that instant.
func (c *Cursors) Issue(st CursorState, at time.Time) string {
	st.Issued = at.Unix()
	raw, _ := json.Marshal(st)
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + c.sign(payload)
}

// Cursor errors; each names the cursor argument and tells the agent what
// to do.
var (
	ErrCursorInvalid = errors.New("cursor: invalid cursor: it was altered, or it comes from another sagasu server (cursors last as long as the server that issued them); repeat the call without a cursor")
	ErrCursorOther   = errors.New("cursor: this cursor belongs to a different request: pass the same arguments as the call that returned it, adding only the cursor")
	ErrCursorStale   = errors.New("cursor: stale cursor: the index changed since this cursor was issued; repeat the call without a cursor to start again")
)

// Open verifies a cursor for tool and the arguments hash args.
func (c *Cursors) Open(tok, tool, args string) (CursorState, error) {
	payload, sig, ok := strings.Cut(strings.TrimSpace(tok), ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(c.sign(payload))) {
		return CursorState{}, ErrCursorInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return CursorState{}, ErrCursorInvalid
	}
	var st CursorState
	if err := json.Unmarshal(raw, &st); err != nil || st.Offset < 0 {
		return CursorState{}, ErrCursorInvalid
	}
	if st.Tool != tool {
		return CursorState{}, fmt.Errorf("cursor: this cursor was issued by %s, not %s: pass it to %s with the same arguments", st.Tool, tool, st.Tool)
	}
	if st.Args != args {
		return CursorState{}, ErrCursorOther
	}
	if age := c.now().Sub(time.Unix(st.Issued, 0)); age > c.ttl {
		return CursorState{}, fmt.Errorf("cursor: expired cursor: it was issued %s ago and cursors last %s; repeat the call without a cursor", age.Round(time.Second), c.ttl)
	}
	return st, nil
}

// Ranked runs a paged call over a ranking: it opens the cursor (none is the
// first page), runs call from the page's offset, and refuses a page whose
// ranking changed before its offset since the cursor was issued.
func Ranked[R any](c *Cursors, tool, cursor, args string, call func(offset int) (R, error), ranking func(R) Ranking) (R, error) {
	var zero R
	offset, seen := 0, ""
	if cursor != "" {
		st, err := c.Open(cursor, tool, args)
		if err != nil {
			return zero, err
		}
		offset, seen = st.Offset, st.Seen
	}
	res, err := call(offset)
	if err != nil {
		return zero, err
	}
	if p := ranking(res); cursor != "" && HashOf(p.IDs[:min(p.Offset, len(p.IDs))]) != seen {
		return zero, ErrCursorStale
	}
	return res, nil
}

// Next returns the cursor, issued at at, to the page after the first kept
// hits of p, or "" when the ranking ends there.
func (c *Cursors) Next(p Ranking, tool, args string, kept int, at time.Time) string {
	if kept >= len(p.Hits) && !p.HasMore {
		return ""
	}
	o := p.Offset + kept
	return c.Issue(CursorState{Tool: tool, Args: args, Offset: o, Seen: HashOf(p.IDs[:o])}, at)
}

// PageArgs is the identity of a query's ranking, which its cursors are
// bound to: the arguments that define the list, with k's default filled.
func (in QueryInput) PageArgs() string {
	k := in.K
	if k == 0 {
		k = search.DefaultK
	}
	return HashOf(NameQuery, in.Query, k, in.Mode, in.Types, in.Glob, in.SourceIDs, in.WholeSource, in.WholeSection)
}
