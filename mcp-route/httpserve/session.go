package httpserve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Limits of a --session-key-file.
const (
	// MinKeyBytes is the shortest session key accepted.
	MinKeyBytes = 32
	// MaxKeyBytes is the longest: HMAC-SHA256 hashes a key longer than
	// 64 bytes down to 32 anyway, and a cap keeps a wrong path (a log, a
	// disk image) from being read whole.
	MaxKeyBytes = 4096
	// minKeyValues is the fewest different byte values a key must hold:
	// 32 random bytes have 8 or more but for a chance below 2^-100, while a
	// file of zeros (truncate -s 32), of one repeated character or of
	// blank lines has 1 or 2.
	minKeyValues = 8
)

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

// keyRecipe is how to make a key, as the docs give it.
const keyRecipe = "make one with: head -c 32 /dev/urandom > FILE"

// ReadKeyFile reads a session key: every byte of the file exactly as it
// is, newlines and white space included, so that any 32 random bytes work
// (head -c 32 /dev/urandom > FILE). A text key (hex or base64, with its
// newline) works too: its bytes, newline included, are the key, and every
// replica must read an identical file (copy it; do not retype it).
//
// Refused, with an error naming the file, its size and what is wanted: a
// file that is not a regular file (a FIFO or /dev/urandom would block or
// differ between replicas; a symbolic link to a regular file is followed),
// fewer than MinKeyBytes or more than MaxKeyBytes bytes, and fewer than 8
// different byte values (a placeholder, not a random key).
func ReadKeyFile(path string) ([]byte, error) {
	// Stat before open: opening a named pipe blocks until a writer comes.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("session key file %s: a %s, want a regular file of at least %d random bytes; %s", path, kind(fi.Mode()), MinKeyBytes, keyRecipe)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	k, err := io.ReadAll(io.LimitReader(f, MaxKeyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("session key file %s: %w", path, err)
	}
	switch {
	case len(k) < MinKeyBytes:
		return nil, fmt.Errorf("session key file %s: %d bytes, want at least %d (every byte counts, white space too); %s", path, len(k), MinKeyBytes, keyRecipe)
	case len(k) > MaxKeyBytes:
		return nil, fmt.Errorf("session key file %s: more than %d bytes, want %d to %d; %s", path, MaxKeyBytes, MinKeyBytes, MaxKeyBytes, keyRecipe)
	}
	var seen [256]bool
	values := 0
	for _, b := range k {
		if !seen[b] {
			seen[b] = true
			values++
		}
	}
	if values < minKeyValues {
		plural := "s"
		if values == 1 {
			plural = ""
		}
		return nil, fmt.Errorf("session key file %s: %d bytes but only %d distinct byte value%s, want random bytes (at least %d distinct values), not a placeholder; %s", path, len(k), values, plural, minKeyValues, keyRecipe)
	}
	return k, nil
}

// kind names a file type that is not a regular file.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file"
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
