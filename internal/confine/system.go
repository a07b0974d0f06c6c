package confine

import (
	"path/filepath"
	"slices"
)

// SystemReadExec are the system directories every policy can read and
// execute from, where they exist. Not /etc: see SystemRead.
var SystemReadExec = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}

// SystemRead are the files and directories of /etc every policy can read
// (not execute), where they exist: what the dynamic loader, the C
// library's name service (users, hosts, DNS), time zones, TLS
// certificates, locales and the common runtimes' system configuration
// (git, python, perl, java, ssh as a client) read. Entries with a glob
// pattern are expanded when the rules are built. A rule applies to the
// whole hierarchy below a directory, so a directory that also holds
// secrets (/etc/ssl, /etc/ssh, /etc/pki) is granted file by file.
//
// Left out on purpose, though harmless to many hosts: the rest of /etc,
// and in it files that often hold credentials (/etc/environment, with
// proxy passwords; /etc/npmrc, /etc/pip.conf, /etc/wgetrc and
// /etc/maven, with registry tokens), /etc/machine-id (a stable host
// identifier) and /etc/mtab (a link to the /proc of whoever resolves it).
// --allow-read adds what a host needs beyond this.
var SystemRead = []string{
	// The dynamic loader and the C library.
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload",
	"/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/shells",
	"/etc/hosts", "/etc/host.conf", "/etc/resolv.conf", "/etc/gai.conf", "/etc/hostname",
	"/etc/protocols", "/etc/services", "/etc/networks", "/etc/rpc", "/etc/netconfig", "/etc/ethertypes",
	"/etc/localtime", "/etc/timezone", "/etc/locale.alias", "/etc/locale.conf",
	"/etc/os-release", "/etc/lsb-release", "/etc/debian_version", "/etc/redhat-release",
	"/etc/system-release", "/etc/fedora-release", "/etc/alpine-release",
	"/etc/alternatives", "/etc/mime.types", "/etc/magic", "/etc/magic.mime",
	"/etc/inputrc", "/etc/terminfo", "/etc/xattr.conf", "/etc/selinux/config",
	"/etc/fonts", "/etc/xml",
	// TLS: the public certificates and the library configuration, never
	// /etc/ssl or /etc/pki whole (private keys live there).
	"/etc/ssl/certs", "/etc/ssl/cert.pem", "/etc/ssl/openssl.cnf",
	"/etc/ca-certificates", "/etc/ca-certificates.conf",
	"/etc/pki/tls/certs", "/etc/pki/tls/cert.pem", "/etc/pki/tls/openssl.cnf",
	"/etc/pki/ca-trust", "/etc/crypto-policies", "/etc/gnutls",
	// Runtimes and tools.
	"/etc/gitconfig", "/etc/gitattributes", "/etc/python3*", "/etc/perl", "/etc/java-*",
	"/etc/ssh/ssh_config", "/etc/ssh/ssh_config.d", "/etc/ssh/ssh_known_hosts",
}

// ProcRead are the files of /proc every policy can read, where they exist:
// facts about the machine that tools and runtimes ask for (free, nproc,
// uptime, uname, Go's listen backlog, libcap's last capability), none
// about a process. Everything else in /proc stays denied: /proc/<pid> and
// /proc/self, whose environ, cmdline and mem are those of mcp-route and of
// the other tools, and /proc/kcore, /proc/kallsyms and the like. A
// confined program that reads /proc/self (ps, some runtimes' memory
// checks) is refused.
var ProcRead = []string{
	"/proc/cpuinfo", "/proc/meminfo", "/proc/loadavg", "/proc/stat", "/proc/uptime",
	"/proc/version", "/proc/filesystems", "/proc/swaps",
	"/proc/sys/kernel/ostype", "/proc/sys/kernel/osrelease", "/proc/sys/kernel/version",
	"/proc/sys/kernel/hostname", "/proc/sys/kernel/pid_max", "/proc/sys/kernel/threads-max",
	"/proc/sys/kernel/ngroups_max", "/proc/sys/kernel/cap_last_cap",
	"/proc/sys/kernel/random/boot_id", "/proc/sys/kernel/random/uuid", "/proc/sys/kernel/random/entropy_avail",
	"/proc/sys/vm/overcommit_memory", "/proc/sys/net/core/somaxconn",
	"/proc/sys/fs/nr_open", "/proc/sys/fs/pipe-max-size",
}

// Never are the places no policy grants, where they exist: password
// hashes, sudo rules, and the private keys and credentials that system
// services keep under /etc. Entries with a glob pattern are expanded when
// the rules are built. A policy path (Root, AllowRead, AllowWrite,
// AllowExec, ReadExec, Grants) at or below one of them, or above one (as
// --allow-read /etc would be: a Landlock rule grants a whole hierarchy and
// cannot leave a part out), is refused with a *NeverError.
var Never = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd",
	"/etc/ssl/private", "/etc/pki/tls/private", "/etc/pki/CA/private",
	"/etc/ssh/ssh_host_*", "/etc/krb5.keytab", "/etc/ipsec.secrets", "/etc/ipsec.d/private",
	"/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets", "/etc/wireguard",
	"/etc/NetworkManager/system-connections", "/etc/letsencrypt",
	"/etc/kubernetes/pki", "/etc/kubernetes/admin.conf", "/etc/docker/key.json",
	"/etc/credstore", "/etc/credstore.encrypted",
}

// expand returns the existing paths that patterns name, globs expanded, in
// order.
func expand(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		if !hasMeta(p) {
			out = append(out, p)
			continue
		}
		m, _ := filepath.Glob(p) // only ErrBadPattern, for our own constants
		slices.Sort(m)
		out = append(out, m...)
	}
	return out
}

func hasMeta(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '[', '\\':
			return true
		}
	}
	return false
}

// neverPlaces returns the places of Never that exist here, resolved.
func neverPlaces() []string {
	var out []string
	for _, p := range expand(Never) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, real)
		}
	}
	return out
}
