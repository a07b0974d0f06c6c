package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpipe/mcpipe/codec"
)

// ResolveEra checks an era and a pinned version together and returns the era
// Connect will use: EraAuto, EraLegacy or EraModern. A pinned version decides
// the era when era is auto; a pin that contradicts the era is an error.
func ResolveEra(era, version string) (string, error) {
	switch era {
	case "", EraAuto:
		era = EraAuto
	case EraLegacy, EraModern:
	default:
		return "", fmt.Errorf("unknown era %q (want auto, legacy or modern)", era)
	}
	if version == "" {
		return era, nil
	}
	if !looksLikeRevision(version) {
		return "", fmt.Errorf("protocol version %q is not a revision date like %s", version, codec.LatestRevision)
	}
	vEra := EraLegacy
	if codec.IsModernRevision(version) {
		vEra = EraModern
	}
	if era != EraAuto && era != vEra {
		return "", fmt.Errorf("protocol version %s is %s, but the era is %s", version, vEra, era)
	}
	return vEra, nil
}

// looksLikeRevision accepts YYYY-MM-DD.
func looksLikeRevision(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i, c := range v {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Connect settles the era and version as the package doc describes and
// returns what the server said about itself. Call it once, before any other
// request.
func (c *Client) Connect(ctx context.Context) (*Info, error) {
	era, err := ResolveEra(c.opts.Era, c.opts.ProtocolVersion)
	if err != nil {
		return nil, err
	}
	defer func() {
		c.mu.Lock()
		c.handshakeDone = true
		c.mu.Unlock()
	}()
	var info *Info
	switch era {
	case EraLegacy:
		info, err = c.initialize(ctx, c.opts.ProtocolVersion, "legacy era requested; no probe")
	case EraModern:
		info, err = c.discover(ctx, c.opts.ProtocolVersion, false)
	default:
		info, err = c.discover(ctx, "", true)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handshakeErr != nil {
		// An invalid line may fail a request that another error ended
		// first, or arrive between the last answer and here: it wins.
		return nil, c.handshakeErr
	}
	if err != nil {
		return nil, err
	}
	c.info = info
	return info, nil
}

// clipNote cuts a note for Info.Probe that quotes what the server sent (an
// error message, a version list) to 300 bytes: it goes into log lines.
func clipNote(s string) string {
	if len(s) > 300 {
		return strings.ToValidUTF8(s[:300], "\uFFFD") + "..."
	}
	return s
}

// errFallback carries the reason the auto probe decided on legacy.
type errFallback struct{ why string }

func (e *errFallback) Error() string { return e.why }

// discover runs the server/discover probe. With auto, answers that mean
// "legacy server" make it fall back to initialize.
func (c *Client) discover(ctx context.Context, pinned string, auto bool) (*Info, error) {
	version := pinned
	if version == "" {
		version = codec.LatestRevision
	}
	var note string
	for attempt := 0; ; attempt++ {
		info, err := c.discoverOnce(ctx, version, pinned, auto)
		var fb *errFallback
		if errors.As(err, &fb) {
			return c.initialize(ctx, "", clipNote(note+fb.why)+"; fell back to initialize")
		}
		var rpc *codec.Error
		if attempt == 0 && errors.As(err, &rpc) && rpc.Code == codec.CodeUnsupportedVersion && pinned == "" {
			// The server is modern but does not speak our version: retry
			// with the newest one it lists that we speak.
			var data struct {
				Supported []string `json:"supported"`
			}
			_ = json.Unmarshal(rpc.Data, &data)
			if v := newestModern(data.Supported); v != "" {
				note = clipNote(fmt.Sprintf("server/discover with %s answered -32022 (supported: %v)", version, data.Supported)) + "; "
				version = v
				continue
			}
			if auto && len(data.Supported) > 0 && newestLegacy(data.Supported) != "" {
				return c.initialize(ctx, "", clipNote(fmt.Sprintf("server/discover answered -32022 listing only legacy versions %v", data.Supported))+"; fell back to initialize")
			}
			return nil, protoErrorf("server/discover: server supports none of our modern versions (it lists %v)", data.Supported)
		}
		if err != nil {
			return nil, err
		}
		if note != "" {
			info.Probe = note + info.Probe
		}
		return info, nil
	}
}

func (c *Client) discoverOnce(ctx context.Context, version, pinned string, auto bool) (*Info, error) {
	params := map[string]any{"_meta": c.modernMeta(version)}
	pctx, cancel := ctx, context.CancelFunc(func() {})
	if auto {
		pctx, cancel = context.WithTimeout(ctx, c.opts.ProbeTimeout)
	}
	defer cancel()
	// Never cancel the probe with notifications/cancelled: a legacy server
	// may not expect any message before initialize.
	raw, err := c.call(pctx, codec.MethodDiscover, params, false)
	if err != nil {
		var rpc *codec.Error
		var perr *ProtocolError
		var herr *HTTPError
		switch {
		case ctx.Err() != nil:
			return nil, err
		case errors.Is(err, context.DeadlineExceeded):
			if auto {
				return nil, &errFallback{fmt.Sprintf("server/discover got no answer within %v", c.opts.ProbeTimeout)}
			}
			return nil, err
		case errors.As(err, &rpc):
			if rpc.Code == codec.CodeUnsupportedVersion {
				return nil, err
			}
			if auto {
				return nil, &errFallback{fmt.Sprintf("server/discover answered %d %s", rpc.Code, rpc.Message)}
			}
			return nil, err
		case errors.As(err, &perr) && perr.handshake:
			return nil, err
		case errors.As(err, &herr) && auto && herr.legacyAnswer():
			// Streamable HTTP's backward compatibility: a 400, 404 or 405
			// without a modern JSON-RPC error is a legacy server.
			return nil, &errFallback{fmt.Sprintf("server/discover got %s", herr.statusText())}
		case errors.As(err, &perr) && auto:
			return nil, &errFallback{"server/discover got an invalid answer (" + perr.Msg + ")"}
		}
		if errors.Is(err, ErrUnreachable) || errors.As(err, &herr) {
			return nil, err // call named the method
		}
		return nil, fmt.Errorf("%s: %w", codec.MethodDiscover, err)
	}
	var res codec.DiscoverResult
	if err := json.Unmarshal(raw, &res); err != nil {
		if auto {
			return nil, &errFallback{"server/discover answered a result that is not a DiscoverResult"}
		}
		return nil, protoErrorf("server/discover: result is not a DiscoverResult: %v", err)
	}
	chosen := pinned
	switch {
	case pinned != "" && !slices.Contains(res.SupportedVersions, pinned):
		return nil, protoErrorf("server/discover: server does not support pinned version %s (it lists %v)", pinned, res.SupportedVersions)
	case pinned == "":
		chosen = newestModern(res.SupportedVersions)
	}
	if chosen == "" {
		if auto {
			return nil, &errFallback{fmt.Sprintf("server/discover lists no modern version we speak (%v)", res.SupportedVersions)}
		}
		return nil, protoErrorf("server/discover: server lists no modern version we speak (%v)", res.SupportedVersions)
	}
	info := &Info{
		Era:               EraModern,
		ProtocolVersion:   chosen,
		Capabilities:      res.Capabilities,
		Instructions:      res.Instructions,
		SupportedVersions: res.SupportedVersions,
		Result:            raw,
		Probe:             fmt.Sprintf("server/discover answered; using %s", chosen),
	}
	if si, ok := res.Meta[codec.MetaServerInfo]; ok {
		if b, err := json.Marshal(si); err == nil {
			_ = json.Unmarshal(b, &info.ServerInfo)
		}
	}
	if !auto {
		info.Probe = fmt.Sprintf("modern era requested; server/discover answered; using %s", chosen)
	}
	return info, nil
}

// newestModern returns the newest version in list that is modern and that
// codec speaks, or "".
func newestModern(list []string) string {
	best := ""
	for _, v := range list {
		if codec.IsSupportedRevision(v) && codec.IsModernRevision(v) && v > best {
			best = v
		}
	}
	return best
}

func newestLegacy(list []string) string {
	best := ""
	for _, v := range list {
		if codec.IsLegacyRevision(v) && v > best {
			best = v
		}
	}
	return best
}

// initialize runs the legacy handshake. probe is the note for Info.Probe.
func (c *Client) initialize(ctx context.Context, pinned, probe string) (*Info, error) {
	v := pinned
	if v == "" {
		v = codec.LatestLegacyRevision
	}
	caps := c.opts.Capabilities
	if caps == nil {
		caps = codec.ClientCapabilities{}
	}
	params := codec.InitializeParams{
		ProtocolVersion: v,
		Capabilities:    caps,
		ClientInfo:      c.opts.ClientInfo,
	}
	raw, err := c.call(ctx, codec.MethodInitialize, params, false)
	if err != nil {
		return nil, err
	}
	var res codec.InitializeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, protoErrorf("initialize: result is not an InitializeResult: %v", err)
	}
	switch {
	case res.ProtocolVersion == "":
		return nil, protoErrorf("initialize: result has no protocolVersion")
	case pinned != "" && res.ProtocolVersion != pinned:
		return nil, protoErrorf("initialize: server answered version %s to pinned version %s", res.ProtocolVersion, pinned)
	case codec.IsModernRevision(res.ProtocolVersion):
		return nil, protoErrorf("initialize: server answered modern version %s, which has no initialize", res.ProtocolVersion)
	}
	// Versions older than codec knows are accepted: the handshake and the
	// tools methods have not changed shape, and refusing would only lose
	// servers that work.
	if h, ok := c.t.(*httpTransport); ok {
		// Later requests carry the version (and the session) in headers.
		h.negotiated(res.ProtocolVersion)
	}
	if err := c.notify(ctx, codec.MethodInitialized, nil); err != nil {
		if _, ok := c.t.(*httpTransport); ok {
			return nil, fmt.Errorf("%s: %w", codec.MethodInitialized, err)
		}
		return nil, fmt.Errorf("%s: %w", codec.MethodInitialized, ErrClosed)
	}
	if h, ok := c.t.(*httpTransport); ok && h.standalone {
		h.openStandalone()
	}
	return &Info{
		Era:               EraLegacy,
		ProtocolVersion:   res.ProtocolVersion,
		ServerInfo:        res.ServerInfo,
		Capabilities:      res.Capabilities,
		Instructions:      res.Instructions,
		SupportedVersions: []string{res.ProtocolVersion},
		Result:            raw,
		Probe:             probe,
	}, nil
}
