package codec

import (
	"bytes"
	"encoding/json"
)

// Subscriptions (2026-07-28). A modern client opens a long-lived
// subscriptions/listen request naming the notifications it opts in to
// (SubscriptionFilter). The server first sends
// notifications/subscriptions/acknowledged with the subset it honours, then
// each opted-in notification, every one stamped with
// _meta["io.modelcontextprotocol/subscriptionId"] = the listen request's id
// ([MetaSubscriptionID]). The listen request is answered only when the
// server ends the subscription (a SubscriptionsListenResult with the same
// _meta key); a notifications/cancelled from the client for the listen id
// ends it without an answer. Legacy revisions have none of this: their
// list_changed notifications are unsolicited and carry no subscription id.

// Method names of subscriptions (2026-07-28 only).
const (
	MethodSubscriptionsListen       = "subscriptions/listen"
	MethodSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
)

// SubscriptionFilter is the set of notifications a client opts in to on a
// subscriptions/listen request, and, in the acknowledgement, the subset the
// server honours. Members left false or empty are absent on the wire: the
// acknowledgement omits what the server does not support.
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// Empty reports whether the filter asks for nothing.
func (f SubscriptionFilter) Empty() bool {
	return !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged && len(f.ResourceSubscriptions) == 0
}

// SubscriptionsListenParams are the params of subscriptions/listen.
// Notifications is required; Meta holds the request _meta as received.
type SubscriptionsListenParams struct {
	Notifications *SubscriptionFilter        `json:"notifications"`
	Meta          map[string]json.RawMessage `json:"_meta,omitempty"`
}

// ParseSubscriptionsListenParams decodes the params of a
// subscriptions/listen request. It refuses, with -32602, params that are not
// an object, a missing or non-object "notifications", and filter members of
// the wrong type (e.g. "toolsListChanged": "yes"). Unknown filter members
// are ignored: a later revision may add notification types, and the
// acknowledgement then simply leaves them out.
func ParseSubscriptionsListenParams(params json.RawMessage) (*SubscriptionsListenParams, *Error) {
	p := bytes.TrimSpace(params)
	if len(p) == 0 || p[0] != '{' {
		return nil, Errorf(CodeInvalidParams, "invalid params: subscriptions/listen needs a params object")
	}
	var probe struct {
		Notifications json.RawMessage `json:"notifications"`
	}
	if err := json.Unmarshal(p, &probe); err != nil {
		return nil, Errorf(CodeInvalidParams, "invalid params: %v", paramsError(err))
	}
	if n := bytes.TrimSpace(probe.Notifications); len(n) == 0 || n[0] != '{' {
		return nil, Errorf(CodeInvalidParams, "invalid params: subscriptions/listen: params.notifications must be an object")
	}
	out := new(SubscriptionsListenParams)
	if err := json.Unmarshal(p, out); err != nil {
		return nil, Errorf(CodeInvalidParams, "invalid params: subscriptions/listen: %v", paramsError(err))
	}
	return out, nil
}

// SubscriptionsAcknowledgedParams are the params of
// notifications/subscriptions/acknowledged. Notifications is always sent
// (an empty object when nothing is honoured).
type SubscriptionsAcknowledgedParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
	Meta          map[string]any     `json:"_meta,omitempty"`
}

// NotificationParams are the params of a notification that carries nothing
// but _meta, such as notifications/tools/list_changed on a subscription.
type NotificationParams struct {
	Meta map[string]any `json:"_meta,omitempty"`
}

// SubscriptionsListenResult answers a subscriptions/listen request when the
// server ends the subscription. Meta must carry [MetaSubscriptionID];
// [DecorateResult] adds resultType and serverInfo.
type SubscriptionsListenResult struct {
	ResultType string         `json:"resultType,omitempty"`
	Meta       map[string]any `json:"_meta"`
}

// SubscriptionMeta returns a _meta object holding
// _meta["io.modelcontextprotocol/subscriptionId"] = id, the id of the
// subscriptions/listen request that opened the subscription, byte for byte.
func SubscriptionMeta(id ID) map[string]any {
	return map[string]any{MetaSubscriptionID: id}
}

// NewSubscriptionAck builds the notifications/subscriptions/acknowledged
// for the subscription opened by request id, reporting the honoured filter.
func NewSubscriptionAck(id ID, honoured SubscriptionFilter) (*Message, error) {
	return NewNotification(MethodSubscriptionsAcknowledged, SubscriptionsAcknowledgedParams{
		Notifications: honoured,
		Meta:          SubscriptionMeta(id),
	})
}

// NewSubscriptionNotification builds a params-less notification (e.g.
// [MethodToolsListChanged]) delivered on the subscription opened by request
// id: its params hold only the subscription's _meta.
func NewSubscriptionNotification(id ID, method string) (*Message, error) {
	return NewNotification(method, NotificationParams{Meta: SubscriptionMeta(id)})
}

// NewSubscriptionsListenResult returns the result that ends the
// subscription opened by request id (to be decorated for the revision, see
// [NewResultFor]).
func NewSubscriptionsListenResult(id ID) SubscriptionsListenResult {
	return SubscriptionsListenResult{ResultType: ResultTypeComplete, Meta: SubscriptionMeta(id)}
}
