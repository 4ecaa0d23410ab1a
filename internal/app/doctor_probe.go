package app

import (
	"fmt"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// The forced tool call doctor asks for is what the agents send and what
// the real-model test proves a model can answer: sagasu_query exactly as
// the agents offer it (tools.FunctionTools: its Def's name, description and
// input schema), a request that names the function and its argument (a
// 135M model asked a question talks about it instead of calling; asked to
// call, it calls), tool_choice required, and the reply size the
// local-model test allows a call (128 tokens). A reply counts when one of
// its calls is a valid call: a small model may write something first, or
// repeat the call until the token limit cuts the last one short.
//
// Measured on SmolLM2-135M (llama-server, temperature 0): the old probe, a
// tool named echo, drew shell code ("echo -n ...") and no call; all three
// agent functions at once drew prose about the call; sagasu_query alone
// draws the call.

// probeMaxTokens is the reply size of the forced call.
const probeMaxTokens = 128

// ToolCallProbe is the request of doctor's forced tool call.
func ToolCallProbe(temperature float64) llm.Request {
	fns, err := tools.FunctionTools(tools.NameQuery)
	if err != nil {
		panic(fmt.Sprintf("the agents' functions: %v", err)) // a programming error, found by any test
	}
	return llm.Request{
		Messages:   []llm.Message{{Role: llm.RoleUser, Content: `Call sagasu_query with the query "sitemap".`}},
		Tools:      fns,
		ToolChoice: llm.ToolChoiceRequired, MaxTokens: probeMaxTokens, Temperature: &temperature,
	}
}

// probeCalled says whether resp made a valid call of one of the probe's
// functions, and if not, why not.
func probeCalled(resp *llm.Response) (bool, string) {
	fns := ToolCallProbe(0).Tools
	if len(resp.Message.ToolCalls) == 0 {
		return false, fmt.Sprintf(" (it answered in text: %.80q)", resp.Message.Content)
	}
	var first error
	for _, c := range resp.Message.ToolCalls {
		_, err := llm.CheckToolCall(fns, c)
		if err == nil {
			return true, ""
		}
		if first == nil {
			first = err
		}
	}
	return false, fmt.Sprintf(": %v", first)
}
