package platform

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/kms"
	"github.com/latticenet/lattice/cloud/storage/s3api"
	"github.com/latticenet/lattice/internal/run/httpmetrics"
	"github.com/latticenet/lattice/internal/run/httpserve"
)

// StorageConfig configures the storage service.
type StorageConfig struct {
	S3 string // the S3 endpoint's address
	// Website is the address of the S3 website endpoint, which serves
	// the static sites of buckets that have a website configuration
	// (s3api.Website); "" runs none. WebsiteDomain is its domain:
	// BUCKET.WebsiteDomain is BUCKET's site; default DefaultWebsiteDomain.
	Website, WebsiteDomain string
	// AccessLogInterval is how often server access log records are
	// delivered (s3api.Options.AccessLogInterval).
	AccessLogInterval time.Duration
	// KMSMasterKey is the file of the master key that seals the key
	// service's keys; "" is DATA/kms-master.key, made on first start.
	// The environment's LATTICE_KMS_MASTER_KEY (the key in base64), when
	// set, is used instead of either. KMSPreviousMasterKey, when set,
	// is the file of the master key being rotated out: keys still
	// sealed under it are sealed again under the new one at start.
	KMSMasterKey, KMSPreviousMasterKey string
}

// DefaultWebsiteDomain is the website endpoint's default domain: under
// localhost, so that BUCKET.s3-website.localhost reaches a local endpoint
// without any DNS record.
const DefaultWebsiteDomain = "s3-website.localhost"

// masterKeyEnv holds the key service's master key itself, in base64.
const masterKeyEnv = "LATTICE_KMS_MASTER_KEY"

// openKMS opens the built-in key service on st with the master key
// cfg names.
func (s *Storage) openKMS(dir string) error {
	var master []byte
	var err error
	file := "" // the master key's file, if it is in one
	switch env, path := os.Getenv(masterKeyEnv), s.cfg.KMSMasterKey; {
	case env != "":
		if master, err = kms.ParseMasterKey([]byte(env)); err != nil {
			return fmt.Errorf("%s: %w", masterKeyEnv, err)
		}
	case path != "":
		master, err = kms.LoadMasterKey(path, false)
		file = path
	default:
		path = filepath.Join(dir, "kms-master.key")
		_, serr := os.Stat(path)
		if errors.Is(serr, os.ErrNotExist) {
			if stored, err := s.st.KMSKeysStored(); err != nil {
				return err
			} else if stored {
				return fmt.Errorf("kms: %s is missing, but the database holds keys sealed under it: put the master key back there (or give it with --kms-master-key or %s); a new one would open none of them", path, masterKeyEnv)
			}
		}
		master, err = kms.LoadMasterKey(path, true)
		file = path
	}
	if err != nil {
		return err
	}
	if file != "" {
		s.warnIfExposed("the key service's master key", file)
	}
	var previous []byte
	if s.cfg.KMSPreviousMasterKey != "" {
		if previous, err = kms.LoadMasterKey(s.cfg.KMSPreviousMasterKey, false); err != nil {
			return err
		}
		s.warnIfExposed("the key service's previous master key", s.cfg.KMSPreviousMasterKey)
	}
	l, err := s.st.OpenKMS(master, previous)
	if err != nil {
		return err
	}
	s.kms = l
	s.log.Info("key service open", "master_key", l.MasterFingerprint(), "keys_sealed_again", l.Resealed())
	if previous != nil && l.Resealed() == 0 {
		s.log.Info("no key was sealed under the previous master key (any more): drop --kms-previous-master-key", "previous_master_key", kms.Fingerprint(previous))
	}
	return nil
}

// warnIfExposed warns, at every start, when other users may read the file
// of a secret key. It does not refuse, as wallet keys are refused: the file
// may be a secret store's mount whose mode the operator sets elsewhere, and
// a platform that ran yesterday must not stop at its next start for it.
func (s *Storage) warnIfExposed(what, path string) {
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		s.log.Warn(what+" can be read by other users of this host: chmod 600 it, or mount it with mode 0400",
			"path", path, "mode", fmt.Sprintf("%04o", perm))
	}
}

// Storage is the storage service: the object store (DATA/meta,
// DATA/objects), its lifecycle sweeper, and the S3-compatible endpoint.
// Its REST routes are cloudapi's own.
type Storage struct {
	cfg   StorageConfig
	log   *slog.Logger
	spare httpserve.Spare
	ln    net.Listener
	web   net.Listener // the website endpoint's; nil when it runs none
	st    *cloudstore.Store
	kms   *kms.Local
	s3    *s3api.Server
	stop  context.CancelFunc
	swept chan struct{}
}

// NewStorage returns the storage service.
func NewStorage(cfg StorageConfig) *Storage { return &Storage{cfg: cfg} }

// SweepInterval is how often expired objects are deleted.
const SweepInterval = 10 * time.Minute

func (s *Storage) Name() string { return "storage" }

func (s *Storage) Listen() (err error) {
	if s.ln, err = httpserve.Listen(s.cfg.S3, "s3", "LATTICE_S3"); err != nil {
		return err
	}
	if s.cfg.Website != "" {
		if s.web, err = httpserve.Listen(s.cfg.Website, "s3-website", "LATTICE_S3_WEBSITE"); err != nil {
			s.ln.Close()
			s.ln = nil
			return err
		}
	}
	return nil
}

// Provision opens the object store and moves into the accounts store,
// once, the accounts and API keys that versions before it kept there.
func (s *Storage) Provision(p *Platform) error {
	s.log, s.spare = p.Logger().With("service", "cloud"), p.Spare()
	st, err := cloudstore.OpenDir(p.Dir(), s.log)
	if err != nil {
		return err
	}
	s.st = st
	s.warnIfExposed("the store's secret key", filepath.Join(p.Dir(), "secret.key"))
	if err := s.openKMS(p.Dir()); err != nil {
		return err
	}
	if err := s.moveAccounts(p); err != nil {
		return err
	}
	p.Registry().MustRegister(storeCollector{st: st, log: s.log})
	s.s3 = s3api.New(st, s3api.Options{Logger: p.Logger().With("service", "s3"), Region: S3Region,
		Metrics: httpmetrics.New(p.Registry(), "s3"), AccessLogInterval: s.cfg.AccessLogInterval,
		AccountExists: func(name string) (bool, error) {
			_, err := p.Accounts().Account(name)
			if errors.Is(err, accounts.ErrNotFound) {
				return false, nil
			}
			return err == nil, err
		}})
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.swept = cancel, make(chan struct{})
	go func() {
		defer close(s.swept)
		st.RunLifecycle(ctx, SweepInterval, time.Now, s.log)
	}()
	return nil
}

func (s *Storage) moveAccounts(p *Platform) error {
	old, err := s.st.Legacy()
	if err == nil {
		err = p.Accounts().Import(old.Keys, old.Accounts, old.AdminKeyID)
	}
	if err == nil && (len(old.Keys) > 0 || len(old.Accounts) > 0 || old.AdminKeyID != "") {
		s.log.Info("moved the accounts and API keys out of the object store", "keys", len(old.Keys), "accounts", len(old.Accounts))
		err = s.st.DropLegacy()
	}
	if err != nil {
		return fmt.Errorf("moving the accounts and API keys to %s: %w", filepath.Join(p.Dir(), "accounts"), err)
	}
	return nil
}

func (s *Storage) Validate() error { return nil }

// Routes adds nothing: storage's routes are cloudapi's own.
func (s *Storage) Routes(*cloudapi.Server) {}

// Serve serves the S3 endpoint, and its website endpoint if it has an
// address. Either one's end (its context's, or a failure) ends both.
func (s *Storage) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 2)
	servers := 1
	go func() { done <- httpserve.Serve(ctx, s.log, s.ln, s.s3, httpserve.Options{Spare: s.spare}) }()
	if s.web != nil {
		servers++
		site := s.s3.Website(s3api.WebsiteOptions{Domain: s.WebsiteDomain()})
		go func() {
			done <- httpserve.Serve(ctx, s.log.With("endpoint", "s3-website"), s.web, site, httpserve.Options{Spare: s.spare})
		}()
	}
	var err error
	for range servers {
		if e := <-done; err == nil {
			err = e
		}
		cancel()
	}
	// The website's requests are the S3 endpoint's too: both have ended
	// before Wait delivers the access logs.
	s.s3.Wait()
	return err
}

func (s *Storage) Addrs() map[string]string {
	addrs := map[string]string{"S3": "http://" + s.ln.Addr().String()}
	if s.web != nil {
		addrs["S3 website"] = "http://" + s.web.Addr().String()
	}
	return addrs
}

// WebsiteDomain is the website endpoint's domain: BUCKET.WebsiteDomain()
// serves BUCKET's site.
func (s *Storage) WebsiteDomain() string {
	if s.cfg.WebsiteDomain == "" {
		return DefaultWebsiteDomain
	}
	return s.cfg.WebsiteDomain
}

// S3Addr is the S3 endpoint's host:port, as bound.
func (s *Storage) S3Addr() string { return s.ln.Addr().String() }

// Store is the object store; set from Provision on.
func (s *Storage) Store() *cloudstore.Store { return s.st }

// KMS is the built-in key service; set from Provision on.
func (s *Storage) KMS() *kms.Local { return s.kms }

func (s *Storage) Close() error {
	if s.stop != nil {
		s.stop()
		<-s.swept
	}
	var err error
	if s.st != nil {
		err = s.st.Close()
	}
	if s.ln != nil {
		s.ln.Close()
	}
	if s.web != nil {
		s.web.Close()
	}
	return err
}

// storeCollector gives Prometheus the object store's sizes, read at each
// scrape (docs/operations.md lists them).
type storeCollector struct {
	st  *cloudstore.Store
	log *slog.Logger
}

var (
	storeDiskBytes = prometheus.NewDesc("lattice_cloud_store_disk_bytes",
		"Bytes the metadata database (Pebble, in DATA/meta) takes on disk; object bodies over 64 KiB, in DATA/objects, are not included.", nil, nil)
	storeBuckets = prometheus.NewDesc("lattice_cloud_store_buckets",
		"Buckets, of all accounts.", nil, nil)
	storeObjects = prometheus.NewDesc("lattice_cloud_store_objects",
		"Objects in all buckets.", nil, nil)
	storeObjectBytes = prometheus.NewDesc("lattice_cloud_store_object_bytes",
		"Sum of the sizes of all objects (a copy counts again, though it shares its body on disk).", nil, nil)
	storeReadOnly = prometheus.NewDesc("lattice_cloud_store_read_only",
		"1 once a failed disk write has made the store read-only (until a restart), else 0.", nil, nil)
)

func (storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{storeDiskBytes, storeBuckets, storeObjects, storeObjectBytes, storeReadOnly} {
		ch <- d
	}
}

func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	readOnly := 0.0
	if c.st.Err() != nil {
		readOnly = 1
	}
	ch <- prometheus.MustNewConstMetric(storeReadOnly, prometheus.GaugeValue, readOnly)
	ch <- prometheus.MustNewConstMetric(storeDiskBytes, prometheus.GaugeValue, float64(c.st.DiskUsage()))
	t, err := c.st.Totals()
	if err != nil {
		// The scrape goes on without the totals rather than failing.
		c.log.Warn("metrics: reading the store's totals", "err", err)
		return
	}
	ch <- prometheus.MustNewConstMetric(storeBuckets, prometheus.GaugeValue, float64(t.Buckets))
	ch <- prometheus.MustNewConstMetric(storeObjects, prometheus.GaugeValue, float64(t.Objects))
	ch <- prometheus.MustNewConstMetric(storeObjectBytes, prometheus.GaugeValue, float64(t.Bytes))
}
