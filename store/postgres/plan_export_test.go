package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// GenericPlanForTest returns the plan Postgres caches for query once it
// stops planning each execution: pgx prepares every statement, and after
// five executions Postgres keeps the generic plan unless it looks dearer
// than the custom ones, so that is the plan a busy store runs. It knows
// nothing of the arguments (a list parameter is guessed at ten elements);
// args, rendered as literals, only feed EXPLAIN EXECUTE.
func (s *Store) GenericPlanForTest(ctx context.Context, query string, args ...any) (string, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Release()
	lits := make([]string, len(args))
	for i, a := range args {
		if lits[i], err = literal(a); err != nil {
			return "", fmt.Errorf("argument $%d: %w", i+1, err)
		}
	}
	setup := []string{`SET plan_cache_mode = force_generic_plan`, `PREPARE tether_plan AS ` + query}
	for _, q := range setup {
		if _, err := conn.Exec(ctx, q); err != nil {
			return "", err
		}
	}
	defer conn.Exec(context.WithoutCancel(ctx), `DEALLOCATE tether_plan; RESET plan_cache_mode`)
	exec := `EXPLAIN EXECUTE tether_plan`
	if len(lits) > 0 {
		exec += `(` + strings.Join(lits, ", ") + `)`
	}
	rows, err := conn.Query(ctx, exec)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		b.WriteString(line + "\n")
	}
	return b.String(), rows.Err()
}

// literal renders a hot path's argument as an SQL literal of unknown type,
// which EXECUTE coerces to the parameter's type.
func literal(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "NULL", nil
	case string:
		return quote(v), nil
	case int:
		return strconv.Itoa(v), nil
	case time.Time:
		return quote(v.Format(time.RFC3339Nano)), nil
	case []string:
		return array(v, func(e string) string { return element(e) }), nil
	case []*string:
		return array(v, func(e *string) string {
			if e == nil {
				return "NULL"
			}
			return element(*e)
		}), nil
	case []int32:
		return array(v, func(e int32) string { return strconv.Itoa(int(e)) }), nil
	case []bool:
		return array(v, strconv.FormatBool), nil
	case []time.Time:
		return array(v, func(e time.Time) string { return element(e.Format(time.RFC3339Nano)) }), nil
	case []*time.Time:
		return array(v, func(e *time.Time) string {
			if e == nil {
				return "NULL"
			}
			return element(e.Format(time.RFC3339Nano))
		}), nil
	}
	return "", fmt.Errorf("no literal for %T", v)
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// element is an array element, double-quoted.
func element(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func array[T any](v []T, elem func(T) string) string {
	parts := make([]string, len(v))
	for i, e := range v {
		parts[i] = elem(e)
	}
	return quote("{" + strings.Join(parts, ",") + "}")
}
