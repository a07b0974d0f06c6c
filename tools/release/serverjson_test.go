package release

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/jsonschema"
	"github.com/mcpipe/mcpipe/internal/version"
)

// registrySchemaURL is the $schema server.json names, the vendored file's
// $id.
const registrySchemaURL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

// registrySchema compiles the vendored schema under its own URL, so that
// nothing is fetched.
func registrySchema(t *testing.T, root string) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(root, "third_party", "mcp-registry", "server.schema.json")
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(readFile(t, path)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if id, _ := doc.(map[string]any)["$id"].(string); id != registrySchemaURL {
		t.Fatalf("%s: $id %q, want %q (update the test with the schema)", path, id, registrySchemaURL)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(registrySchemaURL, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(registrySchemaURL)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// serverJSON is the part of server.json the test cross-checks.
type serverJSON struct {
	Schema     string `json:"$schema"`
	Name       string `json:"name"`
	Version    string `json:"version"`
	Repository struct {
		URL       string `json:"url"`
		Subfolder string `json:"subfolder"`
	} `json:"repository"`
	Packages []struct {
		RegistryType     string `json:"registryType"`
		Identifier       string `json:"identifier"`
		RuntimeArguments []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"runtimeArguments"`
		PackageArguments []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"packageArguments"`
		Transport struct {
			Type string `json:"type"`
		} `json:"transport"`
	} `json:"packages"`
}

// TestServerJSON: server.json is valid per the MCP registry's schema
// (2025-12-11), and says what the repository makes: this version, the
// image the Dockerfile builds (its label names this server), run as the
// image runs mcp-route.
func TestServerJSON(t *testing.T) {
	root := repoRoot(t)
	s := registrySchema(t, root)
	data := readFile(t, filepath.Join(root, "server.json"))
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("server.json: %v", err)
	}
	if err := s.Validate(doc); err != nil {
		t.Fatalf("server.json is not valid per the registry schema: %v", err)
	}

	// The validator does refuse: the same file broken as a publisher might
	// break it.
	for _, c := range []struct {
		what   string
		mutate func(m map[string]any)
	}{
		{"a name without a namespace", func(m map[string]any) { m["name"] = "mcp-route" }},
		{"a description over 100 characters", func(m map[string]any) { m["description"] = strings.Repeat("x", 101) }},
		{"no version", func(m map[string]any) { delete(m, "version") }},
		{"a package version \"latest\"", func(m map[string]any) {
			m["packages"].([]any)[0].(map[string]any)["version"] = "latest"
		}},
		{"an unknown transport", func(m map[string]any) {
			m["packages"].([]any)[0].(map[string]any)["transport"] = map[string]any{"type": "carrier-pigeon"}
		}},
	} {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		c.mutate(m)
		b, _ := json.Marshal(m)
		v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err := s.Validate(v); err == nil {
			t.Errorf("server.json with %s passed the schema", c.what)
		}
	}

	var sj serverJSON
	if err := json.Unmarshal(data, &sj); err != nil {
		t.Fatal(err)
	}
	if sj.Schema != registrySchemaURL {
		t.Errorf("server.json $schema %q, want the vendored %q", sj.Schema, registrySchemaURL)
	}
	if sj.Version != version.Number {
		t.Errorf("server.json version %q, internal/version.Number %q: release them together", sj.Version, version.Number)
	}
	if !strings.HasSuffix(sj.Name, "/mcp-route") {
		t.Errorf("server.json name %q is not mcp-route's", sj.Name)
	}
	if sj.Repository.Subfolder != "mcp-route" {
		t.Errorf("server.json repository.subfolder %q, want mcp-route", sj.Repository.Subfolder)
	}

	// The package is the image the Dockerfile builds, tagged with this
	// version, and runs mcp-route over stdio with the image's own paths.
	df := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	final := df.stages[len(df.stages)-1]
	if len(sj.Packages) != 1 {
		t.Fatalf("server.json has %d packages, want the one image", len(sj.Packages))
	}
	p := sj.Packages[0]
	if p.RegistryType != "oci" || !strings.HasSuffix(p.Identifier, "/mcp-route:"+version.Number) {
		t.Errorf("package %s %q: want oci, an image mcp-route:%s", p.RegistryType, p.Identifier, version.Number)
	}
	if got := final.label("io.modelcontextprotocol.server.name"); got != sj.Name {
		t.Errorf("the image's label io.modelcontextprotocol.server.name is %q, server.json's name %q: the registry checks they match", got, sj.Name)
	}
	if p.Transport.Type != "stdio" {
		t.Errorf("package transport %q, want stdio (docker run -i)", p.Transport.Type)
	}
	args := map[string]string{}
	for _, a := range p.PackageArguments {
		args[a.Name] = a.Value
	}
	if args["--tools"] != final.toolsDir(t) || args["--root"] != final.rootDir(t) {
		t.Errorf("package arguments --tools %q --root %q, the image's %q %q", args["--tools"], args["--root"], final.toolsDir(t), final.rootDir(t))
	}
	mount := ""
	for _, a := range p.RuntimeArguments {
		if a.Name == "--volume" {
			mount = a.Value
		}
	}
	if !strings.HasSuffix(mount, ":"+final.rootDir(t)) {
		t.Errorf("runtime argument --volume %q does not mount the project at the image's root %q", mount, final.rootDir(t))
	}
}
