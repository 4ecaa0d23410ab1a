package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/llm"
	"github.com/sagasu-dev/sagasu/internal/llm/llmtest"
)

// An agent's tool loop: call the model, run the tools it asks for (a bad
// call becomes an error observation the model reads, never a crash), send
// the results back, until it answers in text.
func Example_toolLoop() {
	model := llmtest.New(
		llmtest.Calls(llmtest.Call("c1", "search", `{"query": "gopher"`)), // invalid JSON
		llmtest.Calls(llmtest.Call("c2", "search", `{"query":"gopher"}`)),
		llmtest.Text("The gopher is Go's mascot."),
	)
	tools := []llm.Tool{{
		Name:       "search",
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
	}}
	run := func(call llm.ToolCall) string {
		if _, err := llm.CheckToolCall(tools, call); err != nil {
			return err.Error()
		}
		args, err := llm.ParseArgs[struct {
			Query string `json:"query"`
		}](call)
		if err != nil {
			return err.Error()
		}
		return "1 hit for " + args.Query + ": the Go mascot"
	}

	msgs := []llm.Message{{Role: llm.RoleUser, Content: "What is the gopher?"}}
	for turn := 1; turn <= 5; turn++ {
		resp, err := model.Chat(context.Background(), llm.Request{Messages: msgs, Tools: tools})
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		msgs = append(msgs, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			fmt.Println("answer:", resp.Message.Content)
			return
		}
		for _, call := range resp.Message.ToolCalls {
			obs := run(call)
			fmt.Printf("turn %d: %s -> %s\n", turn, call.Name, strings.SplitN(obs, ";", 2)[0])
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: obs})
		}
	}
	// Output:
	// turn 1: search -> error: the arguments of tool "search" are not valid JSON: {"query": "gopher"
	// turn 2: search -> 1 hit for gopher: the Go mascot
	// answer: The gopher is Go's mascot.
}
