package httpserve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// MinKeyBytes is the shortest session key accepted from --session-key-file.
const MinKeyBytes = 32

// tokenPrefix versions the token format: a replica that cannot read a
// token refuses it (404), and the client initializes again.
const tokenPrefix = "m1."

// maxCapsBytes caps the client capabilities a token carries: the token is
// an HTTP header on every request.
const maxCapsBytes = 2048

// claims is what a session token holds: everything a replica needs to
// serve the session's later requests, so that no replica stores anything.
type claims struct {
	Rev     string          `json:"r"`            // negotiated revision
	Issued  int64           `json:"i"`            // unix seconds
	Expires int64           `json:"e"`            // unix seconds
	Nonce   string          `json:"n"`            // makes every id unique
	Client  json.RawMessage `json:"ci,omitempty"` // clientInfo
	Caps    json.RawMessage `json:"cc,omitempty"` // client capabilities, when small
}

// ReadKeyFile reads a session key: the file's bytes, surrounding white
// space trimmed, at least MinKeyBytes of them.
func ReadKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k := []byte(strings.TrimSpace(string(b)))
	if len(k) < MinKeyBytes {
		return nil, fmt.Errorf("session key file %s: %d bytes, want at least %d (e.g. head -c 48 /dev/urandom | base64 > FILE)", path, len(k), MinKeyBytes)
	}
	return k, nil
}

// randomKey is the key of a process without --session-key-file.
func randomKey() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}

// issue returns a new session id for c.
func issue(key []byte, c claims) string {
	n := make([]byte, 12)
	rand.Read(n)
	c.Nonce = base64.RawURLEncoding.EncodeToString(n)
	if len(c.Caps) > maxCapsBytes {
		c.Caps = nil
	}
	if len(c.Client) > maxCapsBytes {
		c.Client = nil
	}
	payload, _ := json.Marshal(c)
	body := tokenPrefix + base64.RawURLEncoding.EncodeToString(payload)
	return body + "." + base64.RawURLEncoding.EncodeToString(mac(key, body))
}

func mac(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

// Session id errors; each is answered 404 (the client must initialize
// again).
var (
	errForged  = errors.New("session id not issued by this server (or by a replica with another key)")
	errExpired = errors.New("session expired")
)

// verify checks id's signature and expiry and returns its claims.
func verify(key []byte, id string, now time.Time) (*claims, error) {
	// The id is prefix + payload + "." + mac; the payload has no dot.
	i := strings.LastIndexByte(id, '.')
	if !strings.HasPrefix(id, tokenPrefix) || i <= len(tokenPrefix) {
		return nil, errForged
	}
	body := id[:i]
	got, err := base64.RawURLEncoding.DecodeString(id[i+1:])
	if err != nil || !hmac.Equal(got, mac(key, body)) {
		return nil, errForged
	}
	payload, err := base64.RawURLEncoding.DecodeString(body[len(tokenPrefix):])
	if err != nil {
		return nil, errForged
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, errForged
	}
	if now.Unix() >= c.Expires {
		return nil, errExpired
	}
	return &c, nil
}
