//go:build race

package analyze

const raceEnabled = true
