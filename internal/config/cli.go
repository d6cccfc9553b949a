package config

// CLI is what the alpipe commands take from the environment: the defaults of
// their flags and where publish delivers orders. The functions' settings
// are the other structs of this package; these only steer the client side.
type CLI struct {
	// Server is the URL of a running `alpipe serve`; empty means the local
	// API's default address.
	Server string `env:"ALPIPE_SERVER"`
	// DataDir is the data folder serve and doctor use by default.
	DataDir string `env:"ALPIPE_DATA_DIR, default=.local"`
	// Project names the Pub/Sub emulator's topic for publish.
	Project string `env:"GOOGLE_CLOUD_PROJECT, default=alpinashop-datos"`
	// PubSubEmulator, when set, makes publish send to the emulator's topic
	// instead of AggregateOrders (the client library reads it too).
	PubSubEmulator string `env:"PUBSUB_EMULATOR_HOST"`
}

// Validate accepts every value: each is a default a flag may override.
func (CLI) Validate() error { return nil }
