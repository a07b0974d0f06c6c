package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/mcpipe/mcpipe/mcp-route/httpserve"
	"github.com/mcpipe/mcpipe/mcp-route/router"
)

// httpOpts are the --http flags.
type httpOpts struct {
	addr, keyFile, tokenFile, cert, key string
	ttl, keepalive                      time.Duration
	bodyTimeout, writeTimeout           time.Duration
	minRate                             int64
	maxStreams                          int
	insecure                            bool
	origins, hosts                      *listFlag
}

func httpFlags(fs *flag.FlagSet) *httpOpts {
	o := &httpOpts{origins: &listFlag{}, hosts: &listFlag{}}
	fs.StringVar(&o.addr, "http", "", "serve Streamable HTTP at `ADDR`/mcp instead of stdio: PORT or HOST:PORT (PORT alone binds 127.0.0.1; :PORT binds every interface and needs --http-token-file or --http-insecure)")
	fs.StringVar(&o.keyFile, "session-key-file", "", "HMAC key of session ids, shared by every replica: every byte of `FILE` as it is, 32 to 4096 (head -c 32 /dev/urandom > FILE; default: a random key of this process)")
	fs.DurationVar(&o.ttl, "session-ttl", httpserve.DefaultSessionTTL, "a session's lifetime from its initialize; then 404 and the client initializes again")
	fs.StringVar(&o.tokenFile, "http-token-file", "", "bearer tokens accepted on --http, one per `FILE` line; others get 401")
	fs.BoolVar(&o.insecure, "http-insecure", false, "let --http bind beyond loopback without --http-token-file (behind a proxy that authenticates)")
	fs.Var(o.hosts, "allow-host", "accept requests whose Host header is `NAME` (any port) or NAME:PORT besides loopback names, on /mcp and /metrics (repeatable; * accepts any). Without it, a loopback --http accepts loopback names only (against DNS rebinding), and one beyond loopback any Host")
	fs.Var(o.origins, "allow-origin", "accept browser requests with Origin `URL` besides loopback ones (repeatable; * accepts any)")
	fs.StringVar(&o.cert, "tls-cert", "", "serve HTTPS with this certificate `FILE` (with --tls-key)")
	fs.StringVar(&o.key, "tls-key", "", "private key `FILE` for --tls-cert")
	fs.DurationVar(&o.keepalive, "sse-keepalive", httpserve.DefaultKeepalive, "an answer later than this goes out as SSE, with a comment line every interval")
	fs.DurationVar(&o.bodyTimeout, "http-body-timeout", httpserve.DefaultBodyTimeout, "a request body must arrive within this; a slower one gets 408")
	fs.DurationVar(&o.writeTimeout, "http-write-timeout", httpserve.DefaultWriteTimeout, "each write of a response (32 KiB of a body, an SSE event, a keepalive) must complete within this; a client that stops reading longer has its connection closed, and its calls cancelled")
	fs.Int64Var(&o.minRate, "http-min-rate", httpserve.DefaultMinRate, "a response body (each SSE event) must go out at this many `BYTES` per second at least, after --http-write-timeout of grace; a client that reads slower has its connection closed, and its calls cancelled")
	fs.IntVar(&o.maxStreams, "http-max-streams", httpserve.DefaultMaxStreams, "long-lived streams (GET streams, subscriptions/listen) open at once; more get 503 (and a session gets one GET stream per replica: a second gets 409)")
	return o
}

// serveHTTP is mcp-route --http: the router's tools over Streamable HTTP
// until ctx is done (SIGTERM), then a drain; 0 after a clean one.
func serveHTTP(ctx context.Context, o *httpOpts, ropts router.Options, logger *slog.Logger, stderr io.Writer) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(stderr, "%s: "+format+"\n", append([]any{prog}, args...)...)
		return code
	}
	addr := o.addr
	if !strings.Contains(addr, ":") {
		addr = "127.0.0.1:" + addr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fail(2, "--http %s: want PORT or HOST:PORT", o.addr)
	}
	var tokens []string
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return fail(1, "--http-token-file: %v", err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				tokens = append(tokens, l)
			}
		}
		if len(tokens) == 0 {
			return fail(1, "--http-token-file %s: no token in it (one per line)", o.tokenFile)
		}
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || ip != nil && ip.IsLoopback()
	for _, a := range o.hosts.vals {
		if a == "" || strings.ContainsAny(a, "/ \t\r\n,") {
			return fail(2, "--allow-host %q: want a host name, NAME:PORT or *", a)
		}
	}
	// Beyond loopback the server is reached by names it cannot know (a
	// load balancer's, a Service's, a pod's IP) and needs tokens (or an
	// explicit --http-insecure): it checks the Host only when told which.
	anyHost := !loopback && len(o.hosts.vals) == 0
	if !loopback && len(tokens) == 0 && !o.insecure {
		return fail(2, "--http %s listens beyond loopback: anyone who reaches it could run the tools; give --http-token-file FILE, or --http-insecure when a proxy in front authenticates", o.addr)
	}
	if anyHost {
		logger.Warn("--http beyond loopback without --allow-host: the Host header is not checked; give --allow-host NAME for each name clients use, to guard against DNS rebinding", slog.String("addr", o.addr))
	}
	if (o.cert == "") != (o.key == "") {
		return fail(2, "--tls-cert and --tls-key go together")
	}
	if o.ttl <= 0 || o.keepalive <= 0 || o.bodyTimeout <= 0 || o.writeTimeout <= 0 {
		return fail(2, "--session-ttl, --sse-keepalive, --http-body-timeout and --http-write-timeout: want positive durations")
	}
	if o.minRate <= 0 {
		return fail(2, "--http-min-rate %d: want a positive number of bytes per second", o.minRate)
	}
	if o.maxStreams <= 0 {
		return fail(2, "--http-max-streams %d: want a positive number of streams", o.maxStreams)
	}
	var key []byte
	if o.keyFile != "" {
		if key, err = httpserve.ReadKeyFile(o.keyFile); err != nil {
			return fail(1, "--session-key-file: %v", err)
		}
	}
	// The replicas that share session ids share approvals too (--confirm
	// in 2026-07-28: a sealed requestState).
	ropts.StateKey = key
	rt, err := router.New(ctx, ropts)
	if err != nil {
		return fail(1, "%v", err)
	}
	metrics := httpserve.NewMetrics(rt.Load)
	// Set after New: the router reports each call to the metrics.
	rt.SetObserver(metrics.ObserveCall)
	h, err := httpserve.New(httpserve.Options{
		Backend:      rt,
		SessionKey:   key,
		SessionTTL:   o.ttl,
		Tokens:       tokens,
		AllowOrigins: o.origins.vals,
		AllowHosts:   o.hosts.vals,
		AnyHost:      anyHost,
		MaxBody:      int64(ropts.MaxFrame), // one body is one frame: --max-frame caps both
		Keepalive:    o.keepalive,
		BodyTimeout:  o.bodyTimeout,
		WriteTimeout: o.writeTimeout,
		MinRate:      o.minRate,
		MaxStreams:   o.maxStreams,
		Metrics:      metrics,
		Logger:       logger,
	})
	if err != nil {
		return fail(1, "%v", err)
	}
	scheme := "http"
	if o.cert != "" {
		scheme = "https"
	}
	err = httpserve.Listen(ctx, h, httpserve.ListenOptions{
		Addr: addr, CertFile: o.cert, KeyFile: o.key, Grace: ropts.Grace, Logger: logger,
		Ready: func(a net.Addr) { logger.Info(fmt.Sprintf("serving MCP at %s://%s%s", scheme, a, httpserve.Path)) },
	})
	rt.StopPolling()
	rt.Close()
	if err != nil {
		return fail(1, "--http: %v", err)
	}
	logger.Info("drained: exit")
	return 0
}
