/* @NAME@: a Six Arena bot for @TITLE@, in C.
 *
 * decide is asked for every move: kind says what is asked, view is everything this seat
 * may see as JSON text (sdk_field(view, "hand", &n) finds its hand; docs/protocol.md
 * lists the fields), legal every answer the referee takes, as JSON text. It returns the
 * index of the answer to play: the first. Make it better. */
#define _POSIX_C_SOURCE 200809L
#include "sdk.h"

static int decide(const char *kind, const char *view, char **legal, int count) {
    (void)kind;
    (void)view;
    (void)legal;
    (void)count;
    return 0;
}

int main(void) { return sdk_run("@NAME@", "0.1.0", decide); }
