package postgres

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/pgvector/pgvector-go"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/store/internal/sqlrows"
)

// pgvector's HNSW index takes vectors of up to 2,000 dimensions; half
// precision ones (halfvec) of up to 4,000. Larger embeddings are searched
// exactly, without an index.
const (
	maxHNSWDim     = 2000
	maxHalfHNSWDim = 4000
	maxEfSearch    = 1000 // the largest hnsw.ef_search pgvector accepts
)

// VectorDim implements store.Driver: the dimension of the vector table, 0
// when there is none.
func (s *Store) VectorDim(ctx context.Context) (int, error) { return s.vectorDim(ctx) }

func (s *Store) vectorDim(ctx context.Context) (int, error) {
	v, err := s.Meta(ctx, metaVectorDim)
	if err != nil || v == "" {
		return 0, err
	}
	return strconv.Atoi(v)
}

func vectorDimTx(ctx context.Context, tx pgx.Tx) (int, error) {
	var v string
	err := tx.QueryRow(ctx, `SELECT value FROM meta WHERE key = $1`, metaVectorDim).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && v == "") {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

// InitVectors implements store.Driver: it creates the table that holds one
// embedding per chunk and its HNSW index for cosine distance.
func (s *Store) InitVectors(ctx context.Context, dim int) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		have, err := vectorDimTx(ctx, tx)
		if err != nil {
			return err
		}
		switch {
		case have == dim:
			return nil
		case have != 0:
			return fmt.Errorf("index in %s holds %d-dimensional vectors, not %d: re-embed with `sagasu reindex`", s.where, have, dim)
		}
		stmts := []string{
			`DROP TABLE IF EXISTS chunk_vectors`,
			fmt.Sprintf(`CREATE TABLE chunk_vectors(id bigint PRIMARY KEY, source_id text NOT NULL, embedding vector(%d) NOT NULL)`, dim),
			`CREATE INDEX chunk_vectors_source ON chunk_vectors(source_id)`,
		}
		with := fmt.Sprintf(`WITH (m = %d, ef_construction = %d)`, s.set.M, s.set.EfConstruction)
		switch {
		case dim <= maxHNSWDim:
			stmts = append(stmts, `CREATE INDEX chunk_vectors_hnsw ON chunk_vectors USING hnsw (embedding vector_cosine_ops) `+with)
		case dim <= maxHalfHNSWDim:
			stmts = append(stmts, fmt.Sprintf(`CREATE INDEX chunk_vectors_hnsw ON chunk_vectors USING hnsw ((embedding::halfvec(%d)) halfvec_cosine_ops) `, dim)+with)
		}
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("create vector table: %w", err)
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, metaVectorDim, strconv.Itoa(dim))
		return err
	})
}

// ClearVectors implements store.Driver.
func (s *Store) ClearVectors(ctx context.Context) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS chunk_vectors`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM meta WHERE key = $1`, metaVectorDim)
		return err
	})
}

// VectorSearch implements store.Driver. Scores are cosine similarities
// (1 - pgvector's cosine distance). The HNSW index answers it; a query for
// more neighbours than hnsw.ef_search raises ef_search to k for that query,
// and iterative scans (hnsw.iterative_scan) keep a filtered query going until
// k rows pass the filter.
func (s *Store) VectorSearch(ctx context.Context, q []float32, k int, f store.Filter) ([]store.Scored, error) {
	dim := len(q)
	args := []any{pgvector.NewVector(q)}
	var conds []string
	if f.NarrowsSources() {
		srcs, err := s.matchSources(ctx, f)
		if err != nil {
			return nil, err
		}
		if len(srcs) == 0 {
			return nil, nil
		}
		args = append(args, srcs)
		conds = append(conds, fmt.Sprintf(`source_id = ANY($%d)`, len(args)))
	}
	if len(f.ExcludeChunks) > 0 {
		args = append(args, f.ExcludeChunks)
		conds = append(conds, fmt.Sprintf(`NOT (id = ANY($%d))`, len(args)))
	}
	order := `embedding <=> $1`
	if dim > maxHNSWDim && dim <= maxHalfHNSWDim {
		order = fmt.Sprintf(`embedding::halfvec(%d) <=> $1::halfvec(%d)`, dim, dim)
	}
	sql := `SELECT id, embedding <=> $1 FROM chunk_vectors`
	if len(conds) > 0 {
		sql += ` WHERE ` + strings.Join(conds, ` AND `)
	}
	sql += fmt.Sprintf(` ORDER BY %s LIMIT %d`, order, k)

	var out []store.Scored
	query := func(qr interface {
		Query(context.Context, string, ...any) (pgx.Rows, error)
	}) error {
		out = out[:0]
		rows, err := qr.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var dist float64
			if err := rows.Scan(&id, &dist); err != nil {
				return err
			}
			out = append(out, store.Scored{ChunkID: id, Score: 1 - dist})
		}
		return rows.Err()
	}
	err := s.do(ctx, func(c *pgx.Conn) error {
		ef := min(k, maxEfSearch)
		if ef <= s.set.EfSearch || dim > maxHalfHNSWDim {
			return query(c)
		}
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT set_config('hnsw.ef_search', $1, true)`, strconv.Itoa(ef)); err != nil {
				return err
			}
			return query(tx)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	// Iterative scans in relaxed order may return neighbours slightly out
	// of order; ties go to the lower chunk ID, as in keyword search.
	store.SortScored(out)
	return out, nil
}

// VectorsByHash implements store.Driver.
func (s *Store) VectorsByHash(ctx context.Context, hashes []string) (map[string][]float32, error) {
	out := map[string][]float32{}
	err := s.each(ctx, func(r pgx.Rows) error {
		var h string
		var v pgvector.Vector
		err := r.Scan(&h, &v)
		out[h] = v.Slice()
		return err
	}, `SELECT c.chash, v.embedding FROM chunks c JOIN chunk_vectors v ON v.id = c.id WHERE c.chash = ANY($1)`, hashes)
	return out, err
}

// VectorsByID implements store.Driver.
func (s *Store) VectorsByID(ctx context.Context, ids []int64) (map[int64][]float32, error) {
	out := map[int64][]float32{}
	err := s.each(ctx, func(r pgx.Rows) error {
		var id int64
		var v pgvector.Vector
		err := r.Scan(&id, &v)
		out[id] = v.Slice()
		return err
	}, `SELECT id, embedding FROM chunk_vectors WHERE id = ANY($1)`, ids)
	return out, err
}

// SetVectors implements store.Driver.
func (s *Store) SetVectors(ctx context.Context, vecs map[int64][]float32) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		ids := slices.Sorted(maps.Keys(vecs))
		if _, err := tx.Exec(ctx, `DELETE FROM chunk_vectors WHERE id = ANY($1)`, ids); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, source_id FROM chunks WHERE id = ANY($1) ORDER BY id`, ids)
		if err != nil {
			return err
		}
		var copyRows [][]any
		for rows.Next() {
			var id int64
			var src string
			if err := rows.Scan(&id, &src); err != nil {
				rows.Close()
				return err
			}
			copyRows = append(copyRows, []any{id, src, pgvector.NewVector(vecs[id])})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"chunk_vectors"}, []string{"id", "source_id", "embedding"}, pgx.CopyFromRows(copyRows))
		return err
	})
}

// EachChunk implements store.Driver.
func (s *Store) EachChunk(ctx context.Context, fn func(c doc.Chunk, title string) error) error {
	type item struct {
		c     doc.Chunk
		title string
	}
	var after int64
	for {
		var page []item
		err := s.each(ctx, func(r pgx.Rows) error {
			var title string
			c, err := sqlrows.ScanChunk(r, &title)
			page = append(page, item{c, title})
			return err
		}, `SELECT `+sqlrows.ChunkColumns+`, s.title FROM chunks c JOIN sources s ON s.id = c.source_id
			WHERE c.id > $1 ORDER BY c.id LIMIT 1000`, after)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		for _, it := range page {
			if err := fn(it.c, it.title); err != nil {
				return err
			}
		}
		after = page[len(page)-1].c.ID
	}
}

// vectorCodec moves pgvector's vector type in its binary form, so COPY and
// queries carry embeddings as raw float32s instead of decimal text.
type vectorCodec struct{}

// registerVector teaches a connection's type map the vector type.
func registerVector(m *pgtype.Map, oid uint32) {
	m.RegisterType(&pgtype.Type{Name: "vector", OID: oid, Codec: vectorCodec{}})
}

func (vectorCodec) FormatSupported(format int16) bool { return format == pgtype.BinaryFormatCode }
func (vectorCodec) PreferredFormat() int16            { return pgtype.BinaryFormatCode }

func (vectorCodec) PlanEncode(_ *pgtype.Map, _ uint32, format int16, value any) pgtype.EncodePlan {
	if format != pgtype.BinaryFormatCode {
		return nil
	}
	switch value.(type) {
	case pgvector.Vector, []float32:
		return encodeVector{}
	}
	return nil
}

type encodeVector struct{}

func (encodeVector) Encode(value any, buf []byte) ([]byte, error) {
	switch v := value.(type) {
	case pgvector.Vector:
		return v.EncodeBinary(buf)
	case []float32:
		return pgvector.NewVector(v).EncodeBinary(buf)
	}
	return nil, fmt.Errorf("cannot encode %T as a vector", value)
}

func (vectorCodec) PlanScan(_ *pgtype.Map, _ uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*pgvector.Vector); ok && format == pgtype.BinaryFormatCode {
		return scanVector{}
	}
	return nil
}

type scanVector struct{}

func (scanVector) Scan(src []byte, target any) error {
	if src == nil {
		return errors.New("cannot scan a NULL vector")
	}
	if len(src) < 4 || len(src) != 4+4*int(binary.BigEndian.Uint16(src)) {
		return fmt.Errorf("malformed vector of %d bytes", len(src))
	}
	return target.(*pgvector.Vector).DecodeBinary(src)
}

func (c vectorCodec) DecodeDatabaseSQLValue(m *pgtype.Map, oid uint32, format int16, src []byte) (driver.Value, error) {
	v, err := c.DecodeValue(m, oid, format, src)
	if v == nil || err != nil {
		return nil, err
	}
	return v.(pgvector.Vector).String(), nil
}

func (vectorCodec) DecodeValue(_ *pgtype.Map, _ uint32, format int16, src []byte) (any, error) {
	if src == nil {
		return nil, nil
	}
	var v pgvector.Vector
	var err error
	if format == pgtype.BinaryFormatCode {
		err = scanVector{}.Scan(src, &v)
	} else {
		err = v.Parse(string(src))
	}
	return v, err
}
