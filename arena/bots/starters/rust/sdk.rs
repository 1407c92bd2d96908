//! The Six Arena protocol in Rust with the standard library only: one JSON object a line
//! on stdin, one on stdout (docs/protocol.md). `run(name, version, decide)` answers hello
//! and, for every request, calls `decide(kind, view, legal)`: `kind` is what is asked
//! ("play", "row"...), `view` the seat's view as JSON text, `legal` the legal answers,
//! each as its JSON text ("34", "[3, 17]", "\"10c\""); it returns the index of the one to
//! play. `field(view, "hand")` finds a field of an object, `item(json, i)` an item of an
//! array, `integer` reads a number: enough to read any view. Print anything of your own
//! to stderr (`eprintln!`): stdout is the protocol's.

use std::io::{self, BufRead, Write};

/// Where the JSON value starting at `at` ends (past blanks before it), or None if cut short.
fn skip(json: &[u8], mut at: usize) -> Option<usize> {
    let (mut depth, mut in_string) = (0i32, false);
    while at < json.len() && (json[at] == b' ' || json[at] == b'\t') {
        at += 1;
    }
    while at < json.len() {
        let c = json[at];
        if in_string {
            if c == b'\\' {
                at += 1;
            } else if c == b'"' {
                in_string = false;
                if depth == 0 {
                    return Some(at + 1);
                }
            }
        } else if c == b'"' {
            in_string = true;
        } else if c == b'{' || c == b'[' {
            depth += 1;
        } else if c == b'}' || c == b']' {
            depth -= 1;
            if depth <= 0 {
                return Some(if depth < 0 { at } else { at + 1 });
            }
        } else if depth == 0 && (c == b',' || c == b'\n') {
            return Some(at);
        }
        at += 1;
    }
    if depth == 0 && !in_string {
        Some(at)
    } else {
        None
    }
}

fn trimmed(text: &str) -> &str {
    text.trim_matches(|c| c == ' ' || c == '\n' || c == '\r')
}

/// Field `key` of the object `json` as JSON text (None if it has none).
pub fn field<'a>(json: &'a str, key: &str) -> Option<&'a str> {
    let bytes = json.as_bytes();
    let mut at = json.find('{')? + 1;
    while at < bytes.len() {
        while at < bytes.len() && (bytes[at] == b' ' || bytes[at] == b',') {
            at += 1;
        }
        if at >= bytes.len() || bytes[at] != b'"' {
            return None;
        }
        let name_end = skip(bytes, at)?;
        let name = &json[at + 1..name_end - 1];
        at = name_end;
        while at < bytes.len() && (bytes[at] == b' ' || bytes[at] == b':') {
            at += 1;
        }
        let end = skip(bytes, at)?;
        if name == key {
            return Some(trimmed(&json[at..end]));
        }
        at = end;
        if at < bytes.len() && bytes[at] == b'}' {
            return None;
        }
    }
    None
}

/// Entry `index` of the object `json`: its key and its value as JSON text (None past its end).
pub fn entry(json: &str, index: usize) -> Option<(&str, &str)> {
    let bytes = json.as_bytes();
    let mut at = json.find('{')? + 1;
    let mut i = 0;
    while at < bytes.len() {
        while at < bytes.len() && (bytes[at] == b' ' || bytes[at] == b',') {
            at += 1;
        }
        if at >= bytes.len() || bytes[at] != b'"' {
            return None;
        }
        let name_end = skip(bytes, at)?;
        let name = &json[at + 1..name_end - 1];
        at = name_end;
        while at < bytes.len() && (bytes[at] == b' ' || bytes[at] == b':') {
            at += 1;
        }
        let end = skip(bytes, at)?;
        if i == index {
            return Some((name, trimmed(&json[at..end])));
        }
        at = end;
        i += 1;
    }
    None
}

/// Item `index` of the array `json` as JSON text (None past its end).
pub fn item(json: &str, index: usize) -> Option<&str> {
    let bytes = json.as_bytes();
    let mut at = json.find('[')? + 1;
    let mut i = 0;
    while at < bytes.len() {
        while at < bytes.len() && (bytes[at] == b' ' || bytes[at] == b',') {
            at += 1;
        }
        if at >= bytes.len() || bytes[at] == b']' {
            return None;
        }
        let end = skip(bytes, at)?;
        if i == index {
            return Some(trimmed(&json[at..end]));
        }
        at = end;
        i += 1;
    }
    None
}

/// A JSON number's integer value (0 if it is none).
pub fn integer(json: &str) -> i64 {
    json.trim().split(|c: char| !(c.is_ascii_digit() || c == '-')).next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// A JSON string's text (escapes left as they are).
pub fn text(json: &str) -> &str {
    json.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or("")
}

/// Speak the protocol as `name` `version` until bye.
pub fn run(name: &str, version: &str, decide: fn(&str, &str, &[String]) -> usize) {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(line) => line,
            Err(_) => break,
        };
        match field(&line, "type").map(text) {
            Some("hello") => {
                let _ = writeln!(out, "{{\"type\":\"hello\",\"name\":\"{}\",\"version\":\"{}\"}}", name, version);
            }
            Some("request") => {
                let all = field(&line, "legal").unwrap_or("[]");
                let legal: Vec<String> = (0..).map_while(|i| item(all, i).map(String::from)).collect();
                let kind = field(&line, "kind").map(text).unwrap_or("");
                let view = field(&line, "view").unwrap_or("{}");
                let mut chosen = if legal.is_empty() { 0 } else { decide(kind, view, &legal) };
                if chosen >= legal.len() {
                    chosen = 0;
                }
                let answer = legal.get(chosen).map(String::as_str).unwrap_or("null");
                let id = integer(field(&line, "id").unwrap_or("0"));
                let _ = writeln!(out, "{{\"type\":\"answer\",\"id\":{},\"answer\":{}}}", id, answer);
            }
            Some("bye") => break,
            _ => {}
        }
        let _ = out.flush();
    }
}
