// Package jsonschema is github.com/santhosh-tekuri/jsonschema/v6 at v6.0.2
// (Apache License 2.0, see LICENSE), copied here with one modification: the
// draft metaschemas are compiled the first time a schema is compiled or
// validated against its draft (Draft.meta, a sync.Once per draft), not in
// the package's init.
//
// Why a copy: upstream's init compiled every draft's metaschema in every
// process that links the package, about 3 ms and 1.7 MB before main, and the
// linker cannot drop an init. codec links it, so every mcp-route tool process
// paid that on every call although it never validates anything (mcp-route
// already checked the arguments). With the copy a process pays only when it
// compiles a schema, and then only for the draft it uses (2020-12).
//
// Nothing else differs from upstream: the kind subpackage and the embedded
// metaschemas are unchanged, and the only files edited are draft.go (the lazy
// compile) and the import path of kind. To update, copy the new release's
// non-test .go files, kind/ and metaschemas/ over these and re-apply the
// draft.go change; codec's tests (TestValidateTool, the fuzz and the
// conformance suite) and internal/jsonschema's own test hold the behaviour.
package jsonschema
