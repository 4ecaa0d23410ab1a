package main

import (
	"context"
	"encoding/json"
	"errors"
	"maps"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// callOp runs the registry's operation name with in for the CLI: the same
// check, the same output and the same budget as every other face (so
// `sagasu X --json` prints what MCP's structuredContent and the page's API
// carry). An argument the operation refuses is a usage error.
// Flags in set are passed as given, zero values included (a flag's 0 is
// checked, where an input struct would leave it out as unset).
func callOp(ctx context.Context, rt *app.Runtime, name string, in any, set map[string]any) (tools.Reply, error) {
	return callOpIn(ctx, &tools.Env{}, rt, name, in, set)
}

// callOpIn is callOp in env (a live trace, say).
func callOpIn(ctx context.Context, env *tools.Env, rt *app.Runtime, name string, in any, set map[string]any) (tools.Reply, error) {
	op, ok := rt.Tools.Registry(tools.DefOptions{}).Find(name)
	if !ok {
		return tools.Reply{}, errors.New("no operation " + name)
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return tools.Reply{}, err
	}
	if len(set) > 0 {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return tools.Reply{}, err
		}
		maps.Copy(m, set)
		if raw, err = json.Marshal(m); err != nil {
			return tools.Reply{}, err
		}
	}
	reply, err := op.Call(ctx, env, raw)
	if errors.Is(err, tools.ErrInvalidArgument) {
		return reply, usageError{err}
	}
	return reply, err
}

// writeReply prints an operation's output as indented JSON, in its
// fields' order (the same JSON as the reply's, < > & unescaped).
func (g *globals) writeReply(r tools.Reply) error { return writeJSON(g.stdout, r.Out) }
