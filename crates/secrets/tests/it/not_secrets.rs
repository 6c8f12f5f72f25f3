//! What looks random but is not a secret stays as it is: git hashes,
//! UUIDs, lorem ipsum, base64 images, Cargo.lock checksums, code that
//! names keys without holding one.

use axon_secrets::{find, mask};

use crate::samples::{B64, Chars, HEX};

fn assert_clean(what: &str, text: &str) {
    let findings = find(text);
    let shown: Vec<(&str, &str)> =
        findings.iter().map(|f| (f.kind, &text[f.span.clone()])).collect();
    assert!(findings.is_empty(), "{what}: {shown:?}");
    assert_eq!(mask(text).0, text, "{what}");
}

#[test]
fn git_hashes_are_not_secrets() {
    let mut r = Chars::new(7);
    let log: String =
        (0..50).map(|n| format!("{} commit {n}: fix the parser\n", r.take(HEX, 40))).collect();
    assert_clean("git log", &log);
    let short: String = (0..50).map(|_| format!("{} ", r.take(HEX, 7))).collect();
    assert_clean("short hashes", &short);
    assert_clean("a revision", &format!("rev = \"{}\"", r.take(HEX, 40)));
    assert_clean("a sha256 sum", &format!("{}  axon-x86_64.tar.gz", r.take(HEX, 64)));
}

#[test]
fn uuids_are_not_secrets() {
    let mut r = Chars::new(11);
    let uuid = |r: &mut Chars| {
        format!(
            "{}-{}-4{}-a{}-{}",
            r.take(HEX, 8),
            r.take(HEX, 4),
            r.take(HEX, 3),
            r.take(HEX, 3),
            r.take(HEX, 12)
        )
    };
    let text: String = (0..30).map(|_| format!("session {}\n", uuid(&mut r))).collect();
    assert_clean("uuids", &text);
    assert_clean("a request id", &format!("{{\"request_id\": \"{}\"}}", uuid(&mut r)));
}

#[test]
fn lorem_ipsum_is_not_secret() {
    let text = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor \
                incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud \
                exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. The key \
                point: the token counter and the password field are described in the manual.";
    assert_clean("lorem ipsum", text);
}

#[test]
fn base64_images_are_not_secrets() {
    let mut r = Chars::new(13);
    let png = format!("iVBORw0KGgoAAAANSUhEUgAA{}==", r.take(B64, 2000));
    assert_clean("a data URL", &format!("<img src=\"data:image/png;base64,{png}\">"));
    assert_clean("css", &format!(".logo {{ background: url(data:image/png;base64,{png}); }}"));
}

#[test]
fn cargo_lock_checksums_are_not_secrets() {
    let mut r = Chars::new(17);
    let lock: String = (0..20)
        .map(|n| {
            format!(
                "[[package]]\nname = \"crate{n}\"\nversion = \"1.0.{n}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"{}\"\n\n",
                r.take(HEX, 64)
            )
        })
        .collect();
    assert_clean("Cargo.lock", &lock);
    let npm = format!("\"integrity\": \"sha512-{}==\"", r.take(B64, 86));
    assert_clean("package-lock integrity", &npm);
}

#[test]
fn code_that_names_keys_is_not_a_secret() {
    let texts = [
        "let api_key = std::env::var(\"OPENAI_API_KEY\")?;",
        "api_key_env = \"ANTHROPIC_API_KEY\"",
        "password = getpass.getpass()",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "secret_key_base: <%= ENV[\"SECRET_KEY_BASE\"] %>",
        "DATABASE_URL=postgres://localhost:5432/app",
        "const KEY_LEN: usize = 32; // the key's length in bytes",
        "fn authorize(token: &str) -> bool { !token.is_empty() }",
    ];
    for text in texts {
        assert_clean(text, text);
    }
}

#[test]
fn template_and_shell_variables_are_not_secrets() {
    let texts = [
        "postgres://app:{password}@db:5432/app",
        "redis://:{{ redis_password }}@cache:6379",
        "https://deploy:${DEPLOY_TOKEN}@git.example/r.git",
        "https://user:$PASSWORD@host/x",
        "DB_PASSWORD=${DB_PASSWORD}",
        "api_key: {{ api_key }}",
    ];
    for text in texts {
        assert_clean(text, text);
    }
}
