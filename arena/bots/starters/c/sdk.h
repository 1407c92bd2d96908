/* The Six Arena protocol in C99 with the standard library only: one JSON object a line
 * on stdin, one on stdout (docs/protocol.md). sdk_run(decide) answers hello, and for
 * every request calls decide(kind, view, legal, count): kind is what is asked ("play",
 * "row"...), view the seat's view as JSON text, legal the legal answers, each as its JSON
 * text ("34", "[3, 17]", "\"10c\""); decide returns the index of the one to play.
 * sdk_field(json, "hand", &length) finds a field of an object, sdk_item(json, i, &length)
 * an item of an array, sdk_int reads a number: enough to read any view. Print anything
 * of your own to stderr: stdout is the protocol's. */
#ifndef SIXARENA_SDK_H
#define SIXARENA_SDK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*sdk_decide)(const char *kind, const char *view, char **legal, int count);

/* The end of the JSON value that starts at p (past blanks), or NULL if it is cut short. */
static const char *sdk_skip(const char *p) {
    int depth = 0, in_string = 0;
    while (*p == ' ' || *p == '\t') p++;
    for (; *p; p++) {
        if (in_string) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') { in_string = 0; if (depth == 0) return p + 1; }
        } else if (*p == '"') in_string = 1;
        else if (*p == '{' || *p == '[') depth++;
        else if (*p == '}' || *p == ']') { if (--depth <= 0) return depth < 0 ? p : p + 1; }
        else if (depth == 0 && (*p == ',' || *p == '\n')) return p;
    }
    return depth == 0 && !in_string ? p : NULL;
}

/* The value of field `key` of the object `json` (NULL if absent), its length in *length. */
static const char *sdk_field(const char *json, const char *key, size_t *length) {
    const char *p = json;
    size_t key_length = strlen(key);
    while (*p == ' ') p++;
    if (*p++ != '{') return NULL;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (*p != '"') return NULL;
        const char *name = p + 1, *end = sdk_skip(p);
        if (!end) return NULL;
        p = end;
        while (*p == ' ' || *p == ':') p++;
        const char *value = p, *after = sdk_skip(p);
        if (!after) return NULL;
        if ((size_t)(end - 1 - name) == key_length && strncmp(name, key, key_length) == 0) {
            while (after > value && after[-1] == ' ') after--;
            *length = (size_t)(after - value);
            return value;
        }
        p = after;
        if (*p == '}') return NULL;
    }
    return NULL;
}

/* Entry `index` of the object `json`: its value (NULL past its end), its length in *length,
 * its key (without quotes) in *key and *key_length. */
static const char *sdk_entry(const char *json, int index, const char **key, size_t *key_length, size_t *length) {
    const char *p = json;
    while (*p == ' ') p++;
    if (*p++ != '{') return NULL;
    for (int i = 0; *p; i++) {
        while (*p == ' ' || *p == ',') p++;
        if (*p != '"') return NULL;
        const char *name = p + 1, *end = sdk_skip(p);
        if (!end) return NULL;
        p = end;
        while (*p == ' ' || *p == ':') p++;
        const char *value = p, *after = sdk_skip(p);
        if (!after) return NULL;
        if (i == index) {
            while (after > value && after[-1] == ' ') after--;
            *key = name;
            *key_length = (size_t)(end - 1 - name);
            *length = (size_t)(after - value);
            return value;
        }
        p = after;
    }
    return NULL;
}

/* Item `index` of the array `json` (NULL past its end), its length in *length. */
static const char *sdk_item(const char *json, int index, size_t *length) {
    const char *p = json;
    while (*p == ' ') p++;
    if (*p++ != '[') return NULL;
    for (int i = 0; *p; i++) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ']') return NULL;
        const char *end = sdk_skip(p);
        if (!end) return NULL;
        if (i == index) { *length = (size_t)(end - p); return p; }
        p = end;
    }
    return NULL;
}

static long long sdk_int(const char *json) { return strtoll(json, NULL, 10); }

static char *sdk_copy(const char *text, size_t length) {
    char *copy = malloc(length + 1);
    if (!copy) exit(1);
    memcpy(copy, text, length);
    copy[length] = '\0';
    return copy;
}

static int sdk_is(const char *message, const char *type) {
    size_t length;
    const char *value = sdk_field(message, "type", &length);
    return value && length == strlen(type) + 2 && strncmp(value + 1, type, length - 2) == 0;
}

/* Speak the protocol until bye, as `name` `version`. */
static int sdk_run(const char *name, const char *version, sdk_decide decide) {
    char *line = NULL;
    size_t capacity = 0;
    while (getline(&line, &capacity, stdin) > 0) {
        size_t length;
        if (sdk_is(line, "hello")) {
            printf("{\"type\":\"hello\",\"name\":\"%s\",\"version\":\"%s\"}\n", name, version);
        } else if (sdk_is(line, "request")) {
            const char *id = sdk_field(line, "id", &length);
            long long request = id ? sdk_int(id) : 0;
            const char *kind_json = sdk_field(line, "kind", &length);
            char *kind = sdk_copy(kind_json ? kind_json + 1 : "", kind_json && length >= 2 ? length - 2 : 0);
            const char *view_json = sdk_field(line, "view", &length);
            char *view = sdk_copy(view_json ? view_json : "{}", view_json ? length : 2);
            const char *legal_json = sdk_field(line, "legal", &length);
            char *legal[1024];
            int count = 0;
            size_t item_length;
            const char *item;
            while (legal_json && count < 1024 && (item = sdk_item(legal_json, count, &item_length)))
                legal[count++] = sdk_copy(item, item_length);
            int chosen = count ? decide(kind, view, legal, count) : 0;
            if (chosen < 0 || chosen >= count) chosen = 0;
            printf("{\"type\":\"answer\",\"id\":%lld,\"answer\":%s}\n", request, count ? legal[chosen] : "null");
            for (int i = 0; i < count; i++) free(legal[i]);
            free(kind);
            free(view);
        } else if (sdk_is(line, "bye")) {
            break;
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}

#endif
