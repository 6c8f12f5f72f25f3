//! The kinds issue 30 §2.11 found left in session files, each found and
//! masked; ordinary text left alone; every vendored rule compiles.
//! Secrets are assembled at run time so this file holds no token a
//! scanner would flag.

use super::*;

/// (kind of secret, a sample line holding it, the secret itself).
fn samples() -> Vec<(&'static str, String, String)> {
    let j = |parts: &[&str]| parts.concat();
    let key_b64 = "jdTtqDj14dLYFVaBprzw2BnHXslhOYJxMjk57tv94WFZWstDGB3xDmUYpPMZs4dGx/doD2rn4BDRT9MG\
                   EXCQq3Tbip1IB+N6Fe7VpvYgTPqOAQf176e+SXKwE77J1NLx2aXR5hc0rSUdnZbJfsxPXUDu9Z9sHav";
    let ssh = j(&[
        "-----BEGIN OPENSSH ",
        "PRIVATE KEY-----\n",
        key_b64,
        "\n-----END OPENSSH ",
        "PRIVATE KEY-----",
    ]);
    let jwt = j(&[
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ",
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ]);
    let hex128 = "b6a27f69cfa03e17fff593fd545209dc761413f5e30a8b5d25d8c99eab429d7413daca5ec3ddf2ccf8\
                  dbc79a33cd00f2d51c631b5faad0caffd2442127630dfa";
    let anthropic = j(&[
        "sk-ant-",
        "api03-1zKd1LaZJp9Im17l8jEf5Aaro9GcjSx4P950iyiwdajnOwKd5TXyfbo3LJoYwIioX2qUT0jfx9aVu7RYxwVDQGcclscO-AA",
    ]);
    let s = |secret: String, line: String| (secret, line);
    let cases = vec![
        ("stripe", s(j(&["sk_", "live_IZsNbNP0nqdzyPifDaH7pbek"]), String::new())),
        (
            "slack",
            s(j(&["xox", "b-986581603946-914819742444-GfipSuhXbA6VGtlHPlEPvGC3"]), String::new()),
        ),
        ("google", s(j(&["AIza", "QRicn8-H9GGvxxK1CB9V3MWWM8VNruLPcyp"]), String::new())),
        ("huggingface", s(j(&["hf_", "XvJcLJqzUYOIcTCQajMFNxqCHiiyHeVvbm"]), String::new())),
        ("gitlab", s(j(&["glpat", "-08as2iWFLMbORa95mT-9"]), String::new())),
        ("github", s(j(&["ghp", "_KUlhpvEygmmEVggzhlkSHwb5RRKkW2X3UxHI"]), String::new())),
        ("openai", s(j(&["sk-", "proj-abcdefghijklmnopqrstuv"]), String::new())),
        ("aws", s(j(&["AKIA", "TMWJOMIJ4HOUJMKT"]), String::new())),
        ("anthropic", s(anthropic, String::new())),
        ("deepseek", s(j(&["sk-", "7444723a1711ad378583a506bf517746"]), String::new())),
        ("jwt", s(jwt, String::new())),
        ("openssh", s(ssh, String::new())),
        (
            "postgres",
            s(
                "S3cr3t-Passw0rd".to_string(),
                j(&["DATABASE_URL=postgres://app:", "S3cr3t-Passw0rd", "@db.internal:5432/app"]),
            ),
        ),
        ("rails", s(hex128.to_string(), j(&["SECRET_KEY_BASE=", hex128]))),
    ];
    cases
        .into_iter()
        .map(|(kind, (secret, line))| {
            let line = if line.is_empty() { format!("found: {secret} (in .env)") } else { line };
            (kind, line, secret)
        })
        .collect()
}

#[test]
fn every_kind_the_attack_left_in_clear_is_found_and_masked() {
    for (kind, line, secret) in samples() {
        let findings = find(&line);
        assert!(!findings.is_empty(), "{kind}: nothing found in {line}");
        let masked = redact(&line, "[redacted]");
        assert!(!masked.contains(&secret), "{kind}: {masked}");
        assert!(masked.contains("[redacted]"), "{kind}: {masked}");
    }
}

#[test]
fn a_finding_names_its_rule_and_spans_only_the_secret() {
    let token = ["ghp", "_KUlhpvEygmmEVggzhlkSHwb5RRKkW2X3UxHI"].concat();
    let text = format!("export GH={token}\n");
    let findings = find(&text);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(&text[findings[0].span.clone()], token);
    assert!(findings[0].kind.contains("github"), "{findings:?}");
    let url = "postgres://app:hunter2hunter2@db/app";
    assert_eq!(redact(url, "***"), "postgres://app:***@db/app");
}

#[test]
fn ordinary_text_is_left_alone() {
    let texts = [
        "fn main() { let task = \"ask the model\"; } // sk- prefix alone",
        "The key idea: tokens are counted per message; max_tokens = 4096",
        "https://example.com/path?query=1 and git@github.com:owner/repo.git",
        "password_length: 12, secret_name: prod",
        "héllo wörld — ünïcode stays whole",
    ];
    for text in texts {
        assert_eq!(redact(text, "[redacted]"), text, "{:?}", find(text));
    }
}

#[test]
fn every_vendored_rule_compiles() {
    let rules = builtin();
    rules.compile_all();
    assert!(rules.len() > 200, "{}", rules.len());
    let broken: Vec<_> =
        rules.skipped().into_iter().filter(|(_, why)| why != "needs a file path").collect();
    assert!(broken.is_empty(), "{broken:?}");
}
