package config

import (
	"net"
	"regexp"
)

// The identifier rules below are the ones the clients' servers enforce;
// checking them at start turns a first-request 400 into a start-up error that
// names the variable.
var (
	databaseID = regexp.MustCompile(`^[a-z][a-z0-9-]{2,61}[a-z0-9]$`)
	datasetID  = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
)

func validDatabaseID(s string) bool { return s == "(default)" || databaseID.MatchString(s) }

func validDatasetID(s string) bool { return len(s) <= 1024 && datasetID.MatchString(s) }

func validHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	return err == nil && host != "" && port != ""
}
