package telemetry

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPMiddleware makes each tools/call an MCP server receives an
// execute_tool span (sagasu_ask's model calls nest under it). A nil Tracer
// returns nil: add nothing.
func (t *Tracer) MCPMiddleware() mcp.Middleware {
	if t == nil {
		return nil
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			r, ok := req.(*mcp.CallToolRequest)
			if !ok || method != "tools/call" || r.Params == nil {
				return next(ctx, method, req)
			}
			args := ""
			if t.content {
				args = string(r.Params.Arguments)
			}
			ctx, span := t.StartTool(ctx, r.Params.Name, "", args)
			res, err := next(ctx, method, req)
			var failed error = err
			result := ""
			if tr, ok := res.(*mcp.CallToolResult); ok && tr != nil {
				if tr.IsError && failed == nil {
					failed = errToolFailed
				}
				if t.content {
					for _, c := range tr.Content {
						if tc, ok := c.(*mcp.TextContent); ok {
							result += tc.Text
						}
					}
				}
			}
			t.EndTool(span, result, failed)
			return res, err
		}
	}
}
