//! @NAME@: a Six Arena bot for @TITLE@, in Rust.
//!
//! `decide` is asked for every move: `kind` says what is asked, `view` is everything this
//! seat may see as JSON text (`sdk::field(view, "hand")` is its hand; docs/protocol.md lists
//! the fields), `legal` every answer the referee takes, as JSON text. It returns the index
//! of the answer to play: the first. Make it better.

mod sdk;

fn decide(_kind: &str, _view: &str, _legal: &[String]) -> usize {
    0
}

fn main() {
    sdk::run("@NAME@", "0.1.0", decide);
}
