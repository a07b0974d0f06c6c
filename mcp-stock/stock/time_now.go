package stock

import (
	"fmt"
	"time"
	_ "time/tzdata" // zone names work on hosts without /usr/share/zoneinfo

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("time_now", timeNowTool) }

func timeNowTool() Tool {
	return Tool{
		Kind: KindSystem,
		Def: tool.Definition{
			Name:        "time_now",
			Title:       "Current time",
			Description: "Return the current time: RFC 3339 in UTC and in a time zone (an IANA name such as \"Europe/Paris\"; default UTC), Unix seconds and milliseconds, the zone's abbreviation and offset, and the weekday. Reads nothing else.",
			InputSchema: objectSchema(nil,
				`"timezone": {"type": "string", "minLength": 1, "maxLength": 64, "default": "UTC",
					"description": "IANA time zone name, e.g. \"America/New_York\", or \"UTC\" or \"Local\" (the host's zone)."}`,
			),
			OutputSchema: objectSchema([]string{"utc", "local", "timezone", "abbreviation", "offsetSeconds", "unix", "unixMillis", "weekday"},
				`"utc": {"type": "string", "format": "date-time"}`,
				`"local": {"type": "string", "format": "date-time", "description": "The time in the requested zone."}`,
				`"timezone": {"type": "string"}`,
				`"abbreviation": {"type": "string", "description": "The zone's abbreviation at this time, e.g. CEST."}`,
				`"offsetSeconds": {"type": "integer", "description": "Offset from UTC in seconds."}`,
				`"unix": {"type": "integer", "description": "Seconds since 1970-01-01T00:00:00Z."}`,
				`"unixMillis": {"type": "integer"}`,
				`"weekday": {"type": "string"}`,
			),
			Annotations: readOnlyHints("Current time"),
			Run:         jsonResult(),
		},
		Handler: timeNow,
	}
}

type timeResult struct {
	UTC           string `json:"utc"`
	Local         string `json:"local"`
	Timezone      string `json:"timezone"`
	Abbreviation  string `json:"abbreviation"`
	OffsetSeconds int    `json:"offsetSeconds"`
	Unix          int64  `json:"unix"`
	UnixMillis    int64  `json:"unixMillis"`
	Weekday       string `json:"weekday"`
}

func timeNow(c *tool.Call) error {
	var args struct {
		Timezone string `json:"timezone"`
	}
	if err := decodeArgs(c, &args); err != nil {
		return err
	}
	if args.Timezone == "" {
		args.Timezone = "UTC"
	}
	loc, err := time.LoadLocation(args.Timezone)
	if err != nil {
		return fmt.Errorf("timezone %q: unknown (want an IANA name such as Europe/Paris, or UTC)", args.Timezone)
	}
	now := time.Now()
	in := now.In(loc)
	abbr, off := in.Zone()
	return c.JSON(timeResult{
		UTC:           now.UTC().Format(time.RFC3339Nano),
		Local:         in.Format(time.RFC3339Nano),
		Timezone:      loc.String(),
		Abbreviation:  abbr,
		OffsetSeconds: off,
		Unix:          now.Unix(),
		UnixMillis:    now.UnixMilli(),
		Weekday:       in.Weekday().String(),
	})
}
