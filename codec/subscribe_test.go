package codec_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/spectest"
)

func TestParseSubscriptionsListenParams(t *testing.T) {
	p, err := codec.ParseSubscriptionsListenParams(json.RawMessage(`{` + meta + `,"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///a"],"futureThing":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Notifications.ToolsListChanged || p.Notifications.PromptsListChanged || len(p.Notifications.ResourceSubscriptions) != 1 {
		t.Errorf("filter %+v", p.Notifications)
	}
	if _, ok := p.Meta[codec.MetaProtocolVersion]; !ok {
		t.Errorf("_meta lost: %v", p.Meta)
	}
	if p, err := codec.ParseSubscriptionsListenParams(json.RawMessage(`{"notifications":{}}`)); err != nil || !p.Notifications.Empty() {
		t.Errorf("empty filter: %+v %v", p, err)
	}
	for _, bad := range []string{``, `null`, `[]`, `{}`, `{"notifications":null}`, `{"notifications":true}`, `{"notifications":{"toolsListChanged":"yes"}}`, `{"notifications":{"resourceSubscriptions":"x"}}`} {
		_, err := codec.ParseSubscriptionsListenParams(json.RawMessage(bad))
		if err == nil || !errors.Is(err, codec.ErrInvalidParams) {
			t.Errorf("%s: want -32602, got %v", bad, err)
		}
	}
	_, err = codec.ParseSubscriptionsListenParams(json.RawMessage(`{"notifications":{"toolsListChanged":"yes"}}`))
	if want := "params.notifications.toolsListChanged: expected a boolean, got a string"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("toolsListChanged \"yes\": %v, want %q", err, want)
	}
}

// TestSubscriptionMessages builds each server message of a subscription and
// holds it to the 2026-07-28 schema (and to the spec's examples' shape).
func TestSubscriptionMessages(t *testing.T) {
	for _, id := range []codec.ID{codec.StringID("listen-1"), codec.IntID(7)} {
		ack, err := codec.NewSubscriptionAck(id, codec.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		changed, err := codec.NewSubscriptionNotification(id, codec.MethodToolsListChanged)
		if err != nil {
			t.Fatal(err)
		}
		none, err := codec.NewSubscriptionAck(id, codec.SubscriptionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := codec.NewResultFor(codec.Rev20260728, codec.Implementation{Name: "s", Version: "1"}, id, codec.NewSubscriptionsListenResult(id))
		if err != nil {
			t.Fatal(err)
		}
		want := `"io.modelcontextprotocol/subscriptionId":` + id.String()
		for _, c := range []struct {
			def  string
			m    *codec.Message
			want string
		}{
			{"SubscriptionsAcknowledgedNotification", ack, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{` + want + `}}}`},
			{"SubscriptionsAcknowledgedNotification", none, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{},"_meta":{` + want + `}}}`},
			{"ToolListChangedNotification", changed, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{` + want + `}}}`},
			{"SubscriptionsListenResultResponse", res, ""},
		} {
			line, err := codec.Marshal(c.m)
			if err != nil {
				t.Fatal(err)
			}
			if c.want != "" && string(line) != c.want {
				t.Errorf("got  %s\nwant %s", line, c.want)
			}
			if err := codec.CheckMessage(codec.Rev20260728, codec.FromServer, c.m, codec.MethodSubscriptionsListen); err != nil {
				t.Errorf("CheckMessage(%s): %v", line, err)
			}
			t.Run(c.def, func(t *testing.T) {
				spectest.Validate(t, codec.Rev20260728, c.def, line)
			})
		}
		var r struct {
			ResultType string         `json:"resultType"`
			Meta       map[string]any `json:"_meta"`
		}
		json.Unmarshal(res.Result, &r)
		if r.ResultType != codec.ResultTypeComplete || r.Meta[codec.MetaSubscriptionID] == nil || r.Meta[codec.MetaServerInfo] == nil {
			t.Errorf("listen result %s", res.Result)
		}
	}
}
