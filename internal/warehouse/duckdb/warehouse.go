// Package duckdb is the embedded warehouse, the local default behind the
// same port as BigQuery, on DuckDB, whose DECIMAL(38,9) holds NUMERIC
// exactly. One process opens the database file; its goroutines share it.
package duckdb

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Options tunes the embedded engine.
type Options struct {
	// Accumulation, when set, is the mode of every dashboard view; empty,
	// each view takes its aggregation's declared mode.
	Accumulation string
	// MemoryLimit caps DuckDB's buffer pool ("256MB"), past which it spills
	// to TempDir; default DefaultMemoryLimit.
	MemoryLimit string
	// TempDir holds Load's spool files and DuckDB's spills; default the
	// system's. Open removes the spool files a crash left there, unless
	// another open warehouse uses the folder.
	TempDir string
	// Threads caps DuckDB's threads; 0 is one per core but one, which the
	// producer of a Load's rows needs.
	Threads int
	// MaxLoads is how many Loads run at once; 0 sizes it (loadSlots).
	MaxLoads int
}

// DefaultMemoryLimit keeps a local run small: a Load streams through spool
// files (one 800,000-row file peaks at 110-160 MiB of RSS, BenchmarkLoad).
const DefaultMemoryLimit = "64MB"

// Warehouse is a DuckDB database holding every table, view and the
// bookkeeping that makes loads exactly once.
type Warehouse struct {
	db      *sql.DB
	conn    *duckdb.Connector
	tempDir string
	spool   *os.File // holds the temp folder's shared lock (claimSpoolDir)

	loads   keyedMutex    // one Load per ID at a time, so a duplicate waits and then sees the marker
	refresh sync.Mutex    // DuckDB aborts concurrent deletes of the same rows
	appends keyedMutex    // per table: Append's marker check and insert must not interleave
	slots   chan struct{} // Loads in flight, each holding memory until it commits
}

// The bookkeeping lives in its own schema, out of unqualified queries' way.
const (
	metaSchema  = "alpipe"
	loadsTable  = metaSchema + ".cargas" // one row per committed Load ID
	appendTable = metaSchema + ".anexos" // one row per (table, row ID) appended
)

// JemallocConf configures DuckDB's jemalloc, read at process start, so
// only the launcher can set it. JemallocReturnFreed gives freed pages back
// at once instead of after seconds, for about 7% more CPU per load
// (BenchmarkLoad, three 800,000-row loads: peak RSS 135 against 200 MiB).
const (
	JemallocConf        = "DUCKDB_JE_MALLOC_CONF"
	JemallocReturnFreed = "dirty_decay_ms:0,muzzy_decay_ms:0"
)

// Open opens (creating when needed) the database at path, "" meaning in
// memory, and creates what is missing; a table with another schema than
// declared is an error.
func Open(path string, opt Options) (*Warehouse, error) {
	var views []string
	for _, v := range warehouse.Views() {
		if opt.Accumulation != "" {
			v.Accumulation = opt.Accumulation
		}
		sql, err := v.SQL(warehouse.DuckDB, warehouse.Unqualified)
		if err != nil {
			return nil, fmt.Errorf("open warehouse: %w", err)
		}
		views = append(views, "CREATE OR REPLACE VIEW "+v.Name+" AS "+sql)
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open warehouse %q: path must not contain '?' or '#'", path)
	}
	// Absolute: DuckDB resolves a relative temp_directory on each use, but
	// allowed_directories (confine) at Open (TestRelativeTempDir).
	tempDir, err := filepath.Abs(cmp.Or(opt.TempDir, os.TempDir()))
	if err != nil {
		return nil, fmt.Errorf("open warehouse: temp dir: %w", err)
	}
	if err := os.MkdirAll(tempDir, 0o755); err != nil {
		return nil, fmt.Errorf("open warehouse: temp dir: %w", err)
	}
	spool, err := claimSpoolDir(tempDir)
	if err != nil {
		return nil, fmt.Errorf("open warehouse: %w", err)
	}
	threads := opt.Threads
	if threads <= 0 {
		threads = max(1, runtime.NumCPU()-1)
	}
	cfg := url.Values{}
	cfg.Set("temp_directory", tempDir)
	cfg.Set("memory_limit", cmp.Or(opt.MemoryLimit, DefaultMemoryLimit))
	cfg.Set("threads", strconv.Itoa(threads))
	cfg.Set("preserve_insertion_order", "false")
	connector, err := duckdb.NewConnector(path+"?"+cfg.Encode(), nil)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open warehouse %q: %w", path, err), spool.Close())
	}
	w := &Warehouse{db: sql.OpenDB(connector), conn: connector, tempDir: tempDir, spool: spool}
	fail := func(err error) (*Warehouse, error) {
		return nil, errors.Join(fmt.Errorf("open warehouse %q: %w", path, err), w.Close())
	}
	ctx := context.Background()
	if err := w.create(ctx, views); err != nil {
		return fail(err)
	}
	if err := w.confine(ctx); err != nil {
		return fail(err)
	}
	slots := opt.MaxLoads
	if slots <= 0 {
		limit, err := w.memoryLimit(ctx)
		if err != nil {
			return fail(err)
		}
		slots = loadSlots(limit, threads)
	}
	w.slots = make(chan struct{}, slots)
	return w, nil
}

// confine shuts SQL out of the file system and the network (the local
// query endpoint runs any SQL it receives) but for the spool folder, and
// locks the configuration so that no statement can undo it.
func (w *Warehouse) confine(ctx context.Context) error {
	for _, stmt := range []string{
		"SET allowed_directories = [" + quoteLiteral(w.tempDir+string(filepath.Separator)) + "]",
		"SET enable_external_access = false",
		"SET autoload_known_extensions = false",
		"SET autoinstall_known_extensions = false",
		"SET lock_configuration = true",
	} {
		if _, err := w.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("confine (%s): %w", stmt, err)
		}
	}
	return nil
}

// Close releases the database; it must not be used afterwards.
func (w *Warehouse) Close() error {
	serr := w.spool.Close()
	if errors.Is(serr, os.ErrClosed) { // Close twice, as database/sql allows
		serr = nil
	}
	return errors.Join(w.db.Close(), w.conn.Close(), serr)
}

func (w *Warehouse) create(ctx context.Context, views []string) error {
	stmts := []string{
		"CREATE SCHEMA IF NOT EXISTS " + metaSchema,
		"CREATE TABLE IF NOT EXISTS " + loadsTable + " (id VARCHAR PRIMARY KEY, tabla VARCHAR NOT NULL, filas BIGINT NOT NULL, cargado_en TIMESTAMP NOT NULL)",
		"CREATE TABLE IF NOT EXISTS " + appendTable + " (tabla VARCHAR NOT NULL, id VARCHAR NOT NULL, PRIMARY KEY (tabla, id))",
	}
	for _, t := range warehouse.Tables() {
		stmts = append(stmts, createTable(t))
	}
	stmts = append(stmts, views...)
	for _, s := range stmts {
		if _, err := w.db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", firstLine(s), err)
		}
	}
	for _, t := range warehouse.Tables() {
		if err := w.checkSchema(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// sqlType maps a BigQuery column type to its DuckDB twin.
func sqlType(t warehouse.Type) (string, error) {
	switch t {
	case warehouse.String:
		return "VARCHAR", nil
	case warehouse.Int64:
		return "BIGINT", nil
	case warehouse.Numeric:
		return "DECIMAL(38,9)", nil
	case warehouse.Date:
		return "DATE", nil
	case warehouse.Timestamp:
		return "TIMESTAMP", nil
	}
	return "", fmt.Errorf("no DuckDB type for %s", t)
}

func createTable(t warehouse.Table) string {
	cols := make([]string, len(t.Schema))
	for i, f := range t.Schema {
		typ, err := sqlType(f.Type)
		if err != nil {
			panic(fmt.Sprintf("table %s column %s: %v", t.Name, f.Name, err)) // schema files are checked by tests
		}
		cols[i] = f.Name + " " + typ
		if f.Required() {
			cols[i] += " NOT NULL"
		}
	}
	return "CREATE TABLE IF NOT EXISTS " + t.Name + " (" + strings.Join(cols, ", ") + ")"
}

// checkSchema fails a table created by another schema than declared.
func (w *Warehouse) checkSchema(ctx context.Context, t warehouse.Table) error {
	rows, err := w.db.QueryContext(ctx,
		`SELECT column_name, data_type, is_nullable FROM information_schema.columns
		 WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position`, t.Name)
	if err != nil {
		return fmt.Errorf("schema of %s: %w", t.Name, err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name, typ, nullable string
		if err := rows.Scan(&name, &typ, &nullable); err != nil {
			return fmt.Errorf("schema of %s: %w", t.Name, err)
		}
		got = append(got, name+" "+typ+" "+nullable)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("schema of %s: %w", t.Name, err)
	}
	want := make([]string, len(t.Schema))
	for i, f := range t.Schema {
		typ, _ := sqlType(f.Type)
		nullable := "YES"
		if f.Required() {
			nullable = "NO"
		}
		want[i] = f.Name + " " + typ + " " + nullable
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		return fmt.Errorf("table %s exists with columns (%s), but its schema declares (%s)",
			t.Name, strings.Join(got, ", "), strings.Join(want, ", "))
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '('); i > 0 {
		return strings.TrimSpace(s[:i])
	}
	if len(s) > 60 {
		return s[:60]
	}
	return s
}

// keyedMutex serialises work per key without holding a lock per key forever.
type keyedMutex struct {
	mu   sync.Mutex
	keys map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.keys == nil {
		k.keys = make(map[string]*keyedEntry)
	}
	e := k.keys[key]
	if e == nil {
		e = &keyedEntry{}
		k.keys[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(k.keys, key)
		}
		k.mu.Unlock()
	}
}
