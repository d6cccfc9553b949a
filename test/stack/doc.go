// Package stack runs alpipe on this machine as it is deployed, with only
// Google's services replaced by local engines: the production binary
// (cmd/server, CGO_ENABLED=0) once per Cloud Run service that Terraform
// declares, each with exactly the environment Terraform gives it, plus only
// what Cloud Run and the emulators add. What Terraform deploys is data read
// with encoding/json: terraform/services.json (the services) and
// terraform/topology.json (buckets, topics, subscriptions, jobs, trigger),
// which Terraform's own test holds equal to the plan; the stack substitutes
// only its own project for the planned one (tfconfig.Options). It adds:
//
//   - FIRESTORE_EMULATOR_HOST (the gcloud Firestore emulator, holding the
//     named database Terraform creates), STORAGE_EMULATOR_HOST (the
//     in-process fake GCS of internal/objects/fakegcs, with Terraform's
//     buckets), BIGQUERY_EMULATOR_HOST (the BigQuery fake of
//     internal/warehouse/bigquery/bqfake, with the dataset's tables, in
//     front of the BigQuery emulator of test/bqemulator, which runs the
//     SQL); CLOUD_TASKS_EMULATOR_HOST for a service that creates follow-up
//     ticks (TICK_QUEUE set: TICK_INTERVAL=30s), the stack's Cloud Tasks;
//   - PORT, K_SERVICE, K_REVISION and K_CONFIGURATION as Cloud Run sets them;
//   - ALPIPE_CLOCK_FILE, the test clock (the binary accepts it only next to
//     FIRESTORE_EMULATOR_HOST). No credentials are needed: every client
//     talks to an emulator without authentication.
//
// Around the processes it plays the parts of the platform:
//
//   - a front end per service (Frontend), as Cloud Run's: it forwards to the
//     process, answers 503 when the process is down, records every request
//     and can inject the failures a real delivery meets;
//   - Pub/Sub: the gcloud emulator with the topics, the dead-letter pull
//     subscription and the push subscription of pubsub.tf (ack deadline,
//     retry policy, dead-letter policy, OIDC token), pushing to the front end;
//   - Eventarc: every new object generation in the trigger's bucket becomes a
//     binary-mode CloudEvent google.cloud.storage.object.v1.finalized with
//     Eventarc's header set and StorageObjectData body, retried with
//     exponential backoff on any non-2xx, given up after 24 h, all on a
//     compressed scale (Backoff);
//   - Cloud Scheduler: each job of scheduler.tf as an authenticated POST with
//     its body and headers, fired by Scheduler.Fire or, by Scheduler.Due,
//     whenever the clock passes a minute its cron schedule names;
//   - Cloud Tasks, which has no emulator (Tasks): the real client creates
//     tasks on internal/tick/ticktest's in-process server, and Tasks.Due
//     dispatches each due task, on the stack's clock, to the service its URL
//     names, with Cloud Tasks' headers and the task's OIDC token.
//
// What the emulators ignore of the configuration is listed in
// EmulatorGaps. The tests of this package need FIRESTORE_EMULATOR_HOST and
// PUBSUB_EMULATOR_HOST and skip without them or under -short;
// scripts/stack.sh starts both and runs them.
package stack
