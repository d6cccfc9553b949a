package duckdb

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// spoolRows is the rows per spool file: about one DuckDB row group.
const spoolRows = 1 << 17

// spoolAndInsert streams rows into CSV spool files and inserts each full
// one with read_csv on conn, in the caller's transaction, while the next is
// written: the source's reading overlaps DuckDB's insert, and at most three
// files exist at a time. Faster than the duckdb-go Appender (BenchmarkLoad),
// which boxes every cell and crosses cgo per string.
func (w *Warehouse) spoolAndInsert(ctx context.Context, conn *sql.Conn, t warehouse.Table, rows warehouse.RowSource) (int64, error) {
	files := make(chan spoolFile, 1)
	var failed atomic.Bool
	inserted := make(chan error, 1)
	go func() {
		var err error
		for f := range files {
			if err == nil {
				if _, err = conn.ExecContext(ctx, insertFromCSV(t, f.path, f.first)); err != nil {
					err = fmt.Errorf("insert spool: %w", err)
					failed.Store(true)
				}
			}
			_ = os.Remove(f.path)
		}
		inserted <- err
	}()
	n, err := w.writeSpools(t, rows, files, &failed)
	close(files)
	if ierr := <-inserted; ierr != nil {
		return 0, ierr // the insert failing is what stopped the writer
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// spoolFile is a closed spool file and the template row of its empty fields.
type spoolFile struct {
	path  string
	first []warehouse.Value
}

// writeSpools writes rows into spool files, handing each closed one to
// files, and returns the row count; it stops once the inserter failed.
func (w *Warehouse) writeSpools(t warehouse.Table, rows warehouse.RowSource, files chan<- spoolFile, failed *atomic.Bool) (int64, error) {
	enc := csvEncoder{schema: t.Schema}
	var (
		f      *os.File
		bw     *bufio.Writer
		n      int64
		inFile int
	)
	closeFile := func() error {
		err := bw.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(f.Name())
			f = nil
			return fmt.Errorf("spool: %w", err)
		}
		files <- spoolFile{path: f.Name(), first: enc.first}
		f, inFile = nil, 0
		return nil
	}
	defer func() {
		if f != nil { // an error left a file open
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	for rows.Next() {
		if f == nil {
			if failed.Load() {
				return n, nil
			}
			var err error
			if f, err = os.CreateTemp(w.tempDir, spoolPattern); err != nil {
				return n, fmt.Errorf("spool: %w", err)
			}
			if bw == nil {
				bw = bufio.NewWriterSize(f, 256<<10)
			} else {
				bw.Reset(f)
			}
		}
		line, err := enc.append(enc.buf[:0], rows.Row())
		if err != nil {
			return n, fmt.Errorf("row %d: %w", n+1, err)
		}
		enc.buf = line
		if _, err := bw.Write(line); err != nil {
			return n, fmt.Errorf("spool: %w", err)
		}
		n++
		if inFile++; inFile == spoolRows {
			if err := closeFile(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("read rows: %w", err)
	}
	if f != nil {
		if err := closeFile(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// csvEncoder renders rows as spool CSV: strings quoted (an empty unquoted
// field is NULL), the rest as integers (NUMERIC unscaled, DATE in days,
// TIMESTAMP in microseconds), which DuckDB converts exactly and fast where
// its text to DECIMAL cast took 17 s instead of 1 s for 800,000 rows.
// A REQUIRED value equal to the first row's is left empty and filled back
// by the INSERT: lineage repeats on every row, and not parsing it again
// saves about a quarter of the insert.
type csvEncoder struct {
	schema []warehouse.Field
	cols   []encColumn
	first  []warehouse.Value // the template; nil until the first row
	buf    []byte
}

type encColumn struct {
	kind     kind
	required bool
}

// kind is a column type as a small integer: warehouse.Type is a string.
type kind uint8

const (
	kindString kind = iota
	kindInt64
	kindNumeric
	kindDate
	kindTimestamp
	kindOther
)

func kindOf(t warehouse.Type) kind {
	switch t {
	case warehouse.String:
		return kindString
	case warehouse.Int64:
		return kindInt64
	case warehouse.Numeric:
		return kindNumeric
	case warehouse.Date:
		return kindDate
	case warehouse.Timestamp:
		return kindTimestamp
	}
	return kindOther
}

// maxLine bounds one spooled row, below read_csv's max_line_size.
const maxLine = 4 << 20

var errNotUTF8 = errors.New("invalid UTF-8")

func (e *csvEncoder) append(b []byte, row []warehouse.Value) ([]byte, error) {
	if len(row) != len(e.schema) {
		return b, fmt.Errorf("%d values for %d columns", len(row), len(e.schema))
	}
	if e.cols == nil {
		e.cols = make([]encColumn, len(e.schema))
		for i, f := range e.schema {
			e.cols[i] = encColumn{kind: kindOf(f.Type), required: f.Required()}
		}
	}
	template := e.first != nil
	start := len(b)
	for i := range row {
		v, c := &row[i], &e.cols[i]
		if i > 0 {
			b = append(b, ',')
		}
		if v.Null {
			if c.required {
				return b, fmt.Errorf("column %s is REQUIRED but NULL", e.schema[i].Name)
			}
			continue
		}
		if template && c.required && warehouse.SameValue(e.schema[i].Type, v, &e.first[i]) {
			continue
		}
		switch c.kind {
		case kindString:
			if !utf8.ValidString(v.Str) {
				return b, fmt.Errorf("column %s: %w", e.schema[i].Name, errNotUTF8)
			}
			b = appendQuoted(b, v.Str)
		case kindInt64:
			b = strconv.AppendInt(b, v.Int, 10)
		case kindNumeric:
			b = v.Dec.AppendNanos(b)
		case kindDate:
			b = strconv.AppendInt(b, int64(v.Days), 10)
		case kindTimestamp:
			b = strconv.AppendInt(b, v.Time.UnixMicro(), 10)
		default:
			return b, fmt.Errorf("column %s: unsupported type %s", e.schema[i].Name, e.schema[i].Type)
		}
	}
	if len(b)-start > maxLine {
		return b, fmt.Errorf("row of %d bytes exceeds the %d bytes a load accepts", len(b)-start, maxLine)
	}
	if !template {
		e.first = make([]warehouse.Value, len(row))
		for i, v := range row {
			v.Str = strings.Clone(v.Str) // the source may reuse its memory
			e.first[i] = v
		}
	}
	return append(b, '\n'), nil
}

// appendQuoted appends s as a quoted CSV field; ReplaceAll allocates only
// for a string holding a quote.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}

// insertFromCSV appends a spool file to t, its types explicit (no
// sniffing), first's values filling the fields left empty.
func insertFromCSV(t warehouse.Table, path string, first []warehouse.Value) string {
	var cols, sel strings.Builder
	for i, f := range t.Schema {
		if i > 0 {
			cols.WriteString(", ")
			sel.WriteString(", ")
		}
		name := "c" + strconv.Itoa(i)
		typ, expr := spoolColumn(f, name)
		cols.WriteString("'" + name + "': '" + typ + "'")
		if f.Required() && first != nil {
			expr = "COALESCE(" + expr + ", " + literal(f, first[i]) + ")"
		}
		sel.WriteString(expr + " AS " + f.Name)
	}
	return "INSERT INTO " + t.Name + " SELECT " + sel.String() +
		" FROM read_csv(" + quoteLiteral(path) + ", header = false, delim = ',', quote = '\"', escape = '\"'," +
		" new_line = '\\n', auto_detect = false, allow_quoted_nulls = false, strict_mode = true," +
		// DuckDB's default buffer, 16 MB per thread, is most of a local run's memory.
		" buffer_size = " + strconv.Itoa(2*maxLine) + ", max_line_size = " + strconv.Itoa(2*maxLine) + "," +
		" columns = {" + cols.String() + "})"
}

// spoolColumn returns a spooled column's CSV type and its value's expression.
func spoolColumn(f warehouse.Field, name string) (csvType, expr string) {
	switch f.Type {
	case warehouse.Numeric:
		// HUGEINT: NUMERIC's 38 digits of units pass 64 bits.
		return "HUGEINT", "CAST(" + name + " AS DECIMAL(38,0)) * " + nanoUnit
	case warehouse.Timestamp:
		return "BIGINT", "make_timestamp(" + name + ")"
	case warehouse.Date:
		return "INTEGER", "DATE '1970-01-01' + " + name
	}
	typ, _ := sqlType(f.Type)
	return typ, name
}

func literal(f warehouse.Field, v warehouse.Value) string {
	switch f.Type {
	case warehouse.String:
		// A NUL byte would end the SQL text early: spell it chr(0).
		parts := strings.Split(v.Str, "\x00")
		for i, p := range parts {
			parts[i] = quoteLiteral(p)
		}
		return strings.Join(parts, " || chr(0) || ")
	case warehouse.Int64:
		return "CAST(" + strconv.FormatInt(v.Int, 10) + " AS BIGINT)"
	case warehouse.Numeric:
		return "CAST(" + string(v.Dec.AppendNanos(nil)) + " AS DECIMAL(38,0)) * " + nanoUnit
	case warehouse.Date:
		return "DATE '" + warehouse.FormatDate(v.Days) + "'"
	case warehouse.Timestamp:
		return "make_timestamp(CAST(" + strconv.FormatInt(v.Time.UnixMicro(), 10) + " AS BIGINT))"
	}
	return "NULL"
}

// nanoUnit is 10^-9: an unscaled integer times it is its DECIMAL(38,9).
const nanoUnit = "CAST('0.000000001' AS DECIMAL(10,9))"

func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
