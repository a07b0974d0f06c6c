// Package stock is the stock tool pack of mcpipe: 32 tools for working on
// files under a root, served by mcp-route from one multi-call binary,
// mcp-stock (DESIGN.md, "mcp-stock").
//
// # Roster
//
//   - read (18): fs_read, fs_list, fs_glob, fs_count, fs_grep, fs_grep_count,
//     fs_first_match, fs_find, fs_stat, fs_readlink, fs_realpath, fs_du,
//     fs_head, fs_tail, fs_slice, fs_hash, fs_exists, fs_lines
//   - mutating (11): fs_write, fs_append, fs_replace, fs_chmod, fs_mkdir,
//     fs_touch, fs_rmdir, fs_delete, fs_copy, fs_move, sh_exec
//   - system (3): env_get, time_now, sys_info
//
// Read and system tools are read-only (21 tools); `install --readonly`
// installs only those.
//
// # Paths
//
// Every path argument goes through mcp-jail's jail package under MCP_ROOT
// (the working directory when unset): a tool opens the root once per call
// and does every file operation relative to that handle, so no path, symlink
// or race leads outside it. A refused path fails the call with
// "PATH: path escapes root". FIFOs, sockets and devices are never read.
//
// # Output
//
// Every output is bounded: bytes (DefaultMaxBytes, at most MaxBytesLimit),
// lines (DefaultMaxLines), results (DefaultMaxResults) and entries visited
// by one walk (MaxWalk). Text output that was cut ends with a note such as
// "[truncated: 1000 of 52311 lines shown]"; JSON output carries
// "truncated": true. Tools whose output is data use the "json" result mode
// and declare an outputSchema.
//
// # Concurrency
//
// The registry is filled by init functions and read-only afterwards. Each
// call is independent; handlers keep no state between calls.
package stock
