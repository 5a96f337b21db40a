package s3api

import (
	"bytes"
	"net/http"
	"sync"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// parsedCache keeps each bucket's parsed configuration of one kind (its
// policy, its CORS rules) with the bytes it was parsed from: a request
// reads the stored bytes, so that a change made anywhere (the REST API's
// bucket deletion included) is seen at once, but parses them only when
// they changed. It is safe for concurrent use.
type parsedCache[T any] struct{ m sync.Map } // bucket name -> *parsed[T]

type parsed[T any] struct {
	raw []byte
	v   T
}

// get returns raw parsed, from the cache when raw is what it holds for
// bucket. A nil raw (no configuration) is the zero T.
func (c *parsedCache[T]) get(bucket string, raw []byte, parse func([]byte) (T, error)) (T, error) {
	var zero T
	if raw == nil {
		c.m.Delete(bucket)
		return zero, nil
	}
	if p, ok := c.m.Load(bucket); ok && bytes.Equal(p.(*parsed[T]).raw, raw) {
		return p.(*parsed[T]).v, nil
	}
	v, err := parse(raw)
	if err != nil {
		return zero, err
	}
	c.put(bucket, raw, v)
	return v, nil
}

// put records that bucket's configuration is raw, parsed as v.
func (c *parsedCache[T]) put(bucket string, raw []byte, v T) { c.m.Store(bucket, &parsed[T]{raw, v}) }

// drop forgets bucket's configuration.
func (c *parsedCache[T]) drop(bucket string) { c.m.Delete(bucket) }

// xmlDoc is a parsed bucket configuration that answers as S3's XML.
type xmlDoc interface{ XML(xmlns string) []byte }

// keptConfig is a bucket configuration of one kind kept as its document
// and cached parsed (CORS rules, a website): what the GET, the PUT and
// the DELETE of its subresource share. The PUT checks the document, as
// each kind has its own errors, then stores it with store.
type keptConfig[T xmlDoc] struct {
	kind  cloudstore.ConfigKind
	parse func([]byte) (T, error)
	none  *Error // the GET's answer when the bucket has none
	cache parsedCache[T]
}

// read returns the bucket called name, whoever owns it, and its parsed
// configuration (the zero T when it has none).
func (k *keptConfig[T]) read(s *Server, name string) (cloudstore.Bucket, T, error) {
	bk, raw, err := s.st.BucketWithConfig(name, k.kind)
	if err != nil {
		var zero T
		return bk, zero, err
	}
	c, err := k.cache.get(name, raw, k.parse)
	return bk, c, err
}

// get answers the GET: the configuration of r's bucket, or k.none.
func (k *keptConfig[T]) get(s *Server, w http.ResponseWriter, r *request) error {
	data, err := s.st.BucketConfig(r.account, r.bucket, k.kind)
	if err != nil {
		return err
	}
	if data == nil {
		return k.none
	}
	c, err := k.cache.get(r.bucket, data, k.parse)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(c.XML(xmlns))
	return err
}

// store keeps data, checked and parsed as v, as r's bucket's
// configuration (a synced write), and answers 200.
func (k *keptConfig[T]) store(s *Server, w http.ResponseWriter, r *request, data []byte, v T) error {
	if err := s.st.SetBucketConfig(r.account, r.bucket, k.kind, data); err != nil {
		return err
	}
	k.cache.put(r.bucket, data, v)
	w.WriteHeader(http.StatusOK)
	return nil
}

// remove answers the DELETE: 204, whether there was one or not.
func (k *keptConfig[T]) remove(s *Server, w http.ResponseWriter, r *request) error {
	if err := s.st.SetBucketConfig(r.account, r.bucket, k.kind, nil); err != nil {
		return err
	}
	k.cache.drop(r.bucket)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
