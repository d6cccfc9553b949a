package ingest

import "strings"

// landing reports whether obj lies in the landing area the Service loads
// from (see Config.LandingBucket).
func (s *Service) landing(obj Object) bool {
	if obj.Bucket == s.cfg.QuarantineBucket && strings.HasPrefix(obj.Name, s.cfg.QuarantinePrefix) {
		return false
	}
	if s.cfg.LandingBucket != "" && obj.Bucket != s.cfg.LandingBucket {
		return false
	}
	if len(s.cfg.LandingPrefixes) == 0 {
		return true
	}
	for _, p := range s.cfg.LandingPrefixes {
		if strings.HasPrefix(obj.Name, p) {
			return true
		}
	}
	return false
}

// overlaps reports whether some name could lie both under one of the landing
// prefixes and under the quarantine prefix, in the same bucket.
func overlaps(landing []string, quarantine string) bool {
	if len(landing) == 0 {
		return true
	}
	for _, p := range landing {
		if strings.HasPrefix(p, quarantine) || strings.HasPrefix(quarantine, p) {
			return true
		}
	}
	return false
}
