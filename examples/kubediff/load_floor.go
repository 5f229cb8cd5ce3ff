package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The floor of the load run (-load-floor) is a server that does no work: it answers
// each request of the throughput workloads with bytes our server gave for the same
// request, captured once after the objects were created. It runs as a process of its
// own over TLS, as ours does, and the load generator drives it exactly as it drives
// the others. What it reaches is the most any server written with Go's net/http can
// answer this load generator on this machine, so a ratio to kube-apiserver above the
// floor's is out of reach for any such server.

// floorFiles name the captured answers in the floor's directory.
const (
	floorObject = "floor-object.json" // GET of one object
	floorList   = "floor-list.json"   // GET of a namespace's list
	floorPage1  = "floor-page1.json"  // the same with limit=500
	floorPage2  = "floor-page2.json"  // its continuation
	floorCA     = "floor-ca.crt"      // the certificate the floor serves, PEM
)

// floorAnswers are the captured bodies the floor serves.
type floorAnswers struct {
	object, list, page1, page2 []byte
}

// readFloorAnswers reads the captured bodies from dir.
func readFloorAnswers(dir string) (floorAnswers, error) {
	var a floorAnswers
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{{floorObject, &a.object}, {floorList, &a.list}, {floorPage1, &a.page1}, {floorPage2, &a.page2}} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			return a, err
		}
		*f.dst = b
	}
	return a, nil
}

// floorHandler answers as the floor: a GET of a collection with its list (a page
// with limit, the next page with continue), any other GET with the object, a POST
// with 201 and a PUT with 200, both echoing the body as ours echoes the stored
// object. Anything else is 404.
func floorHandler(a floorAnswers) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.Method {
		case http.MethodGet:
			body := a.object
			if isCollection(r.URL.Path) {
				q := r.URL.Query()
				switch {
				case q.Get("continue") != "":
					body = a.page2
				case q.Get("limit") != "":
					body = a.page1
				default:
					body = a.list
				}
			}
			_, _ = w.Write(body)
		case http.MethodPost, http.MethodPut:
			var buf bytes.Buffer
			if _, err := io.Copy(&buf, r.Body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if r.Method == http.MethodPost {
				w.WriteHeader(http.StatusCreated)
			}
			_, _ = w.Write(buf.Bytes())
		default:
			http.NotFound(w, r)
		}
	})
}

// isCollection reports whether path names a collection of the management group
// (…/virtualclusterinstances or …/projects) rather than one object.
func isCollection(path string) bool {
	return strings.HasSuffix(path, "/virtualclusterinstances") || strings.HasSuffix(path, "/projects")
}

// serveFloor is the -load-floor-serve mode: it serves the answers captured in dir
// over TLS on a loopback port with a certificate of its own (written to dir as
// floorCA), prints "listening on URL" and serves until the process is killed.
func serveFloor(dir string, stdout io.Writer) error {
	a, err := readFloorAnswers(dir)
	if err != nil {
		return err
	}
	cert, caPEM, err := floorCertificate()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, floorCA), caPEM, 0o600); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: floorHandler(a), ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	fmt.Fprintf(stdout, "listening on https://%s\n", ln.Addr())
	return srv.ServeTLS(ln, "", "")
}

// floorCertificate makes a self-signed P-256 certificate for 127.0.0.1 and returns
// it with its PEM.
func floorCertificate() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "kubediff floor"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pemBytes, nil
}
