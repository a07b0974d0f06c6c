// Package jsonschema is github.com/santhosh-tekuri/jsonschema/v6 at v6.0.2
// (Apache License 2.0, see LICENSE), copied here with two modifications:
//
//   - the draft metaschemas are compiled the first time a schema is compiled
//     or validated against its draft (Draft.meta, a sync.Once per draft), and
//     a draft's subschema locations are parsed on first use
//     (Draft.subschemaList), not in the package's init;
//   - messages are printed with fmt, not localized through
//     golang.org/x/text/message: ErrorKind has String() where upstream has
//     LocalizedString(*message.Printer), the Localized* methods of
//     ValidationError are gone, and numeric limits print as JSON writes them
//     ("maximum: got 2000000, want 1024000", "maxLength: got 5000, want
//     4095") where upstream's English printer wrote "1.024 × 10⁰⁶" and
//     "4,095".
//
// Why a copy: upstream's init compiled every draft's metaschema in every
// process that links the package, about 3 ms and 1.7 MB before main, and the
// linker cannot drop an init. codec links it, so every mcp-route tool process
// paid that on every call although it never validates anything (mcp-route
// already checked the arguments). With the copy a process pays only when it
// compiles a schema, and then only for the draft it uses (2020-12).
//
// Why the second: x/text's tables and inits were linked into every process
// that links codec, and its number formatting was wrong for a limit.
//
// Nothing else differs from upstream: the embedded metaschemas are unchanged,
// and the only files edited are draft.go and roots.go (the lazy compile and
// subschema list), kind/kind.go,
// output.go, util.go and validator.go (the messages) and the import path of
// kind. To update, copy the new release's non-test .go files, kind/ and
// metaschemas/ over these and re-apply both changes; codec's tests
// (TestValidateTool, the fuzz and the conformance suite) and
// internal/jsonschema's own tests hold the behaviour.
package jsonschema
