package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certSet is the files of the apiserver's PKI: a CA, a serving certificate for
// 127.0.0.1 and a client certificate in the group system:masters.
type certSet struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

// makeCerts writes a fresh CA, serving pair and client pair into dir/pki.
func makeCerts(dir string) (*certSet, error) {
	pki := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubediff-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	cs := &certSet{
		CA:         filepath.Join(pki, "ca.crt"),
		ServerCert: filepath.Join(pki, "server.crt"), ServerKey: filepath.Join(pki, "server.key"),
		ClientCert: filepath.Join(pki, "client.crt"), ClientKey: filepath.Join(pki, "client.key"),
	}
	if err := writePEM(cs.CA, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	leaf := func(serial int64, subject pkix.Name, usage x509.ExtKeyUsage, certPath, keyPath string, ips []net.IP, dns []string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      subject,
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  ips,
			DNSNames:     dns,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
			return err
		}
		return writePEM(keyPath, "EC PRIVATE KEY", kder)
	}
	if err := leaf(2, pkix.Name{CommonName: "127.0.0.1"}, x509.ExtKeyUsageServerAuth, cs.ServerCert, cs.ServerKey,
		[]net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"}); err != nil {
		return nil, err
	}
	if err := leaf(3, pkix.Name{CommonName: "kubediff", Organization: []string{"system:masters"}}, x509.ExtKeyUsageClientAuth,
		cs.ClientCert, cs.ClientKey, nil, nil); err != nil {
		return nil, err
	}
	return cs, nil
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
