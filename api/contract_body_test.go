package api_test

import (
	"bytes"
	"fmt"
	"mime"
	"net/url"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// operation is the pointer of the operation at path (a template of the
// spec, "/v1/jobs/{id}") and method.
func operation(path, method string) string {
	return "/paths/" + escape(path) + "/" + strings.ToLower(method)
}

// checkRequestBody checks a request's body against its operation's
// requestBody: declared when sent, present when required, of a declared
// media type, valid against that media type's schema.
func (k *contract) checkRequestBody(op, contentType string, body []byte) error {
	ptr, rb := k.deref(op + "/requestBody")
	if rb == nil {
		if len(body) > 0 {
			return fmt.Errorf("%s: a body, where the spec declares none", op)
		}
		return nil
	}
	if len(body) == 0 {
		if rb["required"] == true {
			return fmt.Errorf("%s: no body, where the spec requires one", op)
		}
		return nil
	}
	return k.checkContent(ptr, contentType, body)
}

// checkResponseBody checks an answer's body against the response its
// operation declares for status (or for its range, or the default).
func (k *contract) checkResponseBody(op string, status int, contentType string, body []byte) error {
	for _, key := range []string{strconv.Itoa(status), strconv.Itoa(status/100) + "XX", "default"} {
		if _, ok := lookup(k.doc, op+"/responses/"+key); ok {
			ptr, _ := k.deref(op + "/responses/" + key)
			return k.checkContent(ptr, contentType, body)
		}
	}
	return fmt.Errorf("%s: status %d is not declared", op, status)
}

// checkContent checks body against the content map of the request body or
// response at ptr. An answer with no content declared must have no body; a
// media type the spec does not name, or one without a schema, is an error,
// never a skip.
func (k *contract) checkContent(ptr, contentType string, body []byte) error {
	node, _ := lookup(k.doc, ptr+"/content")
	content := asMap(node)
	if len(content) == 0 {
		if len(body) > 0 {
			return fmt.Errorf("%s: a body, where the spec declares none", ptr)
		}
		return nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("%s: Content-Type %q: %v", ptr, contentType, err)
	}
	site := ptr + "/content/" + escape(mt) + "/schema"
	schema := k.schemas[site]
	if schema == nil {
		return fmt.Errorf("%s: no schema for media type %q (declared: %v)", ptr, mt, sortedKeys(content))
	}
	v, err := decodeBody(mt, body)
	if err != nil {
		return fmt.Errorf("%s: %s body: %v", ptr, mt, err)
	}
	if err := schema.Validate(v); err != nil {
		return fmt.Errorf("%s: %v", site, err)
	}
	return nil
}

// checkProblem checks an answer outside every operation (an unknown route,
// a method the route lacks): a problem, as the spec's NotFound declares it.
func (k *contract) checkProblem(contentType string, body []byte) error {
	return k.checkContent("/components/responses/NotFound", contentType, body)
}

// decodeBody reads a body as the value its schema describes: JSON as JSON,
// a form as an object of strings (a list for a repeated name), anything
// else (YAML, text, bytes) as one string.
func decodeBody(mediaType string, body []byte) (any, error) {
	switch {
	case mediaType == "application/json" || strings.HasSuffix(mediaType, "+json"):
		return jsonschema.UnmarshalJSON(bytes.NewReader(body))
	case mediaType == "application/x-www-form-urlencoded":
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, err
		}
		form := map[string]any{}
		for name, vs := range q {
			if len(vs) == 1 {
				form[name] = vs[0]
				continue
			}
			list := make([]any, len(vs))
			for i, v := range vs {
				list[i] = v
			}
			form[name] = list
		}
		return form, nil
	}
	return string(body), nil
}
