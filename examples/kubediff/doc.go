// Command kubediff is a differential suite: it sends the same raw HTTP requests to a
// real Kubernetes API server and to the example server (examples/server), and prints
// where their answers differ, with a verdict for each difference: a bug, or an
// exception that the spec or the design decisions justify.
//
// One command does everything:
//
//	cd examples/kubediff && go run -tags kubediff .
//
// It starts, in this process, an etcd (go.etcd.io/etcd/server/v3/embed) on loopback
// ports in a temporary directory and a k8s.io/apiextensions-apiserver on it, with a
// CA of its own and a client certificate in the group system:masters (which the
// apiserver's default authorizer lets through, so no kube-apiserver is needed). It
// installs CustomResourceDefinitions generated from the repository's JSON Schemas
// (schema/schemas/*.json: $refs resolved into a structural schema, a status
// subresource where the kind has a status, the kinds' scopes) in the group
// management.service/v1, the group and kinds the example server serves, so that the
// two get identical requests. It builds and starts examples/server from the
// repository root as a child process (in memory, plain HTTP, a random admin key).
//
// Each case is a sequence of requests; both servers run it, each in a store of its
// own with the same names. The answers are normalised (uids, times,
// resourceVersion values, continue tokens and generated name suffixes are masked;
// the example server's base path /kubernetes/management is the only difference in
// the URLs) and compared: status codes, content types, Warning headers, Status
// reasons and causes, object fields, managedFields and watch event sequences. It
// prints "N cases, S same, D different" and every difference with its verdict; the
// justified exceptions are one Go table (exceptions.go) with their reasons quoted.
//
// Flags: -case (run the cases whose name matches, exactly or as a regular
// expression), -json (the results as JSON on stdout), -slow (also the cases that
// wait for kube-apiserver's once-a-minute bookmark), -messages (also compare the
// messages of Status errors), -root (the repository root, ../.. by default),
// -server-bin (a built examples/server instead of building it), -v (each request as
// it is sent), -list (the case names, without running anything).
//
// Everything that imports k8s.io/apiextensions-apiserver or etcd's server sits behind
// the build tag kubediff, so that the module's plain go vet and go test stay cheap;
// without the tag the command says so and exits.
package main
