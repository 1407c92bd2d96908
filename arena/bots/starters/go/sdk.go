// The Six Arena protocol in Go with the standard library only: one JSON object a line on
// stdin, one on stdout (docs/protocol.md). Run answers hello and, for every request,
// calls decide(kind, view, legal): kind is what is asked ("play", "row"...), view the
// seat's view (the View of view.go), legal every answer the referee takes (decoded JSON:
// numbers are float64, lists []any, strings string); decide returns the index of the one
// to play.
// Print anything of your own to stderr: stdout is the protocol's.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

type message struct {
	Type  string            `json:"type"`
	ID    int64             `json:"id"`
	Kind  string            `json:"kind"`
	View  View              `json:"view"`
	Legal []json.RawMessage `json:"legal"`
}

// Run speaks the protocol as name version until bye, asking decide for every move.
func Run(name, version string, decide func(kind string, view View, legal []any) int) {
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var m message
			if json.Unmarshal(line, &m) != nil {
				fmt.Fprintln(os.Stderr, "not a message:", string(line))
			}
			switch m.Type {
			case "hello":
				hello, _ := json.Marshal(map[string]string{"type": "hello", "name": name, "version": version})
				out.Write(append(hello, '\n'))
			case "request":
				legal := make([]any, len(m.Legal))
				for i, raw := range m.Legal {
					json.Unmarshal(raw, &legal[i])
				}
				chosen := 0
				if len(legal) > 0 {
					chosen = decide(m.Kind, m.View, legal)
				}
				if chosen < 0 || chosen >= len(m.Legal) {
					chosen = 0
				}
				answer := json.RawMessage("null")
				if len(m.Legal) > 0 {
					answer = m.Legal[chosen]
				}
				reply, _ := json.Marshal(map[string]any{"type": "answer", "id": m.ID, "answer": answer})
				out.Write(append(reply, '\n'))
			case "bye":
				out.Flush()
				return
			}
			out.Flush()
		}
		if err != nil {
			return
		}
	}
}
