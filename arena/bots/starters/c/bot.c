/* @NAME@: a Six Arena bot for @TITLE@, in C.
 *
 * decide is asked for every move: kind says what is asked, view is everything this seat
 * may see (view->hand.count, view->hand.items[0], view->scores...: view.h has its
 * fields, docs/protocol.md says what they mean), legal every answer the referee takes,
 * as JSON text. It returns the index of the answer to play: the first. Make it better. */
#define _POSIX_C_SOURCE 200809L
#include "view.h"

static int decide(const char *kind, const struct view *view, char **legal, int count) {
    (void)kind;
    (void)view;
    (void)legal;
    (void)count;
    return 0;
}

/* The view read for decide, and released after it. */
static int on_request(const char *kind, const char *json, char **legal, int count) {
    struct view view = view_read(json);
    int chosen = decide(kind, &view, legal, count);
    view_free(&view);
    return chosen;
}

int main(void) { return sdk_run("@NAME@", "0.1.0", on_request); }
