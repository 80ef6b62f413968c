//go:build race

package main

// raceEnabled builds the tether binary under test with -race too.
const raceEnabled = true
