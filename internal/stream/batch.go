package stream

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// commitSlots: on the Firestore emulator two slots gained no throughput for
// a hot key and added lock waits between the instance's own batches (p99
// 2.2 s against 0.5 s), while batches fill meanwhile anyway.
const commitSlots = 1

// batchDeadline bounds the commit of one batch, which runs on behalf of
// several requests and so cannot use any one request's context: a leader
// whose client went away must not fail the others' orders.
const batchDeadline = 2 * time.Minute

// batcher gathers the deliveries that arrive at one instance within a short
// wait into one batch, so that they share one transaction. While a batch
// commits the next keeps filling, so under load a batch is about a commit's
// worth of arrivals.
type batcher struct {
	p      *Processor
	wait   time.Duration
	max    int
	mu     sync.Mutex
	open   *batch        // the batch new deliveries join; nil: none yet
	commit chan struct{} // a slot held by each batch committing
}

type batch struct {
	pushes  []Push
	full    chan struct{} // closed when the batch holds max deliveries
	done    chan struct{} // closed when results and err are set
	results []Result
	err     error
}

func newBatcher(p *Processor, wait time.Duration, max int) *batcher {
	return &batcher{p: p, wait: wait, max: max, commit: make(chan struct{}, commitSlots)}
}

// handle adds ps to the open batch, starting one if there is none, and
// waits for that batch's commit.
func (b *batcher) handle(ctx context.Context, ps Push) (Result, error) {
	b.mu.Lock()
	bt := b.open
	if bt == nil {
		bt = &batch{full: make(chan struct{}), done: make(chan struct{})}
		b.open = bt
		go b.run(context.WithoutCancel(ctx), bt)
	}
	i := len(bt.pushes)
	bt.pushes = append(bt.pushes, ps)
	if len(bt.pushes) >= b.max {
		b.open = nil
		close(bt.full)
	}
	b.mu.Unlock()
	select {
	case <-bt.done:
		return bt.results[i], bt.err
	case <-ctx.Done():
		// The batch may still commit the order: the redelivery this answer
		// causes is then a duplicate.
		return Result{MessageID: ps.Delivery.Message.ID()}, fmt.Errorf("wait for the batch of message %s: %w", ps.Delivery.Message.ID(), ctx.Err())
	}
}

// run closes bt after the wait (or when it is full) and once no other batch
// of this process is committing, then commits it.
func (b *batcher) run(ctx context.Context, bt *batch) {
	t := time.NewTimer(b.wait)
	select {
	case <-t.C:
	case <-bt.full:
		t.Stop()
	}
	b.commit <- struct{}{} // the batch keeps filling while the others commit
	b.mu.Lock()
	if b.open == bt {
		b.open = nil
	}
	pushes := bt.pushes
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, batchDeadline)
	bt.results, bt.err = b.p.HandleBatch(ctx, pushes)
	cancel()
	<-b.commit
	close(bt.done)
}
