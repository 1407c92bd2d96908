//! @NAME@: a Six Arena bot for @TITLE@, in Rust.
//!
//! `decide` is asked for every move: `kind` says what is asked, `view` is everything this
//! seat may see (`view.hand`, `view.scores`...: view.rs has its fields, docs/protocol.md
//! says what they mean), `legal` every answer the referee takes, as JSON text. It returns
//! the index of the answer to play: the first. Make it better.

mod sdk;
mod view;

use view::View;

fn decide(_kind: &str, _view: &View, _legal: &[String]) -> usize {
    0
}

fn main() {
    sdk::run("@NAME@", "0.1.0", |kind, json, legal| decide(kind, &View::parse(json), legal));
}
