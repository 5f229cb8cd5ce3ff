// Package jsonscan reads and writes JSON text as bytes, without decoding it into Go
// values: the one JSON byte scanner of the module.
//
// It accepts and produces exactly what encoding/json does: the same grammar and
// nesting limit ([MaxDepth]), strings decoded the way encoding/json decodes them
// (invalid UTF-8 and lone surrogates become U+FFFD) and encoded the way json.Marshal
// encodes them (<, >, &, U+2028 and U+2029 escaped). Nothing here allocates but
// Unquote and the functions that append to a slice.
//
// Positions are byte offsets into the text. The token scanners ([ScanString],
// [ScanNumber], [ScanLiteral]) take the offset of a token's first byte and return the
// offset after it; on invalid text they return the offset of the offending byte
// and [ErrEOF] or a [*SyntaxError] that says what was being read there, so that a
// decoder can report it in its own words. [SkipValue] validates a whole value.
// [EachMember] trusts that the text is valid, as what encoding/json writes is, and
// only finds where values end: it serves code that reads its own encodings.
//
// It is written for the request decoder in package resource, which checks a body
// before it decodes it, and for the store, which finds members in stored objects and
// compares and writes managedFields without decoding them. It imports only the
// standard library.
package jsonscan
