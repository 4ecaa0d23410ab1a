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
	"os"
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
	Answer   string `json:"answer"`
}

// Report is the outcome over a question set.
type Report struct {
	Set       string  `json:"set"`
	Questions int     `json:"questions"`
	WithFact  int     `json:"withFact"`
	WithPage  int     `json:"withPage"`
	Sentences int     `json:"sentences"` // checked answer sentences
	Supported int     `json:"supported"` // of them, supported by their citations
	InStyle   int     `json:"inStyle"`
	MsPer     float64 `json:"msPerQuestion"`
	Scores    []Score `json:"scores"`
}

// Answerer answers one question; *react.Agent is one.
type Answerer interface {
	Answer(ctx context.Context, question string) (*react.Result, error)
}

// Evaluate answers every question of set with a and scores the answers.
func Evaluate(ctx context.Context, a Answerer, set QuestionSet) (Report, error) {
	if err := set.Validate(); err != nil {
		return Report{}, err
	}
	rep := Report{Set: set.Name, Questions: len(set.Questions), Scores: []Score{}}
	var took time.Duration
	for _, q := range set.Questions {
		start := time.Now()
		res, err := a.Answer(ctx, q.Question)
		took += time.Since(start)
		if err != nil {
			return rep, fmt.Errorf("question %s: %w", q.ID, err)
		}
		sc := Score{ID: q.ID, Question: q.Question, Answer: res.Answer, Fact: true}
		low := strings.ToLower(res.Answer)
		for _, f := range q.Facts {
			if !strings.Contains(low, strings.ToLower(f)) {
				sc.Fact = false
			}
		}
		for _, c := range res.Citations {
			for _, p := range q.Pages {
				if c.Source.URI == p {
					sc.Page = true
				}
			}
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
		if sc.Fact {
			rep.WithFact++
		}
		if sc.Page {
			rep.WithPage++
		}
		rep.Scores = append(rep.Scores, sc)
	}
	rep.MsPer = float64(took.Milliseconds()) / float64(len(set.Questions))
	return rep, nil
}
