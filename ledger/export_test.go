package ledger

// Hooks for the external tests of package ledger.
var (
	ParseCanonicalForTest = parseCanonical
	ParseReflectForTest   = parseReflect
)
