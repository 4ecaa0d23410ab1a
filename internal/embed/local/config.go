package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// settings is what a sentence-transformers folder says about its model:
// the transformer's shape (config.json), the longest input
// (sentence_bert_config.json, else tokenizer_config.json, else the
// position table) and the pooling (1_Pooling/config.json, else mean).
type settings struct {
	ModelType    string  `json:"model_type"`
	Hidden       int     `json:"hidden_size"`
	Layers       int     `json:"num_hidden_layers"`
	Heads        int     `json:"num_attention_heads"`
	Intermediate int     `json:"intermediate_size"`
	Act          string  `json:"hidden_act"`
	MaxPositions int     `json:"max_position_embeddings"`
	TypeVocab    int     `json:"type_vocab_size"`
	Vocab        int     `json:"vocab_size"`
	Eps          float64 `json:"layer_norm_eps"`
	PadTokenID   int     `json:"pad_token_id"`
	PositionType string  `json:"position_embedding_type"`

	maxLen    int    // tokens per text, special tokens included
	posOffset int    // first position id (RoBERTa family: pad id + 1)
	pooling   string // "mean", "cls", "max" or "mean_sqrt_len"
	lowercase bool   // sentence_bert_config's do_lower_case
}

// bertTypes are the config.json model types whose weights this package runs.
var bertTypes = map[string]bool{"bert": true, "roberta": true, "xlm-roberta": true, "camembert": true}

func readSettings(dir string) (*settings, error) {
	s := &settings{Eps: 1e-12, TypeVocab: 2, Act: "gelu", PositionType: "absolute"}
	if err := readJSON(filepath.Join(dir, "config.json"), s, true); err != nil {
		return nil, err
	}
	switch {
	case !bertTypes[s.ModelType]:
		return nil, fmt.Errorf("config.json: model_type %q is not supported: BERT-family encoders are (bert, roberta, xlm-roberta)", s.ModelType)
	case s.Hidden <= 0 || s.Layers <= 0 || s.Heads <= 0 || s.Intermediate <= 0 || s.MaxPositions <= 0:
		return nil, errors.New("config.json lacks hidden_size, num_hidden_layers, num_attention_heads, intermediate_size or max_position_embeddings")
	case s.Hidden%s.Heads != 0:
		return nil, fmt.Errorf("config.json: hidden_size %d is not a multiple of num_attention_heads %d", s.Hidden, s.Heads)
	case s.Act != "gelu" && s.Act != "gelu_new" && s.Act != "gelu_pytorch_tanh" && s.Act != "relu":
		return nil, fmt.Errorf("config.json: hidden_act %q is not supported (gelu, gelu_new, relu are)", s.Act)
	case s.PositionType != "absolute":
		return nil, fmt.Errorf("config.json: position_embedding_type %q is not supported (absolute is)", s.PositionType)
	}
	if s.ModelType != "bert" {
		// RoBERTa counts positions from the padding id + 1.
		s.posOffset = s.PadTokenID + 1
	}
	limit := s.MaxPositions - s.posOffset

	var st struct {
		MaxSeqLength int  `json:"max_seq_length"`
		DoLowerCase  bool `json:"do_lower_case"`
	}
	if err := readJSON(filepath.Join(dir, "sentence_bert_config.json"), &st, false); err != nil {
		return nil, err
	}
	s.lowercase = st.DoLowerCase
	s.maxLen = st.MaxSeqLength
	if s.maxLen <= 0 {
		var tc struct {
			ModelMaxLength float64 `json:"model_max_length"`
		}
		if err := readJSON(filepath.Join(dir, "tokenizer_config.json"), &tc, false); err != nil {
			return nil, err
		}
		if tc.ModelMaxLength > 0 && tc.ModelMaxLength < 1e9 {
			s.maxLen = int(tc.ModelMaxLength)
		}
	}
	if s.maxLen <= 0 || s.maxLen > limit {
		s.maxLen = limit
	}

	var pool map[string]any
	if err := readJSON(filepath.Join(dir, "1_Pooling", "config.json"), &pool, false); err != nil {
		return nil, err
	}
	s.pooling = "mean" // sentence-transformers' default for a bare transformer
	if pool != nil {
		var on []string
		for _, mode := range []string{"cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken"} {
			if v, _ := pool["pooling_mode_"+mode].(bool); v {
				on = append(on, mode)
			}
		}
		if len(on) != 1 {
			return nil, fmt.Errorf("1_Pooling/config.json turns on %v: exactly one of cls_token, mean_tokens, max_tokens, mean_sqrt_len_tokens is supported", on)
		}
		switch on[0] {
		case "cls_token":
			s.pooling = "cls"
		case "mean_tokens":
			s.pooling = "mean"
		case "max_tokens":
			s.pooling = "max"
		case "mean_sqrt_len_tokens":
			s.pooling = "mean_sqrt_len"
		default:
			return nil, fmt.Errorf("1_Pooling/config.json: pooling %s is not supported", on[0])
		}
	}
	return s, nil
}

// readJSON decodes path into v. A missing file is an error only when
// required.
// It reads a regular file of at most 64 MiB.
func readJSON(path string, v any, required bool) error {
	data, err := userfile.ReadRegular(path, 64<<20)
	if errors.Is(err, os.ErrNotExist) && !required {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}

// lowerText is sentence-transformers' do_lower_case: Python's str.lower.
func lowerText(s string) string { return strings.ToLower(s) }
