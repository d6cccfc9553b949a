package replay

import (
	"fmt"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Dates is an inclusive range of UTC dates; the zero value is every date.
type Dates struct {
	From, To int32 // days since 1970-01-01
	Set      bool
}

// ParseDates reads "YYYY-MM-DD..YYYY-MM-DD", "YYYY-MM-DD" or "".
func ParseDates(s string) (Dates, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Dates{}, nil
	}
	from, to, ranged := strings.Cut(s, "..")
	if !ranged {
		to = from
	}
	a, errFrom := time.Parse(time.DateOnly, strings.TrimSpace(from))
	b, errTo := time.Parse(time.DateOnly, strings.TrimSpace(to))
	if errFrom != nil || errTo != nil {
		return Dates{}, fmt.Errorf("dates %q: want YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD", s)
	}
	d := Dates{From: warehouse.DateOf(a), To: warehouse.DateOf(b), Set: true}
	if d.To < d.From {
		return Dates{}, fmt.Errorf("dates %q: the range ends before it starts", s)
	}
	return d, nil
}

func (d Dates) Contains(t time.Time) bool {
	if !d.Set {
		return true
	}
	day := warehouse.DateOf(t)
	return day >= d.From && day <= d.To
}

func (d Dates) String() string {
	if !d.Set {
		return ""
	}
	return warehouse.FormatDate(d.From) + ".." + warehouse.FormatDate(d.To)
}
