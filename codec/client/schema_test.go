package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/fakeserver"
	"github.com/mcpipe/mcpipe/internal/spectest"
)

// tee records what the client writes, then passes it on.
type tee struct {
	mu  sync.Mutex
	buf bytes.Buffer
	w   io.WriteCloser
}

func (t *tee) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf.Write(p)
	t.mu.Unlock()
	return t.w.Write(p)
}

func (t *tee) Close() error { return t.w.Close() }

func (t *tee) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Split(strings.TrimSuffix(t.buf.String(), "\n"), "\n")
}

// TestClientMessagesValidate checks every line the client writes, in every
// revision, against the official schema: requests with their _meta, the
// handshake, notifications/cancelled, and its answers to server requests.
func TestClientMessagesValidate(t *testing.T) {
	spectest.Dir(t)
	for _, rev := range codec.Revisions {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = fakeserver.Serve(inR, outW, "dual")
				outW.Close()
				inR.CloseWithError(io.ErrClosedPipe)
			}()
			rec := &tee{w: inW}
			c := New(outR, rec, Options{ProtocolVersion: rev})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := c.Connect(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			calls := []struct {
				name string
				args string
				tok  any
			}{
				{"echo", `{"text":"x"}`, nil},
				{"progress", ``, "tok"},
				{"progress", ``, 7},
				{"ping_client", ``, nil},
				{"ask_roots", ``, nil},
			}
			for _, cl := range calls {
				var a json.RawMessage
				if cl.args != "" {
					a = json.RawMessage(cl.args)
				}
				if _, _, err := c.CallTool(ctx, cl.name, a, CallOptions{ProgressToken: cl.tok}); err != nil {
					t.Fatalf("%s: %v", cl.name, err)
				}
			}
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			// A cancelled request: the context ends before the answer can
			// be read, so notifications/cancelled goes out.
			cctx, ccancel := context.WithCancel(ctx)
			ccancel()
			_, _ = c.Request(cctx, codec.MethodToolsList, nil)

			c.CloseWrite()
			<-done
			<-c.Done()
			for i, line := range rec.lines() {
				lineRev := rev
				if r, ok := codec.RequestRevision(json.RawMessage(line)); ok {
					lineRev = r
				}
				var m struct {
					Params json.RawMessage `json:"params"`
				}
				_ = json.Unmarshal([]byte(line), &m)
				if r, ok := codec.RequestRevision(m.Params); ok {
					lineRev = r
				}
				if err := spectest.CheckClientMessageErr(t, lineRev, []byte(line)); err != nil {
					t.Errorf("line %d (%s): %s\n%v", i+1, lineRev, line, err)
				}
			}
		})
	}
}
