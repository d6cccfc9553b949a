package tfconfig

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Placeholders for what only exists after apply. The values are shaped like
// the real ones, so expressions that build on them (a member string, an OIDC
// audience) evaluate; the stack maps a placeholder URI back to its service.
const (
	// PlaceholderProjectNumber is data.google_project.*.number.
	PlaceholderProjectNumber = "123456789012"
	// placeholderRunDomain ends every google_cloud_run_v2_service uri:
	// https://<service name>-<PlaceholderProjectNumber>.<region>.run.app,
	// the shape of Cloud Run's deterministic URL.
)

// PlaceholderServiceURI is the uri a plan gives a Cloud Run service of that
// name and region before apply.
func PlaceholderServiceURI(name, region string) string {
	return "https://" + name + "-" + PlaceholderProjectNumber + "." + region + ".run.app"
}

// Deployment is the configuration as a plan sees it for a deployed image:
// every resource's configured attributes resolved, placeholders for the
// computed ones (ids, emails, URIs, the project number).
type Deployment struct {
	ev      *Evaluator
	project string
	region  string
}

// Open plans the repository's terraform/ offline with DeployedVarsFile and
// vars on top (e.g. a project_id of its own).
func Open(vars map[string]cty.Value) (*Deployment, error) {
	cfg, err := LoadRepo()
	if err != nil {
		return nil, err
	}
	return OpenConfig(cfg, vars)
}

// OpenConfig is Open for a parsed module.
func OpenConfig(cfg *Config, vars map[string]cty.Value) (*Deployment, error) {
	ev, err := Deployed(cfg, vars)
	if err != nil {
		return nil, err
	}
	d := &Deployment{ev: ev}
	if v, ok := ev.Vars["project_id"]; ok && v.IsKnown() && !v.IsNull() {
		d.project = v.AsString()
	}
	if v, ok := ev.Vars["region"]; ok && v.IsKnown() && !v.IsNull() {
		d.region = v.AsString()
	}
	d.resolve()
	return d, nil
}

// StringVars turns plain strings into variable values, for Open.
func StringVars(m map[string]string) map[string]cty.Value {
	out := map[string]cty.Value{}
	for k, v := range m {
		out[k] = cty.StringVal(v)
	}
	return out
}

// resolve gives every resource and data source its configured attributes
// plus placeholders, in passes, because resources refer to each other in
// any order (a pass sees the previous one's values); four passes cover the
// configuration's longest chain (bucket -> env -> local -> service -> uri).
func (d *Deployment) resolve() {
	ev := d.ev
	for pass := 0; pass < 4; pass++ {
		data := map[string]map[string]cty.Value{}
		for _, r := range ev.Cfg.Data {
			if data[r.Type] == nil {
				data[r.Type] = map[string]cty.Value{}
			}
			if v, err := ev.configuredAll(r, d.placeholders); err == nil {
				data[r.Type][r.Name] = v
			}
		}
		dv := map[string]cty.Value{}
		for typ, byName := range data {
			dv[typ] = cty.ObjectVal(byName)
		}
		ev.Ctx.Variables["data"] = cty.ObjectVal(dv)
		ev.SettleLocals()

		types := []string{}
		seen := map[string]bool{}
		for _, r := range ev.Cfg.Resources {
			if !seen[r.Type] {
				seen[r.Type] = true
				types = append(types, r.Type)
			}
		}
		for _, typ := range types {
			byName := map[string]cty.Value{}
			complete := true
			for _, r := range ev.Cfg.OfType(typ) {
				v, err := ev.configuredAll(r, d.placeholders)
				if err != nil {
					complete = false
					break
				}
				byName[r.Name] = v
			}
			if complete {
				ev.Ctx.Variables[typ] = cty.ObjectVal(byName)
			}
			ev.SettleLocals()
		}
	}
}

// placeholders adds the computed attributes the configuration reads.
func (d *Deployment) placeholders(r Resource, _ string, a map[string]cty.Value) {
	str := func(name string) string {
		if v, ok := a[name]; ok && v.IsKnown() && !v.IsNull() && v.Type() == cty.String {
			return v.AsString()
		}
		return ""
	}
	set := func(name, v string) {
		if _, ok := a[name]; !ok {
			a[name] = cty.StringVal(v)
		}
	}
	p := d.project
	switch r.Type {
	case "google_project":
		set("number", PlaceholderProjectNumber)
	case "google_storage_project_service_account":
		email := "service-" + PlaceholderProjectNumber + "@gs-project-accounts.iam.gserviceaccount.com"
		set("email_address", email)
		set("member", "serviceAccount:"+email)
	case "google_service_account":
		email := str("account_id") + "@" + p + ".iam.gserviceaccount.com"
		set("email", email)
		set("member", "serviceAccount:"+email)
		set("name", "projects/"+p+"/serviceAccounts/"+email)
		set("id", "projects/"+p+"/serviceAccounts/"+email)
	case "google_cloud_run_v2_service":
		region := str("location")
		if region == "" {
			region = d.region
		}
		set("uri", PlaceholderServiceURI(str("name"), region))
		set("id", "projects/"+p+"/locations/"+region+"/services/"+str("name"))
	case "google_pubsub_topic":
		set("id", "projects/"+p+"/topics/"+str("name"))
	case "google_pubsub_subscription":
		set("id", "projects/"+p+"/subscriptions/"+str("name"))
	case "google_firestore_database":
		set("id", "projects/"+p+"/databases/"+str("name"))
	case "google_bigquery_dataset":
		set("id", "projects/"+p+"/datasets/"+str("dataset_id"))
	case "google_storage_bucket":
		set("id", str("name"))
		set("url", "gs://"+str("name"))
	}
	set("id", r.Addr()+"-placeholder-id")
	set("project", p)
}

// instance is one instance of a resource: its for_each key and each.
type instance struct {
	key  string
	each *Each
}

func (d *Deployment) instances(r Resource) ([]instance, error) {
	if _, ok := r.Block.Body.Attributes["for_each"]; !ok {
		return []instance{{}}, nil
	}
	m, err := d.ev.ForEach(r)
	if err != nil {
		return nil, err
	}
	var out []instance
	for _, k := range KeysOf(m) {
		each := Each{cty.StringVal(k), m[k]}
		out = append(out, instance{key: k, each: &each})
	}
	return out, nil
}

// eachInstance calls fn for every instance of every resource in rs, stopping
// at the first error.
func (d *Deployment) eachInstance(rs []Resource, fn func(Resource, instance) error) error {
	for _, r := range rs {
		ins, err := d.instances(r)
		if err != nil {
			return err
		}
		for _, in := range ins {
			if err := fn(r, in); err != nil {
				return err
			}
		}
	}
	return nil
}

// subscriptions are the google_pubsub_subscription resources with
// (push) or without a push_config block.
func (d *Deployment) subscriptions(push bool) []Resource {
	var out []Resource
	for _, r := range d.ev.Cfg.OfType("google_pubsub_subscription") {
		if (Nested(r.Block, "push_config") != nil) == push {
			out = append(out, r)
		}
	}
	return out
}

// str evaluates the attribute at path (nested blocks, then the attribute)
// of one instance; ok is false when the configuration does not set it.
func (d *Deployment) str(r Resource, in instance, path ...string) (string, bool, error) {
	a, ok := Attr(r.Block, path...)
	if !ok {
		return "", false, nil
	}
	s, err := d.ev.Str(a.Expr, in.each)
	if err != nil {
		return "", true, fmt.Errorf("%s: %w", d.name(r, in), err)
	}
	return s, true, nil
}

func (d *Deployment) name(r Resource, in instance) string {
	if in.each == nil {
		return r.Addr()
	}
	return fmt.Sprintf("%s[%q]", r.Addr(), in.key)
}

// value evaluates the attribute at path to a cty value (cty.NilVal when unset).
func (d *Deployment) value(r Resource, in instance, path ...string) (cty.Value, error) {
	a, ok := Attr(r.Block, path...)
	if !ok {
		return cty.NilVal, nil
	}
	v, err := d.ev.Eval(a.Expr, in.each)
	if err != nil {
		return cty.NilVal, fmt.Errorf("%s: %w", d.name(r, in), err)
	}
	return v, nil
}

// int evaluates the attribute at path to a whole number (0 when unset).
func (d *Deployment) int(r Resource, in instance, path ...string) (int, error) {
	v, err := d.value(r, in, path...)
	if err != nil {
		return 0, err
	}
	n, err := toInt(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %s: %w", d.name(r, in), strings.Join(path, "."), err)
	}
	return n, nil
}

func toInt(v cty.Value) (int, error) {
	if v == cty.NilVal || v.IsNull() {
		return 0, nil
	}
	n, err := convert.Convert(v, cty.Number)
	if err != nil {
		return 0, err
	}
	i, acc := n.AsBigFloat().Int64()
	if acc != big.Exact {
		return 0, fmt.Errorf("%s is not a whole number", n.AsBigFloat())
	}
	return int(i), nil
}

// triggers maps a service name to what calls it.
func (d *Deployment) triggers() (map[string]string, error) {
	out := map[string]string{}
	sts, err := d.StorageTriggers()
	if err != nil {
		return nil, err
	}
	for _, t := range sts {
		out[t.Service] = "storage"
	}
	subs, err := d.PushSubscriptions()
	if err != nil {
		return nil, err
	}
	for _, s := range subs {
		out[s.Service] = "pubsub"
	}
	jobs, err := d.SchedulerJobs()
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		out[j.Service] = "schedule"
	}
	return out, nil
}

// serviceOfURI maps a placeholder URI back to the service name.
func (d *Deployment) serviceOfURI(uri string) string {
	s := strings.TrimPrefix(uri, "https://")
	i := strings.Index(s, "-"+PlaceholderProjectNumber+".")
	if i < 0 {
		return ""
	}
	return s[:i]
}

// lastSegment is the ID at the end of a resource name (projects/p/topics/ID).
func lastSegment(s string) string { return s[strings.LastIndex(s, "/")+1:] }

// PushSubscription is a Pub/Sub push subscription to a service.
type PushSubscription struct {
	Name             string
	Topic            string // topic ID
	Service          string // the pushed service's name
	AckDeadline      time.Duration
	MinBackoff       time.Duration // zero when the configuration sets no retry policy
	MaxBackoff       time.Duration
	DeadLetterTopic  string // topic ID, "" without a dead-letter policy
	MaxDeliveries    int
	OIDCAudience     string
	OIDCAccountEmail string
	// NoWrapper is true when the push sends the bare message data.
	NoWrapper bool
}

// PushSubscriptions lists the push subscriptions.
func (d *Deployment) PushSubscriptions() ([]PushSubscription, error) {
	var out []PushSubscription
	err := d.eachInstance(d.subscriptions(true), func(r Resource, in instance) error {
		var err error
		p := PushSubscription{NoWrapper: Nested(r.Block, "push_config", "no_wrapper") != nil}
		strs := []struct {
			dst  *string
			path []string
		}{
			{&p.Name, []string{"name"}},
			{&p.Topic, []string{"topic"}},
			{&p.Service, []string{"push_config", "push_endpoint"}},
			{&p.DeadLetterTopic, []string{"dead_letter_policy", "dead_letter_topic"}},
			{&p.OIDCAudience, []string{"push_config", "oidc_token", "audience"}},
			{&p.OIDCAccountEmail, []string{"push_config", "oidc_token", "service_account_email"}},
		}
		for _, s := range strs {
			if *s.dst, _, err = d.str(r, in, s.path...); err != nil {
				return err
			}
		}
		p.Topic, p.DeadLetterTopic = lastSegment(p.Topic), lastSegment(p.DeadLetterTopic)
		p.Service = d.serviceOfURI(p.Service)
		durs := []struct {
			dst  *time.Duration
			path []string
		}{
			{&p.MinBackoff, []string{"retry_policy", "minimum_backoff"}},
			{&p.MaxBackoff, []string{"retry_policy", "maximum_backoff"}},
		}
		for _, s := range durs {
			v, ok, err := d.str(r, in, s.path...)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if *s.dst, err = time.ParseDuration(v); err != nil {
				return fmt.Errorf("%s: %s: %w", d.name(r, in), strings.Join(s.path, "."), err)
			}
		}
		if p.MaxDeliveries, err = d.int(r, in, "dead_letter_policy", "max_delivery_attempts"); err != nil {
			return err
		}
		secs, err := d.int(r, in, "ack_deadline_seconds")
		if err != nil {
			return err
		}
		p.AckDeadline = time.Duration(secs) * time.Second
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// PullSubscription is a subscription without push (e.g. the dead letters').
type PullSubscription struct {
	Name        string
	Topic       string // topic ID
	AckDeadline time.Duration
}

// PullSubscriptions lists the subscriptions without push_config.
func (d *Deployment) PullSubscriptions() ([]PullSubscription, error) {
	var out []PullSubscription
	err := d.eachInstance(d.subscriptions(false), func(r Resource, in instance) error {
		var err error
		var p PullSubscription
		if p.Name, _, err = d.str(r, in, "name"); err != nil {
			return err
		}
		if p.Topic, _, err = d.str(r, in, "topic"); err != nil {
			return err
		}
		p.Topic = lastSegment(p.Topic)
		secs, err := d.int(r, in, "ack_deadline_seconds")
		if err != nil {
			return err
		}
		p.AckDeadline = time.Duration(secs) * time.Second
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Topics lists the Pub/Sub topic IDs.
func (d *Deployment) Topics() ([]string, error) {
	var out []string
	err := d.eachInstance(d.ev.Cfg.OfType("google_pubsub_topic"), func(r Resource, in instance) error {
		n, _, err := d.str(r, in, "name")
		out = append(out, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// SchedulerJob is a Cloud Scheduler HTTP job.
type SchedulerJob struct {
	Name            string
	Schedule        string
	TimeZone        string
	Service         string // the called service's name (from its URI)
	Method          string
	Headers         map[string]string
	Body            []byte // decoded
	AttemptDeadline time.Duration
	OIDCAudience    string
	RetryCount      int
}

// SchedulerJobs lists the scheduler jobs.
func (d *Deployment) SchedulerJobs() ([]SchedulerJob, error) {
	var out []SchedulerJob
	err := d.eachInstance(d.ev.Cfg.OfType("google_cloud_scheduler_job"), func(r Resource, in instance) error {
		var err error
		j := SchedulerJob{Headers: map[string]string{}, Method: "POST"}
		var uri, body, deadline string
		for _, s := range []struct {
			dst  *string
			path []string
		}{
			{&j.Name, []string{"name"}},
			{&j.Schedule, []string{"schedule"}},
			{&j.TimeZone, []string{"time_zone"}},
			{&uri, []string{"http_target", "uri"}},
			{&body, []string{"http_target", "body"}},
			{&deadline, []string{"attempt_deadline"}},
			{&j.OIDCAudience, []string{"http_target", "oidc_token", "audience"}},
		} {
			if *s.dst, _, err = d.str(r, in, s.path...); err != nil {
				return err
			}
		}
		if m, ok, err := d.str(r, in, "http_target", "http_method"); err != nil {
			return err
		} else if ok {
			j.Method = m
		}
		j.Service = d.serviceOfURI(uri)
		if body != "" {
			if j.Body, err = base64.StdEncoding.DecodeString(body); err != nil {
				return fmt.Errorf("%s: http_target.body is not base64: %w", d.name(r, in), err)
			}
		}
		if deadline != "" {
			if j.AttemptDeadline, err = time.ParseDuration(deadline); err != nil {
				return fmt.Errorf("%s: attempt_deadline: %w", d.name(r, in), err)
			}
		}
		hv, err := d.value(r, in, "http_target", "headers")
		if err != nil {
			return err
		}
		if hv != cty.NilVal && !hv.IsNull() {
			for k, v := range hv.AsValueMap() {
				sv, err := convert.Convert(v, cty.String)
				if err != nil {
					return fmt.Errorf("%s: header %s: %w", d.name(r, in), k, err)
				}
				j.Headers[k] = sv.AsString()
			}
		}
		if j.RetryCount, err = d.int(r, in, "retry_config", "retry_count"); err != nil {
			return err
		}
		out = append(out, j)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// StorageTrigger is an Eventarc trigger on Cloud Storage events.
type StorageTrigger struct {
	Name      string
	EventType string // e.g. google.cloud.storage.object.v1.finalized
	Bucket    string
	Service   string // destination Cloud Run service name
}

// StorageTriggers lists the Eventarc triggers with a bucket criterion.
func (d *Deployment) StorageTriggers() ([]StorageTrigger, error) {
	var out []StorageTrigger
	err := d.eachInstance(d.ev.Cfg.OfType("google_eventarc_trigger"), func(r Resource, in instance) error {
		var err error
		var t StorageTrigger
		if t.Name, _, err = d.str(r, in, "name"); err != nil {
			return err
		}
		if t.Service, _, err = d.str(r, in, "destination", "cloud_run_service", "service"); err != nil {
			return err
		}
		for _, b := range r.Block.Body.Blocks {
			if b.Type != "matching_criteria" {
				continue
			}
			attr, aok := b.Body.Attributes["attribute"]
			val, vok := b.Body.Attributes["value"]
			if !aok || !vok {
				continue
			}
			a, err := d.ev.Str(attr.Expr, in.each)
			if err != nil {
				return err
			}
			v, err := d.ev.Str(val.Expr, in.each)
			if err != nil {
				return err
			}
			switch a {
			case "type":
				t.EventType = v
			case "bucket":
				t.Bucket = v
			}
		}
		if t.Bucket != "" {
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FirestoreDatabase is the database ID of the (one) Firestore database.
func (d *Deployment) FirestoreDatabase() (string, error) {
	dbs := d.ev.Cfg.OfType("google_firestore_database")
	if len(dbs) != 1 {
		return "", fmt.Errorf("%d google_firestore_database resources, want 1", len(dbs))
	}
	n, _, err := d.str(dbs[0], instance{}, "name")
	return n, err
}

// Buckets maps each bucket's key (its for_each key, else the resource
// name) to its name: buckets Terraform creates and those it reads (data).
func (d *Deployment) Buckets() (map[string]string, error) {
	out := map[string]string{}
	rs := append(d.ev.Cfg.OfType("google_storage_bucket"), d.ev.Cfg.DataOfType("google_storage_bucket")...)
	err := d.eachInstance(rs, func(r Resource, in instance) error {
		n, _, err := d.str(r, in, "name")
		if err != nil {
			return err
		}
		key := in.key
		if in.each == nil {
			key = r.Name
		}
		out[key] = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Dataset is the BigQuery dataset's ID and location.
func (d *Deployment) Dataset() (id, location string, err error) {
	ds := d.ev.Cfg.OfType("google_bigquery_dataset")
	if len(ds) != 1 {
		return "", "", fmt.Errorf("%d google_bigquery_dataset resources, want 1", len(ds))
	}
	if id, _, err = d.str(ds[0], instance{}, "dataset_id"); err != nil {
		return "", "", err
	}
	location, _, err = d.str(ds[0], instance{}, "location")
	return id, location, err
}
