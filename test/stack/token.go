package stack

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// idToken is an OIDC ID token in Google's shape, unsigned: on Cloud Run the
// platform checks it before the request reaches the container, so it is
// sent only for the requests to carry the platform's header set.
func idToken(audience, email string, now time.Time) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	header := map[string]string{"alg": "RS256", "kid": "stack-not-signed", "typ": "JWT"}
	claims := map[string]any{"aud": audience, "azp": email, "email": email, "email_verified": true,
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "iss": "https://accounts.google.com", "sub": "100000000000000000000"}
	return enc(header) + "." + enc(claims) + "." + base64.RawURLEncoding.EncodeToString([]byte("not-signed"))
}

// send makes one request as Google's callers do (bounded by timeout when it
// is not zero) and returns the answer's status (0 without an answer) and
// body; a non-2xx answer is an error, named after what sent it.
func send(ctx context.Context, what string, timeout time.Duration,
	method, url string, body []byte, h http.Header) (int, []byte, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return resp.StatusCode, answer, fmt.Errorf("%s: read answer: %w", what, err)
	case resp.StatusCode/100 != 2:
		return resp.StatusCode, answer, fmt.Errorf("%s: HTTP %d: %s", what, resp.StatusCode, bytes.TrimSpace(answer))
	}
	return resp.StatusCode, answer, nil
}
