// Package ticktest has the stand-in for Cloud Tasks, which has no
// emulator: an in-process server for the client's gRPC API (the pattern
// of Google's testing guide, cloudtaskspb.RegisterCloudTasksServer), and
// the conformance suite of the tick.FollowUp port.
package ticktest

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/alpinashop/alpipe/internal/tick"
)

// Server answers CreateTask as Cloud Tasks does for what alpipe relies on:
// a name used before is refused with AlreadyExists (Cloud Tasks: for about
// an hour after the task ran; here for the server's life), a schedule time
// absent or past becomes now, and the task is kept until Take hands it out.
// alpipe names every task (tick.TaskID), so a task without a name is refused.
type Server struct {
	cloudtaskspb.UnimplementedCloudTasksServer

	Addr string // host:port, for CLOUD_TASKS_EMULATOR_HOST

	now func() time.Time
	srv *grpc.Server

	mu      sync.Mutex
	names   map[string]bool
	pending []*cloudtaskspb.Task
	created []*cloudtaskspb.Task
	refused int
	fail    func(*cloudtaskspb.Task) error
}

// Start serves on a free local port; now is the queue's clock.
func Start(now func() time.Time) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cloud tasks stand-in: %w", err)
	}
	s := &Server{Addr: l.Addr().String(), now: now, srv: grpc.NewServer(), names: map[string]bool{}}
	cloudtaskspb.RegisterCloudTasksServer(s.srv, s)
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

func (s *Server) Close() { s.srv.Stop() }

// FailCreate makes CreateTask answer err for every task f returns an
// error for (nil: none), as an unavailable queue or a missing grant would.
func (s *Server) FailCreate(f func(*cloudtaskspb.Task) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = f
}

func (s *Server) CreateTask(_ context.Context, req *cloudtaskspb.CreateTaskRequest) (*cloudtaskspb.Task, error) {
	t := proto.Clone(req.GetTask()).(*cloudtaskspb.Task)
	switch {
	case req.GetParent() == "" || strings.Count(req.GetParent(), "/") != 5:
		return nil, status.Errorf(codes.InvalidArgument, "parent %q is not projects/P/locations/L/queues/Q", req.GetParent())
	case t == nil || t.GetHttpRequest() == nil:
		return nil, status.Error(codes.InvalidArgument, "task: want an http_request")
	case t.GetName() == "":
		return nil, status.Error(codes.InvalidArgument, "task: want a name (alpipe names every task: tick.TaskID)")
	case !strings.HasPrefix(t.GetName(), req.GetParent()+"/tasks/"):
		return nil, status.Errorf(codes.InvalidArgument, "task name %q is not in queue %s", t.GetName(), req.GetParent())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		if err := s.fail(t); err != nil {
			return nil, err
		}
	}
	if s.names[t.GetName()] {
		s.refused++
		return nil, status.Errorf(codes.AlreadyExists, "the task cannot be created because a task with this name existed too recently: %s", t.GetName())
	}
	now := s.now()
	if t.GetScheduleTime() == nil || t.GetScheduleTime().AsTime().Before(now) {
		t.ScheduleTime = timestamppb.New(now)
	}
	t.CreateTime = timestamppb.New(now)
	s.names[t.GetName()] = true
	s.pending = append(s.pending, t)
	s.created = append(s.created, t)
	return proto.Clone(t).(*cloudtaskspb.Task), nil
}

// Created lists every task created, in creation order.
func (s *Server) Created() []*cloudtaskspb.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*cloudtaskspb.Task, len(s.created))
	for i, t := range s.created {
		out[i] = proto.Clone(t).(*cloudtaskspb.Task)
	}
	return out
}

func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Take removes and returns the tasks due at now (schedule time not after
// it), earliest first: the caller dispatches them.
func (s *Server) Take(now time.Time) []*cloudtaskspb.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.SortStableFunc(s.pending, func(a, b *cloudtaskspb.Task) int {
		return a.GetScheduleTime().AsTime().Compare(b.GetScheduleTime().AsTime())
	})
	var due []*cloudtaskspb.Task
	keep := s.pending[:0]
	for _, t := range s.pending {
		if t.GetScheduleTime().AsTime().After(now) {
			keep = append(keep, t)
		} else {
			due = append(due, t)
		}
	}
	s.pending = keep
	return due
}

// Conformance holds a tick.FollowUp to the port's contract: every time
// scheduled is scheduled once, however often it is asked for. scheduled
// lists the times the backend holds.
func Conformance(t *testing.T, f tick.FollowUp, scheduled func() []time.Time) {
	t.Helper()
	ctx := context.Background()
	a := time.Date(2026, 3, 14, 17, 5, 30, 0, time.UTC)
	b := a.Add(time.Minute)
	for i, at := range []time.Time{a, a, b, a, b} {
		if err := f.Schedule(ctx, at); err != nil {
			t.Fatalf("Schedule #%d (%s): %v; a repeat must succeed", i, at, err)
		}
	}
	if diff := cmp.Diff([]time.Time{a, b}, scheduled()); diff != "" {
		t.Errorf("scheduled (-want +got):\n%s", diff)
	}
}
