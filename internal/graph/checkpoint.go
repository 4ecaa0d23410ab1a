package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
)

// A checkpoint records what a node changed, the way LangGraph's
// checkpointer records per-channel writes, not the whole state again: for
// each top-level field of the state's JSON object that changed, its new
// value, or, for a list that only grew, the elements appended. A run's
// first checkpoint of each Invoke or Resume call, and every fullEvery-th,
// holds the whole state, so that replaying a log starts from the last
// whole one. A state that is not a JSON object is always stored whole.

// fullEvery is how many checkpoints may follow a whole one as deltas.
const fullEvery = 32

// Delta is what a checkpoint changed of the state's fields.
type Delta map[string]FieldDelta

// FieldDelta is the change of one field: its new value, elements appended
// to a list, or its removal.
type FieldDelta struct {
	Set    json.RawMessage   `json:"set,omitempty"`
	Append []json.RawMessage `json:"append,omitempty"`
	Drop   bool              `json:"drop,omitempty"`
}

// fields is a state's JSON object, field by field; nil for a state that
// is not an object.
type fields map[string]json.RawMessage

func fieldsOf(raw json.RawMessage) fields {
	var f fields
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &f) != nil || f == nil {
		return nil
	}
	return f
}

// encode is the state as JSON with its fields in a fixed order, the form
// fingerprints hash, live or replayed.
func (f fields) encode() json.RawMessage {
	raw, _ := json.Marshal(map[string]json.RawMessage(f))
	return raw
}

// diff returns what changed from prev to next.
func diff(prev, next fields) Delta {
	d := Delta{}
	for k, v := range next {
		old, ok := prev[k]
		switch {
		case ok && bytes.Equal(old, v):
		case ok && (isList(old) || string(old) == "null") && isList(v):
			if more, grew := appended(old, v); grew {
				d[k] = FieldDelta{Append: more}
				break
			}
			d[k] = FieldDelta{Set: v}
		default:
			d[k] = FieldDelta{Set: v}
		}
	}
	for k := range prev {
		if _, ok := next[k]; !ok {
			d[k] = FieldDelta{Drop: true}
		}
	}
	return d
}

func isList(v json.RawMessage) bool { return len(v) > 0 && v[0] == '[' }

// appended returns the elements next adds to prev, when next is prev (a
// list, or null) with elements appended and nothing else changed.
func appended(prev, next json.RawMessage) ([]json.RawMessage, bool) {
	var a, b []json.RawMessage
	if json.Unmarshal(prev, &a) != nil || json.Unmarshal(next, &b) != nil || len(b) <= len(a) {
		return nil, false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return nil, false
		}
	}
	return b[len(a):], true
}

// apply returns f with d applied.
func (f fields) apply(d Delta) (fields, error) {
	out := maps.Clone(f)
	if out == nil {
		out = fields{}
	}
	for k, fd := range d {
		switch {
		case fd.Drop:
			delete(out, k)
		case fd.Append != nil:
			var list []json.RawMessage
			if old, ok := out[k]; ok && json.Unmarshal(old, &list) != nil {
				return nil, fmt.Errorf("field %q: appending to a value that is not a list", k)
			}
			raw, err := json.Marshal(append(list, fd.Append...))
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", k, err)
			}
			out[k] = raw
		default:
			out[k] = fd.Set
		}
	}
	return out, nil
}

// Replayer rebuilds a run's state from its checkpoints, whole or deltas,
// in log order: the web page and `agent show` read states this way.
type Replayer struct {
	state json.RawMessage // the last whole state that is not an object
	f     fields
	ok    bool
}

// Add folds in a checkpoint event (other events are ignored) and reports
// whether ev was a checkpoint.
func (r *Replayer) Add(ev Event) (bool, error) {
	if ev.Type != TypeCheckpoint {
		return false, nil
	}
	switch {
	case ev.State != nil:
		r.state, r.f, r.ok = ev.State, fieldsOf(ev.State), true
	case !r.ok:
		return true, fmt.Errorf("checkpoint %d holds changes, but no whole state comes before it", ev.Seq)
	default:
		f, err := r.f.apply(ev.Delta)
		if err != nil {
			return true, fmt.Errorf("checkpoint %d: %w", ev.Seq, err)
		}
		r.f = f
	}
	return true, nil
}

// State is the state after the checkpoints added so far, as JSON (nil
// before the first).
func (r *Replayer) State() json.RawMessage {
	if !r.ok {
		return nil
	}
	if r.f == nil {
		return r.state
	}
	return r.f.encode()
}
