package s3api

import (
	"bytes"
	"sync"
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
