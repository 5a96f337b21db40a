package cli

// Tests of the cloud platform's Prometheus metrics as `lattice cloud`
// serves them: at GET /metrics on the REST API by default, on a listener
// of their own with --metrics.

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var cloudMetricsReady = regexp.MustCompile(`lattice cloud: metrics (http://\S+)`)

// cloudGet fetches url with the API key (none if ""), and returns the status
// and body.
func cloudGet(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

func TestCloudMetrics(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		ownPort bool // whether the metrics have a listener of their own
	}{
		{"on the REST API", nil, false},
		{"with --metrics", []string{"--metrics", "127.0.0.1:0"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("LATTICE_API", "")
			t.Setenv("LATTICE_METRICS", "")
			dir := filepath.Join(t.TempDir(), "cloud")
			s := startServer(t, cloudMetricsReady, append([]string{"cloud", "--data", dir, "--api", "127.0.0.1:0"}, tt.args...)...)
			metricsURL := s.url
			m := cloudReady.FindStringSubmatch(s.stdout.String())
			if m == nil {
				t.Fatalf("no REST API in the banner %q", s.stdout.String())
			}
			apiURL := m[1]
			if got := strings.HasPrefix(metricsURL, apiURL+"/"); got == tt.ownPort {
				t.Errorf("metrics at %s, REST API at %s: got them on the API's port %v, want %v", metricsURL, apiURL, got, !tt.ownPort)
			}
			data, err := os.ReadFile(filepath.Join(dir, "admin-api-key"))
			if err != nil {
				t.Fatal(err)
			}
			admin := strings.TrimSpace(string(data))
			if code, _ := cloudGet(t, apiURL+"/api/storage/buckets", admin); code != http.StatusOK {
				t.Fatalf("GET buckets: got %d, want 200", code)
			}
			s3 := regexp.MustCompile(`lattice cloud: S3 endpoint (http://\S+) `).FindStringSubmatch(s.stdout.String())
			if s3 == nil {
				t.Fatalf("no S3 endpoint in the banner %q", s.stdout.String())
			}
			checkS3Endpoint(t, apiURL, s3[1], admin) // an S3 CreateBucket

			// Scraped without a key, the metrics count those requests, by
			// server, and hold the store's sizes.
			code, body := cloudGet(t, metricsURL, "")
			if code != http.StatusOK {
				t.Fatalf("GET %s: got %d, want 200:\n%s", metricsURL, code, body)
			}
			for _, want := range []string{
				`lattice_http_requests_total{op="GET /api/storage/buckets",server="cloud",status="200"} 1`,
				`lattice_http_requests_total{op="CreateBucket",server="s3",status="200"} 1`,
				`lattice_http_requests_total{op="POST /api/storage/keys",server="cloud",status="201"} 1`,
				"lattice_http_request_duration_seconds_bucket{",
				"lattice_cloud_store_disk_bytes ",
				"lattice_cloud_store_buckets 1",
				"lattice_cloud_store_objects 0",
				"lattice_cloud_store_object_bytes 0",
				"lattice_cloud_store_read_only 0",
				"lattice_dns_zones 0",
				"lattice_dns_queries_total 0",
				"go_goroutines ",
			} {
				if !strings.Contains(body, want) {
					t.Errorf("the metrics lack %q:\n%s", want, body)
				}
			}

			// With a port of their own, the REST API has no /metrics: it
			// answers like any unknown path.
			if tt.ownPort {
				if code, _ := cloudGet(t, apiURL+"/metrics", ""); code != http.StatusUnauthorized {
					t.Errorf("GET /metrics on the API without a key: got %d, want 401", code)
				}
				if code, _ := cloudGet(t, apiURL+"/metrics", admin); code != http.StatusNotFound {
					t.Errorf("GET /metrics on the API with a key: got %d, want 404", code)
				}
				if code, _ := cloudGet(t, strings.TrimSuffix(metricsURL, "/metrics")+"/api/storage/buckets", admin); code != http.StatusNotFound {
					t.Errorf("the metrics port serves the API: got %d, want 404", code)
				}
			}
			if code := s.stop(); code != 0 {
				t.Errorf("cloud exited %d after SIGINT, want 0\nstderr: %s", code, s.stderr.String())
			}
		})
	}
}

// TestCloudMetricsPortInUse: a --metrics address in use fails before any
// state is created, and the error names the flag.
func TestCloudMetricsPortInUse(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LATTICE_API", "")
	t.Setenv("LATTICE_METRICS", "")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tests := []struct {
		name string
		args []string
		env  string
	}{
		{"flag", []string{"--metrics", taken.Addr().String()}, ""},
		{"environment", nil, taken.Addr().String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LATTICE_METRICS", tt.env)
			dir := filepath.Join(t.TempDir(), "cloud")
			r := run(t, append([]string{"cloud", "--data", dir, "--api", "127.0.0.1:0"}, tt.args...)...)
			wantFail(t, r, 1, "listen "+taken.Addr().String(), "--metrics", "LATTICE_METRICS")
			if _, err := os.Stat(dir); err == nil {
				t.Error("the failed start created the data directory")
			}
		})
	}
}
