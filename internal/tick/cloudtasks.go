package tick

import (
	"context"
	"fmt"
	"regexp"
	"time"

	cloudtasks "cloud.google.com/go/cloudtasks/apiv2"
	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TasksConfig is where follow-up ticks go and as whom they arrive.
type TasksConfig struct {
	Queue    string        // projects/PROJECT/locations/LOCATION/queues/QUEUE
	URL      string        // the watermark service's: the task's target and the token's audience
	Invoker  string        // the service account holding roles/run.invoker on the service
	Deadline time.Duration // dispatch deadline: the service's request timeout (15 s to 30 min)
	Emulator string        // host:port of a plain-text stand-in, without credentials
}

var queueName = regexp.MustCompile(`^projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/locations/[a-z0-9-]+/queues/[A-Za-z0-9-]{1,100}$`)

func (c TasksConfig) Problems() []string {
	var probs []string
	if !queueName.MatchString(c.Queue) {
		probs = append(probs, fmt.Sprintf("queue %q is not projects/PROJECT/locations/LOCATION/queues/QUEUE", c.Queue))
	}
	if c.URL == "" {
		probs = append(probs, "the follow-up's URL is empty")
	}
	if c.Invoker == "" {
		probs = append(probs, "the invoker service account is empty")
	}
	if c.Deadline < 15*time.Second || c.Deadline > 30*time.Minute {
		probs = append(probs, fmt.Sprintf("dispatch deadline %s is outside Cloud Tasks' 15s-30m", c.Deadline))
	}
	return probs
}

// Tasks schedules follow-up ticks as named Cloud Tasks HTTP tasks with an
// OIDC token.
type Tasks struct {
	cfg    TasksConfig
	client *cloudtasks.Client
}

var _ FollowUp = (*Tasks)(nil)

func NewTasks(ctx context.Context, cfg TasksConfig) (*Tasks, error) {
	if p := cfg.Problems(); len(p) > 0 {
		return nil, fmt.Errorf("cloud tasks: %v", p)
	}
	var opts []option.ClientOption
	if cfg.Emulator != "" {
		opts = append(opts, option.WithEndpoint(cfg.Emulator), option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	c, err := cloudtasks.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("cloud tasks client: %w", err)
	}
	return &Tasks{cfg: cfg, client: c}, nil
}

func (t *Tasks) Close() error { return t.client.Close() }

// Task is the task that schedules the tick at at.
func (c TasksConfig) Task(at time.Time) *cloudtaskspb.Task {
	return &cloudtaskspb.Task{
		Name:             c.Queue + "/tasks/" + TaskID(at),
		ScheduleTime:     timestamppb.New(at),
		DispatchDeadline: durationpb.New(c.Deadline),
		MessageType: &cloudtaskspb.Task_HttpRequest{HttpRequest: &cloudtaskspb.HttpRequest{
			Url:        c.URL,
			HttpMethod: cloudtaskspb.HttpMethod_POST,
			// What the Scheduler job sends: the tick's handler accepts only JSON.
			Headers: map[string]string{"Content-Type": "application/json"},
			Body:    []byte("{}"),
			AuthorizationHeader: &cloudtaskspb.HttpRequest_OidcToken{OidcToken: &cloudtaskspb.OidcToken{
				ServiceAccountEmail: c.Invoker,
				Audience:            c.URL,
			}},
		}},
	}
}

// Schedule creates the task of at. AlreadyExists means this tick, or a
// retry of it, already did: success.
func (t *Tasks) Schedule(ctx context.Context, at time.Time) error {
	_, err := t.client.CreateTask(ctx, &cloudtaskspb.CreateTaskRequest{Parent: t.cfg.Queue, Task: t.cfg.Task(at)})
	if err != nil && status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("create task %s: %w", TaskID(at), err)
	}
	return nil
}
