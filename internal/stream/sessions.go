package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// An order of a session aggregation is classified by its proto-window
// [t, t+G) before merging; the fold merges a key's sessions in the part
// document its key hashes to, and keeps the agenda per part.
const (
	// sessionPartsPerTx keeps a fold transaction far under Firestore's 10 MiB.
	sessionPartsPerTx = 4
	// DefaultSessionPartBytes is the size past which the session parts
	// double: large, because a tick reads and writes every part its keys
	// touch, and under Firestore's 1 MiB with room for the overhead.
	DefaultSessionPartBytes = 768 << 10
	// maxKeySessions keeps one key's sessions (about 220 bytes each) far
	// under 1 MiB. Open sessions of a key are disjoint and at least G long,
	// so reaching it takes event times hundreds of gaps ahead of W.
	maxKeySessions = 1000
)

// sessionsPart is the open sessions of the keys that hash to one part, and
// the last generation folded into it: a fold interrupted between two of its
// transactions never adds a generation to a part twice. Emptied, it stays.
type sessionsPart struct {
	Layout int                         `json:"layout"`
	Gen    int64                       `json:"gen"`
	Stored map[string][]storedSession  `json:"keys,omitempty"`
	Keys   map[string][]window.Session `json:"-"`
}

func (d *sessionsPart) load() {
	d.Keys = make(map[string][]window.Session, len(d.Stored))
	for k, ss := range d.Stored {
		d.Keys[k] = loadSessions(ss)
	}
	d.Stored = nil
}

func (d sessionsPart) layoutOf() int { return d.Layout }
func (d sessionsPart) stamped() any {
	d.Layout, d.Stored = StateLayout, make(map[string][]storedSession, len(d.Keys))
	for k, ss := range d.Keys {
		d.Stored[k] = storeSessions(ss)
	}
	return d
}

// partEntry is a session part in the fold document's agenda.
type partEntry struct {
	Keys         int       `json:"n,omitempty"`  // keys with open sessions
	Due          time.Time `json:"due,omitzero"` // when a trigger next fires on processing time
	At           time.Time `json:"at,omitzero"`  // earliest W at which a session reaches its end or expiry
	Error        string    `json:"error,omitempty"`
	FailingSince time.Time `json:"failing_since,omitzero"`
	Parked       bool      `json:"parked,omitempty"`
}

func (e partEntry) merge(o partEntry) partEntry {
	e.Keys += o.Keys
	e.Due, e.At = earliest(e.Due, o.Due), earliest(e.At, o.At)
	return e
}

func (e partEntry) due(wm, now time.Time) bool {
	return (!e.Due.IsZero() && !now.Before(e.Due)) || (!e.At.IsZero() && reached(wm, e.At)) || e.Error != "" || e.Parked
}

func (e partEntry) idle() bool { return e.Keys == 0 && e.Error == "" && !e.Parked }

func (d foldDoc) sessionKeys() int {
	n := 0
	for _, e := range d.Agenda {
		n += e.Keys
	}
	return n
}

func (p paths) sessionsPart(i int) string { return p.sessions + "/" + strconv.Itoa(i) }

func (p paths) parkedPart(i int, gen int64) string {
	return fmt.Sprintf("%s/s%d_%d", p.parked, i, gen)
}

// foldSessions is fold for session windows: the parts the records' keys
// hash to, then the parts due, sessionPartsPerTx a transaction. The last
// moves Folded; the ones before mark each part with the generation folded
// in, so a fold that stops between them and runs again adds nothing twice.
func (p *Processor) foldSessions(ctx context.Context, pl foldPlan, fd foldDoc) (foldResult, error) {
	c := sessionChunk{parts: max(1, fd.SessionParts), byKey: map[string][]foldElem{}, byPart: map[int][]string{}}
	for _, e := range pl.elems {
		if _, ok := c.byKey[e.Key]; !ok {
			i := partOf(e.Key, c.parts)
			c.byPart[i] = append(c.byPart[i], e.Key)
		}
		c.byKey[e.Key] = append(c.byKey[e.Key], e)
	}
	visit := slices.Sorted(maps.Keys(c.byPart))
	for _, i := range slices.Sorted(maps.Keys(fd.Agenda)) {
		if _, ok := c.byPart[i]; !ok && pl.triggers() && fd.Agenda[i].due(pl.wm, pl.now) {
			visit = append(visit, i)
		}
	}
	var fr foldResult
	for first := true; first || len(visit) > 0; first = false {
		c.of = visit[:min(len(visit), sessionPartsPerTx)]
		visit = visit[len(c.of):]
		r, err := p.sessionTx(ctx, pl, c, len(visit) == 0)
		fr.add(r)
		if err != nil {
			return fr, err
		}
	}
	return fr, nil
}

// sessionChunk is what one fold transaction of session windows visits: the
// parts of, numbered among parts as the fold began.
type sessionChunk struct {
	parts  int
	of     []int
	byPart map[int][]string
	byKey  map[string][]foldElem
}

// sessionPart is a part as a fold transaction holds it.
type sessionPart struct {
	i      int
	doc    *sessionsPart // nil while it cannot be read
	read   docstore.Doc
	entry  partEntry
	folded bool                 // this transaction folded it
	keys   map[string]partEntry // the agenda of each key whose trigger ran
}

// sessionTx is one fold transaction of session windows over the parts of
// c, as foldTx is for windows; final moves Folded. A part that grows past
// the bound doubles the parts, which reads and rewrites them all once.
func (p *Processor) sessionTx(ctx context.Context, pl foldPlan, c sessionChunk, final bool) (foldResult, error) {
	body := func(tx docstore.Tx, fd *foldDoc, fr *foldResult) ([]entry, error) {
		// An earlier transaction of this fold may have doubled the parts:
		// those of c.of are then spread over their descendants.
		parts := max(c.parts, fd.SessionParts)
		elems := map[int]map[string][]foldElem{}
		for _, j := range c.of {
			for i := j; i < parts; i += c.parts {
				elems[i] = nil
			}
			for _, k := range c.byPart[j] {
				i := partOf(k, parts)
				if elems[i] == nil {
					elems[i] = map[string][]foldElem{}
				}
				elems[i][k] = c.byKey[k]
			}
		}
		ids := slices.Sorted(maps.Keys(elems))
		sps, err := readSessionParts(tx, pl.a, ids, fd.Agenda)
		if err != nil {
			return nil, err
		}
		var entries []entry
		var unpark []string
		park := map[int][]foldElem{}
		for _, sp := range sps {
			if sp.doc == nil {
				for _, k := range slices.Sorted(maps.Keys(elems[sp.i])) {
					park[sp.i] = append(park[sp.i], elems[sp.i][k]...)
				}
				continue
			}
			var taken []foldElem
			if sp.entry.Parked && pl.triggers() {
				var paths []string
				for _, ps := range pl.parked {
					if partOf(ps.elems[0].Key, parts) == sp.i {
						paths = append(paths, ps.path)
					}
				}
				var tk []string
				if taken, tk, err = takeParked(tx, paths); err != nil {
					return nil, err
				}
				unpark = append(unpark, tk...)
			}
			es, err := p.foldPart(pl, sp, taken, elems[sp.i], fr)
			if err != nil {
				return nil, err
			}
			entries = append(entries, es...)
		}
		docs, err := p.encodeSessionParts(tx, pl, fd, parts, sps)
		if err != nil {
			return nil, err
		}
		for _, sp := range sps {
			if sp.doc == nil {
				if err := pl.failPart(tx, fd, sp, park[sp.i], fr); err != nil {
					return nil, err
				}
			}
		}
		for _, w := range docs {
			if w.empty && !w.read.Exists {
				continue // every order of its keys was refused
			}
			if err := setIfChanged(tx, w.doc, w.read); err != nil {
				return nil, err
			}
		}
		return entries, deleteAll(tx, unpark)
	}
	return p.foldTxn(ctx, pl, final, body)
}

func readSessionParts(tx docstore.Tx, a aggregation, ids []int, agenda map[int]partEntry) ([]*sessionPart, error) {
	paths := make([]string, len(ids))
	for n, i := range ids {
		paths[n] = a.paths.sessionsPart(i)
	}
	docs, err := tx.Get(paths...)
	if err != nil {
		return nil, err
	}
	out := make([]*sessionPart, len(ids))
	for n, i := range ids {
		sp := &sessionPart{i: i, doc: &sessionsPart{}, read: docs[n], entry: agenda[i]}
		if err := decodeDoc(docs[n], sp.doc); err != nil {
			if !errors.Is(err, ErrUnreadableState) {
				return nil, err
			}
			sp.doc, sp.entry.Error = nil, clip(err.Error(), maxCellError)
		} else {
			sp.doc.load()
		}
		out[n] = sp
	}
	return out, nil
}

// foldPart adds a readable part's parked elements (taken), then the
// records' not yet in it, runs the trigger of every session of the part and
// returns the outbox rows of its panes and of the orders refused.
func (p *Processor) foldPart(pl foldPlan, sp *sessionPart, taken []foldElem, byKey map[string][]foldElem, fr *foldResult) ([]entry, error) {
	a := pl.a
	if sp.doc.Keys == nil {
		sp.doc.Keys = map[string][]window.Session{}
	}
	sp.folded = true
	slices.SortStableFunc(taken, func(x, y foldElem) int {
		return cmp.Or(x.At.Compare(y.At), cmp.Compare(x.PedidoID, y.PedidoID))
	})
	all := map[string][]foldElem{}
	for _, e := range taken {
		all[e.Key] = append(all[e.Key], e)
	}
	for k, es := range byKey {
		for _, e := range es {
			if e.Gen == 0 || e.Gen > sp.doc.Gen { // else added by an interrupted fold
				all[k] = append(all[k], e)
			}
		}
	}
	var entries []entry
	for _, k := range slices.Sorted(maps.Keys(all)) {
		seen := map[string]bool{}
		for _, e := range all[k] {
			if seen[e.PedidoID] {
				continue // parked twice
			}
			seen[e.PedidoID] = true
			ss, err := a.spec.AcceptSession(sp.doc.Keys[k], e.order(), e.Wm, e.At)
			if err == nil && len(ss) > maxKeySessions {
				err = fmt.Errorf("key %q would hold more than %d open sessions", k, maxKeySessions)
			}
			if err != nil {
				where := fmt.Sprintf("session of key %q at %s", k, e.Event.Format(time.RFC3339Nano))
				entries = append(entries, p.overflow(a, e, where, err))
				continue
			}
			sp.doc.Keys[k] = ss
		}
	}
	sp.doc.Gen = max(sp.doc.Gen, pl.advanced)
	if !pl.triggers() {
		for _, ss := range sp.doc.Keys {
			fr.visited += len(ss)
		}
		return entries, nil
	}
	sp.keys = map[string]partEntry{}
	for _, k := range slices.Sorted(maps.Keys(sp.doc.Keys)) {
		es, open, ke, err := p.triggerSessions(pl, k, sp.doc.Keys[k], fr)
		if err != nil {
			return nil, err
		}
		entries = append(entries, es...)
		if len(open) == 0 {
			delete(sp.doc.Keys, k)
			continue
		}
		sp.doc.Keys[k], sp.keys[k] = open, ke
	}
	return entries, nil
}

// agendaOf is the agenda entry of a part holding keys: from their triggers
// when this transaction folded them from src, due now while catching up,
// else the entry of the part they were read from.
func (pl foldPlan) agendaOf(keys map[string][]window.Session, src *sessionPart, old partEntry) partEntry {
	if src == nil {
		return partEntry{Keys: len(keys), Due: old.Due, At: old.At}
	}
	if !pl.triggers() {
		return partEntry{Keys: len(keys), Due: pl.now, At: old.At, Parked: src.entry.Parked}
	}
	var e partEntry
	for k := range keys {
		e = e.merge(src.keys[k])
	}
	return e
}

type partWrite struct {
	doc   docstore.Doc
	read  docstore.Doc
	empty bool
}

// encodeSessionParts sets the agenda entries of the readable parts sps and
// returns their documents. When one would pass the bound the parts double,
// unless some part fails or waits for parked elements (its elements could
// not follow).
func (p *Processor) encodeSessionParts(tx docstore.Tx, pl foldPlan, fd *foldDoc, parts int, sps []*sessionPart) ([]partWrite, error) {
	a := pl.a
	var out []partWrite
	old := maps.Clone(fd.Agenda)
	grow, stuck := false, false
	for _, e := range fd.Agenda {
		stuck = stuck || e.Error != "" || e.Parked
	}
	for _, sp := range sps {
		if sp.doc == nil {
			stuck = true
			continue
		}
		d, err := encodeDoc(a.paths.sessionsPart(sp.i), *sp.doc, time.Time{})
		if err != nil {
			return nil, err
		}
		grow = grow || (len(d.Data) > p.opts.sessionPartBytes && len(sp.doc.Keys) > 1)
		out = append(out, partWrite{doc: d, read: sp.read, empty: len(sp.doc.Keys) == 0})
		fd.setAgenda(sp.i, pl.agendaOf(sp.doc.Keys, sp, sp.entry))
	}
	if !grow || stuck {
		fd.SessionParts = max(fd.SessionParts, parts)
		return out, nil
	}
	byI := map[int]*sessionPart{}
	var rest []int
	for _, sp := range sps {
		byI[sp.i] = sp
	}
	for i := range parts {
		if byI[i] == nil {
			rest = append(rest, i)
		}
	}
	others, err := readSessionParts(tx, a, rest, fd.Agenda)
	if err != nil {
		return nil, err
	}
	keys := map[string][]window.Session{}
	for _, sp := range others {
		if sp.doc == nil {
			fd.SessionParts = max(fd.SessionParts, parts)
			return out, nil // not split while a part fails
		}
		byI[sp.i] = sp
	}
	for _, sp := range byI {
		maps.Copy(keys, sp.doc.Keys)
	}
	split := map[int]map[string][]window.Session{}
	docs, n, err := splitParts(2*parts, p.opts.sessionPartBytes, keys, func(i int, ks map[string][]window.Session) (docstore.Doc, error) {
		split[i] = ks
		return encodeDoc(a.paths.sessionsPart(i), sessionsPart{Gen: byI[i%parts].doc.Gen, Keys: ks}, time.Time{})
	})
	if err != nil {
		return nil, err
	}
	out = out[:0]
	for i, d := range docs {
		src := byI[i%parts]
		w := partWrite{doc: d, empty: len(split[i]) == 0}
		if i < parts {
			w.read = src.read
		}
		out = append(out, w)
		folded := src
		if !src.folded {
			folded = nil
		}
		fd.setAgenda(i, pl.agendaOf(split[i], folded, old[i%parts]))
	}
	fd.SessionParts = n
	return out, nil
}

func (d *foldDoc) setAgenda(i int, e partEntry) {
	if e.idle() {
		delete(d.Agenda, i)
		return
	}
	d.Agenda[i] = e
}

// triggerSessions returns the panes' outbox rows, the sessions still open
// and the key's agenda.
func (p *Processor) triggerSessions(pl foldPlan, key string, sessions []window.Session, fr *foldResult) ([]entry, []window.Session, partEntry, error) {
	s := pl.a.spec
	var entries []entry
	var open []window.Session
	ke := partEntry{Keys: 1}
	for _, x := range sessions {
		fr.visited++
		out, err := s.OnTickSession(key, x, pl.wm, pl.now)
		if err != nil {
			return nil, nil, ke, fmt.Errorf("session %s key %q: %w", x.Start.Format(time.RFC3339Nano), key, err)
		}
		for _, pn := range out.Panes {
			entries = append(entries, p.rows.paneEntry(pn))
			fr.panes = append(fr.panes, pn)
		}
		if out.Expired {
			fr.expired++
			continue
		}
		x = out.Session
		open = append(open, x)
		ke.Due = earliest(ke.Due, s.NextDueSession(x, pl.wm, pl.now))
		at := s.ExpiryOf(x.Window())
		if x.State.OnTime == "" || x.State.OnTime == window.OnTimePending {
			at = x.End
		}
		ke.At = earliest(ke.At, at)
	}
	return entries, open, ke, nil
}

// failPart reports a part that cannot be read and parks its elements of
// this fold for the first fold that reads it again.
func (pl foldPlan) failPart(tx docstore.Tx, fd *foldDoc, sp *sessionPart, elems []foldElem, fr *foldResult) error {
	e := sp.entry
	if e.FailingSince.IsZero() {
		e.FailingSince = pl.now
	}
	if len(elems) > 0 {
		e.Parked = true
		if err := set(tx, pl.a.paths.parkedPart(sp.i, pl.advanced), parkedDoc{Elements: elems}, time.Time{}); err != nil {
			return err
		}
	}
	fd.Agenda[sp.i] = e
	fr.failing = append(fr.failing, FailingWindow{Aggregation: pl.a.spec.Name, Path: pl.a.paths.sessionsPart(sp.i), Error: e.Error, Since: e.FailingSince})
	return nil
}
