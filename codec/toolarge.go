package codec

import "bytes"

// ResponseID returns the id of the response the skipped line was, when its
// kept bytes show it, else nil. The line must begin as a JSON object whose
// members before the cut include "result" or "error" and no "method" (so a
// request of the other side, whose ids are its own, is never taken for an
// answer); its id is read among those first members, or else from the
// line's end when the object closes with an "id" member (a writer that puts
// the result first: {"result":...,"jsonrpc":"2.0","id":7}). A line that is
// not valid JSON may so yield the id it claims; it can fail no request but
// the ones of the peer that wrote it.
func (e *FrameTooLargeError) ResponseID() *ID {
	id, answer := headMembers(e.Head)
	if !answer {
		return nil
	}
	if id != nil {
		return id
	}
	return tailID(e.Tail)
}

// headMembers reads the top-level members at the start of a JSON object cut
// short: the id when a member before the cut gives it, and whether a
// "result" or "error" member begins before the cut with no "method" before
// it.
func headMembers(b []byte) (id *ID, answer bool) {
	s := &scanner{b: b}
	i := s.ws(0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = s.ws(i + 1)
	for i < len(b) && b[i] == '"' {
		kend, err := s.str(i)
		if err != nil {
			break
		}
		name, _ := stringValue(b[i:kend])
		i = s.ws(kend)
		if i >= len(b) || b[i] != ':' {
			break
		}
		i = s.ws(i + 1)
		switch name {
		case "method":
			return nil, false
		case "result", "error":
			answer = true
		}
		end, err := s.value(i, 1)
		if err != nil {
			break // cut in this value
		}
		if name == "id" {
			if v, err := parseID(b[i:end], false); err == nil {
				id = &v
			}
		}
		if answer && id != nil {
			break
		}
		var done bool
		if i, done, err = s.next(end, '}', ""); done || err != nil {
			break
		}
	}
	return id, answer
}

// tailID reads the id of an object that ends with `"id":VALUE}`, from the
// end of its line. The last member of an object that closes the line is a
// member of the top-level object (no string can be open at the end of
// valid JSON, and a nested object would close with another brace).
func tailID(b []byte) *ID {
	b = bytes.TrimRight(b, " \t\r\n")
	if len(b) == 0 || b[len(b)-1] != '}' {
		return nil
	}
	b = bytes.TrimRight(b[:len(b)-1], " \t\r\n")
	end := len(b)
	start := end
	switch {
	case end == 0:
		return nil
	case b[end-1] == '"':
		// Back to the opening quote: the first one before it not escaped
		// (preceded by an even number of backslashes).
		for start = end - 1; ; {
			j := bytes.LastIndexByte(b[:start], '"')
			if j < 0 {
				return nil
			}
			n := 0
			for k := j - 1; k >= 0 && b[k] == '\\'; k-- {
				n++
			}
			start = j
			if n%2 == 0 {
				break
			}
		}
	default:
		for start > 0 && (b[start-1] == '-' || (b[start-1] >= '0' && b[start-1] <= '9')) {
			start--
		}
	}
	v, err := parseID(b[start:end], false)
	if err != nil {
		return nil
	}
	rest := bytes.TrimRight(b[:start], " \t\r\n")
	if !bytes.HasSuffix(rest, []byte(":")) {
		return nil
	}
	rest = bytes.TrimRight(rest[:len(rest)-1], " \t\r\n")
	if !bytes.HasSuffix(rest, []byte(`"id"`)) {
		return nil
	}
	rest = bytes.TrimRight(rest[:len(rest)-4], " \t\r\n")
	if !bytes.HasSuffix(rest, []byte(",")) {
		return nil
	}
	return &v
}
