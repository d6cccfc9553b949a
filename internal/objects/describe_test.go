package objects_test

import (
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objectstest"
)

// TestDescribeOneGeneration: Describe reports the generation it is asked
// about, or ErrNotFound, never the live one's attributes.
func TestDescribeOneGeneration(t *testing.T) {
	for _, tc := range []struct {
		name      string
		dir       string
		versioned bool
	}{{"memory", "", true}, {"folder", t.TempDir(), false}} {
		t.Run(tc.name, func(t *testing.T) { testDescribe(t, tc.dir, tc.versioned) })
	}
}

func testDescribe(t *testing.T, dir string, versioned bool) {
	const bucket = "describe-test"
	_, g := objectstest.Fake(t, dir, bucket)
	put := func(content string) objects.Attrs {
		w := g.Create(t.Context(), bucket, "pedidos.csv", "text/csv", nil)
		io.WriteString(w, content)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return w.Attrs()
	}
	old, live := put("a,b\n1,2\n"), put("a,b\n3,4\n")
	tests := []struct {
		name       string
		generation int64
		wantMD5    string
		wantGone   bool
	}{
		{name: "the live generation", generation: live.Generation, wantMD5: live.MD5},
		{name: "0 is the live one", generation: 0, wantMD5: live.MD5},
		{name: "a replaced generation", generation: old.Generation, wantMD5: old.MD5, wantGone: !versioned},
	}
	for _, tt := range tests {
		if tt.wantGone {
			tt.wantMD5 = ""
		}
		t.Run(tt.name, func(t *testing.T) {
			a, err := g.Describe(t.Context(), bucket, "pedidos.csv", tt.generation)
			if diff := cmp.Diff([]any{tt.wantMD5, tt.wantGone}, []any{a.MD5, errors.Is(err, objects.ErrNotFound)}); diff != "" {
				t.Errorf("MD5, gone (-want +got):\n%s (error %v)", diff, err)
			}
		})
	}
	if old.MD5 == live.MD5 || live.MD5 == "" {
		t.Errorf("the two contents have MD5s %q and %q, want two different ones", old.MD5, live.MD5)
	}
}
