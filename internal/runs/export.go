package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// Export formats.
const (
	FormatJSON     = "json"
	FormatMarkdown = "md"
)

// ExportInput names a run to export.
type ExportInput struct {
	ID     string `json:"id" jsonschema:"the run or thread to export"`
	Kind   string `json:"kind,omitempty" jsonschema:"agent or chat: refuse an ID of the other kind"`
	Format string `json:"format,omitempty" jsonschema:"json (the run's header, its recorded settings and every event; the default) or md (a readable transcript)"`
}

// ExportOutput is an exported run.
type ExportOutput struct {
	ID       string `json:"id"`
	Format   string `json:"format"`
	Filename string `json:"filename" jsonschema:"a file name for the export"`
	Content  string `json:"content"`
}

// Document is a run exported as JSON: its header, the settings it
// recorded and its whole log.
type Document struct {
	Run      Header          `json:"run"`
	Settings json.RawMessage `json:"settings,omitempty"`
	Events   []Event         `json:"events"`
}

// Event is one event of an exported run.
type Event struct {
	Seq  int64           `json:"seq"`
	Time time.Time       `json:"time"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data,omitempty"`
}

// Export renders a run as JSON or Markdown. Runs record no secret (model
// addresses are redacted when recorded, MCP servers are kept by name);
// every address in the export passes through store.Redact again, so one
// recorded by an older version cannot leak a key.
func (o *Ops) Export(ctx context.Context, in ExportInput) (ExportOutput, error) {
	if err := checkKind(in.Kind); err != nil {
		return ExportOutput{}, err
	}
	if in.Format == "" {
		in.Format = FormatJSON
	}
	if in.Format != FormatJSON && in.Format != FormatMarkdown {
		return ExportOutput{}, fmt.Errorf("format %q: want %q or %q", in.Format, FormatJSON, FormatMarkdown)
	}
	if in.ID == "" {
		return ExportOutput{}, fmt.Errorf("no run to export: name one by ID")
	}
	r, err := o.get(ctx, in.ID, in.Kind)
	if err != nil {
		return ExportOutput{}, err
	}
	evs, err := o.opt.Store.Events(ctx, r.ID, 0)
	if err != nil {
		return ExportOutput{}, fmt.Errorf("export %s %s: %w", noun(r.Kind), r.ID, err)
	}
	out := ExportOutput{ID: r.ID, Format: in.Format, Filename: r.ID + "." + in.Format}
	if in.Format == FormatJSON {
		doc := Document{Run: headerOf(r), Settings: redactJSON(r.Meta), Events: make([]Event, len(evs))}
		for i, e := range evs {
			doc.Events[i] = Event{Seq: e.Seq, Time: e.Time, Type: e.Type, Data: redactJSON(e.Data)}
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return ExportOutput{}, fmt.Errorf("export %s: %w", r.ID, err)
		}
		out.Content = string(b) + "\n"
		return out, nil
	}
	var b strings.Builder
	switch r.Kind {
	case store.RunChat:
		err = o.chatMarkdown(ctx, &b, r)
	case store.RunAgent:
		err = o.agentMarkdown(ctx, &b, r, evs)
	default:
		timelineMarkdown(&b, r, evs)
	}
	if err != nil {
		return ExportOutput{}, err
	}
	out.Content = redactText(b.String())
	return out, nil
}

// redactJSON passes every string of a JSON value that holds an address
// through store.Redact; a value that is not JSON is kept as it is.
func redactJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || !bytes.Contains(b, []byte("://")) {
		return b
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return b
	}
	return out
}

func redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return redactText(x)
	case []any:
		for i := range x {
			x[i] = redactValue(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = redactValue(x[k])
		}
	}
	return v
}

// redactText redacts every address in s (a word that holds "://").
func redactText(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	words := strings.Fields(s)
	for _, w := range words {
		if strings.Contains(w, "://") {
			if r := store.Redact(w); r != w {
				s = strings.ReplaceAll(s, w, r)
			}
		}
	}
	return s
}

func header(b *strings.Builder, r store.Run, what string) {
	title := r.Title
	if title == "" {
		title = r.ID
	}
	fmt.Fprintf(b, "# %s\n\n", oneLine(title))
	fmt.Fprintf(b, "- %s: `%s`\n- status: %s\n- created: %s\n- updated: %s\n", what, r.ID, r.Status,
		r.Created.UTC().Format(time.RFC3339), r.Updated.UTC().Format(time.RFC3339))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (o *Ops) chatMarkdown(ctx context.Context, b *strings.Builder, r store.Run) error {
	turns, err := react.NewThreads(o.opt.Store).Transcript(ctx, r.ID)
	if err != nil {
		return err
	}
	header(b, r, "chat thread")
	fmt.Fprintf(b, "- turns: %d\n", len(turns))
	for i, t := range turns {
		fmt.Fprintf(b, "\n## %d. %s\n\n", i+1, oneLine(t.Question))
		b.WriteString(strings.TrimSpace(t.Answer) + "\n")
		if t.Stopped != "" {
			fmt.Fprintf(b, "\n_stopped early: %s_\n", t.Stopped)
		}
		if len(t.Citations) > 0 {
			b.WriteString("\nSources:\n\n")
			for _, c := range t.Citations {
				fmt.Fprintf(b, "%d. %s", c.N, c.Source.URI)
				if c.Heading != "" {
					fmt.Fprintf(b, " — %s", c.Heading)
				}
				if c.Lines[0] > 0 {
					fmt.Fprintf(b, " (lines %d–%d)", c.Lines[0], c.Lines[1])
				}
				b.WriteString("\n")
			}
		}
	}
	return nil
}

func (o *Ops) agentMarkdown(ctx context.Context, b *strings.Builder, r store.Run, evs []store.Event) error {
	if o.opt.AgentReport == nil {
		timelineMarkdown(b, r, evs)
		return nil
	}
	rep, err := o.opt.AgentReport(ctx, r.ID)
	if err != nil {
		return err
	}
	header(b, r, "agent run")
	if s := rep.Settings; s != nil {
		settingsMarkdown(b, s)
	}
	if len(rep.Plan) > 0 {
		fmt.Fprintf(b, "\n## Plan (%d replans)\n\n", rep.Replans)
		for i, st := range rep.Plan {
			fmt.Fprintf(b, "%d. [%s] %s\n", i+1, st.Status, oneLine(st.Text))
			if st.Result != "" {
				fmt.Fprintf(b, "   - %s\n", oneLine(st.Result))
			}
		}
	}
	if rep.Answer != "" {
		fmt.Fprintf(b, "\n## Answer\n\n%s\n", strings.TrimSpace(rep.Answer))
	}
	if len(rep.Results) > 0 {
		b.WriteString("\n## Sources\n\n")
		for _, c := range rep.Results {
			fmt.Fprintf(b, "- %s", c.Source.URI)
			if c.Heading != "" {
				fmt.Fprintf(b, " — %s", c.Heading)
			}
			b.WriteString("\n")
		}
	}
	if oc := rep.Outcome; oc != nil {
		fmt.Fprintf(b, "\n## Outcome\n\n%s", oc.Status)
		if oc.Reason != "" {
			fmt.Fprintf(b, ": %s", oneLine(oc.Reason))
		}
		fmt.Fprintf(b, " (%d steps, %d tool calls)\n", oc.Steps, oc.ToolCalls)
	}
	steps := actions(evs)
	if len(steps) > 0 {
		b.WriteString("\n## Tool calls\n\n")
		for _, s := range steps {
			b.WriteString("- " + s + "\n")
		}
	}
	return nil
}

func settingsMarkdown(b *strings.Builder, s *planact.RunSettings) {
	if len(s.MCP) > 0 {
		fmt.Fprintf(b, "- MCP servers: %s\n", strings.Join(s.MCP, ", "))
	}
	if s.Offline {
		b.WriteString("- offline (no language model)\n")
	}
	for _, m := range []struct {
		role string
		set  *planact.ModelSettings
	}{{"planner", s.Planner}, {"executor", s.Executor}} {
		if m.set != nil {
			fmt.Fprintf(b, "- %s: %s %s (temperature %g, max tokens %d)\n", m.role, m.set.Driver, m.set.Model, m.set.Temperature, m.set.MaxTokens)
		}
	}
	l := s.Limits
	fmt.Fprintf(b, "- limits: %d tool calls, %s, %d steps\n", l.MaxToolCalls, l.MaxDuration, l.MaxSteps)
}

// actions lists an agent run's tool calls from its log, clipped.
func actions(evs []store.Event) []string {
	var out []string
	for _, e := range evs {
		var ev graph.Event
		if json.Unmarshal(e.Data, &ev) != nil || ev.Type != graph.TypeAction || ev.Tool == "" {
			continue
		}
		line := fmt.Sprintf("step %d: `%s`", ev.Step, ev.Tool)
		if len(ev.Arguments) > 0 {
			line += " " + clip.Runes(oneLine(string(ev.Arguments)), 200)
		}
		out = append(out, line)
	}
	return out
}

// timelineMarkdown is the export of a run no face folds: its events in
// order.
func timelineMarkdown(b *strings.Builder, r store.Run, evs []store.Event) {
	header(b, r, noun(r.Kind))
	b.WriteString("\n## Events\n\n")
	for _, e := range evs {
		fmt.Fprintf(b, "%d. %s %s", e.Seq, e.Time.UTC().Format(time.RFC3339), e.Type)
		if len(e.Data) > 0 {
			fmt.Fprintf(b, ": %s", clip.Runes(oneLine(string(e.Data)), 300))
		}
		b.WriteString("\n")
	}
}
