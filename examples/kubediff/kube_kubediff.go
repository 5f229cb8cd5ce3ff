//go:build kubediff

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"k8s.io/apiextensions-apiserver/pkg/cmd/server"
	"k8s.io/klog/v2"
)

// kubeServer is etcd and k8s.io/apiextensions-apiserver running in this process.
type kubeServer struct {
	etcd     *embed.Etcd
	cancel   context.CancelFunc
	done     chan error
	URL      string
	client   *http.Client
	certs    *certSet
	stopOnce bool
}

// freePort returns a loopback port nothing listens on (it is closed again, so
// another process could take it first; on a test machine that does not happen).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startEtcd starts an etcd member on loopback ports with its data in dir.
func startEtcd(dir string) (*embed.Etcd, string, error) {
	var ports [2]int
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, "", err
		}
		ports[i] = p
	}
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[0])}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("starting etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		e.Close()
		return nil, "", errors.New("etcd not ready after a minute")
	}
	return e, client.String(), nil
}

// fakeKubeconfig is the kubeconfig the apiserver's delegated authentication,
// authorization and core informers are pointed at: nothing listens there, and none
// of them is needed (client certificates authenticate, system:masters is always
// allowed), as in apiextensions-apiserver's own integration tests.
const fakeKubeconfig = `apiVersion: v1
kind: Config
clusters:
- cluster:
    server: http://127.0.0.1:9
  name: none
contexts:
- context:
    cluster: none
    user: none
  name: none
current-context: none
users:
- name: none
  user:
    username: none
    password: none
`

// startKube starts etcd and the apiextensions-apiserver in dir and installs the
// CRDs. Its logs go to dir/apiserver.log.
func startKube(ctx context.Context, dir string, crds []map[string]any, progress func(string)) (*kubeServer, error) {
	logf, err := os.Create(filepath.Join(dir, "apiserver.log"))
	if err != nil {
		return nil, err
	}
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	for k, v := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := kfs.Set(k, v); err != nil {
			return nil, fmt.Errorf("klog flag %s: %w", k, err)
		}
	}
	klog.SetOutput(logf)

	k := &kubeServer{done: make(chan error, 1)}
	progress("starting etcd")
	e, etcdURL, err := startEtcd(filepath.Join(dir, "etcd"))
	if err != nil {
		return nil, err
	}
	k.etcd = e

	certs, err := makeCerts(dir)
	if err != nil {
		k.Stop()
		return nil, err
	}
	k.certs = certs
	kc := filepath.Join(dir, "fake.kubeconfig")
	if err := os.WriteFile(kc, []byte(fakeKubeconfig), 0o600); err != nil {
		k.Stop()
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		k.Stop()
		return nil, err
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--tls-cert-file=" + certs.ServerCert,
		"--tls-private-key-file=" + certs.ServerKey,
		"--client-ca-file=" + certs.CA,
		"--authentication-skip-lookup",
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--kubeconfig=" + kc,
		"--enable-priority-and-fairness=false",
		"--disable-admission-plugins=NamespaceLifecycle,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,MutatingAdmissionPolicy",
	}
	sctx, cancel := context.WithCancel(context.Background())
	k.cancel = cancel
	cmd := server.NewServerCommand(sctx, logf, logf)
	cmd.SetArgs(args)
	cmd.SilenceUsage = true
	progress("starting apiextensions-apiserver")
	go func() { k.done <- cmd.ExecuteContext(sctx) }()

	k.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
	k.client, err = certs.client()
	if err != nil {
		k.Stop()
		return nil, err
	}
	if err := k.waitReady(ctx); err != nil {
		k.Stop()
		return nil, fmt.Errorf("%w (log: %s)", err, logf.Name())
	}
	progress("installing CRDs")
	if err := k.installCRDs(ctx, crds); err != nil {
		k.Stop()
		return nil, err
	}
	return k, nil
}

func (k *kubeServer) get(ctx context.Context, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.URL+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// waitReady waits for /healthz, as apiextensions-apiserver's own test server does:
// /readyz stays 500 here, since the core informers point at the fake kubeconfig
// and never sync.
func (k *kubeServer) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(2 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		select {
		case err := <-k.done:
			return fmt.Errorf("apiextensions-apiserver stopped at start: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		code, body, err := k.get(ctx, "/healthz")
		if err == nil && code == http.StatusOK {
			return nil
		}
		last = fmt.Sprintf("%d %s %v", code, strings.TrimSpace(string(body)), err)
	}
	return fmt.Errorf("apiextensions-apiserver not ready after 2 minutes: last /healthz: %s", last)
}

// installCRDs creates the CRDs and waits until each is Established and served.
func (k *kubeServer) installCRDs(ctx context.Context, crds []map[string]any) error {
	t := k.Target()
	for _, crd := range crds {
		b, err := json.Marshal(crd)
		if err != nil {
			return err
		}
		r, err := t.Do(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", nil, string(b))
		if err != nil {
			return err
		}
		if r.Code != http.StatusCreated {
			return fmt.Errorf("creating CRD %v: %d %s", crd["metadata"], r.Code, r.Body)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		code, body, err := k.get(ctx, "/apis/"+Group+"/"+Version)
		if err == nil && code == http.StatusOK {
			var list struct {
				Resources []struct{ Name string } `json:"resources"`
			}
			if json.Unmarshal(body, &list) == nil {
				served := map[string]bool{}
				for _, r := range list.Resources {
					served[r.Name] = true
				}
				all := true
				for _, c := range crdKinds {
					all = all && served[c.Plural]
				}
				if all {
					return nil
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("the CRDs were not served within a minute")
}

// Target is the apiserver as a comparison target.
func (k *kubeServer) Target() *Target {
	return &Target{Name: "kube", Base: k.URL, Client: k.client}
}

// Stop ends the apiserver, then etcd.
func (k *kubeServer) Stop() {
	if k == nil || k.stopOnce {
		return
	}
	k.stopOnce = true
	if k.cancel != nil {
		k.cancel()
		select {
		case <-k.done:
		case <-time.After(30 * time.Second):
		}
	}
	if k.etcd != nil {
		k.etcd.Close()
	}
}

// client returns an HTTP client that trusts the CA and presents the
// system:masters certificate.
func (c *certSet) client() (*http.Client, error) {
	pair, err := tls.LoadX509KeyPair(c.ClientCert, c.ClientKey)
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(c.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no certificate in the CA file")
	}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:    &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		DisableCompression: true,
		ForceAttemptHTTP2:  false,
		TLSNextProto:       map[string]func(string, *tls.Conn) http.RoundTripper{},
	}}, nil
}
