package s3api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3log"
)

// Delivery of access log records (logging.go). Records wait in memory,
// by destination, and go into their target bucket as one object per
// destination every Options.AccessLogInterval, or as soon as one holds
// logFlushBytes. Delivery is best effort, as S3's is: records still in
// memory when the process dies are lost, a delivery that fails (the
// target was deleted, or passed to another owner) is dropped with a
// warning, and past logMaxHeld bytes waiting in all, or logMaxOwner for
// one account's buckets (so that requests to one account's buckets
// cannot crowd out the others' records), new records are dropped and
// counted. Wait delivers what is left, within logCloseTimeout. The store
// must outlive the endpoint: Wait before the store's Close.

const (
	logFlushBytes = 1 << 20  // a destination's records that make an object at once
	logMaxHeld    = 64 << 20 // records held in all, past which new ones are dropped
	logMaxOwner   = 16 << 20 // records held for one account's buckets
	// logDeliverTimeout bounds one delivery, logCloseTimeout the
	// deliveries of Wait.
	logDeliverTimeout = time.Minute
	logCloseTimeout   = time.Minute
)

// logUniqueSample is as long as the unique part of a log object's key,
// for the check of the longest key at PutBucketLogging.
var logUniqueSample = strings.Repeat("F", 16)

// logDest is where a record goes: the source bucket's owner and name and
// its logging configuration when the request was made.
type logDest struct {
	owner, source string
	cfg           s3log.Config
}

// logBatch is one destination's records waiting, of events on one day
// when the key names the events' day.
type logBatch struct {
	dest  logDest
	day   time.Time // the first record's time
	lines []byte
}

type logKey struct {
	dest logDest
	day  string // "" unless the key is partitioned by event time
}

// logSink holds the records and delivers them. Its goroutine starts with
// the first record and ends at close.
type logSink struct {
	st     *cloudstore.Store
	region string
	every  time.Duration
	now    func() time.Time
	log    *slog.Logger

	mu      sync.Mutex
	batches map[logKey]*logBatch
	held    int
	byOwner map[string]int // bytes held for each account
	dropped int64
	running bool
	closed  bool
	kick    chan struct{} // 1-buffered: a batch is full
	quit    chan struct{}
	done    chan struct{}
}

func newLogSink(st *cloudstore.Store, o Options) *logSink {
	return &logSink{st: st, region: o.Region, every: o.AccessLogInterval, now: o.Now, log: o.Logger,
		batches: map[logKey]*logBatch{}, byOwner: map[string]int{}, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// add queues one record line of a request made at t.
func (k *logSink) add(d logDest, t time.Time, line []byte) {
	key := logKey{dest: d}
	if d.cfg.Partitioned && d.cfg.DateSource == s3log.EventTime {
		key.day = t.UTC().Format(time.DateOnly)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return
	}
	if k.held+len(line) > logMaxHeld || k.byOwner[d.owner]+len(line) > logMaxOwner {
		k.dropped++
		return
	}
	b := k.batches[key]
	if b == nil {
		b = &logBatch{dest: d, day: t}
		k.batches[key] = b
	}
	b.lines = append(b.lines, line...)
	k.held += len(line)
	k.byOwner[d.owner] += len(line)
	if !k.running {
		k.running = true
		go k.loop()
	}
	if len(b.lines) >= logFlushBytes {
		select {
		case k.kick <- struct{}{}:
		default:
		}
	}
}

func (k *logSink) loop() {
	defer close(k.done)
	tick := time.NewTicker(k.every)
	defer tick.Stop()
	for {
		select {
		case <-k.quit:
			return
		case <-tick.C:
			k.deliver(context.Background(), 0)
		case <-k.kick:
			k.deliver(context.Background(), logFlushBytes)
		}
	}
}

// deliver delivers the batches that hold at least min bytes, until ctx
// ends.
func (k *logSink) deliver(ctx context.Context, min int) {
	k.mu.Lock()
	var due []*logBatch
	for key, b := range k.batches {
		if len(b.lines) >= min {
			due = append(due, b)
			delete(k.batches, key)
			k.held -= len(b.lines)
			if k.byOwner[b.dest.owner] -= len(b.lines); k.byOwner[b.dest.owner] == 0 {
				delete(k.byOwner, b.dest.owner)
			}
		}
	}
	dropped := k.dropped
	k.dropped = 0
	k.mu.Unlock()
	if dropped > 0 {
		k.log.Warn("access log records dropped: more were waiting for delivery than the sink holds", "records", dropped, "held_max_bytes", logMaxHeld)
	}
	for _, b := range due {
		k.put(ctx, b)
	}
}

// put delivers one batch as an object of its target bucket, in its
// owner's name; the target must still be the source owner's.
func (k *logSink) put(ctx context.Context, b *logBatch) {
	ctx, cancel := context.WithTimeout(ctx, logDeliverTimeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil { // the store closed under the endpoint
			k.log.Error("access log delivery failed; its records are dropped", "source", b.dest.source, "panic", p)
		}
	}()
	var u [8]byte
	rand.Read(u[:])
	now := k.now()
	c := b.dest.cfg
	key := c.Key(b.dest.owner, k.region, b.dest.source, b.day, now, strings.ToUpper(hex.EncodeToString(u[:])))
	_, err := k.st.Put(ctx, b.dest.owner, c.TargetBucket, key, bytes.NewReader(b.lines),
		cloudstore.PutOptions{ContentType: "text/plain", Now: now, Max: int64(len(b.lines))})
	if err != nil {
		k.log.Warn("access log delivery failed; its records are dropped", "source", b.dest.source, "target", c.TargetBucket,
			"key", key, "bytes", len(b.lines), "err", err)
	}
}

// close stops the sink after delivering every record it holds; records
// added after it are dropped.
func (k *logSink) close() {
	k.mu.Lock()
	wasClosed := k.closed
	k.closed = true
	running := k.running
	k.mu.Unlock()
	if running && !wasClosed {
		close(k.quit)
		<-k.done
	}
	ctx, cancel := context.WithTimeout(context.Background(), logCloseTimeout)
	defer cancel()
	k.deliver(ctx, 0)
}
