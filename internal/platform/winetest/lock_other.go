//go:build !unix

package winetest

// lockFile does nothing where Wine does not run: Require has failed the test
// before.
func lockFile(string) (func(), error) { return func() {}, nil }
