// @NAME@: a Six Arena bot for @TITLE@, in C++.
//
// decide is asked for every move: kind says what is asked, view is everything this seat
// may see (view.hand, view.scores...: view.hpp has its fields, docs/protocol.md says what
// they mean), legal every answer the referee takes, as JSON text. It returns the index of
// the answer to play: the first. Make it better.
#include "view.hpp"

static size_t decide(const std::string& kind, const View& view, const std::vector<std::string>& legal) {
    (void)kind;
    (void)view;
    (void)legal;
    return 0;
}

int main() {
    return sdk::run("@NAME@", "0.1.0", [](const std::string& kind, std::string_view json, const std::vector<std::string>& legal) {
        return decide(kind, view_of(json), legal);
    });
}
