package httpserve

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestSessionToken(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	now := time.Unix(1_800_000_000, 0)
	id := issue(key, claims{Rev: "2025-06-18", Issued: now.Unix(), Expires: now.Add(time.Hour).Unix(), Client: []byte(`{"name":"c"}`)})
	c, err := verify(key, id, now.Add(59*time.Minute))
	if err != nil || c.Rev != "2025-06-18" || string(c.Client) != `{"name":"c"}` {
		t.Fatalf("verify: %+v %v", c, err)
	}
	if id2 := issue(key, claims{Rev: "2025-06-18", Issued: now.Unix(), Expires: now.Add(time.Hour).Unix()}); id2 == id {
		t.Errorf("two sessions got one id")
	}
	if _, err := verify(key, id, now.Add(time.Hour)); err != errExpired {
		t.Errorf("at expiry: %v, want %v", err, errExpired)
	}
	if _, err := verify([]byte(strings.Repeat("o", 32)), id, now); err != errForged {
		t.Errorf("another key: %v, want %v", err, errForged)
	}
	// A payload rewritten to live longer, with the old MAC.
	body, mac, _ := strings.Cut(strings.TrimPrefix(id, tokenPrefix), ".")
	payload, _ := base64.RawURLEncoding.DecodeString(body)
	longer := strings.Replace(string(payload), `"e":`, `"e":9`, 1)
	forged := tokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(longer)) + "." + mac
	if _, err := verify(key, forged, now); err != errForged {
		t.Errorf("rewritten payload: %v, want %v", err, errForged)
	}
	for _, bad := range []string{"", "m1.", "m1..", "x" + id, id + "x", "m2." + id[3:]} {
		if _, err := verify(key, bad, now); err == nil {
			t.Errorf("verify(%q) accepted", bad)
		}
	}
	// Large capabilities are left out: the id is a header on every request.
	big := issue(key, claims{Rev: "2025-06-18", Expires: now.Add(time.Hour).Unix(), Caps: []byte(`{"x":"` + strings.Repeat("a", 4000) + `"}`)})
	if len(big) > 1000 {
		t.Errorf("id of %d bytes with large capabilities", len(big))
	}
}
