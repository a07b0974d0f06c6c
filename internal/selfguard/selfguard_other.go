//go:build !linux

package selfguard

// Apply does nothing outside Linux; see the package doc.
func Apply() error { return nil }
