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

// Session windows on the generation/fold design (see the package comment,
// "Session windows"): an order transaction is the same as for any window
// (its proto-window is its element's window, classified against W: too
// late per order, before merging); the fold keeps a key's open sessions in
// one document and merges them there.
const (
	// keysPerTx bounds the keys one fold transaction rewrites: one
	// document each, and the panes of their sessions in the outbox, well
	// under a transaction's 500 writes.
	keysPerTx = 200
	// maxKeySessions bounds the open sessions of one key, so that its
	// document (about 400 bytes a session) stays far under 1 MiB. Open
	// sessions of a key are disjoint and at least G long, and live until W
	// passes end + L, so reaching it takes event times spread over hundreds
	// of gaps ahead of W (a clock far ahead).
	maxKeySessions = 1000
	// tombstoneTTL is how long an emptied key document is kept: it records
	// the generation folded into it, so that a fold interrupted between two
	// of its transactions never adds a generation to a key twice.
	tombstoneTTL = 24 * time.Hour
)

// sessionsDoc is one key's open sessions, aggregations/<agg>/sessions/<key>.
type sessionsDoc struct {
	Layout   int              `json:"layout"`
	Key      string           `json:"key"`
	Gen      int64            `json:"gen"` // the last generation folded in
	Sessions []window.Session `json:"sessions,omitempty"`
}

func (d sessionsDoc) layoutOf() int { return d.Layout }
func (d sessionsDoc) stamped() any  { d.Layout = StateLayout; return d }

// keyEntry is a key with open sessions in the fold document's agenda: when
// its trigger next fires on processing time (Due) and the watermark at which
// one of its sessions reaches its end (its ON_TIME round) or its expiry (At);
// while its document cannot be read, why and since when, and whether
// elements wait for it in parked documents.
type keyEntry struct {
	Key          string    `json:"k"`
	Due          time.Time `json:"due,omitzero"`
	At           time.Time `json:"at,omitzero"`
	Error        string    `json:"error,omitempty"`
	FailingSince time.Time `json:"failing_since,omitzero"`
	Parked       bool      `json:"parked,omitempty"`
}

func (p paths) sessionsOf(key string) string { return p.sessions + "/" + hashedID(key) }

// parkedKey holds a key's elements folded while its document could not be
// read, one document per generation folded.
func (p paths) parkedKey(key string, gen int64) string {
	return p.parked + "/" + hashedID(key) + "_" + strconv.FormatInt(gen, 10)
}

func isKeyDue(e keyEntry, wm, now time.Time) bool {
	return (!e.Due.IsZero() && !now.Before(e.Due)) || (!e.At.IsZero() && reached(wm, e.At)) || e.Error != "" || e.Parked
}

// foldSessions is fold for an aggregation of session windows: the keys the
// records touch (in the order of their first element) and then the keys
// due, keysPerTx a transaction. The last transaction moves Folded; the
// ones before it mark each key with the generation folded in, so a fold
// that stops between them and runs again adds nothing twice.
func (p *Processor) foldSessions(ctx context.Context, pl foldPlan, fd foldDoc) (foldResult, error) {
	byKey := map[string][]foldElem{}
	var keys []string
	for _, e := range pl.elems {
		if _, ok := byKey[e.Key]; !ok {
			keys = append(keys, e.Key)
		}
		byKey[e.Key] = append(byKey[e.Key], e)
	}
	if pl.triggers() {
		for _, id := range slices.Sorted(maps.Keys(fd.Keys)) {
			e := fd.Keys[id]
			if _, ok := byKey[e.Key]; !ok && isKeyDue(e, pl.wm, pl.now) {
				keys = append(keys, e.Key)
			}
		}
	}
	var parked map[string][]parkedSet
	for _, e := range fd.Keys {
		if e.Parked {
			sets, err := p.listParked(ctx, pl.a)
			if err != nil {
				return foldResult{}, err
			}
			parked = map[string][]parkedSet{}
			for _, ps := range sets {
				parked[ps.elems[0].Key] = append(parked[ps.elems[0].Key], ps)
			}
			break
		}
	}
	var fr foldResult
	for first := true; first || len(keys) > 0; first = false {
		chunk := keys[:min(len(keys), keysPerTx)]
		keys = keys[len(chunk):]
		r, err := p.sessionTx(ctx, pl, chunk, byKey, parked, len(keys) == 0)
		fr.add(r)
		if err != nil {
			return fr, err
		}
	}
	fr.sortPanes()
	return fr, nil
}

// sessionTx is one fold transaction of session windows over keys: it reads
// the fold and control documents and each key's document, adds the key's
// parked elements and then its new ones (unless its document says their
// generation is in), runs the trigger of every session of the key, writes
// each key's document once (an emptied one as a tombstone) and its agenda
// entry, and the panes to the outbox; final moves Folded. A key whose
// document cannot be read is reported and its elements parked, as a window
// whose state cannot be read is (failing.go): the other keys go on.
func (p *Processor) sessionTx(ctx context.Context, pl foldPlan, keys []string, byKey map[string][]foldElem, parked map[string][]parkedSet, final bool) (foldResult, error) {
	var fr foldResult
	a := pl.a
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		fr = foldResult{}
		fd, read, ok, err := pl.begin(tx)
		if err != nil || !ok {
			return err
		}
		if fd.Keys == nil {
			fd.Keys = map[string]keyEntry{}
		}
		paths := make([]string, len(keys))
		for i, k := range keys {
			paths[i] = a.paths.sessionsOf(k)
		}
		docs, err := tx.Get(paths...)
		if err != nil {
			return err
		}
		var entries []entry
		for i, k := range keys {
			id := hashedID(k)
			var sd sessionsDoc
			if err := decodeDoc(docs[i], &sd); err != nil {
				if !errors.Is(err, ErrUnreadableState) {
					return err
				}
				if err := pl.failKey(tx, &fd, k, paths[i], err, byKey[k], &fr); err != nil {
					return err
				}
				continue
			}
			sd.Key = k
			elems := byKey[k]
			if !pl.records() {
				elems = nil
			}
			if fd.Keys[id].Parked && pl.triggers() {
				var taken []foldElem
				var err error
				if taken, err = unparkKey(tx, parked[k]); err != nil {
					return err
				}
				elems = append(taken, elems...)
			}
			if len(elems) > 0 {
				seen := map[string]bool{}
				for _, e := range elems {
					if seen[e.PedidoID] || (e.Gen > 0 && e.Gen <= sd.Gen) {
						continue // parked twice, or added by an interrupted fold
					}
					seen[e.PedidoID] = true
					ss, err := a.spec.AcceptSession(sd.Sessions, e.order(), e.Wm, e.At)
					if err == nil && len(ss) > maxKeySessions {
						err = fmt.Errorf("key %q would hold more than %d open sessions", k, maxKeySessions)
					}
					if err != nil {
						entries = append(entries, p.rows.discardEntry(overflowRowID(a.spec.Name, e.PedidoID), discard{
							PedidoID: e.PedidoID, Aggregation: a.spec.Name,
							Reason:    fmt.Sprintf("invalid: aggregation %s: session of key %q at %s: %v", a.spec.Name, k, e.Event.Format(time.RFC3339Nano), err),
							EventTime: e.Event, WindowStart: e.Window.Start, Watermark: e.Wm, ReceivedAt: e.At, MessageID: e.Message,
						}))
						continue
					}
					sd.Sessions = ss
				}
			}
			if pl.records() {
				sd.Gen = max(sd.Gen, pl.advanced)
			}
			ke := keyEntry{Key: k}
			if !pl.triggers() && fd.Keys[id].Parked {
				ke.Parked = true // taken once the fold has caught up
			}
			if pl.triggers() {
				es, err := p.triggerSessions(pl, &sd, &ke, &fr)
				if err != nil {
					return err
				}
				entries = append(entries, es...)
			} else {
				ke.Due = pl.now // its triggers run once the fold has caught up
				fr.visited += len(sd.Sessions)
			}
			if err := writeSessions(tx, a, sd, docs[i], pl.now); err != nil {
				return err
			}
			if len(sd.Sessions) == 0 && !ke.Parked {
				delete(fd.Keys, id)
			} else {
				fd.Keys[id] = ke
			}
		}
		if fr.written, err = p.writeOutbox(tx, a.paths.outbox, entries); err != nil {
			return err
		}
		if final {
			return pl.writeFold(tx, fd, read)
		}
		return writeIfChanged(tx, a.paths.fold, fd, read, time.Time{})
	})
	if err != nil {
		return foldResult{}, err
	}
	return fr, nil
}

// triggerSessions runs the trigger of every session of a key at the
// plan's W, drops the expired ones and sets the key's agenda entry.
func (p *Processor) triggerSessions(pl foldPlan, sd *sessionsDoc, ke *keyEntry, fr *foldResult) ([]entry, error) {
	s := pl.a.spec
	var entries []entry
	var open []window.Session
	for _, x := range sd.Sessions {
		fr.visited++
		out, err := s.OnTickSession(sd.Key, x, pl.wm, pl.now)
		if err != nil {
			return nil, fmt.Errorf("session %s key %q: %w", x.Start.Format(time.RFC3339Nano), sd.Key, err)
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
		if d := s.NextDueSession(x, pl.wm, pl.now); !d.IsZero() && (ke.Due.IsZero() || d.Before(ke.Due)) {
			ke.Due = d
		}
		at := s.ExpiryOf(x.Window())
		if x.State.OnTime == "" || x.State.OnTime == window.OnTimePending {
			at = x.End
		}
		if ke.At.IsZero() || at.Before(ke.At) {
			ke.At = at
		}
	}
	sd.Sessions = open
	return entries, nil
}

// writeSessions writes a key's document unless it is as read; an emptied
// one stays as a tombstone for tombstoneTTL (see sessionsDoc.Gen).
func writeSessions(tx docstore.Tx, a aggregation, sd sessionsDoc, read docstore.Doc, now time.Time) error {
	var expire time.Time
	if len(sd.Sessions) == 0 {
		if !read.Exists {
			return nil // every order of the key was refused: nothing to keep
		}
		expire = now.Add(tombstoneTTL)
	}
	return writeIfChanged(tx, a.paths.sessionsOf(sd.Key), sd, read, expire)
}

// writeIfChanged writes v at path unless the document read there holds the
// same bytes, so that a repeated tick writes nothing.
func writeIfChanged(tx docstore.Tx, path string, v any, read docstore.Doc, expireAt time.Time) error {
	nd, err := encodeDoc(path, v, expireAt)
	if err != nil {
		return err
	}
	if read.Exists && string(nd.Data) == string(read.Data) {
		return nil
	}
	if err := tx.Set(nd); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// failKey reports key k, whose document at path cannot be read, keeps it
// on the agenda with the error, and parks its elements of this fold, so
// that the first fold that reads the document again adds them.
func (pl foldPlan) failKey(tx docstore.Tx, fd *foldDoc, k, path string, err error, elems []foldElem, fr *foldResult) error {
	id := hashedID(k)
	ke := fd.Keys[id]
	ke.Key, ke.Error = k, clip(err.Error(), maxCellError)
	if ke.FailingSince.IsZero() {
		ke.FailingSince = pl.now
	}
	if pl.records() && len(elems) > 0 {
		ke.Parked = true
		if err := set(tx, pl.a.paths.parkedKey(k, pl.advanced), parkedDoc{Elements: elems}, time.Time{}); err != nil {
			return err
		}
	}
	fd.Keys[id] = ke
	fr.failing = append(fr.failing, FailingWindow{Aggregation: pl.a.spec.Name, Path: path, Key: k, Error: ke.Error, Since: ke.FailingSince})
	return nil
}

// unparkKey takes a key's parked documents (takeParked), deletes them and
// returns their elements in acceptance order.
func unparkKey(tx docstore.Tx, sets []parkedSet) ([]foldElem, error) {
	paths := make([]string, len(sets))
	for i, ps := range sets {
		paths[i] = ps.path
	}
	out, taken, err := takeParked(tx, paths)
	if err != nil {
		return nil, err
	}
	for _, path := range taken {
		if err := tx.Delete(path); err != nil {
			return nil, fmt.Errorf("delete %s: %w", path, err)
		}
	}
	slices.SortStableFunc(out, func(x, y foldElem) int {
		return cmp.Or(x.At.Compare(y.At), cmp.Compare(x.PedidoID, y.PedidoID))
	})
	return out, nil
}
