package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// asMain is the variable under which the test binary runs main instead of
// the tests (TestMain), so that exit statuses are the real ones.
const asMain = "ALPIPE_TEST_AS_MAIN"

// alpipe runs the command line as a person does and returns its exit status.
func alpipe(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), env...), asMain+"=1", "PUBSUB_EMULATOR_HOST=")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// errLine is err as printed, on one line; "" for none.
func errLine(err error) string {
	if err == nil {
		return ""
	}
	return oneLine(err)
}

// writeCSV writes an ERP export with the given order lines under the
// contract's header.
func writeCSV(t *testing.T, lines ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "pedidos-erp.csv")
	body := ""
	if len(lines) > 0 {
		body = "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\n" + strings.Join(lines, "\n") + "\n"
	}
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestServerTakesHostPortOrURL: --server (and ALPIPE_SERVER) is an address
// as serve prints it or as a person types it, on either side of the command.
func TestServerTakesHostPortOrURL(t *testing.T) {
	url := server(t)
	hostPort := strings.TrimPrefix(url, "http://")
	_, port, _ := strings.Cut(hostPort, ":")
	tests := []struct {
		name    string
		args    []string
		env     string
		wantErr string
	}{
		{name: "URL", args: []string{"status", "--server", url}},
		{name: "URL with a slash", args: []string{"status", "--server", url + "/"}},
		{name: "HOST:PORT", args: []string{"status", "--server", hostPort}},
		{name: "localhost:PORT", args: []string{"status", "--server", "localhost:" + port}},
		{name: "HOST:PORT in ALPIPE_SERVER", args: []string{"status"}, env: hostPort},
		{name: "before the command", args: []string{"--server", hostPort, "status"}},
		{name: "query, another route", args: []string{"query", "SELECT 1", "--server", hostPort}},
		{name: "not an address", args: []string{"status", "--server", "http://"}, wantErr: `status: --server "http://": want HOST:PORT or a URL such as http://127.0.0.1:8080`},
		{name: "not http", args: []string{"status", "--server", "ftp://127.0.0.1:1"}, wantErr: `status: --server "ftp://127.0.0.1:1": want HOST:PORT or a URL such as http://127.0.0.1:8080`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("ALPIPE_SERVER", tt.env)
			err := dispatch(context.Background(), tt.args, io.Discard)
			if diff := cmp.Diff(tt.wantErr, errLine(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDropExitStatus: 0 loaded in full, 1 a row quarantined or the file
// rejected, 2 a command line that is not one; and --object takes the
// landing bucket's gs:// URL and refuses another bucket by name.
func TestDropExitStatus(t *testing.T) {
	srv := server(t)
	clean := writeCSV(t, `PED-2026-0320-0001,1,2026-03-20,MOCH-40L-AZ,1,"89,90",CLI-00417,ES`)
	dirty := writeCSV(t, `PED-2026-0321-0001,1,2026-03-21,MOCH-40L-AZ,1,"89,90",CLI-00417,ES`, `PED-2026-0321-0002,1,2026-03-21,MOCH-40L-AZ,x,"89,90",CLI-00417,ES`)
	empty := writeCSV(t)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "loaded in full, by gs:// URL", args: []string{"drop", clean, "--object", "gs://alpinashop-catalogo/exportaciones/2026/03/20/pedidos-erp.csv", "--server", srv},
			wantCode: 0, wantStdout: "status: DONE"},
		{name: "a row quarantined", args: []string{"drop", dirty, "--object", "exportaciones/2026/03/21/pedidos-erp.csv", "--server", srv},
			wantCode: 1, wantStdout: "rows read/loaded/quarantined: 2/1/1", wantStderr: "alpipe: drop: 1 of 2 rows quarantined"},
		{name: "file rejected", args: []string{"drop", empty, "--object", "exportaciones/2026/03/22/pedidos-erp.csv", "--server", srv},
			wantCode: 1, wantStdout: "status: REJECTED", wantStderr: "alpipe: drop: gs://alpinashop-catalogo/exportaciones/2026/03/22/pedidos-erp.csv was REJECTED"},
		{name: "another bucket by URL", args: []string{"drop", clean, "--object", "gs://alpinashop-cuarentena/exportaciones/2026/03/24/pedidos-erp.csv", "--server", "127.0.0.1:1"},
			wantCode: 2, wantStderr: `alpipe: drop: --object "gs://alpinashop-cuarentena/exportaciones/2026/03/24/pedidos-erp.csv": files land only in gs://alpinashop-catalogo`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := alpipe(t, nil, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit status %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantStdout, stdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr)
			}
		})
	}
}

// TestOutputFlag: -o and --output are one flag wherever a command writes a
// file; quarantine get writes to stdout without it; a file whose extension
// names a format the command cannot write is refused before any request.
// query --output streams every row (not --max-rows' 100) in csv or jsonl by
// flag or by extension (money with its scale in both), says how many, and
// leaves nothing else in the folder.
func TestOutputFlag(t *testing.T) {
	q := dropERP(t)
	const sql = "SELECT i AS id_linea, 'a,b&c' AS s, CAST(i * 0.25 AS DECIMAL(10,2)) AS importe " +
		"FROM range(3) t(i)"
	const jsonl = `{"id_linea":0,"s":"a,b&c","importe":"0.00"}` + "\n" +
		`{"id_linea":1,"s":"a,b&c","importe":"0.25"}` + "\n" +
		`{"id_linea":2,"s":"a,b&c","importe":"0.50"}` + "\n"
	tests := []struct {
		name       string
		args       []string // the last is the file written, in an empty folder
		wantStdout string   // a prefix, or all of it when exact
		wantFile   string   // a prefix of the file's content, or all when exact; "" for no file
		wantErr    string
		exact      bool
	}{
		{name: "quarantine get without -o: stdout", args: []string{"quarantine", "get", q}, wantStdout: "linea,codigo,motivo,fila\n"},
		{name: "quarantine get -o FILE", args: []string{"quarantine", "get", q, "-o", "FILE.csv"}, wantStdout: "wrote ", wantFile: "linea,codigo,motivo,fila\n"},
		{name: "quarantine get --output FILE", args: []string{"quarantine", "get", q, "--output", "FILE.csv"}, wantStdout: "wrote ", wantFile: "linea,codigo,motivo,fila\n"},
		{name: "quarantine get -o of another format", args: []string{"quarantine", "get", q, "-o", "FILE.parquet"}, wantErr: "quarantine: --output FILE.parquet: want a file ending in .csv"},
		{name: "query -o csv by extension", args: []string{"query", sql, "-o", "out.csv"},
			wantStdout: "wrote 3 rows to out.csv\n", exact: true,
			wantFile: "id_linea,s,importe\n0,\"a,b&c\",0.00\n1,\"a,b&c\",0.25\n2,\"a,b&c\",0.50\n"},
		{name: "query jsonl by extension", args: []string{"query", sql, "--output", "out.jsonl"},
			wantStdout: "wrote 3 rows to out.jsonl\n", wantFile: jsonl, exact: true},
		{name: "query jsonl by flag", wantStdout: "wrote 3 rows to out.txt\n", wantFile: jsonl,
			args: []string{"query", sql, "--format", "jsonl", "--output", "out.txt"}, exact: true},
		{name: "query --output of another format", args: []string{"query", sql, "--output", "FILE.parquet"}, wantErr: "query: --output FILE.parquet: want a file ending in .csv, .jsonl or .ndjson (or name the format with --format csv|jsonl)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			out, err := run(t, tt.args...)
			got := errLine(err)
			if tt.wantErr == "" && err != nil || !strings.HasPrefix(got, tt.wantErr) {
				t.Fatalf("error %q, want %q", got, tt.wantErr)
			}
			check := func(what, got, want string) {
				if tt.exact && got != want {
					t.Errorf("%s (-want +got):\n%s", what, cmp.Diff(want, got))
				} else if !strings.HasPrefix(got, want) {
					t.Errorf("%s = %q, want it to start %q", what, got, want)
				}
			}
			check("stdout", out, tt.wantStdout)
			wantNames := []string(nil)
			if tt.wantFile != "" {
				wantNames = []string{tt.args[len(tt.args)-1]}
			}
			if diff := cmp.Diff(wantNames, names(t, ".")); diff != "" {
				t.Fatalf("folder (-want +got):\n%s", diff)
			}
			if tt.wantFile != "" {
				b, _ := os.ReadFile(wantNames[0])
				check(wantNames[0], string(b), tt.wantFile)
			}
		})
	}
}

// TestObjectArguments: ls and quarantine get read a bucket and a name from
// PREFIX, OBJECT or gs://BUCKET/..., refusing names the server would refuse.
func TestObjectArguments(t *testing.T) {
	ls := func(arg ...string) func() (string, string, error) {
		return func() (string, string, error) { return lsTarget(arg) }
	}
	get := func(arg string) func() (string, string, error) {
		return func() (string, string, error) { return quarantineObject(arg) }
	}
	tests := []struct {
		name                 string
		parse                func() (bucket, name string, err error)
		wantBucket, wantName string
		wantErr              string
	}{
		{name: "ls: the whole landing bucket", parse: ls(), wantBucket: "alpinashop-catalogo"},
		{name: "ls: a prefix of the landing bucket", parse: ls("exportaciones/2026/"), wantBucket: "alpinashop-catalogo", wantName: "exportaciones/2026/"},
		{name: "ls: another bucket", parse: ls("gs://alpinashop-cuarentena/cuarentena/"), wantBucket: "alpinashop-cuarentena", wantName: "cuarentena/"},
		{name: "ls: a prefix with a newline", parse: ls("exportaciones/\nx"), wantErr: "control character"},
		{name: "ls: a bucket named by a path", parse: ls("gs://../x"), wantErr: "bucket name"},
		{name: "ls: no bucket", parse: ls("gs:///x"), wantErr: "names no bucket"},
		{name: "get: an object", parse: get("cuarentena/lineas_pedido/x.g1.csv"), wantBucket: "alpinashop-cuarentena", wantName: "cuarentena/lineas_pedido/x.g1.csv"},
		{name: "get: by URL", parse: get("gs://alpinashop-cuarentena/cuarentena/x.csv"), wantBucket: "alpinashop-cuarentena", wantName: "cuarentena/x.csv"},
		{name: "get: a hash in the name", parse: get("cuarentena/p.csv#17644.csv"), wantBucket: "alpinashop-cuarentena", wantName: "cuarentena/p.csv#17644.csv"},
		{name: "get: empty", parse: get(""), wantErr: "empty"},
		{name: "get: a bucket only", parse: get("gs://alpinashop-cuarentena"), wantErr: "empty"},
		{name: "get: NUL", parse: get("x\x00.csv"), wantErr: "U+0000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, n, err := tt.parse()
			if (tt.wantErr == "") != (err == nil) || !strings.Contains(errLine(err), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			if diff := cmp.Diff([]string{tt.wantBucket, tt.wantName}, []string{b, n}); err == nil && diff != "" {
				t.Errorf("bucket and name (-want +got):\n%s", diff)
			}
		})
	}
}
