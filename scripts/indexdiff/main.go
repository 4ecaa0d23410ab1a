// Command indexdiff compares the content of two SQLite indexes table by
// table: sources (less the time they were indexed), original contents,
// chunks (by source and position, less their row IDs), keyword postings
// (decoded, by term, with chunk IDs mapped to source and position, however
// the rows are split into segments), the segments' total counts, chunks
// without terms, and the meta table. Two runs of the indexer over the same
// input that batch, number or merge differently compare equal; any
// difference in what a search can see does not.
//
//	go run ./scripts/indexdiff a.db b.db
//
// It prints each differing table and exits 1 when the indexes differ.
package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	_ "modernc.org/sqlite"

	"github.com/sagasu-dev/sagasu/internal/store/bm25"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: indexdiff A.db B.db\ncompares the content of two SQLite indexes; exits 1 when they differ")
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	diffs, err := compare(context.Background(), flag.Arg(0), flag.Arg(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "indexdiff:", err)
		os.Exit(2)
	}
	if len(diffs) > 0 {
		for _, d := range diffs {
			fmt.Println(d)
		}
		os.Exit(1)
	}
	fmt.Println("same content")
}

// digest is one index reduced to comparable maps: per table, a key and the
// hash of what is stored under it.
type digest map[string]map[string]string

// compare returns a line per difference between the indexes at a and b
// (at most a few per table), none when their content is the same.
func compare(ctx context.Context, a, b string) ([]string, error) {
	da, err := load(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", a, err)
	}
	db, err := load(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", b, err)
	}
	var out []string
	for _, table := range []string{"meta", "sources", "contents", "chunks", "termless", "postings", "segments"} {
		ta, tb := da[table], db[table]
		var only []string
		for k, va := range ta {
			vb, ok := tb[k]
			switch {
			case !ok:
				only = append(only, fmt.Sprintf("%s: %q only in A", table, k))
			case va != vb:
				only = append(only, fmt.Sprintf("%s: %q differs", table, k))
			}
		}
		for k := range tb {
			if _, ok := ta[k]; !ok {
				only = append(only, fmt.Sprintf("%s: %q only in B", table, k))
			}
		}
		slices.Sort(only)
		if len(only) > 5 {
			only = append(only[:5], fmt.Sprintf("%s: and %d more differences", table, len(only)-5))
		}
		out = append(out, only...)
	}
	return out, nil
}

func hashOf(parts ...any) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%v\x00", p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// load reads the index at path into a digest.
func load(ctx context.Context, path string) (digest, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	d := digest{}
	each := func(table, query string, fn func(rows *sql.Rows) (key, val string, err error)) error {
		m := map[string]string{}
		d[table] = m
		rows, err := db.QueryContext(ctx, query)
		if err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
		defer rows.Close()
		for rows.Next() {
			k, v, err := fn(rows)
			if err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
			m[k] = v
		}
		return rows.Err()
	}
	// The write counters say how many writes there were, not what they
	// left: differently batched runs differ in them.
	err = each("meta", `SELECT key, value FROM meta WHERE key NOT IN ('keyword.version', 'vectors.version', 'vectors.epoch', 'vectors.gone_trimmed')`, func(r *sql.Rows) (string, string, error) {
		var k, v string
		err := r.Scan(&k, &v)
		return k, v, err
	})
	if err != nil {
		return nil, err
	}
	err = each("sources", `SELECT id, uri, type, format, title, hash, size, chunks FROM sources`, func(r *sql.Rows) (string, string, error) {
		var id, uri, typ, format, title, hash string
		var size, chunks int64
		err := r.Scan(&id, &uri, &typ, &format, &title, &hash, &size, &chunks)
		return id, hashOf(uri, typ, format, title, hash, size, chunks), err
	})
	if err != nil {
		return nil, err
	}
	var blocks int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'content_blocks'`).Scan(&blocks); err != nil {
		return nil, err
	}
	if blocks > 0 {
		// Schema 5 on: compressed blocks, in order, hashed as a chain.
		chain := map[string]string{}
		err = each("contents", `SELECT source_id, blk, data FROM content_blocks ORDER BY source_id, blk`, func(r *sql.Rows) (string, string, error) {
			var id string
			var blk int64
			var data []byte
			if err := r.Scan(&id, &blk, &data); err != nil {
				return "", "", err
			}
			chain[id] = hashOf(chain[id], blk, data)
			return id, chain[id], nil
		})
	} else {
		err = each("contents", `SELECT source_id, content FROM contents`, func(r *sql.Rows) (string, string, error) {
			var id, content string
			err := r.Scan(&id, &content)
			return id, hashOf(content), err
		})
	}
	if err != nil {
		return nil, err
	}
	key := map[int64]string{} // chunk ID -> "source_id#idx"
	err = each("chunks", `SELECT id, source_id, idx, text, heading, start_line, end_line, start_byte, end_byte, tokens, terms, chash FROM chunks`, func(r *sql.Rows) (string, string, error) {
		var id, idx, sl, el, sb, eb, tokens, terms int64
		var src, heading, chash string
		var text sql.NullString // NULL from schema 5 on: the span of the content
		if err := r.Scan(&id, &src, &idx, &text, &heading, &sl, &el, &sb, &eb, &tokens, &terms, &chash); err != nil {
			return "", "", err
		}
		k := fmt.Sprintf("%s#%d", src, idx)
		key[id] = k
		return k, hashOf(text.Valid, text.String, heading, sl, el, sb, eb, tokens, terms, chash), nil
	})
	if err != nil {
		return nil, err
	}
	err = each("termless", `SELECT id FROM termless_chunks`, func(r *sql.Rows) (string, string, error) {
		var id int64
		err := r.Scan(&id)
		return key[id], "", err
	})
	if err != nil {
		return nil, err
	}
	if err := loadPostings(ctx, db, d, key); err != nil {
		return nil, err
	}
	err = each("segments", `SELECT COUNT(*) > 0, SUM(docs), SUM(ttokens), SUM(htokens), SUM(tokens) FROM segments`, func(r *sql.Rows) (string, string, error) {
		var any bool
		var docs, tt, ht, bt sql.NullInt64
		err := r.Scan(&any, &docs, &tt, &ht, &bt)
		return "totals", hashOf(docs.Int64, tt.Int64, ht.Int64, bt.Int64), err
	})
	return d, err
}

// loadPostings digests each term's postings over all its rows, sorted by
// chunk key, so that neither segment boundaries nor chunk IDs matter.
func loadPostings(ctx context.Context, db *sql.DB, d digest, key map[int64]string) error {
	m := map[string]string{}
	d["postings"] = m
	rows, err := db.QueryContext(ctx, `SELECT term, n, data FROM postings ORDER BY term`)
	if err != nil {
		return fmt.Errorf("postings: %w", err)
	}
	defer rows.Close()
	var cur string
	var ps []string
	flush := func() {
		if cur == "" && len(ps) == 0 {
			return
		}
		slices.SortFunc(ps, func(a, b string) int { return cmp.Compare(a, b) })
		h := sha256.New()
		io.WriteString(h, strings.Join(ps, "\n"))
		m[cur] = hex.EncodeToString(h.Sum(nil))
		ps = ps[:0]
	}
	for rows.Next() {
		var term string
		var n int
		var data []byte
		if err := rows.Scan(&term, &n, &data); err != nil {
			return fmt.Errorf("postings: %w", err)
		}
		if term != cur {
			flush()
			cur = term
		}
		got := 0
		err := bm25.Decode(data, func(p bm25.Posting) {
			got++
			k, ok := key[int64(p.ID)]
			if !ok {
				k = fmt.Sprintf("missing chunk %d", p.ID)
			}
			ps = append(ps, fmt.Sprintf("%s %v %v", k, p.TF, p.DL))
		})
		if err != nil {
			return fmt.Errorf("postings of %q: %w", term, err)
		}
		if got != n {
			ps = append(ps, fmt.Sprintf("row says %d postings, holds %d", n, got))
		}
	}
	flush()
	return rows.Err()
}
