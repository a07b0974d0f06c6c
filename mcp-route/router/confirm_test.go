package router

import (
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
)

func TestConfirmNeeds(t *testing.T) {
	ro, destructive, safe := true, true, false
	tools := map[string]*codec.Tool{
		"bare":      {Name: "bare"},
		"readonly":  {Name: "readonly", Annotations: &codec.ToolAnnotations{ReadOnlyHint: &ro}},
		"additive":  {Name: "additive", Annotations: &codec.ToolAnnotations{DestructiveHint: &safe}},
		"explicit":  {Name: "explicit", Annotations: &codec.ToolAnnotations{DestructiveHint: &destructive}},
		"titleonly": {Name: "titleonly", Annotations: &codec.ToolAnnotations{Title: "T"}},
	}
	for _, tc := range []struct {
		spec string
		want []string // the tools gated
	}{
		{"destructive", []string{"bare", "explicit", "titleonly"}},
		{"all", []string{"additive", "bare", "explicit", "readonly", "titleonly"}},
		{"readonly, additive", []string{"additive", "readonly"}},
		{"destructive,additive", []string{"additive", "bare", "explicit", "titleonly"}},
	} {
		c, err := ParseConfirm(tc.spec)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		var got []string
		for _, name := range []string{"additive", "bare", "explicit", "readonly", "titleonly"} {
			if c.Needs(tools[name]) {
				got = append(got, name)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("--confirm %q gates %v, want %v", tc.spec, got, tc.want)
		}
	}
	var none *Confirm
	if none.Needs(tools["bare"]) {
		t.Error("no --confirm gates a tool")
	}
	for _, bad := range []string{"", ",", "rm -rf", "a,b c"} {
		if _, err := ParseConfirm(bad); err == nil || !strings.Contains(err.Error(), "want destructive, all or tool names") {
			t.Errorf("--confirm %q: %v, want a refusal that says what is wanted", bad, err)
		}
	}
}

func TestArgsDigest(t *testing.T) {
	a := ArgsDigest("wipe", []byte(`{"tag": "a"}`))
	if a != ArgsDigest("wipe", []byte(`{"tag":"a"}`)) {
		t.Error("insignificant space changes the digest")
	}
	for _, other := range []string{ArgsDigest("wipe", []byte(`{"tag":"b"}`)), ArgsDigest("wipe2", []byte(`{"tag":"a"}`))} {
		if other == a {
			t.Error("other arguments or another tool give the same digest")
		}
	}
	if !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+64 {
		t.Errorf("digest %q", a)
	}
}
