package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// A server asked to stream may answer with one whole completion instead
// (some proxies and simple servers ignore "stream": true). Such an answer
// is read as a stream of one chunk, so that a call can always stream: a
// model on this machine is bounded by its progress (Config.Stall), which
// only a stream shows.
func init() {
	ssestream.RegisterDecoder("application/json", func(rc io.ReadCloser) ssestream.Decoder { return &wholeDecoder{rc: rc} })
}

// maxWhole bounds a whole completion read as a stream.
const maxWhole = 64 << 20

type wholeDecoder struct {
	rc   io.ReadCloser
	done bool
	ev   ssestream.Event
	err  error
}

func (d *wholeDecoder) Event() ssestream.Event { return d.ev }
func (d *wholeDecoder) Close() error           { return d.rc.Close() }
func (d *wholeDecoder) Err() error             { return d.err }

func (d *wholeDecoder) Next() bool {
	if d.done {
		return false
	}
	d.done = true
	body, err := io.ReadAll(io.LimitReader(d.rc, maxWhole+1))
	if err != nil {
		d.err = err
		return false
	}
	if len(body) > maxWhole {
		d.err = fmt.Errorf("a whole completion of more than %d MiB", maxWhole>>20)
		return false
	}
	data, err := completionAsChunk(body)
	if err != nil {
		d.err = err
		return false
	}
	d.ev = ssestream.Event{Data: data}
	return true
}

// completionAsChunk rewrites a chat.completion as the one
// chat.completion.chunk that says the same: each choice's message becomes
// its delta, and each tool call gets its index. An error object is passed
// on as it is, for the stream to report.
func completionAsChunk(body []byte) ([]byte, error) {
	var c map[string]any
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	if _, isErr := c["error"]; isErr {
		return body, nil
	}
	choices, ok := c["choices"].([]any)
	if !ok {
		return nil, errors.New("a whole completion without choices")
	}
	for _, ch := range choices {
		choice, ok := ch.(map[string]any)
		if !ok {
			continue
		}
		msg, _ := choice["message"].(map[string]any)
		if calls, ok := msg["tool_calls"].([]any); ok {
			for i, tc := range calls {
				if call, ok := tc.(map[string]any); ok {
					call["index"] = i
				}
			}
		}
		choice["delta"] = msg
		delete(choice, "message")
	}
	c["object"] = "chat.completion.chunk"
	return json.Marshal(c)
}
