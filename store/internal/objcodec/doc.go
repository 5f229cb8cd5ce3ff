// Package objcodec is the store's object engine: it normalizes, encodes, splices and
// copies objects fast, byte for byte as encoding/json would, and keeps decoded objects
// by revision ([Cache]) so that reads copy them instead of decoding again. It holds no rules: what
// a write may change, the size limit, admission and the Status errors live in
// package store, which calls objcodec and applies them.
//
// Normalizing and encoding give exactly what encoding/json gives (a round trip, an
// encoding) or answer "no", and the caller then takes encoding/json. Coverage is
// compiled once per type: structs of strings, integers, bools, pointers, slices,
// string-keyed maps, resource.Time and json.RawMessage, without custom JSON methods.
//
// # Normalize
//
// A write in the store starts from a copy of the caller's object. That copy used to be a JSON
// round trip, and callers rely on what the round trip does beyond copying: times are
// in UTC at whole seconds, a pointer to a zero time is nil, an empty list or map under
// omitempty is nil, and an object that cannot be encoded is refused with 400. The
// caller gets back the object as stored, so the copy must be exactly what decoding
// its encoding gives.
//
// [Copy] gets there without encoding: the kind's own DeepCopyResource (or the
// reflective copy), then a normalizer compiled per type that does in place what the
// round trip would do. The normalizer covers the types whose JSON form it fully knows
// (structs of strings, numbers, bools, pointers, slices, string-keyed maps,
// resource.Time and json.RawMessage); for any other type, and for the rare value
// whose round trip changes more than the rules above (invalid UTF-8, a time outside
// the years 0001-9999, a json.RawMessage not as json.Marshal writes it), it answers
// "no" and the copy goes through JSON as before.
//
// # Encode
//
// Every write encodes the object it stores, and encoding/json is the largest part of
// a write's CPU: it reaches every value through its generic reflection, allocates for
// every map entry and sorts map keys through reflection again. [Encode]
// writes the same bytes through an encoder compiled per type, for the types the normalizer
// covers (above), which are the ones whose JSON form is fully known here. It
// answers "no" for any value it cannot write exactly as json.Marshal does (a string
// that needs escaping goes through json.Marshal on its own; a time outside the years
// RFC 3339 can write, a json.RawMessage not as json.Marshal writes it, or anything
// else unusual turns the whole object over to json.Marshal).
//
// The generic objects of kinds registered at run time (resource.RawObject) have JSON
// methods of their own, but a form fully known here: Copy and Encode take them
// through their metadata's normalizer and encoder and keep their other members, raw
// JSON already, as they are when json.Marshal would write them so (else encoding/json
// does it).
//
// # Decode
//
// Every read that misses the cache (above all a list of more objects than the cache
// holds) decodes the stored bytes, and encoding/json's decode costs three times
// what copying a cached object does: it checks the whole text in one pass, then
// walks it again through its generic reflection, looking up every key in a table
// of folded names. [Decode] fills an object through a decoder compiled per type,
// for the types the encoder covers, and gives exactly what json.Unmarshal gives
// into a zero object: nil and empty maps and lists, null kept as the zero value,
// resource.Time and json.RawMessage as their UnmarshalJSON leave them. It answers
// "no" where it is not certain of that, and the caller then runs json.Unmarshal on
// a fresh object: invalid JSON or trailing bytes, a key that names a field only in
// another case or with escapes, a field given twice, a number the field's integer
// type refuses, a string with invalid UTF-8 or a lone surrogate (which
// encoding/json replaces), a time with escapes, a type it does not cover
// (resource.RawObject keeps its own UnmarshalJSON).
//
// # Splice
//
// A create or update encodes the object twice: once to find what it changes (the
// managedFields bookkeeping and the generation), once more with the managedFields and
// generation that follow from it. The second encoding differs from the first only
// there, and managedFields are the part of an object encoding/json is slowest at (it
// validates and compacts every fieldsV1 again). So, for kinds with the plain struct
// encoding, the first encoding leaves managedFields out, and the second is the first
// with the generation and the new managedFields written in, byte for byte what
// json.Marshal writes for the whole object. Anything else (a mutating hook, a kind
// the splice does not know, a value it cannot write exactly) takes json.Marshal.
// [SpliceMeta] does that splice, [Spliceable] says which types it applies to, and
// [AppendManagedFields] and [ManagedFieldsBound] let the caller apply its size limit
// to the managedFields the first encoding left out.
//
// # Copy
//
// [DeepCopy], [DeepCopyInto] and [CopierFor] copy objects that share no memory with
// their source, through the kind's own DeepCopyResource where it has one and a copier
// compiled per type otherwise. The store hands out only such copies of the objects
// it caches.
package objcodec
