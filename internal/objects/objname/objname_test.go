package objname

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkRefusal fails t unless err is nil when want is "", or an error whose
// message (which names the rule) contains want.
func checkRefusal(t *testing.T, call string, err error, want string) {
	t.Helper()
	got := ""
	if err != nil {
		got = err.Error()
	}
	if (want == "") != (got == "") || !strings.Contains(got, want) {
		t.Errorf("%s = %q, want an error containing %q", call, got, want)
	}
}

func TestObjectAndLocal(t *testing.T) {
	long := strings.Repeat("a", MaxObjectBytes)
	for _, tc := range []struct {
		name      string
		in        string
		wantGCS   string // substring of Object's error
		wantLocal string // substring of Local's error
	}{
		{name: "plain", in: "exportaciones/2026/12/01/lineas-pedido-1.csv"},
		{name: "unicode", in: "exportaciones/año/piña ñ.csv"},
		{name: "backslash is a plain character", in: `a\..\b`},
		{name: "percent text is a plain character", in: "%2e%2e/x"},
		{name: "1024 bytes", in: long},
		{name: "empty", in: "", wantGCS: "empty", wantLocal: "empty"},
		{name: "1025 bytes", in: long + "a", wantGCS: "more than Cloud Storage's 1024", wantLocal: "more than"},
		{name: "dot", in: ".", wantGCS: "not allowed", wantLocal: "not allowed"},
		{name: "dot dot", in: "..", wantGCS: "not allowed", wantLocal: "not allowed"},
		{name: "newline", in: "a\nb.csv", wantGCS: "U+000A", wantLocal: "U+000A"},
		{name: "carriage return", in: "a\rb.csv", wantGCS: "U+000D", wantLocal: "U+000D"},
		{name: "NUL", in: "a\x00b", wantGCS: "U+0000", wantLocal: "U+0000"},
		{name: "DEL", in: "a\x7fb", wantGCS: "U+007F", wantLocal: "U+007F"},
		{name: "C1 control", in: "a\u0085b", wantGCS: "U+0085", wantLocal: "U+0085"},
		{name: "invalid UTF-8", in: "a\xffb", wantGCS: "not valid UTF-8", wantLocal: "not valid UTF-8"},
		{name: "acme challenge", in: ".well-known/acme-challenge/x", wantGCS: "acme-challenge", wantLocal: "acme-challenge"},
		{name: "parent segments", in: "../../canary.txt", wantLocal: "empty, . or .. segment"},
		{name: "inner parent segment", in: "a/../b", wantLocal: "empty, . or .. segment"},
		{name: "dot segment", in: "a/./b", wantLocal: "empty, . or .. segment"},
		{name: "empty segment", in: "a//b", wantLocal: "empty, . or .. segment"},
		{name: "leading slash", in: "/etc/passwd", wantLocal: "empty, . or .. segment"},
		{name: "trailing slash", in: "folder/", wantLocal: "ends in /"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefusal(t, fmt.Sprintf("Object(%q)", tc.in), Object(tc.in), tc.wantGCS)
			checkRefusal(t, fmt.Sprintf("Local(%q)", tc.in), Local(tc.in), tc.wantLocal)
		})
	}
}

func TestPrefix(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{name: "empty lists everything", in: ""},
		{name: "folder", in: "exportaciones/"},
		{name: "dot dot text is only a filter", in: "../"},
		{name: "newline", in: "a\n", want: "U+000A"},
		{name: "too long", in: strings.Repeat("a", 1025), want: "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefusal(t, fmt.Sprintf("Prefix(%q)", tc.in), Prefix(tc.in), tc.want)
		})
	}
}

func TestBucket(t *testing.T) {
	var got []string
	for _, b := range []string{
		"alpinashop-catalogo", "landing", "a_b", "my.bucket.example", "abc",
		"ab", strings.Repeat("a", 64), "Upper", "a b", "-abc", "abc-", "a..b", "..",
		"192.168.1.1", "goog-x", "my-google-bucket", "a/b", "a%2Fb",
	} {
		if err := Bucket(b); err != nil {
			got = append(got, b)
		}
	}
	want := []string{"ab", strings.Repeat("a", 64), "Upper", "a b", "-abc", "abc-", "a..b", "..",
		"192.168.1.1", "goog-x", "my-google-bucket", "a/b", "a%2Fb"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refused buckets (-want +got):\n%s", diff)
	}
}
