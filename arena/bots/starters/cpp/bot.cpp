// @NAME@: a Six Arena bot for @TITLE@, in C++.
//
// decide is asked for every move: kind says what is asked, view is everything this seat
// may see as JSON text (sdk::field(view, "hand") is its hand; docs/protocol.md lists the
// fields), legal every answer the referee takes, as JSON text. It returns the index of
// the answer to play: the first. Make it better.
#include "sdk.hpp"

static size_t decide(const std::string& kind, std::string_view view, const std::vector<std::string>& legal) {
    (void)kind;
    (void)view;
    (void)legal;
    return 0;
}

int main() { return sdk::run("@NAME@", "0.1.0", decide); }
