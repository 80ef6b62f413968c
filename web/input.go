package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tetherq/tether/store"
)

// What the dashboard takes from URLs and forms passes the API's own rules
// before any store call: queue and kind names store.ValidName (backends
// build keys from names, so a bad one could reach another queue's keys on
// Redis), states and dead reasons the known values. Job ids and cursors
// stay opaque, as in the API: the store answers "not found" or "bad cursor"
// for one it never issued.

// badInput is input the dashboard refuses, having read and changed nothing:
// a page answers 400 with the message in place of its panel, an action 400
// with a page that says so.
type badInput struct{ msg string }

func (e *badInput) Error() string { return e.msg }

func isBadInput(err error) bool {
	var b *badInput
	return errors.As(err, &b)
}

// checkName refuses v unless it is a name, or "" when optional.
func checkName(field, v string, optional bool) error {
	if (optional && v == "") || store.ValidName(v) {
		return nil
	}
	return &badInput{msg: fmt.Sprintf("%s %q must be %s", field, v, store.NameRule)}
}

// checkState refuses a state filter other than "" or a known state.
func checkState(v string) error {
	if v == "" || store.State(v).Valid() {
		return nil
	}
	return &badInput{msg: fmt.Sprintf("state %q must be one of %s", v, strings.Join(allStates(), ", "))}
}

// checkReason refuses a dead-reason filter other than "" or a known reason.
func checkReason(v string) error {
	names := make([]string, len(deadReasons))
	for i, r := range deadReasons {
		if string(r) == v {
			return nil
		}
		names[i] = string(r)
	}
	if v == "" {
		return nil
	}
	return &badInput{msg: fmt.Sprintf("reason %q must be one of %s", v, strings.Join(names, ", "))}
}

// firstBad returns the first non-nil error.
func firstBad(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// refuse answers an action whose input is bad: 400, nothing done.
func (d *dash) refuse(w http.ResponseWriter, r *http.Request, err error) {
	d.messagePage(w, r, http.StatusBadRequest, "Bad request", badInputView(err.Error()))
}
