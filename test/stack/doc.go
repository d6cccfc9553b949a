// Package stack runs alpipe on this machine as it is deployed, with only
// Google's services replaced by local engines: the production binary
// (cmd/server, CGO_ENABLED=0) once per Cloud Run service that Terraform
// declares, each with exactly the environment Terraform gives it
// (terraform/services.json and topology.json, which Terraform's own test
// holds equal to the plan, read by test/tfconfig in a project of the
// stack's own), plus only what Cloud Run (PORT, K_*) and the emulators add.
// No credentials are needed: every client talks to an emulator.
//
// Around the processes it plays the platform: Cloud Run's front ends
// (Frontend), Pub/Sub's push subscriptions on the gcloud emulator,
// Eventarc's deliveries of new objects in the fake GCS (Eventarc), Cloud
// Scheduler's jobs (Scheduler) and Cloud Tasks' follow-up ticks (Tasks),
// each with the headers and OIDC tokens the platform sends, on the stack's
// test clock. What these stand-ins do not do as Google does is EmulatorGaps.
// The tests need FIRESTORE_EMULATOR_HOST and PUBSUB_EMULATOR_HOST and skip
// without them or under -short; scripts/stack.sh starts both and runs them.
package stack
