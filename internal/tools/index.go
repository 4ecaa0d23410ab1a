package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

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
	Files        []string `json:"files,omitempty" jsonschema:"files, folders or globs such as docs/**/*.md inside the allowed roots; or web pages (https://...), GitHub repositories (github:owner/repo[@ref][/path]) and gists (gist:ID)"`
	ChunkSize    int      `json:"chunkSize,omitempty" jsonschema:"most tokens per chunk, 16 to 8192 (default: the server's, usually 512)"`
	ChunkOverlap int      `json:"chunkOverlap,omitempty" jsonschema:"tokens repeated between pieces of a long section, below half the chunk size"`
	Exclude      []string `json:"exclude,omitempty" jsonschema:"glob patterns of files and folders to skip"`
	Force        bool     `json:"force,omitempty" jsonschema:"re-index sources even when unchanged"`

	// What only the CLI sets: its user names the paths, so they may lie
	// anywhere the user can read (AnyPath), "-" reads Stdin, and Prune
	// removes sources whose files are gone.
	AnyPath bool      `json:"-"`
	Stdin   io.Reader `json:"-"`
	Prune   bool      `json:"-"`
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
	// Warnings say what the run found wrong with the index, such as an
	// embedder that reads one of its languages poorly.
	Warnings []string `json:"warnings,omitempty" jsonschema:"what the run found wrong, e.g. an embedding model that reads a language of the documents poorly, and what to do"`
	Measured
}

// SkippedFile is a file the run did not index, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason" jsonschema:"binary, too-large, unreadable, ignored, ignore-file (left out by .gitignore, .ignore or .sagasuignore), outside-roots or dotfile"`
	Error  string `json:"error,omitempty"`
}

// IndexProgress is where an index run is: the counts of index.Progress
// (sources read, chunks made, embedded and written, the rate and the time
// left), which every face shows.
type IndexProgress struct {
	index.Progress
	// Final marks the last report, after everything was written.
	Final bool
}

// String says it for people.
func (p IndexProgress) String() string {
	if p.Final {
		return fmt.Sprintf("done: read %d source(s); wrote %d, %d chunks", p.Read, p.Written, p.Chunks)
	}
	return p.Progress.String()
}

// IndexResult reports an index run.
type IndexResult struct {
	index.Report
	Skipped []SkippedFile
	Took    time.Duration
	// Index is the index after the run.
	Index IndexStats
}

// Output renders the report with the first items skipped files.
func (r IndexResult) Output(items int) IndexOutput {
	out := IndexOutput{Added: r.Added, Updated: r.Updated, Unchanged: r.Unchanged, Chunks: r.Chunks, Bytes: r.Bytes,
		Embedded: r.Embedded, Skipped: r.Skipped[:items], OmittedSkipped: len(r.Skipped) - items, TookMs: ms(r.Took), Index: r.Index}
	if out.Skipped == nil {
		out.Skipped = []SkippedFile{}
	}
	for _, p := range r.PoorFit {
		out.Warnings = append(out.Warnings, p.Warning())
	}
	return out
}

// ErrIndexBusy is the refusal of an index run while another one writes to
// the index (errors.Is).
var ErrIndexBusy = errors.New("another indexing run (`sagasu index`, the page's Index tab or an MCP client's sagasu_index) is writing to this index: wait for it to finish, then index again")

// Interrupted is an index run cancelled before it finished: the batches it
// wrote are kept, each whole, and running it again finishes the job.
type Interrupted struct {
	Written int // sources added or updated before the stop
	Err     error
}

func (e *Interrupted) Error() string {
	return fmt.Sprintf("interrupted: the %d source(s) written before the stop are kept; index again to finish", e.Written)
}

// Unwrap returns the cause (the context's error).
func (e *Interrupted) Unwrap() error { return e.Err }

// Index adds text, files, folders and globs (inside the roots, unless
// AnyPath) to the index in batches of a few megabytes, each written whole
// or not at all, holding the index's writer lock. progress, when not nil,
// hears about the run as it goes (at most every 200 ms, and after every
// batch). A run that fails part way returns what it did with the error.
func (t *Toolset) Index(ctx context.Context, in IndexInput, progress func(IndexProgress)) (IndexResult, error) {
	var inputs []string
	for i, p := range append(nonEmptyList(in.File), in.Files...) {
		if in.AnyPath && (p != "-" || in.Stdin != nil) {
			inputs = append(inputs, p)
			continue
		}
		if isRemote(p) {
			// Fetched through the SSRF guard, not read from disk.
			inputs = append(inputs, p)
			continue
		}
		w, err := t.roots.input(p)
		if err != nil {
			arg := "file"
			if in.File == "" || i > 0 {
				arg = fmt.Sprintf("files[%d]", i-len(nonEmptyList(in.File)))
			}
			return IndexResult{}, fmt.Errorf("%s: %w", arg, err)
		}
		inputs = append(inputs, w)
	}
	if in.Text == "" && len(inputs) == 0 {
		return IndexResult{}, errors.New(`nothing to index: give "text", "file" or "files"`)
	}
	if err := source.Check(inputs); err != nil {
		return IndexResult{}, err
	}
	opt := t.opt.Index
	opt.Chunk = chunk.Options{MaxTokens: opt.Chunk.MaxTokens, Overlap: opt.Chunk.Overlap}
	if in.ChunkSize != 0 {
		opt.Chunk.MaxTokens = in.ChunkSize
	}
	if in.ChunkOverlap != 0 {
		opt.Chunk.Overlap = in.ChunkOverlap
	}
	if opt.Chunk.MaxTokens < 16 || opt.Chunk.Overlap < 0 || 2*opt.Chunk.Overlap >= opt.Chunk.MaxTokens {
		if opt.Chunk.MaxTokens < 16 {
			return IndexResult{}, badArg("chunkSize", opt.Chunk.MaxTokens, "a whole number from 16 to 8192")
		}
		return IndexResult{}, badArg("chunkOverlap", opt.Chunk.Overlap, fmt.Sprintf("a whole number from 0 to %d, below half of chunkSize %d", (opt.Chunk.MaxTokens-1)/2, opt.Chunk.MaxTokens))
	}
	opt.Force, opt.Prune = in.Force, in.Prune
	opt.Source.Stdin = in.Stdin
	opt.Source.Exclude = append(slices.Clone(opt.Source.Exclude), in.Exclude...)
	opt.Progress = nil

	unlock, err := t.store.Lock(ctx)
	if errors.Is(err, store.ErrLocked) {
		return IndexResult{}, fmt.Errorf("%w (%v)", ErrIndexBusy, err)
	}
	if err != nil {
		return IndexResult{}, err
	}
	defer unlock()

	start := time.Now()
	var last time.Time
	var final index.Progress
	opt.Progress = func(p index.Progress) {
		final = p
		if progress != nil && time.Since(last) > progressEvery {
			last = time.Now()
			progress(IndexProgress{Progress: p})
		}
	}
	release, err := t.confine(&opt.Source, in.AnyPath)
	if err != nil {
		return IndexResult{}, err
	}
	defer release()
	ix := index.New(t.store, opt)
	var rep index.Report
	if in.Text != "" {
		rep, err = ix.Documents(ctx, []doc.Document{source.FromText(in.Text, in.Title)})
	}
	if err == nil && len(inputs) > 0 {
		var more index.Report
		more, err = ix.Run(ctx, inputs)
		rep.Add(more)
	}
	res := IndexResult{Report: rep, Took: time.Since(start)}
	res.Skipped = skippedFiles(rep)
	if err != nil {
		if ctx.Err() != nil {
			return res, &Interrupted{Written: rep.Added + rep.Updated, Err: ctx.Err()}
		}
		return res, err
	}
	if progress != nil {
		final.Written, final.Chunks, final.Reading = rep.Added+rep.Updated, rep.Chunks, false
		progress(IndexProgress{Progress: final, Final: true})
	}
	if res.Index, err = t.stats(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// skippedFiles lists the files a run did not index, and why.
func skippedFiles(rep index.Report) []SkippedFile {
	var skipped []SkippedFile
	for _, sk := range rep.Skipped {
		sf := SkippedFile{Path: sk.Path, Reason: string(sk.Reason)}
		switch {
		case errors.Is(sk.Err, ErrOutsideRoots):
			sf.Reason = "outside-roots"
		case errors.Is(sk.Err, ErrDotfile):
			sf.Reason = "dotfile"
		}
		if sk.Err != nil {
			sf.Error = sk.Err.Error()
		}
		skipped = append(skipped, sf)
	}
	return skipped
}

// progressEvery is the least time between two progress reports.
const progressEvery = 200 * time.Millisecond

// errOutsideRoots refuses a file a symbolic link leads outside the roots.
var errOutsideRoots = &refused{kind: ErrOutsideRoots, msg: "a symbolic link to a file outside the allowed roots"}

// isRemote reports an input that names a web page, a GitHub repository or
// a gist rather than a path.
func isRemote(in string) bool {
	for _, p := range []string{"http://", "https://", "github:", "gist:"} {
		if strings.HasPrefix(in, p) {
			return true
		}
	}
	return false
}
