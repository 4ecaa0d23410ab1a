package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// A tool result is bounded as a whole: the budget covers the serialized
// CallToolResult — structuredContent, the text rendering and the resource
// links — plus room for the JSON-RPC envelope. estimatedTokens is the count
// of exactly that serialization (with the counter's safety margin), written
// into the structured output by budget.Stamp.

// view is what a tool renders for one shape: its structured output (with
// the estimate written in), a text rendering of the same, and links to the
// resources behind it.
type view[T any] struct {
	Out   T
	Text  string
	Links []*mcp.ResourceLink
}

// reply is a rendered result ready to return from a typed handler.
type reply[T any] struct {
	res *mcp.CallToolResult
	out T
}

// fit renders a tool's result in the largest shape that fits limit tokens
// and returns what a typed handler returns. build renders one shape with
// the given estimate; minText is the shortest a text may become before
// items are dropped.
func fit[T any](s *Server, req *mcp.CallToolRequest, limit int, full budget.Shape, minText int, build func(sh budget.Shape, estimate int) view[T]) (*mcp.CallToolResult, T, error) {
	var zero T
	var meta mcp.Meta
	if newProtocol(req) {
		meta = mcp.Meta{mcp.MetaKeyServerInfo: s.impl}
	}
	f, err := budget.Fit(s.counter, limit-envelope, full, minText, func(sh budget.Shape, est int) (reply[T], []byte, error) {
		return wire(build(sh, est), meta)
	})
	if errors.Is(err, budget.ErrTooLarge) {
		return nil, zero, fmt.Errorf("even the smallest form of this response (%d tokens) exceeds its %d-token budget: shorten the text you passed in", f.Tokens, limit)
	}
	if err != nil {
		return nil, zero, err
	}
	return f.Value.res, f.Value.out, nil
}

// protocol20260728 is the protocol version from which the SDK stamps every
// result with the server's identity (_meta) and "resultType": "complete".
const protocol20260728 = "2026-07-28"

// newProtocol reports whether the SDK will stamp this call's result: the
// request names the new protocol in its _meta, or the session initialized
// with it.
func newProtocol(req *mcp.CallToolRequest) bool {
	if req == nil || req.Params == nil {
		return false
	}
	if v, ok := req.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string); ok {
		return v >= protocol20260728
	}
	if req.Session != nil {
		if ip := req.Session.InitializeParams(); ip != nil {
			return ip.ProtocolVersion >= protocol20260728
		}
	}
	return false
}

// wire builds the CallToolResult of a view and its serialization. The
// structured content is put in the form the SDK sends (it re-encodes the
// output through a generic map, which orders keys), and with meta (the
// new protocol's stamp) the result carries what the SDK adds to it, so the
// bytes counted are the bytes sent.
func wire[T any](v view[T], meta mcp.Meta) (reply[T], []byte, error) {
	raw, err := json.Marshal(v.Out)
	if err != nil {
		return reply[T]{}, nil, fmt.Errorf("encode result: %w", err)
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return reply[T]{}, nil, fmt.Errorf("encode result: %w", err)
	}
	canon, err := json.Marshal(generic)
	if err != nil {
		return reply[T]{}, nil, fmt.Errorf("encode result: %w", err)
	}
	content := make([]mcp.Content, 0, 1+len(v.Links))
	content = append(content, &mcp.TextContent{Text: v.Text})
	for _, l := range v.Links {
		content = append(content, l)
	}
	res := &mcp.CallToolResult{Content: content, StructuredContent: json.RawMessage(canon)}
	if meta != nil {
		res.Meta = maps.Clone(meta)
	}
	w, err := json.Marshal(res)
	if err != nil {
		return reply[T]{}, nil, fmt.Errorf("encode result: %w", err)
	}
	if meta != nil {
		// The SDK appends the result type after the other fields.
		w = append(w[:len(w)-1], `,"resultType":"complete"}`...)
	}
	return reply[T]{res: res, out: v.Out}, w, nil
}

// chunkLink is the resource link of a chunk.
func chunkLink(id int64, name string) *mcp.ResourceLink {
	return &mcp.ResourceLink{URI: tools.ChunkURI(id), Name: name, MIMEType: "text/plain"}
}
