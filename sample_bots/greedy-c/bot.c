/* greedy-c: a 6 nimmt! bot in C99 with no libraries. Protocol: docs/protocol.md.
 *
 * Play: the card that goes onto a row with room (fewer than 5 cards) with the smallest
 * gap to that row's end; if no card does, the lowest card. Row: the fewest heads.
 * Draft: the lowest card on offer. Two cards a turn: the two best cards by that rule.
 *
 * JSON is read by a small skipping parser: `member` finds a key among the members of
 * one object only (never inside a nested value), and `skip` steps over any value, so
 * the keys "type" or "round" of nested objects cannot be mistaken for the top ones.
 * An answer is the text of one element of "legal", copied as it came.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "greedy-c"
#define VERSION "1.0.0"
#define ROWS_MAX 16
#define ROW_CAPACITY 5

static const char *ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* Past the string starting at p (on its opening quote), or NULL if unterminated. */
static const char *skip_string(const char *p) {
    for (p++; *p; p++) {
        if (*p == '\\') {
            if (!*++p) return NULL;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Past the JSON value starting at p (whitespace before it allowed), or NULL. */
static const char *skip(const char *p) {
    int depth = 0;
    p = ws(p);
    if (*p == '"') return skip_string(p);
    if (*p != '{' && *p != '[') { /* a number, true, false or null */
        while (*p && !strchr(",]} \t\r\n", *p)) p++;
        return p;
    }
    while (*p) {
        if (*p == '"') {
            p = skip_string(p);
            if (!p) return NULL;
            continue;
        }
        if (*p == '{' || *p == '[') depth++;
        if (*p == '}' || *p == ']') depth--;
        p++;
        if (depth == 0) return p;
    }
    return NULL;
}

/* The value of `key` among the members of the object at p (on its '{'), or NULL. */
static const char *member(const char *p, const char *key) {
    size_t len = strlen(key);
    p = ws(p);
    if (*p != '{') return NULL;
    p = ws(p + 1);
    while (*p == '"') {
        const char *name = p + 1, *end = skip_string(p);
        if (!end) return NULL;
        int match = (size_t)(end - 1 - name) == len && strncmp(name, key, len) == 0;
        p = ws(end);
        if (*p != ':') return NULL;
        p = ws(p + 1);
        if (match) return p;
        p = skip(p);
        if (!p) return NULL;
        p = ws(p);
        if (*p == ',') p = ws(p + 1);
    }
    return NULL;
}

/* Does the string value at p equal s? */
static int string_is(const char *p, const char *s) {
    size_t len = strlen(s);
    return p && *p == '"' && strncmp(p + 1, s, len) == 0 && p[1 + len] == '"';
}

/* Calls `each(element, end, data)` for each element of the array at p; their count. */
static int elements(const char *p, void (*each)(const char *, const char *, void *), void *data) {
    int n = 0;
    if (!p || *(p = ws(p)) != '[') return 0;
    p = ws(p + 1);
    while (*p && *p != ']') {
        const char *end = skip(p);
        if (!end) break;
        if (each) each(p, end, data);
        n++;
        p = ws(end);
        if (*p == ',') p = ws(p + 1);
    }
    return n;
}

/* --- growing integer lists ------------------------------------------------------ */

typedef struct {
    long *v;
    int n, cap;
} Ints;

static void push(Ints *list, long x) {
    if (list->n == list->cap) {
        list->cap = list->cap ? 2 * list->cap : 16;
        list->v = realloc(list->v, (size_t)list->cap * sizeof(long));
        if (!list->v) {
            fputs("greedy-c: out of memory\n", stderr);
            exit(1);
        }
    }
    list->v[list->n++] = x;
}

/* Every integer inside the value at p, at any depth (a pair's two cards, a row's cards). */
static void push_all(const char *p, const char *end, void *data) {
    for (; p < end; p++) {
        if ((*p >= '0' && *p <= '9') || (*p == '-' && p[1] >= '0' && p[1] <= '9')) {
            char *after;
            push((Ints *)data, strtol(p, &after, 10));
            p = after - 1;
        }
    }
}

/* --- the game -------------------------------------------------------------------- */

static Ints rows[ROWS_MAX];
static int row_count;

static void read_row(const char *p, const char *end, void *data) {
    (void)data;
    if (row_count < ROWS_MAX) {
        rows[row_count].n = 0;
        push_all(p, end, &rows[row_count]);
        row_count++;
    }
}

static void read_rows(const char *view) {
    row_count = 0;
    elements(member(view, "rows"), read_row, NULL);
}

static int heads(long card) {
    if (card == 55) return 7;
    if (card % 11 == 0) return 5;
    if (card % 10 == 0) return 3;
    if (card % 5 == 0) return 2;
    return 1;
}

/* How good a card is (lower is better): its gap onto a row with room, else 1000 + card. */
static long badness(long card) {
    int best = -1;
    for (int i = 0; i < row_count; i++) {
        if (rows[i].n == 0) continue;
        long end = rows[i].v[rows[i].n - 1];
        if (end < card && (best < 0 || end > rows[best].v[rows[best].n - 1])) best = i;
    }
    if (best >= 0 && rows[best].n < ROW_CAPACITY) return card - rows[best].v[rows[best].n - 1];
    return 1000 + card;
}

static int better(long a, long b) {
    long x = badness(a), y = badness(b);
    return x < y || (x == y && a < b);
}

typedef struct {
    const char *start, *end;
} Span;

typedef struct {
    Span *v;
    int n, cap;
} Spans;

static void push_span(const char *p, const char *end, void *data) {
    Spans *list = data;
    if (list->n == list->cap) {
        list->cap = list->cap ? 2 * list->cap : 64;
        list->v = realloc(list->v, (size_t)list->cap * sizeof(Span));
        if (!list->v) {
            fputs("greedy-c: out of memory\n", stderr);
            exit(1);
        }
    }
    list->v[list->n].start = p;
    list->v[list->n].end = end;
    list->n++;
}

/* The index of the legal answer to give. */
static int decide(const char *kind, const char *view, const Spans *legal) {
    int best = 0;
    Ints cards = {0};
    for (int i = 0; i < legal->n; i++) push_all(legal->v[i].start, legal->v[i].end, &cards);
    read_rows(view);
    if (*legal->v[0].start != '[' && cards.n != legal->n) {
        /* not one integer per answer: a game this bot does not know */
    } else if (string_is(kind, "play") && *legal->v[0].start == '[') {
        /* Two cards a turn: the pair of the two best cards (else the first pair). */
        long one = -1, two = -1;
        for (int i = 0; i < cards.n; i++) {
            long c = cards.v[i];
            if (c == one || c == two) continue;
            if (one < 0 || better(c, one)) {
                two = one;
                one = c;
            } else if (two < 0 || better(c, two)) {
                two = c;
            }
        }
        for (int i = 0; i < legal->n; i++) {
            Ints pair = {0};
            push_all(legal->v[i].start, legal->v[i].end, &pair);
            int hit = pair.n == 2 && ((pair.v[0] == one && pair.v[1] == two) || (pair.v[0] == two && pair.v[1] == one));
            free(pair.v);
            if (hit) {
                best = i;
                break;
            }
        }
    } else if (string_is(kind, "play")) {
        for (int i = 1; i < legal->n; i++)
            if (better(cards.v[i], cards.v[best])) best = i;
    } else if (string_is(kind, "row")) {
        long cost_best = -1;
        for (int i = 0; i < legal->n; i++) {
            long r = cards.v[i], cost = 1000000;
            if (r >= 0 && r < row_count) {
                cost = 0;
                for (int j = 0; j < rows[r].n; j++) cost += heads(rows[r].v[j]);
                cost = cost * 100 + rows[r].n;
            }
            if (cost_best < 0 || cost < cost_best) {
                cost_best = cost;
                best = i;
            }
        }
    } else if (string_is(kind, "draft")) {
        for (int i = 1; i < legal->n; i++)
            if (cards.v[i] < cards.v[best]) best = i;
    }
    free(cards.v);
    return best;
}

int main(void) {
    char *line = NULL;
    size_t size = 0;
    Spans legal = {0};
    while (getline(&line, &size, stdin) != -1) {
        const char *type = member(line, "type");
        if (string_is(type, "hello")) {
            int ok = string_is(member(line, "game"), "nimmt");
            printf("{\"type\":\"hello\",\"name\":\"" NAME "\",\"version\":\"" VERSION "\",\"accept\":%s}\n",
                   ok ? "true" : "false");
        } else if (string_is(type, "request")) {
            const char *id = member(line, "id");
            legal.n = 0;
            elements(member(line, "legal"), push_span, &legal);
            if (!id || legal.n == 0) {
                fprintf(stderr, "greedy-c: a request without id or legal answers\n");
                continue;
            }
            int choice = decide(member(line, "kind"), member(line, "view"), &legal);
            printf("{\"type\":\"answer\",\"id\":%ld,\"answer\":%.*s}\n", strtol(id, NULL, 10),
                   (int)(legal.v[choice].end - legal.v[choice].start), legal.v[choice].start);
        } else if (string_is(type, "bye")) {
            break;
        }
        fflush(stdout);
    }
    free(line);
    free(legal.v);
    return 0;
}
