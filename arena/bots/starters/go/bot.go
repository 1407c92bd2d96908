// @NAME@: a Six Arena bot for @TITLE@, in Go.
//
// decide is asked for every move: kind says what is asked, view is everything this seat
// may see (view["hand"], view["scores"]...; docs/protocol.md lists the fields), legal
// every answer the referee takes. It returns the index of the answer to play: the first.
// Make it better.
package main

func decide(kind string, view map[string]any, legal []any) int {
	return 0
}

func main() {
	Run("@NAME@", "0.1.0", decide)
}
