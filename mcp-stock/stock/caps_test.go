package stock

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncNote(t *testing.T) {
	if got := truncNote(1000, 52311, "lines"); got != "[truncated: 1000 of 52311 lines shown]" {
		t.Errorf("known total: %q", got)
	}
	if got := truncNote(10, -1, "matches"); got != "[truncated: first 10 matches shown]" {
		t.Errorf("unknown total: %q", got)
	}
}

func TestCapInt(t *testing.T) {
	for _, tc := range []struct{ v, def, max, want int }{
		{0, 10, 100, 10}, {5, 10, 100, 5}, {-3, 10, 100, 1}, {500, 10, 100, 100}, {100, 10, 100, 100},
	} {
		if got := capInt(tc.v, tc.def, tc.max); got != tc.want {
			t.Errorf("capInt(%d, %d, %d) = %d, want %d", tc.v, tc.def, tc.max, got, tc.want)
		}
	}
}

func TestLineBuf(t *testing.T) {
	b := newLineBuf(2, 100)
	for _, l := range []string{"a", "b", "c", "d"} {
		b.Add(l)
	}
	if b.String() != "a\nb\n" || b.Shown() != 2 || b.Seen() != 4 || !b.Full() {
		t.Errorf("line cap: %q %d %d", b.String(), b.Shown(), b.Seen())
	}
	if got := b.Note("lines", true); got != "[truncated: 2 of 4 lines shown]" {
		t.Errorf("note: %q", got)
	}
	if got := b.Note("lines", false); got != "[truncated: first 2 lines shown]" {
		t.Errorf("note, incomplete: %q", got)
	}
	b = newLineBuf(10, 5)
	b.Add("abc")
	b.Add("def") // "abc\ndef\n" is 8 bytes: over
	b.Add("g")   // would fit, but the output stays a prefix
	if b.String() != "abc\n" || !b.Full() {
		t.Errorf("byte cap: %q", b.String())
	}
	if got := newLineBuf(5, 5).Note("lines", true); got != "" {
		t.Errorf("nothing cut: %q", got)
	}
}

func TestCutUTF8(t *testing.T) {
	s := []byte("aé€😀") // 1 + 2 + 3 + 4 bytes
	for n, want := range map[int]string{0: "", 1: "a", 2: "a", 3: "aé", 4: "aé", 5: "aé", 6: "aé€", 9: "aé€", 10: "aé€😀", 20: "aé€😀"} {
		got := cutUTF8(s, n)
		if string(got) != want || !utf8.Valid(got) {
			t.Errorf("cutUTF8(%d) = %q, want %q", n, got, want)
		}
	}
	// Stray continuation bytes: it steps back at most UTFMax-1 bytes and
	// returns a prefix.
	if got := cutUTF8([]byte("ab\x80\x80\x80\x80c"), 5); string(got) != "ab" {
		t.Errorf("invalid: %q", got)
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("z", 200000)
	lr := newLineReader(strings.NewReader("one\r\ntwo\n" + long + "\nlast"))
	var got []string
	for {
		line, full, err := lr.next()
		if err != nil {
			break
		}
		got = append(got, showLine(line, full))
	}
	want := []string{"one", "two", strings.Repeat("z", MaxLineBytes) + "… [line cut: 200000 bytes]", "last"}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %.40q…, want %.40q…", i, got[i], want[i])
		}
	}
}
