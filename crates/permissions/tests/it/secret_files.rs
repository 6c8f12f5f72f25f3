//! The built-in ask rules for secret files: they parse, ask about reading
//! `.env` files, keys and certificates at any depth, and leave ordinary
//! files (`id_map.rs`, `keys.rs`, `env.rs`) alone; an allow rule cannot
//! undo them (ask beats allow).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use axon_permissions::{Kind, RuleSet, SECRET_FILES, SECRET_FILES_SOURCE, Source};
use serde_json::json;

use crate::common::WS;

fn builtin() -> RuleSet {
    let mut set = RuleSet::new();
    set.parse_list(Kind::Ask, SECRET_FILES, &Source::new(SECRET_FILES_SOURCE)).unwrap();
    set
}

fn kind(set: &RuleSet, tool: &str, path: &str) -> Option<Kind> {
    set.decide(tool, &json!({ "path": path }), Path::new(WS)).kind()
}

#[test]
fn reading_secret_files_is_asked_and_ordinary_files_are_not() {
    let set = builtin();
    let asked = [
        ".env",
        ".env.local",
        "app/.env.production",
        "certs/server.pem",
        "tls.key",
        "deploy/keys/id_rsa",
        "id_rsa.pub",
        "home/.ssh/id_ed25519",
        "id_ecdsa",
        "store.p12",
        "a/b/cert.pfx",
        ".netrc",
        "db/.pgpass",
    ];
    for path in asked {
        assert_eq!(kind(&set, "read_file", path), Some(Kind::Ask), "{path}");
    }
    let left = ["src/id_map.rs", "src/keys.rs", "env.rs", "README.md", "environment/x", "pem.rs"];
    for path in left {
        assert_eq!(kind(&set, "read_file", path), None, "{path}");
    }
    // Only reading is asked about: the rules name read_file alone.
    assert_eq!(kind(&set, "list_dir", ".env"), None);
}

#[test]
fn an_allow_rule_does_not_undo_them() {
    let mut set = builtin();
    set.parse_list(Kind::Allow, &["read_file"], &Source::new("user")).unwrap();
    assert_eq!(kind(&set, "read_file", ".env"), Some(Kind::Ask));
    assert_eq!(kind(&set, "read_file", "src/main.rs"), Some(Kind::Allow));
}
