package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/localapi"
)

// TestBadNamesRefusedBeforeAnyRequest: drop, validate and quarantine refuse
// a name Cloud Storage or the local folder layout refuses, with the rule,
// before contacting the server (none answers at the URL, so a request would
// fail as unreachable instead).
func TestBadNamesRefusedBeforeAnyRequest(t *testing.T) {
	const dead = "http://127.0.0.1:1"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "drop with a newline", args: []string{"drop", erpFile, "--object", "exportaciones/2026/03/14/a\nb.csv"}, want: "drop: --object: object name"},
		{name: "drop --upload-only with a newline", args: []string{"drop", erpFile, "--upload-only", "--object", "exportaciones/2026/03/14/a\nb.csv"}, want: "U+000A"},
		{name: "drop out of the bucket", args: []string{"drop", erpFile, "--object", "exportaciones/../../alpinashop-cuarentena/x.csv"}, want: "empty, . or .. segment"},
		{name: "validate with a carriage return", args: []string{"validate", erpFile, "--object", "exportaciones/2026/03/14/a\r.csv"}, want: "U+000D"},
		{name: "quarantine get of another bucket by path", args: []string{"quarantine", "get", "../alpinashop-catalogo/exportaciones/x.csv"}, want: "empty, . or .. segment"},
		{name: "quarantine get of another bucket by URL", args: []string{"quarantine", "get", "gs://alpinashop-catalogo/exportaciones/x.csv"}, want: "quarantine get reads only gs://" + localapi.QuarantineBucket},
		{name: "quarantine get leaving by URL", args: []string{"quarantine", "get", "gs://" + localapi.QuarantineBucket + "/../x"}, want: ".. segment"},
		{name: "quarantine ls with a newline", args: []string{"quarantine", "ls", "cuarentena/\n"}, want: "U+000A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args[0] != "validate" { // validate works offline: it has no --server
				args = append(args, "--server", dead)
			}
			err := dispatch(context.Background(), args, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, client.ErrUnreachable) {
				t.Errorf("error = %v, want a refusal containing %q before any request", err, tc.want)
			}
		})
	}
}

func TestQuarantineObject(t *testing.T) {
	q := localapi.QuarantineBucket
	for _, tc := range []struct {
		name, arg, wantName, wantErr string
	}{
		{name: "object", arg: "cuarentena/lineas_pedido/x.g1.csv", wantName: "cuarentena/lineas_pedido/x.g1.csv"},
		{name: "quarantine URL", arg: "gs://" + q + "/cuarentena/x.csv", wantName: "cuarentena/x.csv"},
		{name: "hash in the name", arg: "cuarentena/pedidos.csv#1764410400000001.csv", wantName: "cuarentena/pedidos.csv#1764410400000001.csv"},
		{name: "landing URL", arg: "gs://alpinashop-catalogo/x.csv", wantErr: "reads only"},
		{name: "parent path", arg: "../alpinashop-catalogo/x.csv", wantErr: ".. segment"},
		{name: "empty", arg: "", wantErr: "empty"},
		{name: "bucket only", arg: "gs://" + q, wantErr: "empty"},
		{name: "NUL", arg: "x\x00.csv", wantErr: "U+0000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket, name, err := quarantineObject(tc.arg)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if (tc.wantErr == "") != (err == nil) || !strings.Contains(got, tc.wantErr) {
				t.Fatalf("quarantineObject(%q) error %v, want one containing %q", tc.arg, err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff([]string{q, tc.wantName}, []string{bucket, name}); diff != "" {
				t.Errorf("bucket and name (-want +got):\n%s", diff)
			}
		})
	}
}
