package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// selfSigned writes a certificate for 127.0.0.1 and its key to a temp
// dir: their files, and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestHTTPTLSLongCallOverHTTP2Client: a client that offers HTTP/2 over
// TLS (Go's, browsers', most SDKs') got it, and there the handler's write
// deadline is a timer on the stream that resets it when it fires, write
// or no write: every call longer than --http-write-timeout was answered
// RST_STREAM (INTERNAL_ERROR) instead of its result. The server speaks
// HTTP/1.1 only, where the deadline bounds writes alone, and such a client
// gets the answer of a call that outlasts it; a short call works either way.
func TestHTTPTLSLongCallOverHTTP2Client(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	r := startHTTP(t, "--tools", httpTools(t), "--http-write-timeout", "1s", "--tls-cert", certFile, "--tls-key", keyFile)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	proctest.Eventually(t, func() string {
		resp, err := client.Get(r.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return "not ready"
		}
		return ""
	})
	for _, secs := range []string{"0", "2"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"pidfile":"` +
			filepath.Join(t.TempDir(), "pid") + `","secs":` + secs + `},` + metaRev + `}}`
		req, err := http.NewRequest("POST", r.url+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Mcp-Protocol-Version", modernRev)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "slow")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("call of %ss: %v", secs, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !strings.Contains(string(b), "slept") {
			t.Errorf("call of %ss over %s: %d %q %v", secs, resp.Proto, resp.StatusCode, b, err)
		}
	}
}

// TestHTTPBodyCutShort: a client that sends part of a POST body and
// half-closes its connection got 200 with an empty body, as if the
// request had been served; nothing ran. It gets 400, and a whole body on
// the next connection is served.
func TestHTTPBodyCutShort(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t))
	waitReady(t, r)
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if _, err := io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json\r\n"+
		"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body[:10]); err != nil {
		t.Fatal(err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard only
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 {
		t.Errorf("body cut short: %d %q, want 400", resp.StatusCode, b)
	}
	if code, _, out := post(t, r.url, body); code != 200 || !strings.Contains(out, `"result"`) {
		t.Errorf("whole body: %d %s", code, out)
	}
}

// TestHTTPTLS: --tls-cert/--tls-key serve HTTPS; plain HTTP to the port is
// refused.
func TestHTTPTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	r := startHTTP(t, "--tools", httpTools(t), "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(r.url, "https://") {
		t.Fatalf("serving at %s, want https", r.url)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Post(r.url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("ping over TLS: %v %v", resp, err)
	}
	resp.Body.Close()
	if resp, err := http.Post(strings.Replace(r.url, "https://", "http://", 1)+"/mcp", "application/json", strings.NewReader(`{}`)); err == nil && resp.StatusCode == 200 {
		t.Errorf("plain HTTP to the TLS port answered 200")
	}
}
