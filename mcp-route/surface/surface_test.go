package surface

import (
	"maps"
	"testing"
)

func TestTemplateMatch(t *testing.T) {
	for _, c := range []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
	}{
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template/1/2/data", nil}, // {var} stops at /
		{"test://template/{id}/data", "test://template/a%20b/data", map[string]string{"id": "a b"}},
		{"test://template/{id}/data", "test://template/../data", nil},
		{"test://template/{id}/data", "test://template/%2e%2e/data", nil},
		{"test://template/{id}/data", "test://template/%00/data", nil},
		{"files://{+path}", "files://a/b/c.txt", map[string]string{"path": "a/b/c.txt"}},
		{"files://{+path}", "files://a/../etc/passwd", nil},
		{"doc://{name}{#section}", "doc://intro#usage", map[string]string{"name": "intro", "section": "usage"}},
		{"doc://{name}{#section}", "doc://intro", map[string]string{"name": "intro", "section": ""}},
		{"users://{id}/profile", "users://42/profile?x=1", nil},
	} {
		tp, err := parseTemplate(c.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", c.tmpl, err)
		}
		got, ok := tp.match(c.uri)
		if ok != (c.want != nil) || ok && !maps.Equal(got, c.want) {
			t.Errorf("%s ~ %s = %v %v, want %v", c.tmpl, c.uri, got, ok, c.want)
		}
	}
	for _, bad := range []string{"x://{a", "x://{?q}", "x://plain", "x://{a}}"} {
		if _, err := parseTemplate(bad); err == nil {
			t.Errorf("parseTemplate(%q) accepted", bad)
		}
	}
}

func TestIsText(t *testing.T) {
	for _, c := range []struct {
		mime string
		data string
		want bool
	}{
		{"", "plain", true},
		{"text/plain; charset=utf-8", "x", true},
		{"application/json", "{}", true},
		{"application/vnd.api+json", "{}", true},
		{"image/png", "\x89PNG", false},
		{"image/png", "abc", false}, // UTF-8, but an image type
		{"text/plain", "\xff\xfe", false},
	} {
		if got := isText(c.mime, []byte(c.data)); got != c.want {
			t.Errorf("isText(%q, %q) = %v", c.mime, c.data, got)
		}
	}
}

func TestPage(t *testing.T) {
	keys := []string{"a", "b", "c", "d", "e"}
	var got []string
	cursor := ""
	for i := 0; i < 10; i++ {
		start, end, next, err := page(keys, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, keys[start:end]...)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(got) != 5 || got[4] != "e" {
		t.Errorf("pages gave %q", got)
	}
	if _, _, _, err := page(keys, "not-a-cursor!", 2); err == nil {
		t.Error("a bad cursor was accepted")
	}
}
