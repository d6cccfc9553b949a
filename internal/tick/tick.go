// Package tick decides the watermark timer's cadence. Cloud Scheduler
// cannot fire more often than once a minute, so a deployment that ticks
// every 30 seconds has each Scheduler tick schedule one follow-up tick for
// the half minute through a queue (the FollowUp port; Cloud Tasks in
// production). Scheduler stays the watchdog: a lost follow-up costs its
// half minute, never more, because the next minute's tick runs anyway.
//
// Three rules keep the follow-ups from multiplying:
//
//   - only a Scheduler tick schedules; a follow-up tick (one the queue
//     delivered, recognised by the X-CloudTasks-TaskName header Cloud Tasks
//     sets) schedules nothing, so the chain is never longer than one;
//   - the follow-up's target is derived from the tick's minute, not from
//     the moment it ran, and names the task (TaskID): a retried or
//     duplicated Scheduler tick asks for the same task, which the queue
//     refuses as a duplicate (AlreadyExists: success);
//   - failing to schedule is logged and counted but does not fail the
//     tick: the tick's own work is done either way, and the next minute's
//     Scheduler tick covers the lost half minute.
package tick

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
)

// The intervals a deployment may choose.
const (
	Minute     = time.Minute      // Cloud Scheduler alone, the default
	HalfMinute = 30 * time.Second // Scheduler plus one follow-up per minute
)

// Valid reports whether d is an interval a deployment may choose.
func Valid(d time.Duration) bool { return d == Minute || d == HalfMinute }

// FollowUp schedules one tick at a time. Scheduling the same time twice
// must schedule one tick: the second call succeeds and does nothing.
type FollowUp interface {
	Schedule(ctx context.Context, at time.Time) error
}

// TaskHeader is the header Cloud Tasks sets on every delivery: only a
// follow-up tick carries it.
const TaskHeader = "X-CloudTasks-TaskName"

func IsFollowUp(h http.Header) bool { return h.Get(TaskHeader) != "" }

// Next is the follow-up a tick run at now schedules: the next multiple of
// interval inside the tick's minute still ahead. Nothing for a follow-up
// tick, or for a Scheduler tick so late that its half minute has passed
// (the tick itself just covered it).
func Next(interval time.Duration, now time.Time, followUp bool) (time.Time, bool) {
	if followUp || interval <= 0 || interval >= Minute {
		return time.Time{}, false
	}
	minute := now.UTC().Truncate(Minute)
	for at := minute.Add(interval); at.Before(minute.Add(Minute)); at = at.Add(interval) {
		if at.After(now) {
			return at, true
		}
	}
	return time.Time{}, false
}

// TaskID names the follow-up tick of at. Cloud Tasks advises against
// sequential names (they slow every call on the queue), hence the hash in
// front; the time stays readable after it.
func TaskID(at time.Time) string {
	stamp := at.UTC().Format("20060102T150405Z")
	sum := sha256.Sum256([]byte(stamp))
	return "tick-" + hex.EncodeToString(sum[:4]) + "-" + stamp
}

// Chain schedules the follow-up of each Scheduler tick. The zero Interval
// (or Minute) schedules nothing.
type Chain struct {
	Interval time.Duration
	FollowUp FollowUp     // nil only with a one-minute interval
	Log      *slog.Logger // required when Interval is under a minute: a failed follow-up is logged

	failures atomic.Int64
}

// After schedules the follow-up of the tick run at now, if it has one. A
// failure is logged (message "follow-up tick not scheduled", which the
// log-based metric of terraform/tasks.tf counts) with the process's count of
// failures, never returned: the caller goes on with its tick.
func (c *Chain) After(ctx context.Context, now time.Time, followUp bool) {
	at, ok := Next(c.Interval, now, followUp)
	if !ok {
		return
	}
	// Bounded, so that a slow queue cannot eat the tick's time.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.FollowUp.Schedule(ctx, at); err != nil {
		n := c.failures.Add(1)
		c.Log.WarnContext(ctx, "follow-up tick not scheduled", "at", at, "failures", n,
			"error", fmt.Errorf("schedule tick %s: %w", TaskID(at), err).Error())
	}
}
