package shexec

// UnconfinedEnv names the variable with which the operator lets sh_exec run
// without kernel confinement: MCP_SH_UNCONFINED=1, set with
// mcp-route --env MCP_SH_UNCONFINED=1. Any other value, or none, keeps the
// refusal.
const UnconfinedEnv = "MCP_SH_UNCONFINED"

// Confinement says whether the calling process runs under kernel
// confinement (confine.InForce) and, when not, why ("this kernel has no
// Landlock", "not started confined ..."), for the refusal's text.
type Confinement struct {
	InForce bool
	Why     string
}

// CheckConfined refuses to run a command when confinement is not in force,
// unless getenv(UnconfinedEnv) is "1": without the kernel's wall, the
// allowlist's list of program semantics is all that keeps a program inside
// the root, and such lists leak (see the package doc). The error wraps
// ErrRefused and says why and how to opt in.
func CheckConfined(c Confinement, getenv func(string) string) error {
	if c.InForce || getenv(UnconfinedEnv) == "1" {
		return nil
	}
	why := c.Why
	if why == "" {
		why = "this process is not confined"
	}
	return refusef("sh_exec runs only under kernel confinement (Landlock), and it is not in force: %s; "+
		"its allowlist alone cannot keep every program inside the root. "+
		"Serve it with mcp-route on a kernel with Landlock (Linux 5.13 or later, --confine auto or require), "+
		"or accept the risk and let it run unconfined: mcp-route --env %s=1", why, UnconfinedEnv)
}
