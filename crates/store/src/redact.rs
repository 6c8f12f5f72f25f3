//! Keeping secrets out of session files.
//!
//! Two nets: the exact values the user configured (API keys, bearer tokens
//! read from the environment), and the shapes secrets have even when axon
//! never saw their value (a `sk-…` key a command printed, an
//! `Authorization: Bearer …` header in a log a tool read). Lines are
//! redacted as serialized JSON, so no pattern crosses a quote or a
//! backslash: a masked line is still valid JSON.

use regex::Regex;

const MASK: &str = "[redacted]";

#[derive(Debug, Clone)]
pub struct Redactor {
    /// Known secret values, longest first so a key containing another is
    /// masked whole.
    values: Vec<String>,
    shapes: Option<Regex>,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new(Vec::new())
    }
}

impl Redactor {
    /// Masks `values` (values shorter than 8 characters are ignored: they
    /// would mask ordinary words) and the usual secret shapes.
    pub fn new(values: Vec<String>) -> Self {
        let mut values: Vec<String> = values.into_iter().filter(|v| v.len() >= 8).collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        let shapes = Regex::new(concat!(
            r#"(?i)(authorization|x-api-key|api[_-]?key)(\\?["']?\s*[:=]\s*\\?["']?)(bearer\s+)?[^\s,;"'\\}]{8,}"#,
            r"|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{16,}",
            r"|\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}",
            r"|\bgh[pousr]_[A-Za-z0-9]{20,}",
            r"|\bAKIA[0-9A-Z]{16}\b",
        ))
        .ok();
        Redactor { values, shapes }
    }

    /// `text` with every secret masked.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), MASK);
            }
        }
        if let Some(shapes) = &self.shapes
            && shapes.is_match(&out)
        {
            out = shapes
                .replace_all(&out, |caps: &regex::Captures<'_>| match (caps.get(1), caps.get(2)) {
                    (Some(name), Some(sep)) => format!("{}{}{MASK}", name.as_str(), sep.as_str()),
                    _ => MASK.to_string(),
                })
                .into_owned();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_and_secret_shapes_are_masked() {
        let redactor = Redactor::new(vec!["my-own-secret-value".into(), "short".into()]);
        let text = "key my-own-secret-value and short; OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuv \
                    Authorization: Bearer abc.def.ghi-jklmnop x-api-key: 0123456789abcdef";
        let out = redactor.redact(text);
        assert!(!out.contains("my-own-secret-value"), "{out}");
        assert!(out.contains("short"), "{out}");
        assert!(!out.contains("sk-proj-abcdefghijklmnopqrstuv"), "{out}");
        assert!(!out.contains("abc.def.ghi-jklmnop"), "{out}");
        assert!(!out.contains("0123456789abcdef"), "{out}");
        assert!(out.contains("Authorization: [redacted]"), "{out}");
    }

    #[test]
    fn a_masked_json_line_stays_json() {
        let line = serde_json::json!({"text": "Authorization: Bearer abcdefghijklmnopq\nnext", "k": "api_key=\"0123456789ab\""}).to_string();
        let out = Redactor::default().redact(&line);
        let value: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(!out.contains("abcdefghijklmnopq") && !out.contains("0123456789ab"), "{out}");
        assert!(value["text"].as_str().unwrap().ends_with("\nnext"), "{out}");
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let redactor = Redactor::default();
        let text = "fn main() { let task = \"ask the model\"; } // sk- prefix alone";
        assert_eq!(redactor.redact(text), text);
    }
}
