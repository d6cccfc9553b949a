package tfconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TopologyFile, in terraform/, is what the stack replays of the deployment
// around the services, planned as ServicesFile is.
const TopologyFile = "topology.json"

// Deployment is what Terraform deploys: the data of TopologyFile and
// ServicesFile. A function names the service that runs it (its
// FUNCTION_TARGET); a push, a job or a trigger calls its service's URL with
// an OIDC token of ServiceAccountEmail for that URL.
type Deployment struct {
	Project           string             `json:"project"`
	Region            string             `json:"region"`
	FirestoreDatabase string             `json:"firestore_database"`
	Dataset           string             `json:"dataset"`
	Buckets           map[string]string  `json:"buckets"` // storage.tf's key -> name
	Topics            []string           `json:"topics"`
	PushSubscriptions []PushSubscription `json:"push_subscriptions"`
	PullSubscriptions []PullSubscription `json:"pull_subscriptions"`
	SchedulerJobs     []SchedulerJob     `json:"scheduler_jobs"`
	StorageTriggers   []StorageTrigger   `json:"storage_triggers"`
	Services          []Service          `json:"-"` // sorted by function
}

// PushSubscription pushes a topic's messages to a function's service.
type PushSubscription struct {
	Function            string   `json:"function"`
	Name                string   `json:"name"`
	Topic               string   `json:"topic"`
	AckDeadlineSeconds  int      `json:"ack_deadline_seconds"`
	MinimumBackoff      Duration `json:"minimum_backoff"`
	MaximumBackoff      Duration `json:"maximum_backoff"`
	DeadLetterTopic     string   `json:"dead_letter_topic"`
	MaxDeliveryAttempts int      `json:"max_delivery_attempts"`
	ServiceAccountEmail string   `json:"service_account_email"`
}

// PullSubscription is the dead letters'.
type PullSubscription struct {
	Name               string `json:"name"`
	Topic              string `json:"topic"`
	AckDeadlineSeconds int    `json:"ack_deadline_seconds"`
}

// SchedulerJob is a Cloud Scheduler HTTP job calling a function's service.
type SchedulerJob struct {
	Function            string            `json:"function"`
	Name                string            `json:"name"`
	Schedule            string            `json:"schedule"`
	TimeZone            string            `json:"time_zone"`
	HTTPMethod          string            `json:"http_method"`
	Headers             map[string]string `json:"headers"`
	Body                string            `json:"body"`
	AttemptDeadline     Duration          `json:"attempt_deadline"`
	RetryCount          int               `json:"retry_count"`
	ServiceAccountEmail string            `json:"service_account_email"`
}

// StorageTrigger delivers a bucket's events of one type to a function's service.
type StorageTrigger struct {
	Function            string `json:"function"`
	Name                string `json:"name"`
	EventType           string `json:"event_type"`
	Bucket              string `json:"bucket"`
	ServiceAccountEmail string `json:"service_account_email"`
}

// Duration is a duration as Terraform writes one ("60s").
type Duration struct{ time.Duration }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration %s: %w", b, err)
	}
	var err error
	d.Duration, err = time.ParseDuration(s)
	return err
}

// Open reads the repository's deployment (TopologyFile and ServicesFile).
// A project, when not "", replaces the planned project ID wherever it occurs
// (GOOGLE_CLOUD_PROJECT, bucket names, accounts' emails): the planned ID is
// long and distinctive, so it occurs in nothing else.
func Open(project string) (*Deployment, error) {
	root, err := RepoDir()
	if err != nil {
		return nil, err
	}
	return open(filepath.Join(root, "terraform"), project)
}

func open(dir, project string) (*Deployment, error) {
	var d Deployment
	if err := decode(filepath.Join(dir, TopologyFile), nil, &d); err != nil {
		return nil, err
	}
	if d.Project == "" {
		return nil, fmt.Errorf("%s: no project", TopologyFile)
	}
	var rename *strings.Replacer
	if project != "" {
		rename = strings.NewReplacer(d.Project, project)
		d = Deployment{}
		if err := decode(filepath.Join(dir, TopologyFile), rename, &d); err != nil {
			return nil, err
		}
	}
	var err error
	if d.Services, err = readServices(dir, rename); err != nil {
		return nil, err
	}
	if err := d.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", TopologyFile, err)
	}
	return &d, nil
}

// check refuses a push, job or trigger of a function no service runs.
func (d *Deployment) check() error {
	fns := map[string]bool{}
	for _, s := range d.Services {
		fns[s.Function] = true
	}
	var errs []error
	need := func(what, name, fn string) {
		if !fns[fn] {
			errs = append(errs, fmt.Errorf("%s %s calls %q, which no service of %s runs", what, name, fn, ServicesFile))
		}
	}
	for _, p := range d.PushSubscriptions {
		need("push subscription", p.Name, p.Function)
	}
	for _, j := range d.SchedulerJobs {
		need("scheduler job", j.Name, j.Function)
	}
	for _, t := range d.StorageTriggers {
		need("storage trigger", t.Name, t.Function)
	}
	return errors.Join(errs...)
}

// decode reads a JSON file into v, refusing fields v does not have: a
// field the stack does not know is one it would not replay. rename, when
// not nil, is applied to the file's text first.
func decode(path string, rename *strings.Replacer, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the deployment: %w", err)
	}
	if rename != nil {
		b = []byte(rename.Replace(string(b)))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}
