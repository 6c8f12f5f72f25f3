//! Keeping secrets out of session files.
//!
//! Two nets: the exact values the user configured (API keys, bearer tokens
//! read from the environment), and the shapes secrets have even when axon
//! never saw their value: the one maintained rule set of `axon_secrets`
//! (gitleaks' rules and axon's: provider keys, private keys, JWTs, passwords
//! in URLs, `SECRET_KEY_BASE=…`, `Authorization` headers). Records are
//! redacted as parsed JSON, string by string (and by key, for values under
//! names like `api_key`), so a masked line is always valid JSON.

const MASK: &str = "[redacted]";

#[derive(Debug, Clone)]
pub struct Redactor {
    /// Known secret values, longest first so a key containing another is
    /// masked whole.
    values: Vec<String>,
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
        Redactor { values }
    }

    /// Masks every string in `value`, and the whole value under a key that
    /// names a secret.
    pub fn redact_value(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::String(text) => {
                let masked = self.redact(text);
                if masked != *text {
                    *text = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value(v)),
            Value::Object(map) => {
                for (key, inner) in map.iter_mut() {
                    if is_secret_key(key) && (inner.is_string() || inner.is_number()) {
                        *inner = Value::from(MASK);
                    } else {
                        self.redact_value(inner);
                    }
                }
            }
            _ => {}
        }
    }

    /// `text` with every secret masked.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), MASK);
            }
        }
        match axon_secrets::redact(&out, MASK) {
            std::borrow::Cow::Borrowed(_) => out,
            std::borrow::Cow::Owned(masked) => masked,
        }
    }
}

fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase().replace('-', "_");
    [
        "api_key",
        "apikey",
        "authorization",
        "password",
        "client_secret",
        "aws_secret_access_key",
        "access_token",
        "refresh_token",
        "secret",
    ]
    .iter()
    .any(|k| key == *k || key.ends_with(&format!("_{k}")))
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
    fn values_are_masked_by_key_and_lines_stay_json() {
        let mut value = serde_json::json!({"arguments": {"api_key": 12345678901_u64, "openai_api_key": "x", "path": "a"},
            "text": "line1\nsk-proj-abcdefghijklmnopqrstuv\nAuthorization: Basic dXNlcjpwYXNzd29yZA=="});
        Redactor::default().redact_value(&mut value);
        let text = value.to_string();
        assert!(
            !text.contains("12345678901") && !text.contains("sk-proj-abcdefghijklmnopqrstuv"),
            "{text}"
        );
        assert!(!text.contains("dXNlcjpwYXNzd29yZA"), "{text}");
        assert_eq!(value["arguments"]["path"], "a");
        assert_eq!(value["arguments"]["openai_api_key"], MASK);
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let redactor = Redactor::default();
        let text = "fn main() { let task = \"ask the model\"; } // sk- prefix alone";
        assert_eq!(redactor.redact(text), text);
    }
}
