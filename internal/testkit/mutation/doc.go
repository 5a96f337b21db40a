// Package mutation holds the project's curated mutants: realistic bugs in
// the code whose failures cost the most (the ledger rules, the write
// engine's durability, signature checks, S3 authorisation, storage
// tenancy and durability), each with the tests that must catch it. Run
// them with
//
//	go test -tags mutation ./mutation
//
// Each mutant is applied through go test's -overlay, passed in GOFLAGS
// so that binaries the tests build are mutated too; the tree is never
// changed. A mutant that no test catches fails the run. docs/testing.md
// explains how to add one and gives the mutation scores measured with
// gremlins.
package mutation
