package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// This file holds the MCP checks on single messages: who may send a method,
// in which revisions it exists, and the shape of its params and of the
// result that answers it. They are hand-written from the official schemas
// (third_party/mcp-spec/REV/schema.json), which only the tests read.
// The tests hold them against those schemas both ways: valid messages pass,
// and every mutant of a valid message that CheckMessage refuses, the schema
// refuses too (TestCheckMessageNoFalsePositives), because a filter that drops
// valid traffic is worse than one that misses a defect. The checks cover what
// a peer needs to act on a message (required members, their JSON types and
// enums, content blocks, the 2026-07-28 envelope rules), not every nested
// definition: a message that passes may still fail full schema validation in
// some deep corner (a sampling message's content, a tool's annotations).

// Direction says which side of a connection sent a message.
type Direction int

const (
	// FromAny applies the rules every message follows, whoever sent it.
	FromAny Direction = iota
	// FromClient: requests and notifications a client may send, and (in the
	// legacy revisions, where servers send requests) responses.
	FromClient
	// FromServer: responses, notifications a server may send, and (legacy
	// revisions only) the requests a server may send.
	FromServer
)

// String returns "any", "client" or "server".
func (d Direction) String() string {
	switch d {
	case FromClient:
		return "client"
	case FromServer:
		return "server"
	}
	return "any"
}

// ParseDirection parses "any", "client" or "server".
func ParseDirection(s string) (Direction, error) {
	switch s {
	case "any", "":
		return FromAny, nil
	case "client":
		return FromClient, nil
	case "server":
		return FromServer, nil
	}
	return FromAny, fmt.Errorf("unknown direction %q (want client, server or any)", s)
}

// jtype is a set of JSON types a member may have.
type jtype uint8

const (
	kString jtype = 1 << iota
	kInt          // an integer number
	kNumber       // any number
	kBool
	kObject
	kArray
	kNull
	kID  = kString | kInt // RequestId, ProgressToken
	kAny = 0              // present, any type
)

func (k jtype) String() string {
	if k == kAny {
		return "any value"
	}
	var names []string
	for _, n := range []struct {
		k    jtype
		name string
	}{{kString, "a string"}, {kInt, "an integer"}, {kNumber, "a number"}, {kBool, "a boolean"}, {kObject, "an object"}, {kArray, "an array"}, {kNull, "null"}} {
		if k&n.k != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, " or ")
}

// field is one member of an object: its name, type, whether it is required,
// and for an object or an array of objects the members inside.
type field struct {
	name     string
	kind     jtype
	required bool
	modern   bool    // only in (and then required by) 2026-07-28 and later
	since    string  // checked only from this revision on ("" always): before, the schemas leave an unknown member free
	before   string  // checked only before this revision ("" always)
	sub      []field // members of the object, or of each array element
	// check, when set, checks the value further; path names it in messages.
	check func(rev, path string, v *value) string
}

func (f field) with(check func(rev, path string, v *value) string) field {
	f.check = check
	return f
}

func (f field) from(rev string) field {
	f.since = rev
	return f
}

func (f field) until(rev string) field {
	f.before = rev
	return f
}

func req(name string, k jtype, sub ...field) field {
	return field{name: name, kind: k, required: true, sub: sub}
}
func opt(name string, k jtype, sub ...field) field { return field{name: name, kind: k, sub: sub} }

// cacheable are the members 2026-07-28 requires on results a client may cache.
var cacheable = []field{
	{name: "ttlMs", kind: kInt, required: true, modern: true},
	{name: "cacheScope", kind: kString, required: true, modern: true},
}

// CheckToolResult checks a CallToolResult that a tool wrote (not a peer: a
// server fits it to its client's revision before it goes out): content is
// an array of blocks, each of a type some revision defines with the members
// that type requires (checked as in LatestLegacyRevision, which has every
// content type), and isError a boolean. structuredContent may be any JSON
// value, as 2026-07-28 allows (a server drops a non-object one for an older
// client). The error message reads like CheckMessage's ("tools/call
// result: content[0].text must be a string, not a number").
func CheckToolResult(raw json.RawMessage) error {
	members, e := objectMembers(raw)
	if members == nil && e == "" {
		e = "is missing"
	}
	if e != "" {
		return fmt.Errorf("tools/call result %s", e)
	}
	if e := checkFields(LatestLegacyRevision, "", members, rules().resultMeta); e != "" {
		return fmt.Errorf("tools/call result: %s", e)
	}
	if e := checkFields(LatestLegacyRevision, "", members, rules().toolOutputFields); e != "" {
		return fmt.Errorf("tools/call result: %s", e)
	}
	return nil
}

// revRange is the span of revisions a method exists in: since <= rev < until
// ("" means no bound).
type revRange struct{ since, until string }

func (r revRange) has(rev string) bool {
	return (r.since == "" || rev >= r.since) && (r.until == "" || rev < r.until)
}

func (r revRange) String() string {
	switch {
	case r.since == "":
		return "revisions before " + r.until
	case r.until == "":
		return "revision " + r.since + " and later"
	}
	return "revisions " + r.since + " to before " + r.until
}

var (
	allRevs    = revRange{}
	legacyOnly = revRange{until: FirstModernRevision}
	modernOnly = revRange{since: FirstModernRevision}
	tasksRevs  = revRange{since: Rev20251125, until: FirstModernRevision}
	elicitRevs = revRange{since: Rev20250618, until: FirstModernRevision}
)

// methodRule describes one MCP method.
type methodRule struct {
	notification   bool
	from           Direction // who sends it; FromAny: both sides
	revs           revRange
	paramsRequired bool
	params         []field
	result         []field // members of a complete result (requests only)
}

// IsKnownMethod reports whether method is an MCP method of some supported
// revision. Other methods are extensions: CheckMessage lets them through with
// the rules every message follows.
func IsKnownMethod(method string) bool {
	_, ok := rules().methodRules[method]
	return ok
}

// CheckMessage checks a decoded message (see DecodeFrame for the JSON-RPC
// envelope) against the MCP rules of revision rev, as sent by from. For a
// response, method names the request it answers; "" when unknown, and then
// only the rules every result follows apply. An unsupported rev is checked as
// LatestRevision.
//
// The rules:
//   - a known method must exist in rev (initialize and ping are legacy only,
//     server/discover is 2026-07-28 only, ...) and be sent by the right side
//     (a server does not send tools/call, a client does not send
//     notifications/tools/list_changed); unknown methods are extensions and
//     pass;
//   - the params of a known method, and the result answering one, must have
//     the required members with the right JSON types; content blocks
//     (tools/call, prompts/get) must be a type of rev with that type's
//     members (text: text; image, audio: data and mimeType; resource_link:
//     uri and name; resource: resource.uri and its text or blob), a
//     tool's inputSchema and outputSchema must say "type": "object", a
//     tools/call result's structuredContent is an object in 2025-06-18 and
//     2025-11-25 (2026-07-28 allows any value), and a request's
//     _meta.progressToken is a string or an integer in every revision;
//   - 2026-07-28 (and later): every request carries
//     params._meta["io.modelcontextprotocol/protocolVersion"] (this is how a
//     modern request is told from a legacy one), and for a known method also
//     _meta["io.modelcontextprotocol/clientCapabilities"]; every result
//     carries a string resultType, and the members of a method's result are
//     checked when it is "complete"; servers send no requests, so a client
//     sends no responses.
//
// Batches are framing: DecodeFrame refuses them unless BatchesAllowed(rev).
//
// The error is an *Error: -32602 (ErrInvalidParams) for the params of a
// request or notification, -32600 (ErrInvalidRequest) for anything else. Its
// message names the offending member, e.g.
// `tools/call: params.name must be a string, not a number`.
func CheckMessage(rev string, from Direction, m *Message, method string) error {
	if !IsSupportedRevision(rev) {
		rev = LatestRevision
	}
	if err := checkMessage(rev, from, m, method); err != nil {
		return err
	}
	return nil
}

func checkMessage(rev string, from Direction, m *Message, method string) *Error {
	modern := IsModernRevision(rev)
	if m.IsResponse() {
		if modern && from == FromClient {
			return Errorf(CodeInvalidRequest, "a client sends no responses in %s (servers make no requests)", rev)
		}
		if m.Error != nil {
			return nil
		}
		return checkResult(rev, m.Result, method)
	}
	rule, known := rules().methodRules[m.Method]
	if known {
		if !rule.revs.has(rev) {
			return Errorf(CodeInvalidRequest, "%s is not a method of revision %s (only of %s)", m.Method, rev, rule.revs)
		}
		if rule.notification != m.IsNotification() {
			if rule.notification {
				return Errorf(CodeInvalidRequest, "%s is a notification: it must not carry an id", m.Method)
			}
			return Errorf(CodeInvalidRequest, "%s is a request: it needs an id", m.Method)
		}
		if from != FromAny && rule.from != FromAny && rule.from != from {
			return Errorf(CodeInvalidRequest, "%s is sent by the %s, not the %s", m.Method, rule.from, from)
		}
	}
	if m.IsRequest() && modern && from == FromServer {
		return Errorf(CodeInvalidRequest, "a server sends no requests in %s (it asks for input with an input_required result)", rev)
	}
	params, perr := objectMembers(m.Params)
	if perr != "" {
		return Errorf(CodeInvalidParams, "%s: params %s", m.Method, perr)
	}
	if m.IsRequest() && modern {
		if e := checkModernMeta(m.Method, params, known); e != "" {
			return Errorf(CodeInvalidRequest, "%s: %s", m.Method, e)
		}
	}
	if !known {
		return nil
	}
	if params == nil {
		if rule.paramsRequired {
			return Errorf(CodeInvalidParams, "%s: missing params", m.Method)
		}
		return nil
	}
	pm := rules().requestMeta
	if m.IsNotification() {
		pm = rules().notificationMeta
	}
	if e := checkFields(rev, "params.", params, pm); e != "" {
		return Errorf(CodeInvalidParams, "%s: %s", m.Method, e)
	}
	if e := checkFields(rev, "params.", params, rule.params); e != "" {
		return Errorf(CodeInvalidParams, "%s: %s", m.Method, e)
	}
	return nil
}

// ruleObjectSchema checks a tool's inputSchema or outputSchema: every revision
// requires "type": "object" at its top.
func ruleObjectSchema(_, path string, v *value) string {
	t, ok := v.obj["type"]
	if !ok {
		return "missing " + path + ".type (a tool schema is an object schema)"
	}
	if s, _ := stringValue(t); s != "object" {
		return fmt.Sprintf("%s.type must be \"object\", not %s", path, clipRaw(t))
	}
	return ""
}

// ruleEach applies check to every element of an array.
func ruleEach(check func(rev, path string, v *value) string) func(rev, path string, v *value) string {
	return func(rev, path string, v *value) string {
		if !v.arrOK {
			return path + " is not a valid array"
		}
		for i := range v.elems {
			el := &v.elems[i]
			if kindOf(el.raw) == kArray {
				// Arrays of arrays are not split ahead (no rule has them).
				*el = splitValue(el.raw, kArray)
			}
			if e := check(rev, elemPath(path, i), el); e != "" {
				return e
			}
		}
		return ""
	}
}

// elemPath names an array element in messages: path[i].
func elemPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// ruleStrings: an array of strings.
func ruleStrings(_, path string, v *value) string {
	for i, el := range v.elems {
		if kindOf(el.raw) != kString {
			return fmt.Sprintf("%s[%d] must be a string, not %s", path, i, jsonKind(el.raw))
		}
	}
	return ""
}

// ruleStringValues: an object whose members are strings (prompt arguments).
func ruleStringValues(_, path string, val *value) string {
	for k, v := range val.obj {
		if kindOf(v) != kString {
			return fmt.Sprintf("%s.%s must be a string, not %s", path, k, jsonKind(v))
		}
	}
	return ""
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// ruleLogLevel: one of the syslog levels the schemas list.
func ruleLogLevel(_, path string, v *value) string {
	raw := v.raw
	s, _ := stringValue(raw)
	if !slices.Contains(logLevels, s) {
		return fmt.Sprintf("%s must be a logging level (%s), not %s", path, strings.Join(logLevels, ", "), clipRaw(raw))
	}
	return ""
}

// ruleRole: "user" or "assistant".
func ruleRole(_, path string, v *value) string {
	if s, _ := stringValue(v.raw); s != "user" && s != "assistant" {
		return fmt.Sprintf("%s must be \"user\" or \"assistant\", not %s", path, clipRaw(v.raw))
	}
	return ""
}

// ruleCompleteRef: a prompt reference (name) or a resource reference (uri).
func ruleCompleteRef(rev, path string, v *value) string {
	m := v.obj
	t, ok := m["type"]
	if !ok {
		return "missing " + path + ".type"
	}
	switch s, _ := stringValue(t); s {
	case "ref/prompt":
		return checkFields(rev, path+".", m, []field{req("name", kString)})
	case "ref/resource":
		return checkFields(rev, path+".", m, []field{req("uri", kString)})
	}
	return fmt.Sprintf("%s.type must be \"ref/prompt\" or \"ref/resource\", not %s", path, clipRaw(t))
}

// ruleOutputSchema: like an inputSchema until 2025-11-25; from 2026-07-28
// any JSON Schema object.
func ruleOutputSchema(rev, path string, v *value) string {
	if IsModernRevision(rev) {
		return ""
	}
	return ruleObjectSchema(rev, path, v)
}

// ruleContentBlock checks one content block by its type.
func ruleContentBlock(rev, path string, v *value) string {
	m := v.obj
	if v.objErr != "" || m == nil {
		return fmt.Sprintf("%s must be an object, not %s", path, jsonKind(v.raw))
	}
	t, ok := m["type"]
	if !ok {
		return "missing " + path + ".type"
	}
	name, ok := stringValue(t)
	if !ok {
		return fmt.Sprintf("%s.type must be a string, not %s", path, jsonKind(t))
	}
	ct, known := rules().contentTypeRules[name]
	if !known || rev < ct.since {
		return fmt.Sprintf("%s.type %q is not a content type of revision %s", path, name, rev)
	}
	return checkFields(rev, path+".", m, ct.fields)
}

// ruleResourceContents checks an embedded resource: text or blob, as a string.
func ruleResourceContents(_, path string, val *value) string {
	m := val.obj
	for _, k := range []string{"text", "blob"} {
		if v, ok := m[k]; ok {
			if kindOf(v) != kString {
				return fmt.Sprintf("%s.%s must be a string, not %s", path, k, jsonKind(v))
			}
			return ""
		}
	}
	return "missing " + path + ".text or " + path + ".blob"
}

func clipRaw(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// checkModernMeta checks params._meta of a 2026-07-28 request.
func checkModernMeta(method string, params map[string]json.RawMessage, known bool) string {
	const hint = "2026-07-28 requests carry it; a legacy client sends initialize first"
	if params == nil {
		return fmt.Sprintf("missing params._meta[%q] (%s)", MetaProtocolVersion, hint)
	}
	rawMeta, ok := params["_meta"]
	if !ok {
		return fmt.Sprintf("missing params._meta[%q] (%s)", MetaProtocolVersion, hint)
	}
	meta, e := objectMembers(rawMeta)
	if e != "" || meta == nil {
		return "params._meta must be an object, not " + jsonKind(rawMeta)
	}
	fields := []field{req(MetaProtocolVersion, kString), opt(MetaClientCapabilities, kObject, rules().clientCapFields...),
		opt(MetaClientInfo, kObject, rules().implFields...),
		opt(MetaLogLevel, kString).with(ruleLogLevel), opt(MetaProgressToken, kID)}
	if known {
		fields[1].required = true
	}
	if _, ok := meta[MetaProtocolVersion]; !ok {
		return fmt.Sprintf("missing params._meta[%q] (%s)", MetaProtocolVersion, hint)
	}
	return checkFields(LatestRevision, "params._meta.", meta, fields)
}

func checkResult(rev string, raw json.RawMessage, method string) *Error {
	rule, known := rules().methodRules[method]
	var members map[string]json.RawMessage
	var pre []splitMember
	var e string
	if trimmed := bytes.TrimSpace(raw); known && !rule.notification && len(trimmed) > 0 && trimmed[0] == '{' {
		// Split the members the method's rules look into in the same pass.
		var ok bool
		if members, pre, ok = scanMembersSplit(trimmed, rule.result); !ok {
			members, e = nil, "is not a valid object"
		}
	} else {
		members, e = objectMembers(raw)
	}
	if e != "" || members == nil {
		return Errorf(CodeInvalidRequest, "result %s", e)
	}
	what := "result"
	if method != "" {
		what = method + " result"
	}
	if e := checkFields(rev, "", members, rules().resultMeta); e != "" {
		return Errorf(CodeInvalidRequest, "%s: %s", what, e)
	}
	if IsModernRevision(rev) {
		rt, ok := members["resultType"]
		if !ok {
			return Errorf(CodeInvalidRequest, "%s: missing resultType (%s results carry it)", what, rev)
		}
		s, ok := stringValue(rt)
		if !ok {
			return Errorf(CodeInvalidRequest, "%s: resultType must be a string, not %s", what, jsonKind(rt))
		}
		if s != ResultTypeComplete {
			// input_required and later kinds have their own members.
			return nil
		}
	}
	if !known || rule.notification {
		return nil
	}
	if e := checkFieldsSplit(rev, "", members, pre, rule.result); e != "" {
		return Errorf(CodeInvalidRequest, "%s: %s", what, e)
	}
	return nil
}

// checkFields checks the members of one object; prefix is the path to it,
// for messages ("params.", "params.clientInfo.").
func checkFields(rev string, prefix string, members map[string]json.RawMessage, fields []field) string {
	return checkFieldsSplit(rev, prefix, members, nil, fields)
}

// checkFieldsSplit is checkFields given some members already split (pre,
// from scanMembersSplit; the others are split here).
func checkFieldsSplit(rev string, prefix string, members map[string]json.RawMessage, pre []splitMember, fields []field) string {
	modern := IsModernRevision(rev)
	for _, f := range fields {
		if f.modern && !modern || f.since != "" && rev < f.since || f.before != "" && rev >= f.before {
			continue
		}
		raw, ok := members[f.name]
		if !ok {
			if f.required {
				return "missing " + prefix + f.name
			}
			continue
		}
		k := kindOf(raw)
		if f.kind != kAny && k&f.kind == 0 {
			got := jsonKind(raw)
			if k == kNumber && f.kind&kInt != 0 {
				got = "the fractional number " + clipRaw(raw)
			}
			return fmt.Sprintf("%s%s must be %s, not %s", prefix, f.name, f.kind, got)
		}
		if f.check == nil && len(f.sub) == 0 {
			continue
		}
		// One split for the rule and the sub-fields both.
		var v value
		if j := slices.IndexFunc(pre, func(p splitMember) bool { return p.name == f.name }); j >= 0 {
			v = pre[j].v
		} else {
			v = splitValue(raw, k)
		}
		if f.check != nil {
			if e := f.check(rev, prefix+f.name, &v); e != "" {
				return e
			}
		}
		if len(f.sub) == 0 {
			continue
		}
		switch k {
		case kObject:
			if e := checkFields(rev, prefix+f.name+".", v.obj, f.sub); e != "" {
				return e
			}
		case kArray:
			if !v.arrOK {
				return prefix + f.name + " is not a valid array"
			}
			for i, el := range v.elems {
				p := elemPath(prefix+f.name, i)
				if el.objErr != "" || el.obj == nil {
					return fmt.Sprintf("%s must be an object, not %s", p, jsonKind(el.raw))
				}
				if e := checkFields(rev, p+".", el.obj, f.sub); e != "" {
					return e
				}
			}
		}
	}
	return ""
}

// A value is a member's raw JSON split once for the checks that need its
// parts: an object into its members, an array into its elements and each
// object element into its members, in one pass. Each split walks the whole
// value (a tool result's text included), so a rule and the sub-fields of a
// field share one, and an array of objects is not walked again per element.
type value struct {
	raw    json.RawMessage
	obj    map[string]json.RawMessage // an object's members (nil otherwise)
	objErr string                     // objectMembers' message for an invalid object
	elems  []value                    // an array's elements, objects split
	arrOK  bool                       // raw split as an array
}

// splitValue splits raw, of kind k, as objectMembers and scanElements (and
// objectMembers of each element) would.
func splitValue(raw json.RawMessage, k jtype) value {
	v := value{raw: raw}
	switch k {
	case kObject:
		v.obj, v.objErr = objectMembers(raw)
	case kArray:
		v.elems, v.arrOK = scanElementMembers(raw)
	}
	return v
}

// scanElementMembers is scanElements that also splits each object element
// into its members in the same pass (trusted mode, like scanMembers: an
// element whose keys do not decode gets objErr "is not a valid object", as
// objectMembers would say). ok is false for anything but one array.
func scanElementMembers(raw []byte) ([]value, bool) {
	s := scanner{b: raw, trusted: true}
	i := s.ws(0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	out, end, ok := splitArrayAt(&s, i, 1)
	if !ok || s.ws(end) != len(raw) {
		return nil, false
	}
	return out, true
}

// splitArrayAt splits the array at s.b[i] == '[', the depth-th container
// from the top, into its elements, each object element into its members;
// it returns the index past the array.
func splitArrayAt(s *scanner, i, depth int) (out []value, end int, ok bool) {
	raw := s.b
	i = s.ws(i + 1)
	if i < len(raw) && raw[i] == ']' {
		return nil, i + 1, true
	}
	for {
		start := i
		var el value
		var err error
		if i < len(raw) && raw[i] == '{' {
			if i, err = splitObjectAt(s, i, depth+1, &el); err != nil {
				return nil, i, false
			}
		} else if i, err = s.value(i, depth); err != nil {
			return nil, i, false
		}
		el.raw = raw[start:i]
		out = append(out, el)
		var done bool
		if i, done, err = s.next(i, ']', "after array element"); err != nil {
			return nil, i, false
		} else if done {
			return out, i, true
		}
	}
}

// splitObjectAt splits the object at s.b[i] == '{', the depth-th container
// from the top, into v.obj (or v.objErr "is not a valid object" when a key
// does not decode, as objectMembers says); it returns the index past it.
func splitObjectAt(s *scanner, i, depth int, v *value) (int, error) {
	raw := s.b
	m := map[string]json.RawMessage{}
	ok := true
	end, err := s.object(i, depth, func(key []byte, vs, ve int) {
		k, kok := stringValue(key)
		ok = ok && kok
		m[k] = raw[vs:ve]
	})
	if ok {
		v.obj = m
	} else {
		v.objErr = "is not a valid object"
	}
	return end, err
}

// splitMember is a member value split ahead by scanMembersSplit.
type splitMember struct {
	name string
	v    value
}

// lookIn tells whether one of fields looks into the member name (a rule or
// sub-fields), so scanMembersSplit splits it.
func lookIn(fields []field, name string) bool {
	for _, f := range fields {
		if f.name == name && (f.check != nil || len(f.sub) > 0) {
			return true
		}
	}
	return false
}

// scanMembersSplit is scanMembers (trusted mode) that also splits, in the
// same pass, the object and array values of the members fields look into,
// as splitValue would: checkResult hands them to checkFieldsSplit, so a tool
// result's content is not walked again to split it. A slice, not a map: a
// result has one or two such members.
func scanMembersSplit(raw []byte, fields []field) (map[string]json.RawMessage, []splitMember, bool) {
	s := scanner{b: raw, trusted: true}
	i := s.ws(0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, nil, false
	}
	m := map[string]json.RawMessage{}
	var pre []splitMember
	i = s.ws(i + 1)
	if i < len(raw) && raw[i] == '}' {
		return m, nil, s.ws(i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, nil, false
		}
		kend, err := s.str(i)
		if err != nil {
			return nil, nil, false
		}
		k, ok := stringValue(raw[i:kend])
		if !ok {
			return nil, nil, false
		}
		i = s.ws(kend)
		if i >= len(raw) || raw[i] != ':' {
			return nil, nil, false
		}
		i = s.ws(i + 1)
		start := i
		var v value
		didSplit := false
		if i < len(raw) && (raw[i] == '{' || raw[i] == '[') && lookIn(fields, k) {
			didSplit = true
			if raw[i] == '{' {
				if i, err = splitObjectAt(&s, i, 2, &v); err != nil {
					return nil, nil, false
				}
			} else {
				if v.elems, i, ok = splitArrayAt(&s, i, 2); !ok {
					return nil, nil, false
				}
				v.arrOK = true
			}
		} else if i, err = s.value(i, 1); err != nil {
			return nil, nil, false
		}
		m[k] = raw[start:i]
		// A duplicate key: the last value counts.
		pre = slices.DeleteFunc(pre, func(p splitMember) bool { return p.name == k })
		if didSplit {
			v.raw = raw[start:i]
			pre = append(pre, splitMember{k, v})
		}
		var done bool
		if i, done, err = s.next(i, '}', "after object key:value pair"); err != nil {
			return nil, nil, false
		} else if done {
			break
		}
	}
	if s.ws(i) != len(raw) {
		return nil, nil, false
	}
	return m, pre, true
}

// objectMembers splits a JSON object into its members; nil, "" for an absent
// value, and a message for anything but an object.
func objectMembers(raw json.RawMessage) (map[string]json.RawMessage, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, ""
	}
	if raw[0] != '{' {
		return nil, "must be an object, not " + jsonKind(raw)
	}
	m, ok := scanMembers(raw)
	if !ok {
		return nil, "is not a valid object"
	}
	return m, ""
}

// kindOf classifies a JSON value that is known to be valid.
func kindOf(raw json.RawMessage) jtype {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	switch raw[0] {
	case '{':
		return kObject
	case '[':
		return kArray
	case '"':
		return kString
	case 't', 'f':
		return kBool
	case 'n':
		return kNull
	}
	if isJSONInteger(raw) {
		return kInt | kNumber
	}
	// 1.0 and 1e3 are integers to JSON Schema too.
	var f float64
	if json.Unmarshal(raw, &f) == nil && f == float64(int64(f)) {
		return kInt | kNumber
	}
	return kNumber
}

// resultShapes maps a member only one kind of server result requires to
// the method it answers, in the order GuessResultMethod tries them.
var resultShapes = []struct{ member, method string }{
	{"supportedVersions", MethodDiscover},
	{"tools", MethodToolsList},
	{"content", MethodToolsCall},
	{"resourceTemplates", "resources/templates/list"},
	{"resources", "resources/list"},
	{"contents", "resources/read"},
	{"prompts", "prompts/list"},
	{"messages", "prompts/get"},
	{"completion", "completion/complete"},
}

// GuessResultMethod tells, from its members, which client request a
// server's result answers: an observer of only the server's side (mcp-frame
// --from server) does not see the requests, and without a method
// CheckMessage could check only what every result has. A result with a
// string protocolVersion and a serverInfo object answers initialize, one
// with supportedVersions server/discover, tools tools/list, content
// tools/call, and so on for resources, prompts and completion. It returns
// "" for anything else (an empty result, an error, an extension's result).
//
// Only for results a server wrote: a client's results to a server's
// requests (sampling's content, for one) would be taken for the wrong kind.
func GuessResultMethod(m *Message) string {
	if !m.IsResponse() || m.Error != nil {
		return ""
	}
	res, ok := scanMembers(m.Result)
	if !ok {
		return ""
	}
	if _, ok := res["protocolVersion"]; ok && kindOf(res["serverInfo"]) == kObject {
		return MethodInitialize
	}
	for _, s := range resultShapes {
		if _, ok := res[s.member]; ok {
			return s.method
		}
	}
	return ""
}

// clientResultShapes maps a member only a client's result requires to the
// server request it answers (legacy revisions: 2026-07-28 servers send no
// requests), in the order GuessAnyResultMethod tries them.
var clientResultShapes = []struct{ member, method string }{
	{"model", "sampling/createMessage"},
	{"action", "elicitation/create"},
	{"roots", "roots/list"},
}

// GuessAnyResultMethod is GuessResultMethod for a stream of both sides whose
// request is unknown (not seen, or refused): under rev, is the result a
// server's or a client's? In a revision where clients answer requests (before
// 2026-07-28), a result with a member only a client's result requires
// (model: sampling/createMessage, action: elicitation/create, roots:
// roots/list) is taken for that answer, so its content (an object in a
// sampling result, form values in an elicitation result) is not checked as
// a tool's; anything else is taken for a server's, as GuessResultMethod
// tells.
func GuessAnyResultMethod(rev string, m *Message) string {
	if !m.IsResponse() || m.Error != nil {
		return ""
	}
	if !IsSupportedRevision(rev) {
		rev = LatestRevision
	}
	if !IsModernRevision(rev) {
		res, ok := scanMembers(m.Result)
		if !ok {
			return ""
		}
		for _, s := range clientResultShapes {
			if _, ok := res[s.member]; ok {
				if rules().methodRules[s.method].revs.has(rev) {
					return s.method
				}
				return "" // a client's answer, to a request rev lacks
			}
		}
	}
	return GuessResultMethod(m)
}

// DeclaredRevision returns the protocol revision a message names, if any:
//   - the protocolVersion an initialize request asks for;
//   - the protocolVersion an initialize result grants (method is the request
//     a response answers; when it is "" a result with a string
//     protocolVersion and a serverInfo object is taken for an initialize
//     result, so an observer of only the server's side can follow the
//     negotiation);
//   - params._meta["io.modelcontextprotocol/protocolVersion"] of any other
//     request (2026-07-28).
//
// The revision is returned as written, supported or not.
func DeclaredRevision(m *Message, method string) (rev string, ok bool) {
	switch {
	case m.IsResponse():
		if m.Error != nil || (method != "" && method != MethodInitialize) {
			return "", false
		}
		res, ok := scanMembers(m.Result)
		if !ok {
			return "", false
		}
		if method == "" && kindOf(res["serverInfo"]) != kObject {
			return "", false
		}
		return stringValue(res["protocolVersion"])
	case m.Method == MethodInitialize:
		params, ok := scanMembers(m.Params)
		if !ok {
			return "", false
		}
		return stringValue(params["protocolVersion"])
	case m.IsRequest():
		params, ok := scanMembers(m.Params)
		if !ok {
			return "", false
		}
		meta, ok := scanMembers(params["_meta"])
		if !ok {
			return "", false
		}
		return stringValue(meta[MetaProtocolVersion])
	}
	return "", false
}

// checkRules are the tables the checks read. They are built on first use, not
// in the package's init: every process that links codec (every Go tool)
// would otherwise build them before main, although only a peer checks messages.
type checkRules struct {
	iconFields, implFields, serverCapFields, clientCapFields    []field
	toolFields, resourceFields, templateFields, promptFields    []field
	requestMeta, notificationMeta, resultMeta, toolOutputFields []field
	methodRules                                                 map[string]methodRule
	contentTypeRules                                            map[string]struct {
		since  string
		fields []field
	}
}

var (
	checkRulesOnce  sync.Once
	checkRulesTable *checkRules
)

// rules returns the tables, building them on the first call. (A function,
// not a sync.OnceValue variable: the rules refer back to rules.)
func rules() *checkRules {
	checkRulesOnce.Do(func() { checkRulesTable = buildCheckRules() })
	return checkRulesTable
}

func buildCheckRules() *checkRules {
	// Shared shapes (the schemas' Implementation, Icon, capabilities, Tool,
	// Resource, ResourceTemplate, Prompt).
	iconFields := []field{req("src", kString), opt("mimeType", kString), opt("sizes", kArray), opt("theme", kString)}
	implFields := []field{
		req("name", kString), req("version", kString),
		opt("title", kString).from(Rev20250618),
		opt("description", kString).from(Rev20251125),
		opt("websiteUrl", kString).from(Rev20251125),
		opt("icons", kArray, iconFields...).from(Rev20251125),
	}
	serverCapFields := []field{
		opt("tools", kObject), opt("resources", kObject), opt("prompts", kObject),
		opt("logging", kObject), opt("experimental", kObject),
		opt("completions", kObject).from(Rev20250326),
		opt("extensions", kObject).from(Rev20260728),
	}
	clientCapFields := []field{
		opt("roots", kObject), opt("sampling", kObject), opt("experimental", kObject),
		opt("elicitation", kObject).from(Rev20250618),
		opt("extensions", kObject).from(Rev20260728),
	}
	toolFields := []field{
		req("name", kString),
		req("inputSchema", kObject).with(ruleObjectSchema),
		opt("outputSchema", kObject).with(ruleOutputSchema).from(Rev20250618),
		opt("title", kString).from(Rev20250618),
		opt("description", kString),
		opt("annotations", kObject).from(Rev20250326),
		opt("icons", kArray, iconFields...).from(Rev20251125),
		opt("_meta", kObject).from(Rev20250618),
	}
	resourceFields := []field{
		req("uri", kString), req("name", kString),
		opt("title", kString).from(Rev20250618),
		opt("description", kString), opt("mimeType", kString), opt("size", kInt),
		opt("annotations", kObject),
		opt("icons", kArray, iconFields...).from(Rev20251125),
	}
	templateFields := []field{
		req("uriTemplate", kString), req("name", kString),
		opt("title", kString).from(Rev20250618),
		opt("description", kString), opt("mimeType", kString),
		opt("annotations", kObject),
		opt("icons", kArray, iconFields...).from(Rev20251125),
	}
	promptFields := []field{
		req("name", kString),
		opt("title", kString).from(Rev20250618),
		opt("description", kString),
		opt("arguments", kArray, req("name", kString), opt("description", kString), opt("required", kBool),
			opt("title", kString).from(Rev20250618)),
		opt("icons", kArray, iconFields...).from(Rev20251125),
	}

	// requestMeta, notificationMeta and resultMeta are the _meta every known method's params and
	// every result may carry: an object, whose reserved keys have their types.
	// Before 2025-11-25 the method definitions leave params._meta free, but
	// every request on the wire is a JSONRPCRequest, whose params._meta is
	// an object with a ProgressToken; from 2025-11-25 RequestParams says
	// the same. A server echoes the token in notifications/progress.
	requestMeta := []field{opt("_meta", kObject, opt(MetaProgressToken, kID))}
	notificationMeta := []field{opt("_meta", kObject).from(Rev20251125)}
	resultMeta := []field{opt("_meta", kObject, opt(MetaServerInfo, kObject, implFields...).from(Rev20260728))}

	// toolOutputFields are the members of a tools/call result that
	// CheckToolResult holds a tool's own output to.
	toolOutputFields := []field{
		req("content", kArray).with(ruleEach(ruleContentBlock)),
		opt("isError", kBool),
	}

	methodRules := map[string]methodRule{
		// Lifecycle and utilities.
		MethodInitialize: {from: FromClient, revs: legacyOnly, paramsRequired: true,
			params: []field{
				req("protocolVersion", kString),
				req("capabilities", kObject, clientCapFields...),
				req("clientInfo", kObject, implFields...),
			},
			result: []field{
				req("protocolVersion", kString),
				req("capabilities", kObject, serverCapFields...),
				req("serverInfo", kObject, implFields...),
				opt("instructions", kString),
			}},
		MethodInitialized: {notification: true, from: FromClient, revs: legacyOnly},
		MethodPing:        {from: FromAny, revs: legacyOnly},
		MethodDiscover: {from: FromClient, revs: modernOnly,
			result: append([]field{
				req("supportedVersions", kArray).with(ruleStrings),
				req("capabilities", kObject, serverCapFields...),
				opt("instructions", kString),
			}, cacheable...)},
		"logging/setLevel": {from: FromClient, revs: legacyOnly, paramsRequired: true,
			params: []field{req("level", kString).with(ruleLogLevel)}},
		"completion/complete": {from: FromClient, revs: allRevs, paramsRequired: true,
			params: []field{
				req("ref", kObject).with(ruleCompleteRef),
				req("argument", kObject, req("name", kString), req("value", kString)),
			},
			result: []field{req("completion", kObject, req("values", kArray))}},
		"subscriptions/listen": {from: FromClient, revs: modernOnly, paramsRequired: true,
			params: []field{req("notifications", kObject)}},

		// Tools.
		MethodToolsList: {from: FromClient, revs: allRevs,
			params: []field{opt("cursor", kString)},
			result: append([]field{
				req("tools", kArray, toolFields...),
				opt("nextCursor", kString),
			}, cacheable...)},
		MethodToolsCall: {from: FromClient, revs: allRevs, paramsRequired: true,
			params: []field{req("name", kString), opt("arguments", kObject)},
			result: slices.Concat(toolOutputFields, []field{
				// An object until 2025-11-25; 2026-07-28 allows any JSON value.
				opt("structuredContent", kObject).from(Rev20250618).until(FirstModernRevision),
			})},

		// Resources and prompts.
		"resources/list": {from: FromClient, revs: allRevs,
			params: []field{opt("cursor", kString)},
			result: append([]field{
				req("resources", kArray, resourceFields...),
				opt("nextCursor", kString),
			}, cacheable...)},
		"resources/templates/list": {from: FromClient, revs: allRevs,
			params: []field{opt("cursor", kString)},
			result: append([]field{
				req("resourceTemplates", kArray, templateFields...),
				opt("nextCursor", kString),
			}, cacheable...)},
		"resources/read": {from: FromClient, revs: allRevs, paramsRequired: true,
			params: []field{req("uri", kString)},
			result: append([]field{req("contents", kArray, req("uri", kString), opt("mimeType", kString)).with(ruleEach(ruleResourceContents))}, cacheable...)},
		"resources/subscribe": {from: FromClient, revs: legacyOnly, paramsRequired: true,
			params: []field{req("uri", kString)}},
		"resources/unsubscribe": {from: FromClient, revs: legacyOnly, paramsRequired: true,
			params: []field{req("uri", kString)}},
		"prompts/list": {from: FromClient, revs: allRevs,
			params: []field{opt("cursor", kString)},
			result: append([]field{
				req("prompts", kArray, promptFields...),
				opt("nextCursor", kString),
			}, cacheable...)},
		"prompts/get": {from: FromClient, revs: allRevs, paramsRequired: true,
			params: []field{req("name", kString), opt("arguments", kObject).with(ruleStringValues)},
			result: []field{
				opt("description", kString),
				req("messages", kArray, req("role", kString).with(ruleRole), req("content", kObject).with(ruleContentBlock)),
			}},

		// Tasks (2025-11-25 only): either side may ask the other.
		"tasks/get":    {from: FromAny, revs: tasksRevs, paramsRequired: true, params: []field{req("taskId", kString)}},
		"tasks/result": {from: FromAny, revs: tasksRevs, paramsRequired: true, params: []field{req("taskId", kString)}},
		"tasks/cancel": {from: FromAny, revs: tasksRevs, paramsRequired: true, params: []field{req("taskId", kString)}},
		"tasks/list": {from: FromAny, revs: tasksRevs, params: []field{opt("cursor", kString)},
			result: []field{req("tasks", kArray)}},

		// Requests a server sends (legacy revisions; 2026-07-28 servers send none).
		"sampling/createMessage": {from: FromServer, revs: legacyOnly, paramsRequired: true,
			params: []field{
				req("messages", kArray, req("role", kString).with(ruleRole), req("content", kObject|kArray)),
				req("maxTokens", kInt),
				opt("systemPrompt", kString), opt("temperature", kNumber), opt("stopSequences", kArray),
			},
			result: []field{req("role", kString), req("content", kObject|kArray), req("model", kString)}},
		"roots/list": {from: FromServer, revs: legacyOnly,
			result: []field{req("roots", kArray, req("uri", kString))}},
		"elicitation/create": {from: FromServer, revs: elicitRevs, paramsRequired: true,
			params: []field{req("message", kString)},
			result: []field{req("action", kString)}},

		// Notifications.
		MethodCancelled: {notification: true, from: FromAny, revs: allRevs, paramsRequired: true,
			// requestId is optional in 2025-11-25 only (a task cancels by taskId).
			params: []field{opt("requestId", kID), opt("reason", kString)}},
		MethodProgress: {notification: true, from: FromAny, revs: allRevs, paramsRequired: true,
			params: []field{
				req("progressToken", kID),
				req("progress", kNumber),
				opt("total", kNumber),
				opt("message", kString),
			}},
		"notifications/roots/list_changed": {notification: true, from: FromClient, revs: legacyOnly},
		"notifications/message": {notification: true, from: FromServer, revs: allRevs, paramsRequired: true,
			params: []field{req("level", kString).with(ruleLogLevel), req("data", kAny), opt("logger", kString)}},
		"notifications/resources/list_changed": {notification: true, from: FromServer, revs: allRevs},
		"notifications/resources/updated": {notification: true, from: FromServer, revs: allRevs, paramsRequired: true,
			params: []field{req("uri", kString)}},
		"notifications/prompts/list_changed": {notification: true, from: FromServer, revs: allRevs},
		MethodToolsListChanged:               {notification: true, from: FromServer, revs: allRevs},
		"notifications/elicitation/complete": {notification: true, from: FromServer, revs: tasksRevs, paramsRequired: true,
			params: []field{req("elicitationId", kString)}},
		"notifications/tasks/status": {notification: true, from: FromAny, revs: tasksRevs, paramsRequired: true,
			params: []field{req("taskId", kString), req("status", kString)}},
		"notifications/subscriptions/acknowledged": {notification: true, from: FromServer, revs: modernOnly, paramsRequired: true,
			params: []field{req("notifications", kObject)}},
	}

	// contentTypeRules are the content block types and the members each requires,
	// with the first revision that has them.
	contentTypeRules := map[string]struct {
		since  string
		fields []field
	}{
		ContentText:         {"", []field{req("text", kString)}},
		ContentImage:        {"", []field{req("data", kString), req("mimeType", kString)}},
		ContentAudio:        {Rev20250326, []field{req("data", kString), req("mimeType", kString)}},
		ContentResourceLink: {Rev20250618, []field{req("uri", kString), req("name", kString)}},
		ContentResource:     {"", []field{req("resource", kObject, req("uri", kString)).with(ruleResourceContents)}},
	}

	return &checkRules{
		iconFields:       iconFields,
		implFields:       implFields,
		serverCapFields:  serverCapFields,
		clientCapFields:  clientCapFields,
		toolFields:       toolFields,
		resourceFields:   resourceFields,
		templateFields:   templateFields,
		promptFields:     promptFields,
		requestMeta:      requestMeta,
		notificationMeta: notificationMeta,
		resultMeta:       resultMeta,
		toolOutputFields: toolOutputFields,
		methodRules:      methodRules,
		contentTypeRules: contentTypeRules,
	}
}
