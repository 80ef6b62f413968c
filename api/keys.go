package api

import "strconv"

// The store keeps one table of idempotency records for two senders: the
// Idempotency-Key header of POST /v1/jobs, and webhook deliveries. Each
// stored key names its source and parts so that no two requests share one:
// a producer must not be able to claim a delivery before the sender's
// arrives, nor one hook another's, whatever ':' names and ids contain.
//
//	job:<Idempotency-Key>
//	hook/<len(name)>:<name>/<by>:<value>
//
// The hook layout reads back unambiguously: the digits up to the first ':'
// give the name's length, the name is that many bytes, and <by> (hookByID,
// hookByBody) holds no ':'. No job key starts "hook/", and no key of the
// earlier layout ("hook:<name>:<id>") does either, so records written before
// an upgrade can cause no false duplicate: they are never read again and
// expire within their dedupe window.

// jobKey is the stored key of an Idempotency-Key header.
func jobKey(key string) string { return "job:" + key }

// What a hook's dedupe record is keyed by.
const (
	hookByID   = "id"   // the sender's delivery id
	hookByBody = "body" // the SHA-256 of the signed body, in hex
)

// hookKey is the stored key of a delivery to hook, by id or body.
func hookKey(hook, by, value string) string {
	return "hook/" + strconv.Itoa(len(hook)) + ":" + hook + "/" + by + ":" + value
}
