// Package render prints what the CLI and the demo show: query results in
// every format (table, text, csv, json, jsonl), the one JSON style of every
// --format json, and the lines of ticks, orders and panes. There is one
// renderer so that a value reads the same wherever it appears; money in
// particular always has its scale (179.80, never 179.8).
package render
