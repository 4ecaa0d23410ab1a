// Package reacteval measures the question-answering agent on labelled
// questions (testdata/ask/*.json): does the answer state the expected facts,
// does it cite a page that answers, are its sentences supported. It is an
// evaluation harness (sagasu eval ask), kept out of the agent itself.
package reacteval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
)

// QuestionSet is a labelled set of questions over one corpus.
type QuestionSet struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Corpus names the documents the set labels; HeldOut marks a set
	// written before any answer over them was seen, never tuned on.
	Corpus    string     `json:"corpus,omitempty"`
	HeldOut   bool       `json:"heldout,omitempty"`
	Questions []Question `json:"questions"`
}

// Question is one labelled question: the pages that answer it (relative
// to the corpus) and the facts a right answer states (each, ignoring case).
type Question struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Pages    []string `json:"pages,omitempty"`
	Facts    []string `json:"facts,omitempty"`
	// Unanswerable marks a question the documents do not answer: a right
	// answer says so (and has no pages or facts).
	Unanswerable bool `json:"unanswerable,omitempty"`
	// After are the questions asked before this one in the same
	// conversation, oldest first: each is answered, and the question is
	// asked after them (a follow-up such as "and its maximum length?").
	// Only the question itself is scored.
	After []string `json:"after,omitempty"`
}

// Load reads and checks a question set.
func Load(file string) (QuestionSet, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return QuestionSet{}, fmt.Errorf("read question set: %w", err)
	}
	var set QuestionSet
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&set); err != nil {
		return QuestionSet{}, fmt.Errorf("question set %s is not valid JSON of the expected shape: %w", file, err)
	}
	if err := set.Validate(); err != nil {
		return QuestionSet{}, fmt.Errorf("question set %s: %w", file, err)
	}
	return set, nil
}

// Validate checks that every question has a unique ID, text, at least one
// page and at least one fact.
func (s QuestionSet) Validate() error {
	if len(s.Questions) == 0 {
		return errors.New("no questions")
	}
	ids := map[string]bool{}
	for i, q := range s.Questions {
		where := fmt.Sprintf("question %d (%q)", i+1, q.ID)
		switch {
		case q.ID == "" || ids[q.ID]:
			return fmt.Errorf("%s: every question needs a unique id", where)
		case strings.TrimSpace(q.Question) == "":
			return fmt.Errorf("%s: empty question", where)
		case q.Unanswerable && (len(q.Pages) > 0 || len(q.Facts) > 0):
			return fmt.Errorf("%s: an unanswerable question has no pages or facts", where)
		case slices.ContainsFunc(q.After, func(a string) bool { return strings.TrimSpace(a) == "" }):
			return fmt.Errorf("%s: an empty question in after", where)
		case q.Unanswerable:
		case len(q.Pages) == 0:
			return fmt.Errorf("%s: give the pages that answer it", where)
		case len(q.Facts) == 0:
			return fmt.Errorf("%s: give the facts a right answer states", where)
		}
		ids[q.ID] = true
	}
	return nil
}

// Score is one question's outcome.
type Score struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Fact     bool   `json:"fact"` // the answer states every expected fact
	Page     bool   `json:"page"` // it cites an expected page
	// OnTopic: the answer's first citation is an expected page (what it
	// leads with is about the question).
	OnTopic bool `json:"onTopic"`
	// Unanswerable questions: SaidNone is true when the answer says the
	// knowledge base does not answer it.
	Unanswerable bool `json:"unanswerable,omitempty"`
	SaidNone     bool `json:"saidNone,omitempty"`
	// Finished is false when a guard or limit ended the run (Stopped says
	// why); Cited and CitedSeen count the answer's citations and those
	// whose page an observation of the run's trace showed.
	Finished  bool         `json:"finished"`
	Stopped   string       `json:"stopped,omitempty"`
	Cited     int          `json:"cited"`
	CitedSeen int          `json:"citedSeen"`
	Tokens    graph.Tokens `json:"tokens"`
	Ms        int64        `json:"ms"`
	Answer    string       `json:"answer"`
	Err       string       `json:"error,omitempty"`
}

// Report is the outcome over a question set.
type Report struct {
	Set          string `json:"set"`
	Questions    int    `json:"questions"`
	Answerable   int    `json:"answerable"`
	WithFact     int    `json:"withFact"`
	WithPage     int    `json:"withPage"`
	OnTopic      int    `json:"onTopic"`
	Unanswerable int    `json:"unanswerable"`
	SaidNone     int    `json:"saidNone"`
	Sentences    int    `json:"sentences"` // checked answer sentences
	Supported    int    `json:"supported"` // of them, supported by their citations
	InStyle      int    `json:"inStyle"`
	Finished     int    `json:"finished"` // runs no guard or limit ended
	Failed       int    `json:"failed"`   // runs that ended in an error
	Cited        int    `json:"cited"`
	CitedSeen    int    `json:"citedSeen"`
	// Tokens and MsPer are per question.
	TokensIn  float64 `json:"tokensInPerQuestion"`
	TokensOut float64 `json:"tokensOutPerQuestion"`
	MsPer     float64 `json:"msPerQuestion"`
	Scores    []Score `json:"scores"`
}

// Answerer answers a question after the conversation so far;
// *react.Agent is one, offline or with its model.
type Answerer interface {
	Ask(ctx context.Context, question string, history []react.Turn) (*react.Result, error)
}

// converse asks a question after its conversation's earlier questions,
// each answered in turn.
func converse(ctx context.Context, a Answerer, q Question) (*react.Result, error) {
	var history []react.Turn
	for i, earlier := range q.After {
		res, err := a.Ask(ctx, earlier, history)
		if err != nil {
			return nil, fmt.Errorf("earlier question %d of the conversation (%q): %w", i+1, earlier, err)
		}
		history = append(history, react.Turn{Question: earlier, Answer: res.Answer})
	}
	return a.Ask(ctx, q.Question, history)
}

// Evaluate answers every question of set with a and scores the answers. A
// question whose run fails is scored as failed (its error kept) and the
// rest go on; a cancelled context ends the evaluation.
func Evaluate(ctx context.Context, a Answerer, set QuestionSet) (Report, error) {
	if err := set.Validate(); err != nil {
		return Report{}, err
	}
	rep := Report{Set: set.Name, Questions: len(set.Questions), Scores: []Score{}}
	var took time.Duration
	var in, out int64
	for _, q := range set.Questions {
		start := time.Now()
		res, err := converse(ctx, a, q)
		d := time.Since(start)
		took += d
		sc := Score{ID: q.ID, Question: q.Question, Unanswerable: q.Unanswerable, Ms: d.Milliseconds()}
		if q.Unanswerable {
			rep.Unanswerable++
		} else {
			rep.Answerable++
		}
		if err != nil {
			if ctx.Err() != nil {
				return rep, fmt.Errorf("question %s: %w", q.ID, err)
			}
			sc.Err = err.Error()
			rep.Failed++
			rep.Scores = append(rep.Scores, sc)
			continue
		}
		scoreAnswer(&rep, &sc, q, res)
		in += res.Usage.In
		out += res.Usage.Out
		rep.Scores = append(rep.Scores, sc)
	}
	n := float64(len(set.Questions))
	rep.MsPer = float64(took.Milliseconds()) / n
	rep.TokensIn, rep.TokensOut = float64(in)/n, float64(out)/n
	return rep, nil
}

// scoreAnswer scores one answer into sc and adds it to rep.
func scoreAnswer(rep *Report, sc *Score, q Question, res *react.Result) {
	sc.Answer, sc.Tokens, sc.Stopped = res.Answer, res.Usage, res.Stopped
	sc.Finished = res.Stopped == ""
	if sc.Finished {
		rep.Finished++
	}
	for _, c := range res.Claims {
		if c.Checked {
			rep.Sentences++
			if c.Supported {
				rep.Supported++
			}
		}
	}
	if res.Reflection.Style.OK {
		rep.InStyle++
	}
	var seen strings.Builder
	for _, ev := range res.Trace {
		if ev.Type == graph.TypeObservation {
			seen.WriteString(ev.Observation)
			seen.WriteByte('\n')
		}
	}
	for _, c := range res.Citations {
		sc.Cited++
		if strings.Contains(seen.String(), c.Source.URI) {
			sc.CitedSeen++
		}
	}
	rep.Cited += sc.Cited
	rep.CitedSeen += sc.CitedSeen
	if q.Unanswerable {
		sc.SaidNone = res.NotFound
		if sc.SaidNone {
			rep.SaidNone++
		}
		return
	}
	sc.Fact = len(q.Facts) > 0
	low := strings.ToLower(res.Answer)
	for _, f := range q.Facts {
		if !strings.Contains(low, strings.ToLower(f)) {
			sc.Fact = false
		}
	}
	for i, c := range res.Citations {
		if slices.Contains(q.Pages, c.Source.URI) {
			sc.Page = true
			if i == 0 {
				sc.OnTopic = true
			}
		}
	}
	if sc.Fact {
		rep.WithFact++
	}
	if sc.Page {
		rep.WithPage++
	}
	if sc.OnTopic {
		rep.OnTopic++
	}
}
