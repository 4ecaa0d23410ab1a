package index

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/sagasu-dev/sagasu/internal/embed"
)

// fitter measures how well the embedder's vocabulary covers the text it
// embeds, language by language, when the embedder shows its vocabulary
// (the local driver). The counts add up over runs in the index's meta
// (embed.FitMetaKey), so that search can leave hybrid off for a language
// the model reads poorly.
type fitter struct {
	v     embed.Vocabulary
	model string
	mu    sync.Mutex
	fit   embed.Fit
}

func newFitter(e embed.Embedder) *fitter {
	if e == nil {
		return nil
	}
	v, ok := embed.VocabularyOf(e)
	if !ok {
		return nil
	}
	inf := e.Info()
	return &fitter{v: v, model: inf.Driver + "/" + inf.Model}
}

// add measures texts about to be embedded.
func (f *fitter) add(texts []string) {
	if f == nil {
		return
	}
	var fit embed.Fit
	for _, t := range texts {
		fit.Add(f.v, t)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fit.Langs == nil {
		f.fit.Langs = map[string]embed.LanguageFit{}
	}
	for lang, lf := range fit.Langs {
		f.fit.Langs[lang] = addFit(f.fit.Langs[lang], lf)
	}
}

func addFit(a, b embed.LanguageFit) embed.LanguageFit {
	return embed.LanguageFit{Texts: a.Texts + b.Texts, Chars: a.Chars + b.Chars, Tokens: a.Tokens + b.Tokens, Unknown: a.Unknown + b.Unknown}
}

// PoorFit is a language of the index the embedder reads poorly.
type PoorFit struct {
	Model  string            `json:"model"` // driver/model
	Lang   string            `json:"lang"`
	Fit    embed.LanguageFit `json:"fit"`
	Advice string            `json:"advice"`
}

// Warning says it for people.
func (p PoorFit) Warning() string {
	return fmt.Sprintf("embedder %s reads %s poorly (%s): hybrid search stays off for %s questions, keyword is their default; %s",
		p.Model, embed.LanguageName(p.Lang), p.Fit.Describe(), embed.LanguageName(p.Lang), p.Advice)
}

// save adds this run's counts to the index's and returns the languages the
// model reads poorly, over everything it has embedded.
func (f *fitter) save(ctx context.Context, ix *Indexer) ([]PoorFit, error) {
	if f == nil || len(f.fit.Langs) == 0 {
		return nil, nil
	}
	total := embed.Fit{Model: f.model, Langs: map[string]embed.LanguageFit{}}
	raw, err := ix.store.Meta(ctx, embed.FitMetaKey)
	if err != nil {
		return nil, err
	}
	var old embed.Fit
	if raw != "" && json.Unmarshal([]byte(raw), &old) == nil && old.Model == f.model {
		for lang, lf := range old.Langs {
			total.Langs[lang] = lf
		}
	}
	for lang, lf := range f.fit.Langs {
		total.Langs[lang] = addFit(total.Langs[lang], lf)
	}
	b, err := json.Marshal(total)
	if err != nil {
		return nil, err
	}
	if err := ix.store.SetMeta(ctx, embed.FitMetaKey, string(b)); err != nil {
		return nil, err
	}
	var out []PoorFit
	for _, lang := range total.Poor() {
		p := PoorFit{Model: f.model, Lang: lang, Fit: total.Langs[lang], Advice: embed.Advice(lang)}
		ix.log.Warn(p.Warning())
		out = append(out, p)
	}
	return out, nil
}
