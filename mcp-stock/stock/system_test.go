package stock

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestEnvGet(t *testing.T) {
	root := t.TempDir()
	env := []string{"MCP_ENV_ALLOW", "LANG, APP_MODE,UNSET_ONE", "LANG", "C.UTF-8", "APP_MODE", "dev", "SECRET_TOKEN", "hunter2"}
	var all envResult
	okJSON(t, &all, "env_get", root, `{}`, env...)
	if len(all.Variables) != 2 || all.Variables["LANG"] != "C.UTF-8" || all.Variables["APP_MODE"] != "dev" || strings.Join(all.Unset, ",") != "UNSET_ONE" {
		t.Errorf("all: %+v", all)
	}
	var one envResult
	okJSON(t, &one, "env_get", root, `{"name":"APP_MODE"}`, env...)
	if len(one.Variables) != 1 || one.Variables["APP_MODE"] != "dev" {
		t.Errorf("one: %+v", one)
	}
	for _, name := range []string{"SECRET_TOKEN", "MCP_ENV_ALLOW", "PATH", "HOME"} {
		stderr := fails(t, "env_get", root, argsJSON(t, "name", name), env...)
		if !strings.Contains(stderr, "not on the env_get allowlist") || strings.Contains(stderr, "hunter2") {
			t.Errorf("%s: %q", name, stderr)
		}
	}
	// No allowlist: nothing is revealed.
	var none envResult
	okJSON(t, &none, "env_get", root, `{}`, "SECRET_TOKEN", "hunter2")
	if len(none.Variables) != 0 || len(none.Unset) != 0 {
		t.Errorf("without MCP_ENV_ALLOW: %+v", none)
	}
	failsWith(t, "not on the env_get allowlist", "env_get", root, `{"name":"SECRET_TOKEN"}`, "SECRET_TOKEN", "hunter2")
	var long envResult
	okJSON(t, &long, "env_get", root, `{}`, "MCP_ENV_ALLOW", "BIG", "BIG", strings.Repeat("x", maxEnvValue+10))
	if len(long.Variables["BIG"]) != maxEnvValue || !long.Truncated {
		t.Errorf("long value: %d bytes, truncated %v", len(long.Variables["BIG"]), long.Truncated)
	}
}

func TestTimeNow(t *testing.T) {
	root := t.TempDir()
	before := time.Now().Add(-time.Second)
	var r timeResult
	okJSON(t, &r, "time_now", root, `{}`)
	u, err := time.Parse(time.RFC3339Nano, r.UTC)
	if err != nil || u.Before(before) || r.Timezone != "UTC" || r.OffsetSeconds != 0 || r.Unix != u.Unix() {
		t.Errorf("utc: %+v %v", r, err)
	}
	okJSON(t, &r, "time_now", root, `{"timezone":"Asia/Kolkata"}`)
	if r.OffsetSeconds != 19800 || r.Abbreviation != "IST" || !strings.HasSuffix(r.Local, "+05:30") {
		t.Errorf("Asia/Kolkata: %+v", r)
	}
	for _, tz := range []string{"Mars/Olympus", "../../etc/passwd", "/etc/localtime"} {
		failsWith(t, "unknown", "time_now", root, argsJSON(t, "timezone", tz))
	}
}

func TestSysInfo(t *testing.T) {
	root := t.TempDir()
	out := ok(t, "sys_info", root, `{}`, "SECRET_TOKEN", "hunter2", "HOME", "/home/someone")
	var r sysResult
	okJSON(t, &r, "sys_info", root, `{}`)
	if r.OS != runtime.GOOS || r.Arch != runtime.GOARCH || r.CPUs < 1 || !strings.HasPrefix(r.GoVersion, "go") {
		t.Errorf("sys_info: %+v", r)
	}
	if runtime.GOOS == "linux" && (r.UptimeSeconds == nil || len(r.LoadAverage) != 3 || r.MemTotalBytes == nil) {
		t.Errorf("sys_info on linux lacks uptime, load or memory: %s", out)
	}
	// okJSON refuses fields outside the schema, and the string fields are
	// runtime constants: no room for a host name or a secret.
	for _, secret := range []string{"hunter2", "/home/someone"} {
		if strings.Contains(out, secret) {
			t.Errorf("sys_info reveals %q: %s", secret, out)
		}
	}
	failsWith(t, "invalid arguments", "sys_info", root, `{"verbose":true}`)
}
