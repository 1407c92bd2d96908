// @NAME@: a Six Arena bot for @TITLE@, in Java.
//
// decide is asked for every move: kind says what is asked, view is everything this seat
// may see (view.hand, view.scores...: View.java has its fields, docs/protocol.md says
// what they mean), legal every answer the referee takes, as JSON text ("34", "[3, 17]",
// "\"10c\""). It returns the index of the answer to play: the first. Make it better.

import java.util.List;

public final class Bot {
    static int decide(String kind, View view, List<String> legal) {
        return 0;
    }

    public static void main(String[] args) throws Exception {
        Sdk.run("@NAME@", "0.1.0", (kind, json, legal) -> decide(kind, new View(json), legal));
    }
}
