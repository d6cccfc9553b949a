package stack

import (
	"encoding/base64"
	"encoding/json"
	"time"
)

// idToken is an OIDC ID token in Google's shape (a JWT: header, claims,
// signature), unsigned: the services run without authentication here, as
// on Cloud Run, where the platform checks the token before the request
// reaches the container. It is sent so that the requests carry the header
// set the platform sends.
func idToken(audience, email string, now time.Time) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	header := map[string]string{"alg": "RS256", "kid": "stack-not-signed", "typ": "JWT"}
	claims := map[string]any{
		"aud":            audience,
		"azp":            email,
		"email":          email,
		"email_verified": true,
		"exp":            now.Add(time.Hour).Unix(),
		"iat":            now.Unix(),
		"iss":            "https://accounts.google.com",
		"sub":            "100000000000000000000",
	}
	return enc(header) + "." + enc(claims) + "." + base64.RawURLEncoding.EncodeToString([]byte("not-signed"))
}
