// @NAME@: a Six Arena bot for @TITLE@, in Java.
//
// decide is asked for every move: kind says what is asked, view is everything this seat
// may see as JSON text (Sdk.field(view, "hand") is its hand; docs/protocol.md lists the
// fields), legal every answer the referee takes, as JSON text. It returns the index of
// the answer to play: the first. Make it better.

import java.util.List;

public final class Bot {
    static int decide(String kind, String view, List<String> legal) {
        return 0;
    }

    public static void main(String[] args) throws Exception {
        Sdk.run("@NAME@", "0.1.0", Bot::decide);
    }
}
