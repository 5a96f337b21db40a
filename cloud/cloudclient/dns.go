package cloudclient

import (
	"context"
	"fmt"
	"net/url"

	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// CreateZone creates a DNS zone (such as "example.com") with NS records
// for the platform's name servers at its apex.
func (c *Client) CreateZone(ctx context.Context, name string) (dnszone.ZoneInfo, error) {
	var z dnszone.ZoneInfo
	return z, c.do(ctx, "POST", "/api/dns/zones", map[string]string{"name": name}, &z)
}

// Zones lists a page of the account's zones, by name.
func (c *Client) Zones(ctx context.Context, page, perPage int) (cloudwire.List[dnszone.ZoneInfo], error) {
	var l cloudwire.List[dnszone.ZoneInfo]
	return l, c.do(ctx, "GET", fmt.Sprintf("/api/dns/zones?page=%d&per_page=%d", page, perPage), nil, &l)
}

// Zone returns one zone by its ID.
func (c *Client) Zone(ctx context.Context, id string) (dnszone.ZoneInfo, error) {
	var z dnszone.ZoneInfo
	return z, c.do(ctx, "GET", "/api/dns/zones/"+url.PathEscape(id), nil, &z)
}

// DeleteZone deletes a zone and its records.
func (c *Client) DeleteZone(ctx context.Context, id string) error {
	return c.do(ctx, "DELETE", "/api/dns/zones/"+url.PathEscape(id), nil, nil)
}

// RecordFilter narrows a record listing: Name (relative to the zone, "@"
// or full) and Type; empty fields match every record.
type RecordFilter struct{ Name, Type string }

// Records lists a page of a zone's records, by name, type and value.
func (c *Client) Records(ctx context.Context, zoneID string, f RecordFilter, page, perPage int) (cloudwire.List[dnszone.Record], error) {
	q := url.Values{"page": {fmt.Sprint(page)}, "per_page": {fmt.Sprint(perPage)}}
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	if f.Type != "" {
		q.Set("type", f.Type)
	}
	var l cloudwire.List[dnszone.Record]
	return l, c.do(ctx, "GET", "/api/dns/zones/"+url.PathEscape(zoneID)+"/records?"+q.Encode(), nil, &l)
}

// AddRecord adds a record to a zone; the server bumps the zone's serial.
func (c *Client) AddRecord(ctx context.Context, zoneID string, in dnszone.Input) (dnszone.Record, error) {
	var r dnszone.Record
	return r, c.do(ctx, "POST", "/api/dns/zones/"+url.PathEscape(zoneID)+"/records", in, &r)
}

// UpdateRecord replaces a record whole (fields left out take their
// defaults, as on creation).
func (c *Client) UpdateRecord(ctx context.Context, zoneID, id string, in dnszone.Input) (dnszone.Record, error) {
	var r dnszone.Record
	return r, c.do(ctx, "PUT", "/api/dns/zones/"+url.PathEscape(zoneID)+"/records/"+url.PathEscape(id), in, &r)
}

// DeleteRecord deletes a record of a zone.
func (c *Client) DeleteRecord(ctx context.Context, zoneID, id string) error {
	return c.do(ctx, "DELETE", "/api/dns/zones/"+url.PathEscape(zoneID)+"/records/"+url.PathEscape(id), nil, nil)
}

// Record returns one record of a zone.
func (c *Client) Record(ctx context.Context, zoneID, id string) (dnszone.Record, error) {
	var r dnszone.Record
	return r, c.do(ctx, "GET", "/api/dns/zones/"+url.PathEscape(zoneID)+"/records/"+url.PathEscape(id), nil, &r)
}
