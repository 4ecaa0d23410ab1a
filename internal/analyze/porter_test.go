package analyze

import "testing"

// The examples M.F. Porter gives for each step in "An algorithm for suffix
// stripping" (1980). Each is the result of that one step on its own.
func TestPorterSteps(t *testing.T) {
	steps := []struct {
		name  string
		step  func([]byte) []byte
		pairs [][2]string
	}{
		{"1a", step1a, [][2]string{
			{"caresses", "caress"}, {"ponies", "poni"}, {"ties", "ti"},
			{"caress", "caress"}, {"cats", "cat"},
		}},
		{"1b", step1b, [][2]string{
			{"feed", "feed"}, {"agreed", "agree"}, {"plastered", "plaster"},
			{"bled", "bled"}, {"motoring", "motor"}, {"sing", "sing"},
			// the tidy-up after -ed and -ing
			{"conflated", "conflate"}, {"troubled", "trouble"}, {"sized", "size"},
			{"hopping", "hop"}, {"tanned", "tan"}, {"falling", "fall"},
			{"hissing", "hiss"}, {"fizzed", "fizz"}, {"failing", "fail"},
			{"filing", "file"},
		}},
		{"1c", step1c, [][2]string{
			{"happy", "happi"}, {"sky", "sky"},
		}},
		{"2", step2, [][2]string{
			{"relational", "relate"}, {"conditional", "condition"},
			{"rational", "rational"}, {"valenci", "valence"},
			{"hesitanci", "hesitance"}, {"digitizer", "digitize"},
			{"conformabli", "conformable"}, {"radicalli", "radical"},
			{"differentli", "different"}, {"vileli", "vile"},
			{"analogousli", "analogous"}, {"vietnamization", "vietnamize"},
			{"predication", "predicate"}, {"operator", "operate"},
			{"feudalism", "feudal"}, {"decisiveness", "decisive"},
			{"hopefulness", "hopeful"}, {"callousness", "callous"},
			{"formaliti", "formal"}, {"sensitiviti", "sensitive"},
			{"sensibiliti", "sensible"},
		}},
		{"3", step3, [][2]string{
			{"triplicate", "triplic"}, {"formative", "form"},
			{"formalize", "formal"}, {"electriciti", "electric"},
			{"electrical", "electric"}, {"hopeful", "hope"}, {"goodness", "good"},
		}},
		{"4", step4, [][2]string{
			{"revival", "reviv"}, {"allowance", "allow"}, {"inference", "infer"},
			{"airliner", "airlin"}, {"gyroscopic", "gyroscop"},
			{"adjustable", "adjust"}, {"defensible", "defens"},
			{"irritant", "irrit"}, {"replacement", "replac"},
			{"adjustment", "adjust"}, {"dependent", "depend"},
			{"adoption", "adopt"}, {"homologou", "homolog"},
			{"communism", "commun"}, {"activate", "activ"},
			{"angulariti", "angular"}, {"homologous", "homolog"},
			{"effective", "effect"}, {"bowdlerize", "bowdler"},
		}},
		{"5a", step5a, [][2]string{
			{"probate", "probat"}, {"rate", "rate"}, {"cease", "ceas"},
		}},
		{"5b", step5b, [][2]string{
			{"controll", "control"}, {"roll", "roll"},
		}},
	}
	for _, s := range steps {
		for _, p := range s.pairs {
			if got := string(s.step([]byte(p[0]))); got != p[1] {
				t.Errorf("step %s(%q) = %q, want %q", s.name, p[0], got, p[1])
			}
		}
	}
}

// Whole-algorithm stems: the words above run through every step, plus the
// paper's running examples and a few common words.
func TestPorterStem(t *testing.T) {
	pairs := [][2]string{
		// 1a
		{"caresses", "caress"}, {"ponies", "poni"}, {"ties", "ti"}, {"caress", "caress"}, {"cats", "cat"},
		// 1b
		{"feed", "feed"}, {"agreed", "agre"}, {"plastered", "plaster"}, {"bled", "bled"},
		{"motoring", "motor"}, {"sing", "sing"}, {"conflated", "conflat"}, {"troubled", "troubl"},
		{"sized", "size"}, {"hopping", "hop"}, {"tanned", "tan"}, {"falling", "fall"},
		{"hissing", "hiss"}, {"fizzed", "fizz"}, {"failing", "fail"}, {"filing", "file"},
		// 1c
		{"happy", "happi"}, {"sky", "sky"},
		// 2
		{"relational", "relat"}, {"conditional", "condit"}, {"rational", "ration"},
		{"valenci", "valenc"}, {"hesitanci", "hesit"}, {"digitizer", "digit"},
		{"conformabli", "conform"}, {"radicalli", "radic"}, {"differentli", "differ"},
		{"vileli", "vile"}, {"analogousli", "analog"}, {"vietnamization", "vietnam"},
		{"predication", "predic"}, {"operator", "oper"}, {"feudalism", "feudal"},
		{"decisiveness", "decis"}, {"hopefulness", "hope"}, {"callousness", "callous"},
		{"formaliti", "formal"}, {"sensitiviti", "sensit"}, {"sensibiliti", "sensibl"},
		// 3
		{"triplicate", "triplic"}, {"formative", "form"}, {"formalize", "formal"},
		{"electriciti", "electr"}, {"electrical", "electr"}, {"hopeful", "hope"}, {"goodness", "good"},
		// 4
		{"revival", "reviv"}, {"allowance", "allow"}, {"inference", "infer"}, {"airliner", "airlin"},
		{"gyroscopic", "gyroscop"}, {"adjustable", "adjust"}, {"defensible", "defens"},
		{"irritant", "irrit"}, {"replacement", "replac"}, {"adjustment", "adjust"},
		{"dependent", "depend"}, {"adoption", "adopt"}, {"homologou", "homolog"},
		{"communism", "commun"}, {"activate", "activ"}, {"angulariti", "angular"},
		{"homologous", "homolog"}, {"effective", "effect"}, {"bowdlerize", "bowdler"},
		// 5a, 5b
		{"probate", "probat"}, {"rate", "rate"}, {"cease", "ceas"}, {"controll", "control"}, {"roll", "roll"},
		// the paper's running examples
		{"generalizations", "gener"}, {"generalization", "gener"}, {"oscillators", "oscil"},
		{"connect", "connect"}, {"connected", "connect"}, {"connecting", "connect"},
		{"connection", "connect"}, {"connections", "connect"}, {"connective", "connect"},
		// y as consonant and vowel
		{"relativity", "rel"}, {"syzygy", "syzygi"}, {"toy", "toi"}, {"yes", "ye"},
		// common words
		{"running", "run"}, {"runs", "run"}, {"searching", "search"}, {"searcher", "searcher"},
		{"proteins", "protein"}, {"increased", "increas"}, {"universities", "univers"},
		// one or two letters are left alone
		{"us", "us"}, {"as", "as"}, {"a", "a"},
	}
	for _, p := range pairs {
		if got := string(porterStem([]byte(p[0]))); got != p[1] {
			t.Errorf("porterStem(%q) = %q, want %q", p[0], got, p[1])
		}
	}
}

func TestMeasure(t *testing.T) {
	// The paper's examples of m = 0, 1 and 2.
	for m, words := range [][]string{
		{"tr", "ee", "tree", "y", "by"},
		{"trouble", "oats", "trees", "ivy"},
		{"troubles", "private", "oaten", "orrery"},
	} {
		for _, w := range words {
			if got := measure([]byte(w)); got != m {
				t.Errorf("measure(%q) = %d, want %d", w, got, m)
			}
		}
	}
}
