package jail

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// FilterOptions configure Filter.
type FilterOptions struct {
	// Resolve turns one name into an absolute path, or fails. Required;
	// typically (*Root).Resolve or (*Root).ResolveLexical.
	Resolve func(name string) (string, error)
	// Rel, when set, turns the resolved path into the printed form
	// (typically (*Root).Rel, for --relative).
	Rel func(abs string) string
	// NUL separates input records and output paths with NUL bytes instead
	// of newlines (find -print0, xargs -0).
	NUL bool
	// Prog prefixes each error line, as in "mcp-jail: PATH: reason".
	Prog string
}

// maxRecord caps one input record. A longer one is refused as invalid
// (MaxPathLen is far smaller) and skipped up to its separator; the stream
// goes on.
const maxRecord = 64 << 10

// Filter resolves names and writes one resolved path per record to out.
// The names come from names when it is non-nil, else from in, one per line
// (per NUL-terminated record with NUL); empty records are skipped, and a
// final record needs no separator. A name that fails writes one line
// "PROG: NAME: reason" to errw (names with control characters are quoted)
// and does not stop the stream. Output is buffered and flushed at the end.
//
// refused counts the names that failed. err reports a read or write
// error, which ends the stream.
func Filter(in io.Reader, names []string, out, errw io.Writer, o FilterOptions) (refused int, err error) {
	bw := bufio.NewWriterSize(out, 64<<10)
	sep := byte('\n')
	if o.NUL {
		sep = 0
	}
	one := func(name string, resolveErr error) error {
		var p string
		if resolveErr == nil {
			p, resolveErr = o.Resolve(name)
		}
		if resolveErr != nil {
			refused++
			// Flush first so that stdout and stderr interleave in input
			// order when both go to one terminal.
			if err := bw.Flush(); err != nil {
				return err
			}
			_, err := io.WriteString(errw, o.Prog+": "+errorLine(name, resolveErr)+"\n")
			return err
		}
		if o.Rel != nil {
			p = o.Rel(p)
		}
		bw.WriteString(p)
		return bw.WriteByte(sep)
	}
	if names != nil {
		for _, n := range names {
			if err := one(n, nil); err != nil {
				return refused, err
			}
		}
		return refused, bw.Flush()
	}
	br := bufio.NewReaderSize(in, maxRecord)
	for {
		rec, rerr := br.ReadSlice(sep)
		var tooLong error
		if rerr == bufio.ErrBufferFull {
			// Keep a prefix for the message; drop the rest of the record.
			rec = append([]byte(nil), rec[:64]...)
			for rerr == bufio.ErrBufferFull {
				_, rerr = br.ReadSlice(sep)
			}
			tooLong = invalid(string(rec)+"...", fmt.Sprintf("longer than %d bytes", MaxPathLen))
		}
		if rerr != nil && rerr != io.EOF {
			bw.Flush()
			return refused, rerr
		}
		rec = bytes.TrimSuffix(rec, []byte{sep})
		if len(rec) > 0 {
			if err := one(string(rec), tooLong); err != nil {
				return refused, err
			}
		}
		if rerr == io.EOF {
			return refused, bw.Flush()
		}
	}
}

// errorLine is "NAME: reason" for err, which normally is a *PathError for
// name. Control characters would corrupt the one-line format, so such a
// name is quoted.
func errorLine(name string, err error) string {
	var pe *PathError
	if errors.As(err, &pe) {
		err = pe.Err
		name = pe.Path
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f {
			name = strconv.Quote(name)
			break
		}
	}
	return name + ": " + err.Error()
}
