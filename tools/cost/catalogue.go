package cost

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"sort"
)

// zipfScale makes the weight 1/r of rank r an integer (scale/r) without
// losing the tail's differences: 3,000 ranks lose under 1e-9 of a weight.
const zipfScale = 1_000_000_000_000

// catalogue draws SKUs by the Zipf weights of Catalogue, in integers so
// that a seed gives the same orders on every machine.
type catalogue struct {
	names []string
	cum   []int64 // cum[r] = the weights of ranks 0..r
}

func newCatalogue(c Catalogue) catalogue {
	cat := catalogue{names: make([]string, c.SKUs), cum: make([]int64, c.SKUs)}
	var sum int64
	for r := range c.SKUs {
		if r < len(c.Top) {
			cat.names[r] = c.Top[r]
		} else {
			cat.names[r] = fmt.Sprintf("ART-%05d", r+1)
		}
		sum += zipfScale / int64(r+1)
		cat.cum[r] = sum
	}
	return cat
}

// draw returns the rank of one SKU.
func (c catalogue) draw(rng *rand.Rand) int {
	x := rng.Int64N(c.cum[len(c.cum)-1])
	return sort.Search(len(c.cum), func(i int) bool { return c.cum[i] > x })
}

// share is the share of the lines that go to the first n ranks.
func (c catalogue) share(n int) *big.Rat {
	if n <= 0 || len(c.cum) == 0 {
		return new(big.Rat)
	}
	return frac(c.cum[min(n, len(c.cum))-1], c.cum[len(c.cum)-1])
}
