package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/budget"
	"github.com/sagasu-dev/sagasu/internal/chunk"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/source"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// IndexInput is sagasu_index's input: text, a file, or files and globs.
type IndexInput struct {
	Text         string   `json:"text,omitempty" jsonschema:"text to index as one source"`
	Title        string   `json:"title,omitempty" jsonschema:"title of the text (default: its first heading or line)"`
	File         string   `json:"file,omitempty" jsonschema:"a file or folder to index, inside the server's allowed roots"`
	Files        []string `json:"files,omitempty" jsonschema:"files, folders or globs such as docs/**/*.md, inside the allowed roots"`
	ChunkSize    int      `json:"chunkSize,omitempty" jsonschema:"most tokens per chunk, 16 to 8192 (default: the server's, usually 512)"`
	ChunkOverlap int      `json:"chunkOverlap,omitempty" jsonschema:"tokens repeated between pieces of a long section, below half the chunk size"`
	Exclude      []string `json:"exclude,omitempty" jsonschema:"glob patterns of files and folders to skip"`
	Force        bool     `json:"force,omitempty" jsonschema:"re-index sources even when unchanged"`
}

// IndexOutput reports an indexing run.
type IndexOutput struct {
	Added          int           `json:"added"`
	Updated        int           `json:"updated"`
	Unchanged      int           `json:"unchanged"`
	Chunks         int           `json:"chunks" jsonschema:"chunks written"`
	Bytes          int64         `json:"bytes" jsonschema:"bytes read"`
	Embedded       int           `json:"embedded" jsonschema:"chunks sent to the embedder"`
	Skipped        []SkippedFile `json:"skipped"`
	OmittedSkipped int           `json:"omittedSkipped" jsonschema:"skipped files left out of the list to fit the budget"`
	TookMs         float64       `json:"tookMs"`
	Index          IndexStats    `json:"index" jsonschema:"the index after the run"`
	Measured
}

// SkippedFile is a file the run did not index, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason" jsonschema:"binary, too-large, unreadable, ignored or outside-roots"`
	Error  string `json:"error,omitempty"`
}

// batchBytes is how much content one write of sagasu_index carries.
const batchBytes = 4 << 20

func (s *Server) addIndexTool() {
	addTool(s, &mcp.Tool{
		Name: ToolIndex,
		Description: "Add text, a file, or files, folders and globs (docs/**/*.md) to the index. Incremental: unchanged sources are skipped. " +
			"Paths must lie inside the server's allowed roots (--root; default its working directory). Sends progress notifications; " +
			"cancelling keeps what was written, and calling again finishes the job.",
		Annotations: rw("Index documents", true),
	}, func(in *jsonschema.Schema) {
		between(prop(in, "chunkSize"), 16, 8192)
		between(prop(in, "chunkOverlap"), 0, 4095)
	}, s.indexDocs)
}

func (s *Server) indexDocs(ctx context.Context, req *mcp.CallToolRequest, in IndexInput) (*mcp.CallToolResult, IndexOutput, error) {
	var inputs []string
	for _, p := range append(nonEmptyList(in.File), in.Files...) {
		w, err := s.roots.input(p)
		if err != nil {
			return nil, IndexOutput{}, err
		}
		inputs = append(inputs, w)
	}
	if in.Text == "" && len(inputs) == 0 {
		return nil, IndexOutput{}, errors.New(`nothing to index: give "text", "file" or "files"`)
	}
	if err := source.Check(inputs); err != nil {
		return nil, IndexOutput{}, err
	}
	opt := s.opt.Index
	opt.Chunk = chunk.Options{MaxTokens: opt.Chunk.MaxTokens, Overlap: opt.Chunk.Overlap}
	if in.ChunkSize != 0 {
		opt.Chunk.MaxTokens = in.ChunkSize
	}
	if in.ChunkOverlap != 0 {
		opt.Chunk.Overlap = in.ChunkOverlap
	}
	if opt.Chunk.MaxTokens < 16 || opt.Chunk.Overlap < 0 || 2*opt.Chunk.Overlap >= opt.Chunk.MaxTokens {
		return nil, IndexOutput{}, fmt.Errorf("chunkSize %d and chunkOverlap %d: the size must be at least 16 and the overlap below half of it", opt.Chunk.MaxTokens, opt.Chunk.Overlap)
	}
	opt.Force = in.Force
	opt.Source.Exclude = append(slices.Clone(opt.Source.Exclude), in.Exclude...)
	opt.Progress = nil

	unlock, err := s.store.Lock(ctx)
	if errors.Is(err, store.ErrLocked) {
		return nil, IndexOutput{}, errors.New("another indexing run (of this server or of `sagasu index`) is writing to this index: wait for it to finish, then call sagasu_index again")
	}
	if err != nil {
		return nil, IndexOutput{}, err
	}
	defer unlock()

	start := time.Now()
	run := &indexRun{s: s, ctx: ctx, req: req, ix: index.New(s.store, opt)}
	if in.Text != "" {
		err = run.add(source.FromText(in.Text, in.Title))
	}
	if err == nil && len(inputs) > 0 {
		err = source.Walk(ctx, inputs, opt.Source, func(d doc.Document) error {
			if d.Type == doc.TypeFile && !s.roots.allows(d.URI) {
				run.skipped = append(run.skipped, SkippedFile{Path: d.URI, Reason: "outside-roots", Error: "a symbolic link to a file outside the allowed roots"})
				return nil
			}
			return run.add(d)
		}, func(sk source.Skip) {
			sf := SkippedFile{Path: sk.Path, Reason: string(sk.Reason)}
			if sk.Err != nil {
				sf.Error = sk.Err.Error()
			}
			run.skipped = append(run.skipped, sf)
		})
	}
	if err == nil {
		err = run.flush()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, IndexOutput{}, fmt.Errorf("cancelled: the %d source(s) written before the stop are kept; call sagasu_index again to finish", run.rep.Added+run.rep.Updated)
		}
		return nil, IndexOutput{}, err
	}
	run.notify(true)
	st, err := s.store.Stats(ctx)
	if err != nil {
		return nil, IndexOutput{}, err
	}
	rep, took := run.rep, time.Since(start)
	limit := s.limits.Cap
	return fit(s, req, limit, budget.Shape{Items: len(run.skipped)}, 0, func(sh budget.Shape, est int) view[IndexOutput] {
		out := IndexOutput{Added: rep.Added, Updated: rep.Updated, Unchanged: rep.Unchanged, Chunks: rep.Chunks, Bytes: rep.Bytes,
			Embedded: rep.Embedded, Skipped: run.skipped[:sh.Items], OmittedSkipped: len(run.skipped) - sh.Items, TookMs: ms(took),
			Index: IndexStats{Sources: st.Sources, Chunks: st.Chunks, Vectors: st.Vectors}, Measured: Measured{EstimatedTokens: est, Budget: limit}}
		if out.Skipped == nil {
			out.Skipped = []SkippedFile{}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Indexed %d source(s): %d added, %d updated, %d unchanged; %d chunks written, %.1f MB read in %.0f ms.\n",
			rep.Added+rep.Updated+rep.Unchanged, rep.Added, rep.Updated, rep.Unchanged, rep.Chunks, float64(rep.Bytes)/1e6, out.TookMs)
		fmt.Fprintf(&b, "The index holds %d sources, %d chunks.\n", st.Sources, st.Chunks)
		for _, sk := range out.Skipped {
			fmt.Fprintf(&b, "skipped %s (%s) %s\n", sk.Path, sk.Reason, sk.Error)
		}
		if out.OmittedSkipped > 0 {
			fmt.Fprintf(&b, "… and %d more skipped files.\n", out.OmittedSkipped)
		}
		return view[IndexOutput]{Out: out, Text: b.String()}
	})
}

// indexRun collects documents into batches, writes them and reports
// progress.
type indexRun struct {
	s       *Server
	ctx     context.Context
	req     *mcp.CallToolRequest
	ix      *index.Indexer
	batch   []doc.Document
	size    int
	read    int
	rep     index.Report
	skipped []SkippedFile
	last    time.Time
}

func (r *indexRun) add(d doc.Document) error {
	r.batch = append(r.batch, d)
	r.size += len(d.Content)
	r.read++
	if r.read == 1 || time.Since(r.last) > 200*time.Millisecond {
		r.notify(false)
	}
	if r.size >= batchBytes {
		return r.flush()
	}
	return nil
}

// flush writes the batch: one or more transactions, each whole or not at all.
func (r *indexRun) flush() error {
	if len(r.batch) == 0 {
		return nil
	}
	rep, err := r.ix.Documents(r.ctx, r.batch)
	rep.Took = 0 // the run's own clock covers the whole call
	r.rep.Add(rep)
	r.batch, r.size = nil, 0
	if err != nil {
		return err
	}
	r.notify(false)
	return nil
}

// notify sends a progress notification when the client asked for them.
func (r *indexRun) notify(final bool) {
	r.last = time.Now()
	token := r.req.Params.GetProgressToken()
	if token == nil || r.req.Session == nil {
		return
	}
	msg := fmt.Sprintf("read %d source(s); wrote %d, %d chunks", r.read, r.rep.Added+r.rep.Updated, r.rep.Chunks)
	if final {
		msg = "done: " + msg
	}
	p := &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(r.read), Message: msg}
	if final {
		p.Total = float64(r.read)
	}
	if err := r.req.Session.NotifyProgress(r.ctx, p); err != nil {
		r.s.log.Debug("progress notification not sent", "err", err)
	}
	if r.s.onIndexProgress != nil && !final {
		r.s.onIndexProgress(r.ctx)
	}
}
