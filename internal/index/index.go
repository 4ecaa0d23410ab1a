// Package index is the indexing pipeline: it reads sources, skips the ones
// whose content hash is unchanged, chunks the rest and writes them to a store
// in batches, each batch one transaction. Re-indexing the same inputs twice
// leaves exactly the same index.
package index

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/embed"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// Options configure a run.
type Options struct {
	Chunk  chunk.Options
	Source source.Options
	// Prune removes file sources whose files no longer exist.
	Prune bool
	// Force re-indexes sources even when their content is unchanged.
	Force bool
	// BatchBytes is how much content goes into one transaction (default 8 MiB).
	BatchBytes int
	// Embedder, when set, embeds every chunk; the index must be pinned to it
	// (see app.PinEmbedder). Chunks whose context text is unchanged reuse
	// their stored vectors and are never embedded twice.
	Embedder embed.Embedder
	// Progress, when set, is called after each source is read, after each
	// request to the embedder and after each batch is written, one call at a
	// time (from the goroutine that made the change: keep it short).
	Progress func(Progress)
	Logger   *slog.Logger
}

// Report summarises a run.
type Report struct {
	Added     int           `json:"added"`
	Updated   int           `json:"updated"`
	Unchanged int           `json:"unchanged"`
	Removed   int           `json:"removed"`
	Chunks    int           `json:"chunks"`
	Bytes     int64         `json:"bytes"`
	Skipped   []source.Skip `json:"skipped,omitempty"`
	Embedded  int           `json:"embedded"` // chunks sent to the embedder
	Reused    int           `json:"reused"`   // chunks whose stored vector was reused
	// Rekeyed and Merged count what the one-time re-keying of an index
	// written by an older sagasu did (see MetaSourceIdentity): sources
	// renamed to their file's identity, and duplicate sources of one file
	// deleted.
	Rekeyed int `json:"rekeyed,omitempty"`
	Merged  int `json:"merged,omitempty"`
	// PoorFit lists the languages of the index the embedder reads poorly
	// (measured when its vocabulary is at hand, as the local driver's is):
	// search leaves hybrid off for their questions.
	PoorFit []PoorFit `json:"poorFit,omitempty"`
	// EmbedTook is the time spent waiting for the embedder.
	EmbedTook time.Duration `json:"-"`
	Took      time.Duration `json:"-"`
}

// Add accumulates another run's counts into r.
func (r *Report) Add(o Report) {
	r.Added += o.Added
	r.Updated += o.Updated
	r.Unchanged += o.Unchanged
	r.Removed += o.Removed
	r.Chunks += o.Chunks
	r.Bytes += o.Bytes
	r.Embedded += o.Embedded
	r.Reused += o.Reused
	r.Rekeyed += o.Rekeyed
	r.Merged += o.Merged
	if o.PoorFit != nil {
		r.PoorFit = o.PoorFit
	}
	r.EmbedTook += o.EmbedTook
	r.Skipped = append(r.Skipped, o.Skipped...)
	r.Took += o.Took
}

// Indexer writes documents into a store.
type Indexer struct {
	store store.Store
	opt   Options
	log   *slog.Logger
}

// New returns an Indexer writing to s.
func New(s store.Store, opt Options) *Indexer {
	if opt.BatchBytes <= 0 {
		opt.BatchBytes = 8 << 20
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Indexer{store: s, opt: opt, log: log}
}

// Run indexes every input: files, folders, globs, "-" for stdin, and the
// remote forms source.DefaultRegistry knows (github:owner/repo, gist:ID,
// http(s) URLs). All inputs are checked before any is loaded. Batches
// written before an error or a cancellation stay in the index; the run can
// simply be repeated to finish.
//
// A remote source that loaded completely has its vanished documents removed
// and its state (commit SHA and blob SHAs, ETag) saved for the next run; a
// source whose load failed keeps everything it had. With Options.Prune,
// local file sources whose files are gone are removed too.
//
// Local files are named by their identity (source.LocalURI) from
// Options.Source.Root. The first write to an index made by an older
// sagasu, which named files as typed, re-keys its file sources once (see
// MetaSourceIdentity) and reports the counts in Report.Rekeyed and
// Report.Merged.
func (ix *Indexer) Run(ctx context.Context, inputs []string) (Report, error) {
	return ix.RunWith(ctx, source.DefaultRegistry(ix.opt.Source), inputs)
}

// RunWith is Run with the loaders of reg.
func (ix *Indexer) RunWith(ctx context.Context, reg *source.Registry, inputs []string) (Report, error) {
	if len(inputs) == 0 {
		return Report{}, errors.New("nothing to index: give files, folders, globs, URLs, github:owner/repo or gist:ID (or --text)")
	}
	if err := reg.Check(inputs); err != nil {
		return Report{}, err
	}
	start := time.Now()
	var rep Report
	skip := func(s source.Skip) { rep.Skipped = append(rep.Skipped, s) }
	type loaded struct {
		out     source.Outcome
		present map[string]bool
	}
	var done []loaded
	var stored map[string]string
	err := ix.write(ctx, &rep, func(emit func(doc.Document) error, keep func(string), hashes map[string]string) error {
		stored = hashes
		for _, in := range inputs {
			if err := ctx.Err(); err != nil {
				return err
			}
			l, err := reg.For(in)
			if err != nil {
				return err
			}
			present := map[string]bool{}
			run := &source.Run{
				Options: ix.opt.Source,
				Force:   ix.opt.Force,
				Emit: func(d doc.Document) error {
					if accept := ix.opt.Source.Accept; accept != nil {
						if err := accept(d); err != nil {
							skip(source.Skip{Path: d.URI, Reason: source.SkipRefused, Err: err})
							return nil
						}
					}
					present[d.URI] = true
					return emit(d)
				},
				Keep: func(uri string) {
					present[uri] = true
					keep(uri)
				},
				Skip:   skip,
				Stored: func(uri string) bool { _, ok := hashes[uri]; return ok },
				State:  func(key string) string { return ix.state(ctx, key) },
			}
			out, err := l.Load(ctx, in, run)
			if err != nil {
				return err
			}
			done = append(done, loaded{out, present})
		}
		return nil
	})
	if err == nil {
		// Every document of every load is written: now the loads' states
		// can be saved and what vanished at the origin removed.
		var gone []string
		for _, ld := range done {
			if ld.out.StateKey != "" {
				if err = ix.store.SetMeta(ctx, stateKey(ld.out.StateKey), ld.out.State); err != nil {
					err = fmt.Errorf("save the state of %s: %w", ld.out.StateKey, err)
					break
				}
			}
			if ld.out.Scope == nil {
				continue
			}
			for _, uri := range sortedURIs(stored) {
				if ld.out.Scope(uri) && !ld.present[uri] {
					ix.log.Info("removing source gone from its origin", "source", uri)
					gone = append(gone, doc.SourceID(uri))
				}
			}
		}
		if err == nil && len(gone) > 0 {
			var n int
			n, err = ix.store.Delete(ctx, gone)
			rep.Removed += n
		}
	}
	if err == nil && ix.opt.Prune {
		var n int
		n, err = ix.prune(ctx, reg)
		rep.Removed += n
	}
	rep.Took = time.Since(start)
	return rep, err
}

// stateKey is the meta key under which a loader's state is kept.
func stateKey(k string) string { return "source-state:" + k }

// state reads a loader's saved state; a failed read means a full load.
func (ix *Indexer) state(ctx context.Context, key string) string {
	v, err := ix.store.Meta(ctx, stateKey(key))
	if err != nil {
		ix.log.Warn("cannot read saved source state; loading in full", "source", key, "err", err)
		return ""
	}
	return v
}

func sortedURIs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Documents indexes documents that are already loaded (text, generated corpora).
func (ix *Indexer) Documents(ctx context.Context, docs []doc.Document) (Report, error) {
	return ix.Stream(ctx, func(emit func(doc.Document) error) error {
		for _, d := range docs {
			if err := emit(d); err != nil {
				return err
			}
		}
		return nil
	})
}

// Stream indexes the documents produce emits, one at a time, so a corpus
// never has to be held in memory whole.
func (ix *Indexer) Stream(ctx context.Context, produce func(emit func(doc.Document) error) error) (Report, error) {
	start := time.Now()
	var rep Report
	err := ix.write(ctx, &rep, func(emit func(doc.Document) error, _ func(string), _ map[string]string) error {
		return produce(func(d doc.Document) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return emit(d)
		})
	})
	rep.Took = time.Since(start)
	return rep, err
}

// write runs produce, chunking what it emits on this goroutine while two
// writer goroutines write finished batches, so reading and writing overlap.
// produce may also report stored URIs it knows are unchanged without
// reading them (keep), and is given the stored content hashes by URI.
func (ix *Indexer) write(ctx context.Context, rep *Report, produce func(emit func(doc.Document) error, keep func(uri string), hashes map[string]string) error) error {
	if err := ix.migrateIdentity(ctx, rep); err != nil {
		return err
	}
	hashes, err := ix.store.Hashes(ctx)
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := newMeter(ix.opt.Progress, ix.opt.Embedder != nil)
	fit := newFitter(ix.opt.Embedder)
	r := &producer{ix: ix, ctx: ctx, rep: rep, hashes: hashes, seen: map[string]bool{}, m: m}
	r.w = ix.startWriters(ctx, cancel, rep, m, fit)
	perr := produce(r.emit, r.keep, hashes)
	if perr == nil {
		perr = r.flush()
	}
	m.update(func(p *Progress) { p.Reading = false })
	close(r.w.batches)
	for w := range r.w.done {
		r.written(w)
	}
	if st, ok := ix.store.(store.Settler); ok && m.get().Written > 0 {
		st.Settle(context.WithoutCancel(ctx))
	}
	select {
	case err := <-r.w.err:
		return fmt.Errorf("write index: %w", err)
	default:
	}
	if perr == nil {
		poor, err := fit.save(ctx, ix)
		if err != nil {
			return fmt.Errorf("save how the embedder covers the index's languages: %w", err)
		}
		rep.PoorFit = poor
	}
	return perr
}

// batch is one write transaction's sources on their way to a writer.
type batch struct {
	data    []store.SourceData
	updated int
	bytes   int // of content, held against the in-flight budget
}

// written is what a writer reports of a committed batch.
type written struct{ sources, chunks int }

// writers are the goroutines that embed and write batches.
type writers struct {
	batches chan batch
	done    chan written // closed when every writer has stopped
	err     chan error   // the first write error
	budget  *budget
}

// startWriters starts two writers: while one holds the write transaction,
// the other analyses its batch, so the CPU-bound and the I/O-bound halves
// overlap. A failed write cancels the run; the writers then drain the
// batches still sent so that the producer never blocks.
func (ix *Indexer) startWriters(ctx context.Context, cancel context.CancelFunc, rep *Report, m *meter, fit *fitter) *writers {
	// At most three batches' worth of content is with the writers at a
	// time (one in the write transaction, one being analysed, one being
	// compressed or waiting), and a batch bigger than that (one large file)
	// is there alone, so memory is bounded by the batch size, or by the
	// largest file, whatever the number of files. Three rather than two
	// keeps the producer chunking while both writers are busy: 8.2 → 9.4–10
	// MB/s keyword-only on the 100,000-chunk bench, for about 15 MB more.
	w := &writers{batches: make(chan batch), done: make(chan written, 64), err: make(chan error, 1), budget: newBudget(ctx, 3*ix.opt.BatchBytes)}
	var wg sync.WaitGroup
	var repMu sync.Mutex
	var failed sync.Once
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range w.batches {
				if ctx.Err() != nil {
					w.budget.release(b.bytes)
					continue // drain so the producer never blocks
				}
				err := ix.embed(ctx, b.data, rep, &repMu, m, fit)
				if err == nil {
					err = ix.store.Replace(ctx, b.data)
				}
				w.budget.release(b.bytes)
				if err != nil {
					failed.Do(func() { w.err <- err })
					cancel()
					continue
				}
				n := 0
				for _, sd := range b.data {
					n += len(sd.Chunks)
				}
				repMu.Lock()
				rep.Chunks += n
				rep.Updated += b.updated
				rep.Added += len(b.data) - b.updated
				repMu.Unlock()
				w.done <- written{len(b.data), n}
			}
		}()
	}
	go func() { wg.Wait(); close(w.done) }()
	return w
}

// producer is the reading side of a write: it chunks what is emitted into
// batches and reports progress. The writers report written batches back
// through done; the meter takes the embedder's progress from them.
type producer struct {
	ix       *Indexer
	ctx      context.Context
	rep      *Report
	w        *writers
	hashes   map[string]string // stored content hashes by URI
	seen     map[string]bool   // URIs met in this run
	m        *meter
	cur      batch
	curBytes int
}

// written counts a committed batch.
func (r *producer) written(w written) {
	r.m.update(func(p *Progress) {
		p.Written += w.sources
		p.Chunks += w.chunks
	})
}

// drain counts the batches committed since the last call, without waiting.
func (r *producer) drain() {
	for {
		select {
		case w, ok := <-r.w.done:
			if !ok {
				return
			}
			r.written(w)
		default:
			return
		}
	}
}

// flush hands the current batch to the writers, once the budget has room.
func (r *producer) flush() error {
	if len(r.cur.data) == 0 {
		return nil
	}
	r.cur.bytes = r.w.budget.acquire(r.curBytes)
	if err := r.ctx.Err(); err != nil {
		r.w.budget.release(r.cur.bytes)
		return err
	}
	select {
	case r.w.batches <- r.cur:
	case <-r.ctx.Done():
		r.w.budget.release(r.cur.bytes)
		return r.ctx.Err()
	}
	r.cur, r.curBytes = batch{}, 0
	return nil
}

// keep counts a stored source the loader knows is unchanged.
func (r *producer) keep(uri string) {
	if r.seen[uri] {
		return
	}
	r.seen[uri] = true
	r.rep.Unchanged++
	r.m.update(func(p *Progress) {
		p.Read++
		p.Unchanged++
	})
}

// emit chunks a document into the current batch unless its stored
// content is the same, and flushes the batch once it is full.
func (r *producer) emit(d doc.Document) error {
	r.drain()
	if r.seen[d.URI] {
		return nil // the same file named twice in one run
	}
	r.seen[d.URI] = true
	hash := doc.ContentHash(d.Content)
	r.rep.Bytes += int64(len(d.Content))
	old, exists := r.hashes[d.URI]
	if exists && old == hash && !r.ix.opt.Force {
		r.rep.Unchanged++
		r.m.update(func(p *Progress) {
			p.Read++
			p.Bytes += int64(len(d.Content))
			p.Unchanged++
		})
		return nil
	}
	chunks, err := chunk.Split(d, r.ix.opt.Chunk)
	if err != nil {
		return fmt.Errorf("chunk %q: %w", d.URI, err)
	}
	if len(chunks) == 0 && d.Content != "" {
		r.ix.log.Warn("no text to index", "source", d.URI)
	}
	id := doc.SourceID(d.URI)
	for i := range chunks {
		chunks[i].SourceID = id
	}
	r.cur.data = append(r.cur.data, store.SourceData{
		Source: doc.Source{
			ID: id, URI: d.URI, Type: d.Type, Format: d.Format,
			Title: d.Title, ContentHash: hash,
		},
		Content: d.Content,
		Chunks:  chunks,
	})
	if exists {
		r.cur.updated++
	}
	r.curBytes += len(d.Content)
	r.m.update(func(p *Progress) {
		p.Read++
		p.Bytes += int64(len(d.Content))
		p.Made += len(chunks)
	})
	if r.curBytes >= r.ix.opt.BatchBytes {
		return r.flush()
	}
	return nil
}

// budget bounds the bytes of content handed to the writers and not yet
// written. It is a semaphore weighted by bytes that a batch bigger than the
// whole budget takes whole.
type budget struct {
	ctx  context.Context
	mu   sync.Mutex
	cond *sync.Cond
	used int
	max  int
}

// newBudget returns a budget of max bytes; waiting for it ends when ctx is
// done.
func newBudget(ctx context.Context, max int) *budget {
	b := &budget{ctx: ctx, max: max}
	b.cond = sync.NewCond(&b.mu)
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	return b
}

// acquire waits until n bytes (at most the whole budget) are free, takes
// them and returns how many it took, for release. It returns without
// waiting once the context is done; the caller checks it.
func (b *budget) acquire(n int) int {
	n = min(n, b.max)
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used > 0 && b.used+n > b.max && b.ctx.Err() == nil {
		b.cond.Wait()
	}
	b.used += n
	return n
}

// release gives back n bytes taken by acquire.
func (b *budget) release(n int) {
	b.mu.Lock()
	b.used -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}

// embed attaches vectors to a batch: stored ones for unchanged context
// texts, fresh ones from the embedder for the rest.
func (ix *Indexer) embed(ctx context.Context, batch []store.SourceData, rep *Report, mu *sync.Mutex, m *meter, fit *fitter) error {
	if ix.opt.Embedder == nil {
		return nil
	}
	var hashes []string
	texts := map[string]string{}
	for _, sd := range batch {
		for _, c := range sd.Chunks {
			t := doc.ContextText(sd.Source.Title, c)
			h := doc.ContentHash(t)
			if _, ok := texts[h]; !ok {
				hashes = append(hashes, h)
				texts[h] = t
			}
		}
	}
	have, err := ix.store.VectorsByHash(ctx, hashes)
	if err != nil {
		return fmt.Errorf("look up stored vectors: %w", err)
	}
	var missing []string
	for _, h := range hashes {
		if _, ok := have[h]; !ok {
			missing = append(missing, h)
		}
	}
	// Every chunk but one per text to embed is ready now; those follow
	// request by request.
	n := 0
	for _, sd := range batch {
		n += len(sd.Chunks)
	}
	m.update(func(p *Progress) { p.Embedded += n - len(missing) })
	if len(missing) > 0 {
		in := make([]string, len(missing))
		for i, h := range missing {
			in[i] = texts[h]
		}
		fit.add(in)
		start := time.Now()
		ectx := embed.WithProgress(ctx, func(n int) { m.update(func(p *Progress) { p.Embedded += n }) })
		vecs, err := ix.opt.Embedder.EmbedDocuments(ectx, in)
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		took := time.Since(start)
		mu.Lock()
		rep.EmbedTook += took
		mu.Unlock()
		for i, h := range missing {
			have[h] = vecs[i]
		}
	}
	chunks := 0
	for i := range batch {
		sd := &batch[i]
		sd.Vectors = make([][]float32, len(sd.Chunks))
		for j, c := range sd.Chunks {
			sd.Vectors[j] = have[doc.ContentHash(doc.ContextText(sd.Source.Title, c))]
		}
		chunks += len(sd.Chunks)
	}
	mu.Lock()
	rep.Embedded += len(missing)
	rep.Reused += chunks - len(missing) // includes repeats of one text in the batch
	mu.Unlock()
	return nil
}

// Reembed embeds every chunk in the index again with the configured
// embedder, without re-reading sources (after the pin changed). progress,
// when set, is called with the number of chunks done.
func (ix *Indexer) Reembed(ctx context.Context, progress func(done int)) (int, error) {
	if ix.opt.Embedder == nil {
		return 0, errors.New("re-embed: no embedder configured")
	}
	var ids []int64
	var texts []string
	done := 0
	fit := newFitter(ix.opt.Embedder)
	flush := func() error {
		if len(ids) == 0 {
			return nil
		}
		fit.add(texts)
		vecs, err := ix.opt.Embedder.EmbedDocuments(ctx, texts)
		if err != nil {
			return err
		}
		m := make(map[int64][]float32, len(ids))
		for i, id := range ids {
			m[id] = vecs[i]
		}
		if err := ix.store.SetVectors(ctx, m); err != nil {
			return err
		}
		done += len(ids)
		if progress != nil {
			progress(done)
		}
		ids, texts = ids[:0], texts[:0]
		return nil
	}
	err := ix.store.EachChunk(ctx, func(c doc.Chunk, title string) error {
		ids = append(ids, c.ID)
		texts = append(texts, doc.ContextText(title, c))
		if len(ids) == 512 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		_, err = fit.save(ctx, ix)
	}
	return done, err
}

// prune deletes stored sources that a loader of reg owns and says are gone
// at their origin (local files that no longer exist).
func (ix *Indexer) prune(ctx context.Context, reg *source.Registry) (int, error) {
	var pruners []source.Pruner
	for _, l := range reg.Loaders() {
		if p, ok := l.(source.Pruner); ok {
			pruners = append(pruners, p)
		}
	}
	if len(pruners) == 0 {
		return 0, nil
	}
	srcs, err := ix.store.Sources(ctx, store.ListOptions{})
	if err != nil {
		return 0, err
	}
	var gone []string
	for _, s := range srcs {
		for _, p := range pruners {
			if !p.Owns(s) {
				continue
			}
			g, err := p.Gone(ctx, s)
			if err != nil {
				return 0, fmt.Errorf("check whether %s still exists: %w", s.URI, err)
			}
			if g {
				gone = append(gone, s.ID)
				ix.log.Info("pruning source whose file is gone", "source", s.URI)
			}
			break
		}
	}
	if len(gone) == 0 {
		return 0, nil
	}
	return ix.store.Delete(ctx, gone)
}
