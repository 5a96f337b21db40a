// Package openapi holds the OpenAPI 3.1 documents of lattice's two HTTP
// APIs, node.json (the ledger node) and cloud.json (the cloud platform's
// REST API), as the servers publish them at GET /openapi.json.
//
// They live in docs/ because they are documentation first; the servers
// embed them, and the API packages' tests validate every response they
// see against them (internal/testkit/openapitest), so they cannot drift from the
// code.
package openapi

import _ "embed"

// Node is the ledger node's API document.
//
//go:embed node.json
var Node []byte

// Cloud is the cloud platform REST API's document.
//
//go:embed cloud.json
var Cloud []byte
