// Package shexectest holds what the tests of sh_exec share: the injection
// corpus that mcp-stock/stock's unit tests run in-process and the e2e tests
// run through mcp-route. It is for tests only and runs nothing itself.
package shexectest

// InjectionCorpus returns command lines that would create one of canaries
// (each a path, absolute or relative to the root) if anything interpreted
// them: a shell's lists, pipes, redirections and substitutions, shells,
// interpreters and wrappers on the allowlist, and options that make an
// allowed program run another. A test runs every line through sh_exec
// with these programs allowed, checks that no canary appeared, and then
// proves the check with a control that does create one.
func InjectionCorpus(canaries ...string) []string {
	var cmds []string
	for _, c := range canaries {
		cmds = append(cmds,
			"touch "+c,
			"/usr/bin/touch "+c,
			"../../usr/bin/touch "+c,
			"echo x; touch "+c,
			"echo x;touch "+c,
			"echo x && touch "+c,
			"echo x || touch "+c,
			"echo x | touch "+c,
			"echo x & touch "+c,
			"echo x > "+c,
			"echo x >"+c,
			"echo x >> "+c,
			"echo x 1>"+c,
			"echo x 2>"+c,
			"echo x\ntouch "+c,
			"echo x\rtouch "+c,
			"echo $(touch "+c+")",
			"echo `touch "+c+"`",
			`echo "$(touch `+c+`)"`,
			"echo \"`touch "+c+"`\"",
			"echo ${x:-$(touch "+c+")}",
			"(touch "+c+")",
			"{ touch "+c+"; }",
			"sh -c 'touch "+c+"'",
			"bash -c 'touch "+c+"'",
			"env touch "+c,
			"xargs touch "+c,
			"timeout 5 touch "+c,
			"nice touch "+c,
			"awk 'BEGIN{system(\"touch "+c+"\")}'",
			"find . -exec touch "+c+" ';'",
			"find . -execdir touch "+c+" '+'",
			"find . -ok touch "+c+" ';'",
			"find . -fprint "+c,
			"git -c 'alias.x=!touch "+c+"' x",
			"git -c core.pager='touch "+c+"' log",
			"git --config-env=core.pager=X log",
			"git clone --upload-pack='touch "+c+"' . x",
			"git clone 'ext::sh -c touch% "+c+"' x",
			"tar -cf a.tar --to-command='touch "+c+"' .",
			"tar -c --use-compress-program='touch "+c+"' -f a.tar .",
			"tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='touch "+c+"' .",
			"sort --compress-program='touch "+c+"' x",
			"sort --compress-program='touch "+c+"' hello.txt",
			"make --eval='x:=$$(shell touch "+c+")'",
			"make 'X=$(shell touch "+c+")'",
			"rsync -e 'touch "+c+"' a b:c",
			"rsync --rsh='touch "+c+"' a b",
			"echo \\$(touch "+c+")",
			"ls # ; touch "+c,
			"ls -la # ; touch "+c,
			// Other names of shells, interpreters and editors.
			"editor -es -c '!touch "+c+"' -c q",
			"vimdiff -es -c '!touch "+c+"' -c q",
			"view -es -c '!touch "+c+"' -c q",
			"ex -c '!touch "+c+"' -c q",
			"ksh93 -c 'touch "+c+"'",
			"bash5.2 -c 'touch "+c+"'",
			"sh.distrib -c 'touch "+c+"'",
			"busybox.static sh -c 'touch "+c+"'",
			"busybox.static touch "+c,
			"guile-3.0 -c '(system \"touch "+c+"\")'",
			"git-shell -c 'touch "+c+"'",
			"cmake -E touch "+c,
			"mawk 'BEGIN{system(\"touch "+c+"\")}'",
			"perl5.36 -e 'system(\"touch "+c+"\")'",
			"python3.11 -c 'import os; os.system(\"touch "+c+"\")'",
			"man -P 'touch "+c+"' ls",
			// Options that run a program, in clusters and abbreviations.
			"tar -cf a.tar -I 'touch "+c+"' .",
			"tar -cIf 'touch "+c+"' a.tar .",
			"zip -T -TT 'touch "+c+"' a.zip hello.txt",
			"zip -vTT 'touch "+c+"' a.zip hello.txt",
			"wget -q --use-askpass='touch "+c+"' http://127.0.0.1:9/",
			"wget -q -e 'use_askpass=touch "+c+"' http://127.0.0.1:9/",
			"find -L . -exec touch "+c+" ';'",
			"git -C . -c core.fsmonitor='touch "+c+"' status",
			"git --git-dir=x -c core.pager='touch "+c+"' log",
		)
	}
	return cmds
}

// Allow is the allowlist (MCP_SH_ALLOW) the corpus runs under: generous
// on purpose, with shells, interpreters, wrappers and editors (under their
// alternative names too) that must stay refused even when listed.
const Allow = "echo,ls,find,git,tar,sort,make,rsync,sh,bash,env,xargs,awk,timeout,nice,zip,wget,curl," +
	"editor,vimdiff,view,ex,ksh93,bash5.2,sh.distrib,busybox.static,guile-3.0,git-shell,cmake,mawk,perl5.36,python3.11,man"

// AllowRunners is the MCP_SH_ALLOW_RUNNERS the corpus runs under, so that
// make's own argument rules are exercised.
const AllowRunners = "make"
