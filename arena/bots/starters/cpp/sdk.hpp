// The Six Arena protocol in C++17 with the standard library only: one JSON object a line
// on stdin, one on stdout (docs/protocol.md). sdk::run(name, version, decide) answers
// hello and, for every request, calls decide(kind, view, legal): kind is what is asked
// ("play", "row"...), view the seat's view as JSON text, legal the legal answers, each as
// its JSON text ("34", "[3, 17]", "\"10c\""); decide returns the index of the one to play.
// sdk::field(view, "hand") finds a field of an object, sdk::item(json, i) an item of an
// array, sdk::integer reads a number: enough to read any view. Print anything of your
// own to std::cerr: std::cout is the protocol's.
#pragma once

#include <cstdlib>
#include <functional>
#include <optional>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sdk {

// Where the JSON value starting at `at` ends (past blanks before it), or npos if cut short.
inline size_t skip(std::string_view json, size_t at) {
    int depth = 0;
    bool in_string = false;
    while (at < json.size() && (json[at] == ' ' || json[at] == '\t')) at++;
    for (; at < json.size(); at++) {
        char c = json[at];
        if (in_string) {
            if (c == '\\') {
                at++;
            } else if (c == '"') {
                in_string = false;
                if (depth == 0) return at + 1;
            }
        } else if (c == '"') in_string = true;
        else if (c == '{' || c == '[') depth++;
        else if (c == '}' || c == ']') { if (--depth <= 0) return depth < 0 ? at : at + 1; }
        else if (depth == 0 && (c == ',' || c == '\n')) return at;
    }
    return depth == 0 && !in_string ? at : std::string_view::npos;
}

inline std::string_view trimmed(std::string_view text) {
    while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    return text;
}

// Field `key` of the object `json` as JSON text (empty if it has none).
inline std::string_view field(std::string_view json, std::string_view key) {
    size_t at = json.find('{');
    if (at == std::string_view::npos) return {};
    for (at++; at < json.size();) {
        while (at < json.size() && (json[at] == ' ' || json[at] == ',')) at++;
        if (at >= json.size() || json[at] != '"') return {};
        size_t name_end = skip(json, at);
        if (name_end == std::string_view::npos) return {};
        std::string_view name = json.substr(at + 1, name_end - at - 2);
        at = name_end;
        while (at < json.size() && (json[at] == ' ' || json[at] == ':')) at++;
        size_t end = skip(json, at);
        if (end == std::string_view::npos) return {};
        if (name == key) return trimmed(json.substr(at, end - at));
        at = end;
        if (at < json.size() && json[at] == '}') return {};
    }
    return {};
}

// Entry `index` of the object `json`: its key and its value as JSON text (none past its end).
inline std::optional<std::pair<std::string_view, std::string_view>> entry(std::string_view json, size_t index) {
    size_t at = json.find('{');
    if (at == std::string_view::npos) return std::nullopt;
    at++;
    for (size_t i = 0; at < json.size(); i++) {
        while (at < json.size() && (json[at] == ' ' || json[at] == ',')) at++;
        if (at >= json.size() || json[at] != '"') return std::nullopt;
        size_t name_end = skip(json, at);
        if (name_end == std::string_view::npos) return std::nullopt;
        std::string_view name = json.substr(at + 1, name_end - at - 2);
        at = name_end;
        while (at < json.size() && (json[at] == ' ' || json[at] == ':')) at++;
        size_t end = skip(json, at);
        if (end == std::string_view::npos) return std::nullopt;
        if (i == index) return std::make_pair(name, trimmed(json.substr(at, end - at)));
        at = end;
    }
    return std::nullopt;
}

// Item `index` of the array `json` as JSON text (empty past its end).
inline std::string_view item(std::string_view json, size_t index) {
    size_t at = json.find('[');
    if (at == std::string_view::npos) return {};
    at++;
    for (size_t i = 0; at < json.size(); i++) {
        while (at < json.size() && (json[at] == ' ' || json[at] == ',')) at++;
        if (at >= json.size() || json[at] == ']') return {};
        size_t end = skip(json, at);
        if (end == std::string_view::npos) return {};
        if (i == index) return trimmed(json.substr(at, end - at));
        at = end;
    }
    return {};
}

inline long long integer(std::string_view json) { return std::strtoll(std::string(json).c_str(), nullptr, 10); }

inline std::string text(std::string_view json) {  // a JSON string's text (escapes left as they are)
    return json.size() >= 2 ? std::string(json.substr(1, json.size() - 2)) : std::string();
}

using Decide = std::function<size_t(const std::string& kind, std::string_view view, const std::vector<std::string>& legal)>;

// Speak the protocol as `name` `version` until bye.
inline int run(const std::string& name, const std::string& version, const Decide& decide) {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        std::string type = text(field(line, "type"));
        if (type == "hello") {
            std::cout << "{\"type\":\"hello\",\"name\":\"" << name << "\",\"version\":\"" << version << "\"}\n";
        } else if (type == "request") {
            std::vector<std::string> legal;
            std::string_view all = field(line, "legal");
            for (std::string_view one; !(one = item(all, legal.size())).empty();) legal.emplace_back(one);
            size_t chosen = legal.empty() ? 0 : decide(text(field(line, "kind")), field(line, "view"), legal);
            if (chosen >= legal.size()) chosen = 0;
            std::cout << "{\"type\":\"answer\",\"id\":" << integer(field(line, "id"))
                      << ",\"answer\":" << (legal.empty() ? std::string("null") : legal[chosen]) << "}\n";
        } else if (type == "bye") {
            break;
        }
        std::cout.flush();
    }
    return 0;
}

}  // namespace sdk
