package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// certValidity is how long a self-signed certificate is valid; one that has less than
// a tenth of it left, or does not name the host, is made anew.
const certValidity = 365 * 24 * time.Hour

// loadOrMakeCert returns the certificate to serve and its PEM (what a client trusts):
// --tls-cert-file/--tls-key-file when given, else a self-signed one, kept in
// --data-dir (tls.crt, tls.key) when there is one.
func loadOrMakeCert(o Options, host string) (tls.Certificate, []byte, error) {
	if o.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			return cert, nil, err
		}
		pemCert, err := os.ReadFile(o.TLSCertFile)
		return cert, pemCert, err
	}
	var certPath, keyPath string
	if o.DataDir != "" {
		certPath, keyPath = filepath.Join(o.DataDir, "tls.crt"), filepath.Join(o.DataDir, "tls.key")
		if certPEM, err := os.ReadFile(certPath); err == nil {
			if keyPEM, err := os.ReadFile(keyPath); err == nil {
				if cert, err := tls.X509KeyPair(certPEM, keyPEM); err == nil && certUsable(cert, host) {
					return cert, certPEM, nil
				}
			}
		}
	}
	certPEM, keyPEM, err := selfSigned(host)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	if certPath != "" {
		if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
			return tls.Certificate{}, nil, err
		}
		if err := os.WriteFile(certPath, certPEM, 0o644); err != nil {
			return tls.Certificate{}, nil, err
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	return cert, certPEM, err
}

// certUsable reports whether a kept certificate names host and is valid for a while.
func certUsable(cert tls.Certificate, host string) bool {
	if len(cert.Certificate) == 0 {
		return false
	}
	c, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || time.Until(c.NotAfter) < certValidity/10 {
		return false
	}
	return c.VerifyHostname(host) == nil
}

// hostsFor lists the names a self-signed certificate covers: the loopback names and
// the host the server listens on.
func hostsFor(host string) (ips []net.IP, names []string) {
	ips = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	names = []string{"localhost"}
	if ip := net.ParseIP(host); ip != nil {
		if !slices.ContainsFunc(ips, ip.Equal) {
			ips = append(ips, ip)
		}
	} else if host != "" && host != "localhost" {
		names = append(names, host)
	}
	return ips, names
}

// selfSigned makes an ECDSA P-256 certificate that is its own CA, for host.
func selfSigned(host string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	ips, names := hostsFor(host)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "management example server", Organization: []string{"mgmt example"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           ips,
		DNSNames:              names,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	if certPEM == nil || keyPEM == nil {
		return nil, nil, errors.New("encoding the certificate failed")
	}
	return certPEM, keyPEM, nil
}
