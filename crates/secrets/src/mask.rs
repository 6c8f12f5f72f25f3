//! Secrets replaced by placeholders the model can read but not use:
//! `[SECRET:kind:abcd…]` (the rule's id and the secret's first four
//! characters), with the line of each.
//!
//! Guarantees: the masked text holds none of the found secrets' bytes
//! beyond those four characters; lines are counted from 1 in the text
//! given, in one pass over it (linear with the text); a placeholder is
//! never taken for a secret, so masking masked text changes nothing.

use std::borrow::Cow;

use crate::find;

/// How every placeholder starts. A write or edit whose text holds it is
/// refused: it would put the placeholder where the real value was.
pub const PLACEHOLDER_PREFIX: &str = "[SECRET:";

/// How many characters of a secret its placeholder keeps.
const SHOWN: usize = 4;

/// One secret masked in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Masked {
    /// The rule that found it (`github-pat`, `private-key`…).
    pub kind: &'static str,
    /// The line of the text it started on, from 1.
    pub line: usize,
}

/// `text` with every secret the built-in rules find replaced by its
/// placeholder, and what was replaced, in order.
pub fn mask(text: &str) -> (Cow<'_, str>, Vec<Masked>) {
    let findings = find(text);
    if findings.is_empty() {
        return (Cow::Borrowed(text), Vec::new());
    }
    let mut out = String::with_capacity(text.len());
    let mut masked = Vec::with_capacity(findings.len());
    let mut at = 0;
    let mut line = 1;
    for finding in findings {
        line += newlines(&text[at..finding.span.start]);
        masked.push(Masked { kind: finding.kind, line });
        let secret = &text[finding.span.clone()];
        out.push_str(&text[at..finding.span.start]);
        out.push_str(&placeholder(finding.kind, secret));
        line += newlines(secret);
        at = finding.span.end;
    }
    out.push_str(&text[at..]);
    (Cow::Owned(out), masked)
}

/// The placeholder for `secret`, found by rule `kind`.
pub fn placeholder(kind: &str, secret: &str) -> String {
    let shown: String = secret.chars().take(SHOWN).collect();
    format!("{PLACEHOLDER_PREFIX}{kind}:{shown}…]")
}

/// Whether `text` holds a placeholder.
pub fn has_placeholder(text: &str) -> bool {
    text.contains(PLACEHOLDER_PREFIX)
}

fn newlines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}
