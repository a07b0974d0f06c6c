package codec

import (
	"encoding/json"
	"testing"
)

func TestLogEnabled(t *testing.T) {
	for _, tc := range []struct {
		threshold, level string
		want             bool
	}{
		{"info", "info", true},
		{"info", "warning", true},
		{"info", "debug", false},
		{"", "emergency", false}, // no level set: nothing
		{"debug", "loud", false}, // not a LoggingLevel
		{"Info", "error", false}, // names are exact
		{"emergency", "emergency", true},
	} {
		if got := LogEnabled(tc.threshold, tc.level); got != tc.want {
			t.Errorf("LogEnabled(%q, %q) = %v, want %v", tc.threshold, tc.level, got, tc.want)
		}
	}
}

func TestClientCanElicit(t *testing.T) {
	for _, tc := range []struct {
		caps      string
		form, url bool
		sampling  bool
	}{
		{`{}`, false, false, false},
		{`{"elicitation":{}}`, true, false, false},
		{`{"elicitation":{"form":{}}}`, true, false, false},
		{`{"elicitation":{"url":{}}}`, false, true, false},
		{`{"elicitation":{"form":{},"url":{}},"sampling":{}}`, true, true, true},
		{`{"elicitation":true,"sampling":null}`, false, false, false},
	} {
		var caps ClientCapabilities
		if err := json.Unmarshal([]byte(tc.caps), &caps); err != nil {
			t.Fatal(err)
		}
		if f, u, s := ClientCanElicit(caps, ElicitForm), ClientCanElicit(caps, ElicitURL), ClientCanSample(caps); f != tc.form || u != tc.url || s != tc.sampling {
			t.Errorf("%s: form %v url %v sampling %v, want %v %v %v", tc.caps, f, u, s, tc.form, tc.url, tc.sampling)
		}
	}
}
