//go:build race

package main

// raceEnabled builds the server binary under test with -race too.
const raceEnabled = true
