// Package clientgotest holds the tests of the example server that need Kubernetes
// client libraries (client-go, controller-runtime) or kubectl: discovery, the
// dynamic client and informers, and server-side apply through kubectl, client-go
// and controller-runtime. It is a nested module of its own so that the library's
// go.mod stays free of Kubernetes modules. It has no non-test code.
package clientgotest
