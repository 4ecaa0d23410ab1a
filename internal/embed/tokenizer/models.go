package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// model turns one pre-tokenized piece into token ids.
type model interface {
	// tokenize appends the ids of word to ids.
	tokenize(word string, ids []int32) []int32
	// id looks a token up; ok is false when the vocabulary lacks it.
	id(token string) (int32, bool)
	size() int
	maxID() int32
	unknown() int32
}

func parseModel(raw json.RawMessage) (model, error) {
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "WordPiece":
		return parseWordPiece(raw)
	case "Unigram":
		return parseUnigram(raw)
	case "":
		// Old files leave the type out of a WordPiece model.
		var probe struct {
			Vocab map[string]int32 `json:"vocab"`
		}
		if json.Unmarshal(raw, &probe) == nil && probe.Vocab != nil {
			return parseWordPiece(raw)
		}
	}
	return nil, fmt.Errorf("tokenizer model %q is not supported: WordPiece (BERT, MiniLM, BGE, E5) and Unigram (XLM-R, multilingual E5) are", c.Type)
}

// wordPiece is BERT's model: greedy longest-match-first pieces, "##"
// marking a piece that continues a word; a word that cannot be cut into
// known pieces, or is too long, is one unknown token.
type wordPiece struct {
	vocab    map[string]int32
	unk      int32
	prefix   string
	maxChars int
}

func parseWordPiece(raw json.RawMessage) (*wordPiece, error) {
	var m struct {
		UnkToken                string           `json:"unk_token"`
		ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int              `json:"max_input_chars_per_word"`
		Vocab                   map[string]int32 `json:"vocab"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if len(m.Vocab) == 0 {
		return nil, errors.New("the WordPiece vocabulary is empty")
	}
	w := &wordPiece{vocab: m.Vocab, prefix: "##", maxChars: 100}
	if m.ContinuingSubwordPrefix != nil {
		w.prefix = *m.ContinuingSubwordPrefix
	}
	if m.MaxInputCharsPerWord > 0 {
		w.maxChars = m.MaxInputCharsPerWord
	}
	if m.UnkToken == "" {
		m.UnkToken = "[UNK]"
	}
	unk, ok := m.Vocab[m.UnkToken]
	if !ok {
		return nil, fmt.Errorf("the unknown token %q is not in the WordPiece vocabulary", m.UnkToken)
	}
	w.unk = unk
	return w, nil
}

func (w *wordPiece) id(token string) (int32, bool) { id, ok := w.vocab[token]; return id, ok }
func (w *wordPiece) size() int                     { return len(w.vocab) }
func (w *wordPiece) unknown() int32                { return w.unk }

func (w *wordPiece) maxID() int32 {
	m := int32(-1)
	for _, id := range w.vocab {
		m = max(m, id)
	}
	return m
}

func (w *wordPiece) tokenize(word string, ids []int32) []int32 {
	if utf8.RuneCountInString(word) > w.maxChars {
		return append(ids, w.unk)
	}
	n := len(ids)
	var key []byte
	for start := 0; start < len(word); {
		end := len(word)
		found := int32(-1)
		for end > start {
			key = key[:0]
			if start > 0 {
				key = append(key, w.prefix...)
			}
			key = append(key, word[start:end]...)
			if id, ok := w.vocab[string(key)]; ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			return append(ids[:n], w.unk)
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}

// unigram is SentencePiece's unigram model: the segmentation of highest
// total log-probability (Viterbi), a character no piece covers scoring as
// the unknown token at the lowest piece score minus 10, and runs of
// unknown characters fused into one unknown token.
type unigram struct {
	vocab    map[string]int32
	scores   []float64
	unk      int32
	unkScore float64
	maxLen   int // longest piece in bytes
	fuseUnk  bool
}

func parseUnigram(raw json.RawMessage) (*unigram, error) {
	var m struct {
		UnkID        *int32               `json:"unk_id"`
		Vocab        [][2]json.RawMessage `json:"vocab"`
		ByteFallback bool                 `json:"byte_fallback"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m.ByteFallback {
		return nil, errors.New("a Unigram model with byte fallback is not supported")
	}
	if len(m.Vocab) == 0 {
		return nil, errors.New("the Unigram vocabulary is empty")
	}
	if m.UnkID == nil || *m.UnkID < 0 || int(*m.UnkID) >= len(m.Vocab) {
		return nil, errors.New("the Unigram model has no valid unk_id")
	}
	u := &unigram{vocab: make(map[string]int32, len(m.Vocab)), scores: make([]float64, len(m.Vocab)), unk: *m.UnkID, fuseUnk: true}
	minScore := math.Inf(1)
	for i, e := range m.Vocab {
		var piece string
		var score float64
		if err := json.Unmarshal(e[0], &piece); err != nil {
			return nil, fmt.Errorf("the Unigram vocabulary's entry %d: %w", i, err)
		}
		if err := json.Unmarshal(e[1], &score); err != nil {
			return nil, fmt.Errorf("the Unigram vocabulary's entry %d: %w", i, err)
		}
		u.vocab[piece] = int32(i) // a repeated piece is known by its last id, as in the reference
		u.scores[i] = score
		minScore = min(minScore, score)
		u.maxLen = max(u.maxLen, len(piece))
	}
	u.unkScore = minScore - 10
	return u, nil
}

func (u *unigram) id(token string) (int32, bool) { id, ok := u.vocab[token]; return id, ok }
func (u *unigram) size() int                     { return len(u.scores) }
func (u *unigram) unknown() int32                { return u.unk }
func (u *unigram) maxID() int32                  { return int32(len(u.scores) - 1) }

func (u *unigram) tokenize(s string, ids []int32) []int32 {
	if s == "" {
		return ids
	}
	type node struct {
		id    int32
		score float64
		start int // -1: not reached
	}
	best := make([]node, len(s)+1)
	for i := 1; i < len(best); i++ {
		best[i].start = -1
	}
	for start := 0; start < len(s); {
		_, width := utf8.DecodeRuneInString(s[start:])
		here := best[start].score
		single := false
		// Every piece that starts here, shortest first.
		for end := start + 1; end <= len(s) && end-start <= u.maxLen; end++ {
			if end < len(s) && !utf8.RuneStart(s[end]) {
				continue
			}
			id, ok := u.vocab[s[start:end]]
			if !ok {
				continue
			}
			cand := here + u.scores[id]
			if t := &best[end]; t.start < 0 || cand > t.score {
				*t = node{id: id, score: cand, start: start}
			}
			if end-start == width {
				single = true
			}
		}
		if !single {
			cand := here + u.unkScore
			if t := &best[start+width]; t.start < 0 || cand > t.score {
				*t = node{id: u.unk, score: cand, start: start}
			}
		}
		start += width
	}
	// Walk back from the end, then reverse.
	n := len(ids)
	for end := len(s); end > 0; {
		nd := best[end]
		if u.fuseUnk && nd.id == u.unk {
			// A run of unknown pieces is one unknown token.
			for nd.start > 0 && best[nd.start].id == u.unk {
				nd = best[nd.start]
			}
		}
		ids = append(ids, nd.id)
		end = nd.start
	}
	for i, j := n, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids
}
