package ingest

import (
	"slices"
	"strings"
)

// landing reports whether obj lies in the landing area the Service loads
// from (see Config.LandingBucket).
func (s *Service) landing(obj Object) bool {
	if obj.Bucket == s.cfg.QuarantineBucket && strings.HasPrefix(obj.Name, s.cfg.QuarantinePrefix) {
		return false
	}
	if s.cfg.LandingBucket != "" && obj.Bucket != s.cfg.LandingBucket {
		return false
	}
	return len(s.cfg.LandingPrefixes) == 0 ||
		slices.ContainsFunc(s.cfg.LandingPrefixes, func(p string) bool { return strings.HasPrefix(obj.Name, p) })
}

// overlaps reports whether some name could lie both under one of the landing
// prefixes and under the quarantine prefix, in the same bucket.
func overlaps(landing []string, quarantine string) bool {
	return len(landing) == 0 || slices.ContainsFunc(landing, func(p string) bool {
		return strings.HasPrefix(p, quarantine) || strings.HasPrefix(quarantine, p)
	})
}
