package cost

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// RecordedFile is the file, in this package's directory, that holds the
// recorded measurement. `go test ./tools/cost/ -run TestMeasure -update`
// rewrites it (and docs/cost.md).
const RecordedFile = "recorded.json"

//go:embed recorded.json
var recordedJSON []byte

// Recorded is one run of the measurements: the model's measured inputs.
type Recorded struct {
	Scenario     Scenario        `json:"scenario"`
	Stream       Measurement     `json:"stream"`
	FileScenario FileScenario    `json:"file_scenario"`
	File         FileMeasurement `json:"file"`
	// Variants are the stream measured again with one setting changed, by
	// Variant name.
	Variants map[string]Measurement `json:"variants"`
	CPU      CPU                    `json:"cpu"`
}

// CPU holds the processor time figures, from benchmarks.
type CPU struct {
	Order  Figure `json:"order"`  // per delivery handled
	Tick   Figure `json:"tick"`   // per tick at the scenario's steady state
	File   Figure `json:"file"`   // per export of FileScenario.Lines lines, ingest path
	Encode Figure `json:"encode"` // per order line, BigQuery NDJSON staging encoding
}

// Figure is one benchmark result and the command that printed it.
type Figure struct {
	Nanos   int64  `json:"nanos"`
	Per     string `json:"per"`
	Command string `json:"command"`
	Metric  string `json:"metric"`
	On      string `json:"on"` // date and machine of the run
}

// EncodeFigure is the staging encoder's cost, cited from the benchmark of
// package warehouse/bigquery (its encoder is unexported): the median of the
// three runs printed on the day the prices were read.
var EncodeFigure = Figure{
	Nanos:   509,
	Per:     "order line",
	Command: "go test -run XXX -bench EncodeLineas -cpu 1 -count 3 ./internal/warehouse/bigquery/",
	Metric:  "ns/op (655.5, 508.8, 505.5)",
	On:      ReadOn + ", linux/amd64, 2 vCPU (AMD EPYC), shared",
}

// LoadRecorded returns the measurement recorded in this package.
func LoadRecorded() (Recorded, error) { return ParseRecorded(recordedJSON) }

// ParseRecorded decodes a recorded measurement.
func ParseRecorded(b []byte) (Recorded, error) {
	var r Recorded
	if err := json.Unmarshal(b, &r); err != nil {
		return Recorded{}, fmt.Errorf("decode recorded measurement: %w", err)
	}
	if r.Stream.Orders <= 0 || r.Stream.Ticks <= 0 || r.File.Lines <= 0 {
		return Recorded{}, fmt.Errorf("recorded measurement is empty: %d orders, %d ticks, %d file lines", r.Stream.Orders, r.Stream.Ticks, r.File.Lines)
	}
	return r, nil
}
