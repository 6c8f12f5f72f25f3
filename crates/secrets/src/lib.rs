//! Secrets in text: one rule set, found with their kind and span, or
//! masked.
//!
//! The rules are gitleaks' default configuration, vendored unchanged
//! (`rules/gitleaks.toml`, MIT, see `rules/README.md`), and axon's own in
//! the same format (`rules/axon.toml`) for shapes gitleaks leaves out
//! (passwords in URLs, `SECRET_KEY_BASE=…`, short `sk-` keys). They are
//! read once per process, and a rule's regex is compiled the first time
//! one of its keywords occurs in a text, so a process that never sees a
//! GitHub token never pays for that rule.
//!
//! Guarantees: [`find`] reports every span a rule matches whose secret
//! passes the rule's entropy floor and allowlists (gitleaks' semantics:
//! the secret is the rule's secret group, else its first non-empty group,
//! else the whole match; path-only rules and allowlists do not apply to
//! text without a file); spans are byte ranges on character boundaries,
//! sorted, overlapping ones merged. [`redact`] replaces exactly those
//! spans. Neither allocates a rule or compiles a regex more than once per
//! process. A vendored rule the `regex` crate cannot compile is left out
//! and named by [`RuleSet::skipped`] (a test keeps that list empty).
//! [`mask`] puts a placeholder (`[SECRET:kind:abcd…]`) in each secret's
//! place and says on which line it was: what the model is shown of tool
//! results and attachments. A placeholder is never itself a secret.

mod entropy;
mod mask;
mod rules;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

pub use mask::{Masked, PLACEHOLDER_PREFIX, has_placeholder, mask, placeholder};
pub use rules::RuleSet;

/// One secret found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding<'r> {
    /// The rule's id (`github-pat`, `private-key`, `url-password`…).
    pub kind: &'r str,
    /// Byte range of the secret in the text.
    pub span: Range<usize>,
}

/// The built-in rule set (gitleaks' and axon's rules), read once.
pub fn builtin() -> &'static RuleSet {
    static RULES: OnceLock<RuleSet> = OnceLock::new();
    RULES.get_or_init(|| {
        RuleSet::from_sources(&[
            include_str!("../rules/gitleaks.toml"),
            include_str!("../rules/axon.toml"),
        ])
    })
}

/// The secrets the built-in rules find in `text`, in order, overlapping
/// spans merged (the kind is the first rule's).
pub fn find(text: &str) -> Vec<Finding<'static>> {
    builtin().find(text)
}

/// `text` with every secret the built-in rules find replaced by `mask`.
pub fn redact<'a>(text: &'a str, mask: &str) -> Cow<'a, str> {
    let findings = find(text);
    if findings.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for finding in findings {
        out.push_str(&text[at..finding.span.start]);
        out.push_str(mask);
        at = finding.span.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests;
