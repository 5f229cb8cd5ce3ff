// Package clientgotest holds the client-go test of the example server, in a nested
// module of its own so that the library's go.mod stays free of Kubernetes modules. It
// has no non-test code.
package clientgotest
