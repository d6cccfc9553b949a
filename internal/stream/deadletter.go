package stream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/order"
)

// maxIdentityBytes: a push body may carry megabytes in a message ID or
// pedido_id, and a dead-letter record must always fit a document.
const maxIdentityBytes = 1024

// handleInvalid dead-letters a message that is not a valid order.
func (p *Processor) handleInvalid(ctx context.Context, it *item) error {
	m, now := it.push.Delivery.Message, it.now
	res := &it.res
	res.Invalid, res.Aggregations = it.invalid, nil
	if res.PedidoID == "" {
		res.PedidoID = peekPedidoID(m.Data)
	}
	res.PedidoID = clip(res.PedidoID, maxIdentityBytes)
	raw := rawMessage(m.Data, m.Attributes, nil)
	id := m.ID()
	switch {
	case id == "":
		id = "sha256:" + digest([]byte(raw))
	case len(id) > maxMessageIDBytes:
		// Too long for a document ID: its digest identifies it as well.
		id = "sha256:" + digest([]byte(id))
	}
	d := discard{
		PedidoID: res.PedidoID, Reason: it.invalid, EventTime: peekEventTime(m.Attributes),
		ReceivedAt: now, MessageID: clip(m.ID(), maxIdentityBytes), Raw: raw,
	}
	dup, err := p.deadLetter(ctx, invalidRowID(id), d, now)
	if err != nil {
		return fmt.Errorf("dead-letter message %s: %w", clip(m.ID(), 64), err)
	}
	res.Duplicate = dup
	p.logResult(ctx, *res)
	return nil
}

// maxMessageIDBytes: a row identity becomes a document ID (at most 1,500
// bytes once escaped).
const maxMessageIDBytes = 256

// clip cuts s to at most n bytes without splitting a UTF-8 character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// HandleUndecodable dead-letters a request body that is not a push request
// at all (DecodePush failed), with the reason. Its row's identity is the
// body's SHA-256, so a redelivery records nothing new. A nil error means the
// body is recorded durably: answer 2xx, since no retry can make it valid.
func (p *Processor) HandleUndecodable(ctx context.Context, raw []byte, reason string, now time.Time) error {
	now = now.UTC()
	if !strings.HasPrefix(reason, "invalid: ") {
		reason = "invalid: " + reason
	}
	sum := digest(raw)
	d := discard{Reason: reason, ReceivedAt: now, Raw: rawMessage(raw, nil, nil)}
	dup, err := p.deadLetter(ctx, undecodableRowID(sum), d, now)
	if err != nil {
		return fmt.Errorf("dead-letter undecodable request (sha256 %s): %w", sum, err)
	}
	p.log.InfoContext(ctx, "undecodable push request dead-lettered",
		"reason", reason, "sha256", sum, "bytes", len(raw), "duplicate", dup)
	return nil
}

// deadLetter records an invalid message once, then appends its row.
func (p *Processor) deadLetter(ctx context.Context, rowID string, d discard, now time.Time) (dup bool, err error) {
	seenPath := deadSeen + "/" + docstore.ID(rowID)
	var written []pending
	err = p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		written = nil
		docs, err := tx.Get(seenPath)
		if err != nil {
			return err
		}
		if dup = docs[0].Exists; dup {
			return nil
		}
		if err := set(tx, seenPath, seenDoc{Reason: d.Reason, ReceivedAt: now}, now.Add(DedupRetention)); err != nil {
			return err
		}
		pe, err := p.writeEntry(tx, deadOutbox, p.rows.discardEntry(rowID, d))
		written = append(written, pe)
		return err
	})
	if err != nil {
		return false, err
	}
	if _, err := p.flush(ctx, written); err != nil {
		p.log.WarnContext(ctx, "outbox flush failed; the next tick retries", "row_id", rowID, "error", err.Error())
	}
	return dup, nil
}

func invalidReason(err error) string {
	var inv *order.Invalid
	if errors.As(err, &inv) {
		return inv.Reason()
	}
	return "invalid: " + err.Error()
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
