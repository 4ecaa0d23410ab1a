package bm25

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// memIndex is a keyword index in memory, segment by segment, the way the
// stores keep it: each term has one postings row per segment.
type memIndex struct {
	mu      sync.Mutex
	version int
	corpus  Corpus
	rows    map[string][][]byte
	loads   int
	// bumpOnLoad makes every Load see a newer version (a writer that never
	// stops).
	bumpOnLoad bool
}

func (m *memIndex) Version(context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strconv.Itoa(m.version), nil
}

func (m *memIndex) Load(_ context.Context, terms []string) (string, Corpus, ListSet, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	if m.bumpOnLoad {
		m.version++
	}
	var ls ListSet
	for _, t := range terms {
		// Rows come in no particular order, as from SQL.
		rows := m.rows[t]
		for i := len(rows) - 1; i >= 0; i-- {
			ls.Add(t, rows[i])
		}
	}
	return strconv.Itoa(m.version), m.corpus, ls, nil
}

// scanIndex is a memIndex that can be read whole, so a Cache warms it.
type scanIndex struct{ *memIndex }

func (m scanIndex) Scan(ctx context.Context, start func(string, Corpus) error, each func(string, []byte) error) error {
	m.mu.Lock()
	version, corpus := strconv.Itoa(m.version), m.corpus
	terms := make([]string, 0, len(m.rows))
	for t := range m.rows {
		terms = append(terms, t)
	}
	rows := m.rows
	m.mu.Unlock()
	if err := start(version, corpus); err != nil {
		return err
	}
	slices.Sort(terms)
	// Each row is passed in one reused buffer, spoiled after the call, as
	// a store reading rows in place would (data is only lent).
	var buf []byte
	for _, t := range terms {
		for _, r := range rows[t] {
			if err := ctx.Err(); err != nil {
				return err
			}
			buf = append(buf[:0], r...)
			if err := each(t, buf); err != nil {
				return err
			}
			for i := range buf {
				buf[i] = 0xff
			}
		}
	}
	return nil
}

func (m *memIndex) lists(terms []string) []List {
	var ls ListSet
	for _, t := range dedup(terms) { // SQL's "term IN (...)" returns each row once
		for _, r := range m.rows[t] {
			ls.Add(t, r)
		}
	}
	return ls.Lists(terms)
}

// randomIndex builds docs chunks over a Zipf-like vocabulary of vocab terms,
// in segments of segSize chunks, with terms in every field.
func randomIndex(rng *rand.Rand, docs, vocab, segSize int) *memIndex {
	m := &memIndex{rows: map[string][][]byte{}}
	z := rand.NewZipf(rng, 1.1, 2, uint64(vocab-1))
	word := func() string { return "t" + strconv.FormatUint(z.Uint64(), 10) }
	for base := 0; base < docs; base += segSize {
		b := NewBuilder()
		for id := base + 1; id <= min(base+segSize, docs); id++ {
			var f [NumFields][]string
			for range rng.IntN(3) {
				f[Title] = append(f[Title], word())
			}
			for range rng.IntN(4) {
				f[Heading] = append(f[Heading], word())
			}
			for range rng.IntN(60) {
				f[Body] = append(f[Body], word())
			}
			b.AddCounts(uint64(id), Count(f))
		}
		for _, t := range b.Terms() {
			data, _ := b.Encoded(t, 0)
			m.rows[t] = append(m.rows[t], slices.Clone(data))
		}
		m.corpus.Docs += b.Docs
		for f := range NumFields {
			m.corpus.Tokens[f] += b.Tokens[f]
		}
	}
	return m
}

func TestCacheMatchesScoreExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	params := []Params{DefaultParams(), {K1: 0.9, Weight: [NumFields]float64{Title: 0, Heading: 2, Body: 1}, B: [NumFields]float64{0.3, 0.9, 0.4}}}
	hits := 0
	for trial := range 6 {
		m := randomIndex(rng, 500+rng.IntN(3000), 40+rng.IntN(400), 50+rng.IntN(700))
		p := params[trial%len(params)]
		c := NewCache(0)
		for q := range 150 {
			var terms []string
			for range 1 + rng.IntN(12) {
				terms = append(terms, "t"+strconv.Itoa(rng.IntN(m.vocab()+5))) // some absent
			}
			if q%7 == 0 && len(terms) > 1 {
				terms = append(terms, terms[0]) // a repeated term counts once
			}
			k := []int{1, 3, 10, 20, 100, 5000}[rng.IntN(6)]
			var allow func(int64) bool
			if q%3 == 0 {
				mod := int64(2 + rng.IntN(5))
				allow = func(id int64) bool { return id%mod == 0 }
			}
			want, err := Score(p, m.corpus, m.lists(terms), k, allow)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Search(context.Background(), m, p, terms, k, allow)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d query %v k %d: cache gave\n%v\nScore gives\n%v", trial, terms, k, got, want)
			}
			hits += len(got)
		}
	}
	if hits < 6*150*3 {
		t.Errorf("only %d hits over 900 queries: the random index matches too little to compare the scorers", hits)
	}
}

// vocab returns how many distinct terms m holds.
func (m *memIndex) vocab() int { return len(m.rows) }

func TestCacheLoadsEachListOncePerVersion(t *testing.T) {
	m := randomIndex(rand.New(rand.NewPCG(3, 4)), 800, 60, 100)
	c := NewCache(0)
	ctx := context.Background()
	q := []string{"t1", "t2", "t3"}
	first, err := c.Search(ctx, m, DefaultParams(), q, 10, nil)
	if err != nil || len(first) != 10 {
		t.Fatalf("Search = %v, %v", first, err)
	}
	if _, err := c.Search(ctx, m, DefaultParams(), q, 10, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Search(ctx, m, DefaultParams(), []string{"t2", "absent"}, 10, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Search(ctx, m, DefaultParams(), []string{"absent", "t1"}, 10, nil); err != nil {
		t.Fatal(err)
	}
	if m.loads != 2 {
		t.Errorf("4 queries loaded %d times; want 2 (the first query, then the new term 'absent' once)", m.loads)
	}
	// A write (a new version) empties the cache: the same query loads
	// again and sees the new postings.
	m.mu.Lock()
	m.rows["absent"] = [][]byte{Encode(nil, []Posting{body(5000, 3, 60)})}
	m.corpus.Docs++
	m.corpus.Tokens[Body] += 60
	m.version++
	m.mu.Unlock()
	got, err := c.Search(ctx, m, DefaultParams(), []string{"absent", "t1"}, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.loads != 3 || len(got) == 0 || got[0].ChunkID != 5000 {
		t.Errorf("after a write: loads %d (want 3), hits %v (want chunk 5000 first, the only one with the once absent term)", m.loads, got)
	}
}

func TestCacheWarmsEveryListInTheBackground(t *testing.T) {
	m := randomIndex(rand.New(rand.NewPCG(21, 22)), 2000, 300, 400)
	c := NewCache(0)
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Search(ctx, scanIndex{m}, DefaultParams(), []string{"t1"}, 10, nil); err != nil {
		t.Fatal(err)
	}
	c.wg.Wait() // the background load
	loads := m.loads
	for i := range 300 {
		terms := []string{"t" + strconv.Itoa(i), "t" + strconv.Itoa(299-i)}
		want, err := Score(DefaultParams(), m.corpus, m.lists(terms), 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Search(ctx, scanIndex{m}, DefaultParams(), terms, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("query %v: cache %v, Score %v", terms, got, want)
		}
	}
	if m.loads != loads {
		t.Errorf("after the background load, 300 queries over the vocabulary loaded %d more times; want 0", m.loads-loads)
	}
	// A small bound stops the background load when full.
	small := NewCache(8 << 10)
	defer small.Close()
	if _, err := small.Search(ctx, scanIndex{m}, DefaultParams(), []string{"t1"}, 10, nil); err != nil {
		t.Fatal(err)
	}
	small.wg.Wait()
	if b := small.Bytes(); b > 8<<10 || b == 0 {
		t.Errorf("bounded cache holds %d bytes after warming; want some, at most %d", b, 8<<10)
	}
}

func TestCachePreloadLoadsEveryList(t *testing.T) {
	m := randomIndex(rand.New(rand.NewPCG(25, 26)), 1500, 200, 300)
	c := NewCache(0)
	defer c.Close()
	ctx := context.Background()
	if err := c.Preload(ctx, scanIndex{m}, DefaultParams()); err != nil {
		t.Fatal(err)
	}
	loads := m.loads
	for i := range 200 {
		if _, err := c.Search(ctx, scanIndex{m}, DefaultParams(), []string{"t" + strconv.Itoa(i)}, 5, nil); err != nil {
			t.Fatal(err)
		}
	}
	if m.loads != loads {
		t.Errorf("queries after Preload loaded %d times; want 0", m.loads-loads)
	}
}

func TestCacheCloseStopsTheBackgroundLoad(t *testing.T) {
	m := randomIndex(rand.New(rand.NewPCG(23, 24)), 3000, 2000, 400)
	c := NewCache(0)
	if _, err := c.Search(context.Background(), scanIndex{m}, DefaultParams(), []string{"t1"}, 10, nil); err != nil {
		t.Fatal(err)
	}
	c.Close() // must return: the load sees its context cancelled
	if _, err := c.Search(context.Background(), scanIndex{m}, DefaultParams(), []string{"t2"}, 10, nil); err != nil {
		t.Errorf("search after Close: %v", err)
	}
}

func TestCacheStaysWithinItsBound(t *testing.T) {
	m := randomIndex(rand.New(rand.NewPCG(5, 6)), 3000, 300, 500)
	const bound = 20 << 10
	c := NewCache(bound)
	ctx := context.Background()
	for i := range 300 {
		terms := []string{"t" + strconv.Itoa(i%300), "t" + strconv.Itoa((i*7)%300)}
		want, err := Score(DefaultParams(), m.corpus, m.lists(terms), 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Search(ctx, m, DefaultParams(), terms, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("query %v: cache %v, Score %v", terms, got, want)
		}
		if b := c.Bytes(); b > bound {
			t.Fatalf("cache holds %d bytes, bound %d", b, bound)
		}
	}
	if c.Bytes() == 0 {
		t.Error("cache holds nothing: the bound evicted every list")
	}
}

func TestCacheScoresChunkIDsAbove32BitsFromStoredPostings(t *testing.T) {
	m := &memIndex{rows: map[string][][]byte{
		"x": {Encode(nil, []Posting{body(7, 1, 10), body(1<<33, 2, 10)})},
	}, corpus: Corpus{Docs: 2, Tokens: [NumFields]int64{Body: 20}}}
	got, err := NewCache(0).Search(context.Background(), m, DefaultParams(), []string{"x"}, 5, nil)
	if err != nil || len(got) != 2 || got[0].ChunkID != 1<<33 {
		t.Fatalf("Search = %v, %v; want chunk 2^33 first, then 7", got, err)
	}
}

func TestCacheGivesUpOnAnIndexThatNeverSettles(t *testing.T) {
	m := randomIndex(rand.New(rand.NewPCG(7, 8)), 100, 20, 50)
	m.bumpOnLoad = true
	_, err := NewCache(0).Search(context.Background(), m, DefaultParams(), []string{"t1"}, 5, nil)
	if !errors.Is(err, errBusy) {
		t.Fatalf("err = %v, want errBusy", err)
	}
	if m.loads != maxLoads {
		t.Errorf("loaded %d times, want %d", m.loads, maxLoads)
	}
}

func TestCacheConcurrentQueries(t *testing.T) {
	m := randomIndex(rand.New(rand.NewPCG(9, 10)), 2000, 200, 300)
	c := NewCache(64 << 10)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 11))
			for range 100 {
				terms := []string{"t" + strconv.Itoa(rng.IntN(200)), "t" + strconv.Itoa(rng.IntN(20))}
				m.mu.Lock()
				lists := m.lists(terms)
				corpus := m.corpus
				m.mu.Unlock()
				want, err := Score(DefaultParams(), corpus, lists, 10, nil)
				if err != nil {
					errs <- err
					return
				}
				got, err := c.Search(ctx, m, DefaultParams(), terms, 10, nil)
				if err != nil {
					errs <- err
					return
				}
				if !slices.Equal(got, want) {
					errs <- fmt.Errorf("query %v: cache %v, Score %v", terms, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// BenchmarkCacheSearch compares a warm cache's MaxScore with Score on the
// same lists.
func BenchmarkCacheSearch(b *testing.B) {
	m := randomIndex(rand.New(rand.NewPCG(12, 13)), 100000, 20000, 8000)
	queries := make([][]string, 64)
	rng := rand.New(rand.NewPCG(14, 15))
	for i := range queries {
		for range 4 + rng.IntN(10) {
			queries[i] = append(queries[i], "t"+strconv.Itoa(rng.IntN(3000)))
		}
	}
	b.Run("Score", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			q := queries[i%len(queries)]
			if _, err := Score(DefaultParams(), m.corpus, m.lists(q), 20, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Cache", func(b *testing.B) {
		c := NewCache(0)
		for i := 0; b.Loop(); i++ {
			q := queries[i%len(queries)]
			if _, err := c.Search(context.Background(), m, DefaultParams(), q, 20, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
