package sqlite

import (
	"context"
	"database/sql"
	"strings"
)

// inserter writes rows with multi-row INSERT statements: each statement
// costs far more than a row does, so rows are sent rowsPerStmt at a time.
// The write path's statements say INSERT OR ROLLBACK: a failed write
// abandons its whole transaction anyway, and a constraint that can only end
// it that way needs no statement journal, into which SQLite otherwise
// copies the pages a multi-row INSERT touches (at 300,000 chunks the copies
// fell from 4.7 to 3.3 s of about 100 s of CPU; the rest are page spills).
type inserter struct {
	ctx   context.Context
	tx    *sql.Tx
	head  string // "INSERT INTO t(a, b)"
	cols  int
	per   int
	full  *sql.Stmt // prepared for exactly per rows
	args  []any
	count int
}

// rowsPerStmt keeps a statement under SQLite's default limit of 32,766
// parameters for any of our tables.
const rowsPerStmt = 256

func newInserter(ctx context.Context, tx *sql.Tx, head string, cols int) *inserter {
	return &inserter{ctx: ctx, tx: tx, head: head, cols: cols, per: rowsPerStmt}
}

func (in *inserter) query(rows int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", in.cols), ",") + ")"
	return in.head + " VALUES " + strings.TrimSuffix(strings.Repeat(row+",", rows), ",")
}

// add queues one row, writing a full statement's worth when it has one.
func (in *inserter) add(vals ...any) error {
	in.args = append(in.args, vals...)
	in.count++
	if in.count < in.per {
		return nil
	}
	if in.full == nil {
		st, err := in.tx.PrepareContext(in.ctx, in.query(in.per))
		if err != nil {
			return err
		}
		in.full = st
	}
	_, err := in.full.ExecContext(in.ctx, in.args...)
	in.args, in.count = in.args[:0], 0
	return err
}

// flush writes the queued rows and releases the statement.
func (in *inserter) flush() error {
	defer func() {
		if in.full != nil {
			in.full.Close()
			in.full = nil
		}
	}()
	if in.count == 0 {
		return nil
	}
	_, err := in.tx.ExecContext(in.ctx, in.query(in.count), in.args...)
	in.args, in.count = in.args[:0], 0
	return err
}
