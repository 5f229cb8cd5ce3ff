package httpapi

import (
	"bytes"
	"errors"
	"fmt"
)

// mediaTypeProtobuf is the protobuf media type of Kubernetes' built-in kinds, in
// which kubectl sends its reviews.
const mediaTypeProtobuf = "application/vnd.kubernetes.protobuf"

// protobufMagic opens every protobuf body of Kubernetes.
var protobufMagic = []byte("k8s\x00")

var errProtobuf = errors.New("malformed protobuf")

// protoFields calls fn for each length-delimited field of a protobuf message, with
// its number and bytes; varint and fixed-size fields are skipped. Groups are refused.
func protoFields(b []byte, fn func(num uint64, data []byte)) error {
	for len(b) > 0 {
		key, n := protoVarint(b)
		if n == 0 {
			return errProtobuf
		}
		b = b[n:]
		num, wire := key>>3, key&7
		if num == 0 {
			return errProtobuf
		}
		switch wire {
		case 0: // varint
			_, n := protoVarint(b)
			if n == 0 {
				return errProtobuf
			}
			b = b[n:]
		case 1: // 64-bit
			if len(b) < 8 {
				return errProtobuf
			}
			b = b[8:]
		case 5: // 32-bit
			if len(b) < 4 {
				return errProtobuf
			}
			b = b[4:]
		case 2: // length-delimited
			l, n := protoVarint(b)
			if n == 0 || l > uint64(len(b)-n) {
				return errProtobuf
			}
			fn(num, b[n:n+int(l)])
			b = b[n+int(l):]
		default:
			return errProtobuf
		}
	}
	return nil
}

// protoVarint reads a varint; n is 0 when b does not hold a whole one.
func protoVarint(b []byte) (v uint64, n int) {
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// decodeProtobufEnvelope reads a Kubernetes protobuf body: the magic, then a
// runtime.Unknown holding the TypeMeta (apiVersion, kind) and the object's bytes.
func decodeProtobufEnvelope(body []byte) (apiVersion, kind string, raw []byte, err error) {
	rest, ok := bytes.CutPrefix(body, protobufMagic)
	if !ok {
		return "", "", nil, fmt.Errorf("%w: the body does not start with the Kubernetes protobuf prefix", errProtobuf)
	}
	var inner error
	err = protoFields(rest, func(num uint64, data []byte) {
		switch num {
		case 1: // typeMeta
			inner = errors.Join(inner, protoFields(data, func(num uint64, data []byte) {
				switch num {
				case 1:
					apiVersion = string(data)
				case 2:
					kind = string(data)
				}
			}))
		case 2: // raw
			raw = data
		}
	})
	if err == nil {
		err = inner
	}
	return apiVersion, kind, raw, err
}

// decodeAccessReviewSpec reads the spec of a SelfSubjectAccessReview in protobuf
// (authorization.k8s.io/v1): its resource or non-resource attributes.
func decodeAccessReviewSpec(raw []byte, out *selfSubjectAccessReview) error {
	var inner []error
	err := protoFields(raw, func(num uint64, data []byte) {
		if num != 2 { // spec
			return
		}
		inner = append(inner, protoFields(data, func(num uint64, data []byte) {
			switch num {
			case 1:
				ra := &resourceAttributes{}
				out.Spec.ResourceAttributes = ra
				inner = append(inner, protoFields(data, func(num uint64, data []byte) {
					v := string(data)
					switch num {
					case 1:
						ra.Namespace = v
					case 2:
						ra.Verb = v
					case 3:
						ra.Group = v
					case 4:
						ra.Version = v
					case 5:
						ra.Resource = v
					case 6:
						ra.Subresource = v
					case 7:
						ra.Name = v
					}
				}))
			case 2:
				nra := &nonResourceAttributes{}
				out.Spec.NonResourceAttributes = nra
				inner = append(inner, protoFields(data, func(num uint64, data []byte) {
					switch num {
					case 1:
						nra.Path = string(data)
					case 2:
						nra.Verb = string(data)
					}
				}))
			}
		}))
	})
	return errors.Join(append([]error{err}, inner...)...)
}
