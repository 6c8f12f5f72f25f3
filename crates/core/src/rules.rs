//! The user's standing rules as the system prompt carries them: numbered,
//! each with where it came from, and the short reminder that follows tool
//! results. Pure: the rules arrive as data ([`Rule`]); the runtime reads
//! the config's `rules = [...]` and the repository's AGENTS.md/CLAUDE.md
//! files (`axon_runtime::guidance_files`).

/// One rule and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub text: String,
    /// `config`, or the instruction file's path.
    pub source: String,
}

/// The numbered block the system prompt carries: `Rule 1: …`, `Rule 2: …`.
pub fn numbered(rules: &[Rule]) -> String {
    let mut out = String::new();
    for (n, rule) in rules.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        if rule.source == "config" {
            out.push_str(&format!("Rule {}: {}", n + 1, rule.text));
        } else {
            out.push_str(&format!("Rule {}: (from {})\n{}", n + 1, rule.source, rule.text));
        }
    }
    out
}

/// What follows tool results when there are rules: a nudge, not a repeat.
pub fn reminder(count: usize) -> String {
    match count {
        0 => String::new(),
        1 => "(Reminder: follow Rule 1 in the system prompt.)".to_string(),
        n => format!("(Reminder: follow Rules 1–{n} in the system prompt.)"),
    }
}
