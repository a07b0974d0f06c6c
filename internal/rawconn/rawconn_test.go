package rawconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// tcpPair is a connected loopback pair: the accepted end through Listener
// (raw), the dialled end as net made it.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialled, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	accepted, err := Listener{ln}.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := accepted.(*Conn); !ok {
		t.Fatalf("Listener accepted a %T, want *Conn", accepted)
	}
	t.Cleanup(func() { accepted.Close(); dialled.Close() })
	return accepted, dialled
}

// 4 MiB both ways arrive whole (more than the socket buffers hold: writes
// wait for the reader), and CloseWrite ends the peer's reading with EOF.
func TestConnCarriesEverything(t *testing.T) {
	raw, peer := tcpPair(t)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<18)
	go func() {
		raw.Write(want)
		raw.(*Conn).CloseWrite()
	}()
	got, err := io.ReadAll(peer)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("peer read %d bytes (%v), want %d", len(got), err, len(want))
	}
	go func() {
		peer.Write(want)
		peer.Close()
	}()
	got, err = io.ReadAll(raw)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("raw read %d bytes (%v), want %d", len(got), err, len(want))
	}
}

// A read deadline ends a waiting Read with a timeout net/http recognises;
// the connection still works after the deadline is lifted. A Close ends a
// waiting Read with net.ErrClosed.
func TestConnDeadlineAndClose(t *testing.T) {
	raw, peer := tcpPair(t)
	raw.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err := raw.Read(make([]byte, 10))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	raw.SetReadDeadline(time.Time{})
	peer.Write([]byte("after"))
	buf := make([]byte, 10)
	if n, err := raw.Read(buf); err != nil || string(buf[:n]) != "after" {
		t.Fatalf("read after the deadline was lifted: %q, %v", buf[:n], err)
	}

	done := make(chan error, 1)
	go func() {
		_, err := raw.Read(buf)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it wait in the poller
	raw.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read waiting when closed: %v, want net.ErrClosed", err)
	}
	if _, err := raw.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after close: %v, want net.ErrClosed", err)
	}
}

// An HTTP server on a Listener serves requests, keep-alive included.
func TestListenerServesHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Write(bytes.ToUpper(body))
	})}
	go srv.Serve(Listener{ln})
	defer srv.Close()
	client := &http.Client{}
	for i := range 3 {
		resp, err := client.Post("http://"+ln.Addr().String(), "text/plain", strings.NewReader("hello"))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != "HELLO" {
			t.Fatalf("request %d: %q, want HELLO", i, got)
		}
	}
}
