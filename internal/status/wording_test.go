package status

import "testing"

// TestOpenWindowsWording: the count reads as English at zero, one and
// many; it used to say "0 (window, key)s in 0 windows".
func TestOpenWindowsWording(t *testing.T) {
	tests := []struct {
		name          string
		windows, keys int
		want          string
	}{
		{name: "none", want: "none"},
		{name: "one", windows: 1, keys: 1, want: "1 (1 key)"},
		{name: "many", windows: 4, keys: 16, want: "4 (16 keys in all)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := openWindows(tt.windows, tt.keys); got != tt.want {
				t.Errorf("openWindows(%d, %d) = %q, want %q", tt.windows, tt.keys, got, tt.want)
			}
		})
	}
}
