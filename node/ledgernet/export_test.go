package ledgernet

// EncodeBlocks lets external tests build blocks messages.
var EncodeBlocks = encodeBlocks
