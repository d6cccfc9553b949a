// Package e2e runs the whole system on real parts: the functions through the
// local server (internal/local), the gcloud Pub/Sub emulator pushing
// topic pedidos-nuevos to AggregateOrders, the gcloud Firestore emulator
// holding the ledger and the window state, the in-process fake Cloud Storage
// and DuckDB. It plays the demo stories of Steps 1 and 2 through them and
// expects what the embedded demo shows (internal/local/testdata/demo.golden).
//
// The tests need FIRESTORE_EMULATOR_HOST and PUBSUB_EMULATOR_HOST and skip
// without them or under -short. scripts/e2e.sh starts both emulators and
// runs this package alone; scripts/test.sh runs it with everything else.
package e2e
