package stock

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

// maxEnvValue bounds one value env_get returns.
const maxEnvValue = 64 << 10

func init() { register("env_get", envGetTool) }

func envGetTool() Tool {
	return Tool{
		Kind: KindSystem,
		Def: tool.Definition{
			Name:  "env_get",
			Title: "Read allowed environment variables",
			Description: "Return environment variables of the tool process, only those the operator lists in MCP_ENV_ALLOW (comma-separated names; empty: none). " +
				"With name, returns that one variable; without, every allowed variable. A name not on the list is refused without saying whether it is set. " +
				"The tool sees only what mcp-route passes it (its minimal set plus --env and --pass-env), so a listed variable must also be passed. Values are cut at 64 KiB.",
			InputSchema: objectSchema(nil,
				`"name": {"type": "string", "minLength": 1, "maxLength": 256, "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
					"description": "The variable to read. Omit to read every allowed variable."}`,
			),
			OutputSchema: objectSchema([]string{"variables", "unset"},
				`"variables": {"type": "object", "additionalProperties": {"type": "string"},
					"description": "Allowed variables that are set, by name."}`,
				`"unset": {"type": "array", "items": {"type": "string"},
					"description": "Allowed variables asked for that are not set."}`,
				`"truncated": {"type": "boolean", "description": "A value was cut at 64 KiB."}`,
			),
			Annotations: readOnlyHints("Read allowed environment variables"),
			Run:         jsonResult(),
		},
		Handler: envGet,
	}
}

type envResult struct {
	Variables map[string]string `json:"variables"`
	Unset     []string          `json:"unset"`
	Truncated bool              `json:"truncated,omitempty"`
}

func envGet(c *tool.Call) error {
	var args struct {
		Name string `json:"name"`
	}
	if err := decodeArgs(c, &args); err != nil {
		return err
	}
	allowed := map[string]bool{}
	var names []string
	for _, n := range strings.Split(c.Getenv("MCP_ENV_ALLOW"), ",") {
		if n = strings.TrimSpace(n); n != "" && !allowed[n] {
			allowed[n] = true
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if args.Name != "" {
		if !allowed[args.Name] {
			return fmt.Errorf("%s: not on the env_get allowlist (MCP_ENV_ALLOW)", args.Name)
		}
		names = []string{args.Name}
	}
	res := envResult{Variables: map[string]string{}, Unset: []string{}}
	for _, n := range names {
		v := c.Getenv(n)
		if v == "" {
			res.Unset = append(res.Unset, n)
			continue
		}
		if len(v) > maxEnvValue {
			v = string(cutUTF8([]byte(v), maxEnvValue))
			res.Truncated = true
		}
		res.Variables[n] = text([]byte(v))
	}
	return c.JSON(res)
}
