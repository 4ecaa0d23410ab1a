package react

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sagasu-dev/sagasu/internal/clip"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/testcorpus"
)

// questionSet is testdata/ask/*.json.
type questionSet struct {
	Questions []struct {
		ID       string   `json:"id"`
		Question string   `json:"question"`
		Pages    []string `json:"pages"`
		Facts    []string `json:"facts"`
	} `json:"questions"`
}

// vitepress is the VitePress documentation, indexed once per test binary.
func vitepress(t *testing.T) *search.Engine { return testcorpus.VitePress(t) }

// TestOfflineAnswersOnTheQuestionSet answers every question of the set
// without a model and scores the answers: the expected facts, a citation
// of an expected page, supported sentences. It logs the numbers the
// closing note reports and fails below the floor they set.
func TestOfflineAnswersOnTheQuestionSet(t *testing.T) {
	e := vitepress(t)
	raw, err := os.ReadFile("../../../testdata/ask/vitepress.json")
	if err != nil {
		t.Fatal(err)
	}
	var set questionSet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	a := New(e, Options{})
	var withFact, withPage, sentences, supported, inStyle int
	var took time.Duration
	for _, q := range set.Questions {
		start := time.Now()
		res, err := a.Answer(context.Background(), q.Question)
		took += time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v", q.ID, err)
		}
		hasFact := true
		for _, f := range q.Facts {
			if !strings.Contains(strings.ToLower(res.Answer), strings.ToLower(f)) {
				hasFact = false
			}
		}
		hasPage := false
		for _, c := range res.Citations {
			for _, p := range q.Pages {
				if c.Source.URI == p {
					hasPage = true
				}
			}
			// Every citation points at a chunk the run retrieved.
			if _, ok := a.passageIn(res, c.ChunkID); !ok {
				t.Errorf("%s: citation [%d] is chunk %d, which no search of the run returned", q.ID, c.N, c.ChunkID)
			}
		}
		for _, c := range res.Claims {
			if c.Checked {
				sentences++
				if c.Supported {
					supported++
				}
			}
		}
		if res.Reflection.Style.OK {
			inStyle++
		}
		if hasFact {
			withFact++
		}
		if hasPage {
			withPage++
		}
		t.Logf("%-16s fact=%-5v page=%-5v %s", q.ID, hasFact, hasPage, strings.ReplaceAll(clip.Runes(res.Answer, 160), "\n", " "))
	}
	n := len(set.Questions)
	t.Logf("offline, %d questions: expected fact %d/%d, expected page cited %d/%d, supported sentences %d/%d, style ok %d/%d, %.0f ms per question",
		n, withFact, n, withPage, n, supported, sentences, inStyle, n, float64(took.Milliseconds())/float64(n))
	if supported != sentences {
		t.Errorf("%d of %d answer sentences are unsupported after reflection; reflection must drop them", sentences-supported, sentences)
	}
	if withPage*10 < n*9 {
		t.Errorf("only %d of %d answers cite an expected page (floor 90%%)", withPage, n)
	}
	if withFact*10 < n*7 {
		t.Errorf("only %d of %d answers contain the expected facts (floor 70%%)", withFact, n)
	}
}
