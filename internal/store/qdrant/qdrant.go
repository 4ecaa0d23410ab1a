// Package qdrant is the store.Store driver for a Qdrant server, reached
// over gRPC with github.com/qdrant/go-client. One index is a set of
// collections under a prefix:
//
//	<prefix>_meta     settings, the writer lock, the write journal and the
//	                  collection statistics; its collection metadata marks the
//	                  index as sagasu's and holds the schema version
//	<prefix>_sources  one point per source: its record and original content
//	<prefix>_chunks   one point per chunk (point ID = chunk ID): text and
//	                  metadata as payload, and a sparse "bm25" vector of its
//	                  analysed terms with Qdrant's IDF modifier
//	<prefix>_vectors  one point per embedded chunk: the dense vector (cosine),
//	                  created by InitVectors with the embedder's dimension
//	<prefix>_runs, <prefix>_events   the run log
//
// Keyword search is Qdrant's own sparse-vector path scored as BM25F: each
// term is hashed to a sparse dimension whose value is the term's BM25F
// weight x·(k1+1)/(k1+x), x = Σ_f W_f·tf_f/(1−B_f+B_f·dl_f/avgdl_f) over the
// fields title, heading path and body, with the average field lengths at
// write time and the parameters pinned in the index (bm25.Params); Qdrant
// multiplies it by its IDF, which is Lucene's. Qdrant cannot renormalise
// stored weights when the averages change, so by default (DSN
// keyword=exact) the driver asks Qdrant for more candidates than wanted and
// rescores them with exactly bm25.Score's BM25F over the current collection
// statistics, from the per-field term frequencies and lengths each chunk
// keeps in its payload; keyword=qdrant returns Qdrant's scores as they are.
// See docs/qdrant.md.
package qdrant

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sagasu-dev/sagasu/internal/analyze"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

// SchemaVersion is the layout of the collections this driver writes.
// Version 3 holds a chunk's per-field term frequencies and lengths in one
// payload string ("fc", see fieldcounts.go); version 2, still read and
// written as it is, holds them as per-term payload values, which take an
// exact keyword search far longer to decode. Both weigh terms by BM25F
// (bm25.Params pinned in the meta collection); version 1 indexes, plain
// BM25, are refused with a request to index again.
const SchemaVersion = 3

// minSchema is the oldest layout this driver reads.
const minSchema = 2

// marker is the collection-metadata key (and value) that marks a collection
// as part of a sagasu index.
const (
	markerKey   = "sagasu"
	markerValue = "index"
	schemaKey   = "sagasu_schema"
)

// Keyword ranking modes (DSN "keyword").
const (
	// KeywordExact rescores Qdrant's candidates with exact BM25F (bm25.Score).
	KeywordExact = "exact"
	// KeywordQdrant returns Qdrant's sparse-vector scores unchanged.
	KeywordQdrant = "qdrant"
)

// Settings are what a qdrant:// DSN says.
type Settings struct {
	Host   string
	Port   int
	Prefix string // collection name prefix (the DSN path), default "sagasu"
	TLS    bool   // DSN tls=true
	// Keyword is KeywordExact (default) or KeywordQdrant (DSN keyword=).
	Keyword string
	// Oversample is how many candidates per wanted hit exact keyword
	// ranking asks Qdrant for (DSN oversample=, default 3).
	Oversample int
}

// Options configure Open.
type Options struct {
	// Create makes the index's collections when there are none; without it a
	// missing index is an error that says to index first.
	Create bool
	// Analyzer turns text into keyword terms; nil uses the default analyzer.
	Analyzer *analyze.Analyzer
	// APIKey is sent to the server (internal/app reads QDRANT_API_KEY).
	APIKey string
	// Timeout bounds connecting and the first health check (default 10 s).
	Timeout time.Duration

	// schema, when set (by tests), is the schema new collections get, to
	// make an index as an older sagasu wrote it.
	schema int64
}

var prefixRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ParseDSN reads qdrant://host[:port]/prefix[?tls=true&keyword=exact|qdrant&oversample=N].
func ParseDSN(dsn string) (Settings, error) {
	set := Settings{Port: 6334, Prefix: "sagasu", Keyword: KeywordExact, Oversample: 3}
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "qdrant" || u.Host == "" {
		return set, fmt.Errorf("bad Qdrant location %q: want qdrant://host:port/collection-prefix (gRPC port, 6334 by default)", store.Redact(dsn))
	}
	if u.User != nil {
		return set, fmt.Errorf("bad Qdrant location %q: do not put the API key in --db; set QDRANT_API_KEY instead", store.Redact(dsn))
	}
	set.Host = u.Hostname()
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return set, fmt.Errorf("bad Qdrant location %q: port %q is not a port number", dsn, p)
		}
		set.Port = n
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		if !prefixRE.MatchString(p) {
			return set, fmt.Errorf("bad Qdrant location %q: collection prefix %q may hold only letters, digits, _ and - (at most 64)", dsn, p)
		}
		set.Prefix = p
	}
	q := u.Query()
	for k := range q {
		switch k {
		case "tls", "keyword", "oversample":
		default:
			return set, fmt.Errorf("bad Qdrant location %q: unknown option %q (known: tls, keyword, oversample)", dsn, k)
		}
	}
	switch v := q.Get("tls"); v {
	case "", "false":
	case "true":
		set.TLS = true
	default:
		return set, fmt.Errorf("bad Qdrant location %q: tls=%q must be true or false", dsn, v)
	}
	switch v := q.Get("keyword"); v {
	case "":
	case KeywordExact, KeywordQdrant:
		set.Keyword = v
	default:
		return set, fmt.Errorf("bad Qdrant location %q: keyword=%q must be %s or %s", dsn, v, KeywordExact, KeywordQdrant)
	}
	if v := q.Get("oversample"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return set, fmt.Errorf("bad Qdrant location %q: oversample=%q must be a number from 1 to 100", dsn, v)
		}
		set.Oversample = n
	}
	return set, nil
}

// Store is a sagasu index in a Qdrant server.
type Store struct {
	c       *qdrant.Client
	set     Settings
	an      *analyze.Analyzer
	version string // the server's version
	// params are the keyword scoring parameters pinned in the index
	// (bm25.MetaKey), read once at Open.
	params bm25.Params

	// wmu serialises this process's writes (Replace, Delete, SetVectors,
	// vector setup, run appends).
	wmu sync.Mutex
	// vecDim caches the vector collection's dimension (0: none known).
	vmu    sync.Mutex
	vecDim int

	// compact says the chunks collection is of schema 3 or later: exact
	// keyword scoring reads one payload string per chunk ("fc").
	compact bool
	// schema is the schema new collections get (Options.schema).
	schema int64

	// crashAt, set by tests, makes Replace stop as a crash would after the
	// named step ("chunks": new chunks written; "sources": sources committed).
	crashAt string
}

// errCrash is what Replace returns where a test asked it to stop.
var errCrash = errors.New("simulated crash")

var _ store.Driver = (*Store)(nil)

// ErrNoIndex means the server holds no index under the prefix and Create was not set.
var ErrNoIndex = errors.New("no index")

// Collection names.
func (s *Store) coll(role string) string { return s.set.Prefix + "_" + role }

const (
	roleMeta    = "meta"
	roleSources = "sources"
	roleChunks  = "chunks"
	roleVectors = "vectors"
	roleRuns    = "runs"
	roleEvents  = "events"
)

// Open connects to the server a qdrant:// DSN names and checks (or, with
// Create, makes) the index's collections. The Store checks every call
// before the driver sees it (store.New).
func Open(ctx context.Context, dsn string, opt Options) (store.Store, error) {
	return store.Opened(openDriver(ctx, dsn, opt))
}

// openDriver opens the driver under Open's Store.
func openDriver(ctx context.Context, dsn string, opt Options) (*Store, error) {
	set, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	an := opt.Analyzer
	if an == nil {
		an = analyze.New(analyze.Options{})
	}
	timeout := opt.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	c, err := qdrant.NewClient(&qdrant.Config{
		Host: set.Host, Port: set.Port, APIKey: opt.APIKey, UseTLS: set.TLS,
		SkipCompatibilityCheck: true, PoolSize: 2,
		GrpcOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256 << 20))},
	})
	if err != nil {
		return nil, fmt.Errorf("connect to Qdrant at %s: %w", net.JoinHostPort(set.Host, strconv.Itoa(set.Port)), err)
	}
	s := &Store{c: c, set: set, an: an, schema: opt.schema}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h, err := c.HealthCheck(hctx)
	if err != nil {
		c.Close()
		return nil, s.connError(err)
	}
	s.version = h.GetVersion()
	if err := s.bootstrap(ctx, opt.Create); err != nil {
		c.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the connection.
func (s *Store) Close() error { return s.c.Close() }

// Version returns the server's version, as its health check reports it.
func (s *Store) Version() string { return s.version }

// Settings returns the DSN settings the store was opened with.
func (s *Store) Settings() Settings { return s.set }

func (s *Store) where() string {
	return fmt.Sprintf("Qdrant at %s", net.JoinHostPort(s.set.Host, strconv.Itoa(s.set.Port)))
}

// connError explains a failure to reach or log in to the server.
func (s *Store) connError(err error) error {
	switch status.Code(errors.Unwrap(err)) {
	case codes.Unauthenticated, codes.PermissionDenied:
		return fmt.Errorf("%s refused the API key: %v (set QDRANT_API_KEY to the key the server was started with)", s.where(), rootCause(err))
	case codes.Unavailable, codes.DeadlineExceeded, codes.Unimplemented, codes.Unknown, codes.Internal:
		if strings.Contains(err.Error(), "HTTP/1.1") {
			return fmt.Errorf("%s answers HTTP/1.1, not gRPC: that looks like Qdrant's REST port; give --db the gRPC port (6334 by default, service.grpc_port in Qdrant's config)", s.where())
		}
		return fmt.Errorf("cannot reach %s: %v (is the server running, and does --db name its gRPC port — 6334 by default, not the REST port 6333?)", s.where(), rootCause(err))
	}
	return fmt.Errorf("%s: %w", s.where(), err)
}

// rootCause strips the client's operation prefix from a gRPC error.
func rootCause(err error) string {
	if st, ok := status.FromError(errors.Unwrap(err)); ok {
		return st.Message()
	}
	return err.Error()
}

// wrap names the operation and, for connection problems, says what to check.
func (s *Store) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	switch status.Code(errors.Unwrap(err)) {
	case codes.Unavailable:
		return store.Unavailable(fmt.Errorf("%s: %w", op, s.connError(err)))
	case codes.Unauthenticated, codes.PermissionDenied:
		return fmt.Errorf("%s: %w", op, s.connError(err))
	case codes.Canceled:
		return fmt.Errorf("%s: %w", op, context.Canceled)
	}
	return fmt.Errorf("%s (%s): %w", op, s.where(), err)
}

// bootstrap checks the index's collections, creating missing ones when
// allowed, and pins the analyzer.
func (s *Store) bootstrap(ctx context.Context, create bool) error {
	names, err := s.c.ListCollections(ctx)
	if err != nil {
		return s.connError(err)
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	roles := []string{roleMeta, roleSources, roleChunks, roleRuns, roleEvents, roleVectors}
	for _, r := range roles {
		if !have[s.coll(r)] {
			continue
		}
		if err := s.checkMarker(ctx, s.coll(r)); err != nil {
			return err
		}
	}
	if !have[s.coll(roleMeta)] {
		if !create {
			return fmt.Errorf("%s holds no sagasu index with collection prefix %q: index something first (sagasu index --db qdrant://%s:%d/%s ...): %w",
				s.where(), s.set.Prefix, s.set.Host, s.set.Port, s.set.Prefix, ErrNoIndex)
		}
	}
	for _, r := range roles[:5] {
		if have[s.coll(r)] {
			continue
		}
		if err := s.createCollection(ctx, r, 0); err != nil {
			return err
		}
	}
	if have[s.coll(roleVectors)] {
		if _, err := s.vectorDim(ctx); err != nil {
			return err
		}
	}
	pinned, err := s.Meta(ctx, metaAnalyzer)
	if err != nil {
		return err
	}
	switch pinned {
	case "":
		if err := s.SetMeta(ctx, metaAnalyzer, s.an.Signature()); err != nil {
			return err
		}
	case s.an.Signature():
	default:
		// An index of an older analyzer is read with that analyzer: its
		// keyword vectors live in every point, so there is no rebuilding
		// them in place (index again into a new prefix for the new one).
		old, _, err := s.an.Pinned(pinned)
		if err != nil {
			return fmt.Errorf("%s, prefix %q: %w; or delete the collections %s_* and index again",
				s.where(), s.set.Prefix, err, s.set.Prefix)
		}
		s.an = old
	}
	return s.pinParams(ctx)
}

// pinParams reads the keyword scoring parameters pinned in the index,
// pinning bm25.DefaultParams in an index that has none yet (a new one: an
// index of schema 1, which had none, is refused by checkMarker).
func (s *Store) pinParams(ctx context.Context) error {
	scoring, err := s.Meta(ctx, bm25.MetaKey)
	if err != nil {
		return err
	}
	if scoring == "" {
		scoring = bm25.DefaultParams().String()
		if err := s.SetMeta(ctx, bm25.MetaKey, scoring); err != nil {
			return err
		}
	}
	if s.params, err = bm25.ParseParams(scoring); err != nil {
		return fmt.Errorf("%s, prefix %q: %w: a newer sagasu wrote the index: upgrade sagasu, or delete the collections %s_* and index again",
			s.where(), s.set.Prefix, err, s.set.Prefix)
	}
	return nil
}

// Analyzer returns the analyzer the keyword index is read and written with:
// the one the index is pinned to. Queries must be analysed with it.
func (s *Store) Analyzer() *analyze.Analyzer { return s.an }

// metaAnalyzer pins the analyzer that built the keyword index.
const metaAnalyzer = "analyzer.version"

// checkMarker refuses a collection another tool made or a newer sagasu wrote.
func (s *Store) checkMarker(ctx context.Context, name string) error {
	info, err := s.c.GetCollectionInfo(ctx, name)
	if err != nil {
		return s.wrap("read collection "+name, err)
	}
	md := info.GetConfig().GetMetadata()
	if md[markerKey].GetStringValue() != markerValue {
		return fmt.Errorf("%s: collection %q exists but was not made by sagasu; choose another collection prefix in --db (qdrant://host:port/<prefix>): %w",
			s.where(), name, store.ErrForeign)
	}
	if v := md[schemaKey].GetIntegerValue(); v < minSchema {
		return fmt.Errorf("%s: collection %q has sagasu schema %d, whose keyword index predates field-weighted scoring (BM25F); delete the collections %s_* and run `sagasu index` again",
			s.where(), name, v, s.set.Prefix)
	}
	if v := md[schemaKey].GetIntegerValue(); v > SchemaVersion {
		return fmt.Errorf("%s: collection %q has sagasu schema %d, this sagasu knows up to %d: upgrade sagasu: %w",
			s.where(), name, v, SchemaVersion, store.ErrTooNew)
	}
	if name == s.coll(roleChunks) {
		s.compact = md[schemaKey].GetIntegerValue() >= 3
	}
	return nil
}

// Sparse and dense vector names.
const (
	sparseName = "bm25"
	denseName  = "dense"
)

// createCollection makes one collection of the index with its marker and
// payload indexes; dim is the dense dimension of the vectors collection.
func (s *Store) createCollection(ctx context.Context, role string, dim int) error {
	name := s.coll(role)
	req := &qdrant.CreateCollection{
		CollectionName: name,
		Metadata: map[string]*qdrant.Value{
			markerKey: qdrant.NewValueString(markerValue),
			schemaKey: qdrant.NewValueInt(cmp.Or(s.schema, SchemaVersion)),
			"role":    qdrant.NewValueString(role),
		},
	}
	var keywords, ints []string
	switch role {
	case roleChunks:
		req.SparseVectorsConfig = qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			sparseName: {Modifier: qdrant.Modifier_Idf.Enum()},
		})
		keywords = []string{"sid", "type", "gen", "terms"}
	case roleVectors:
		req.VectorsConfig = qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
			denseName: {Size: uint64(dim), Distance: qdrant.Distance_Cosine},
		})
		keywords = []string{"sid", "type", "gen", "hash"}
	case roleSources:
		keywords = []string{"uri", "type"}
	case roleRuns:
		keywords = []string{"kind"}
	case roleEvents:
		keywords = []string{"run"}
		ints = []string{"seq"}
	}
	if err := s.c.CreateCollection(ctx, req); err != nil {
		if status.Code(errors.Unwrap(err)) == codes.AlreadyExists {
			return s.checkMarker(ctx, name)
		}
		return s.wrap("create collection "+name, err)
	}
	if role == roleChunks {
		s.compact = cmp.Or(s.schema, SchemaVersion) >= 3
	}
	wait := true
	for _, f := range keywords {
		if _, err := s.c.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
			CollectionName: name, FieldName: f, FieldType: qdrant.FieldType_FieldTypeKeyword.Enum(), Wait: &wait,
		}); err != nil {
			return s.wrap("index payload field "+f+" of "+name, err)
		}
	}
	for _, f := range ints {
		if _, err := s.c.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
			CollectionName: name, FieldName: f, FieldType: qdrant.FieldType_FieldTypeInteger.Enum(), Wait: &wait,
		}); err != nil {
			return s.wrap("index payload field "+f+" of "+name, err)
		}
	}
	return nil
}

// uuidOf is the deterministic point ID of a record that is not a chunk: a
// UUID made of the SHA-256 of its kind and key.
func uuidOf(kind, key string) *qdrant.PointId {
	h := sha256.Sum256([]byte(kind + "\x00" + key))
	h[6] = h[6]&0x0f | 0x80 // version 8: custom
	h[8] = h[8]&0x3f | 0x80 // RFC 4122 variant
	return qdrant.NewIDUUID(fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16]))
}
