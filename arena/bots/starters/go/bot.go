// @NAME@: a Six Arena bot for @TITLE@, in Go.
//
// decide is asked for every move: kind says what is asked, view is everything this seat
// may see (view.Hand, view.Scores...: view.go has its fields, docs/protocol.md says what
// they mean), legal every answer the referee takes. It returns the index of the answer to
// play: the first. Make it better.
package main

func decide(kind string, view View, legal []any) int {
	return 0
}

func main() {
	Run("@NAME@", "0.1.0", decide)
}
