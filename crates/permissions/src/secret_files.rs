//! The built-in ask rules for files that usually hold secrets: reading one
//! is asked about by default (issue 36). The runtime adds them with the
//! source [`SECRET_FILES_SOURCE`] unless the user's own config says
//! `[permissions] ask_secret_files = false`.
//!
//! Guarantees: every rule parses; each names `read_file` and a path glob
//! (the workspace's files at any depth), so it asks about reading such a
//! file and nothing else.

/// The rules, as a config's `ask` list would spell them.
pub const SECRET_FILES: &[&str] = &[
    "read_file(**/.env*)",
    "read_file(**/*.pem)",
    "read_file(**/*.key)",
    "read_file(**/*.p12)",
    "read_file(**/*.pfx)",
    "read_file(**/id_rsa*)",
    "read_file(**/id_dsa*)",
    "read_file(**/id_ecdsa*)",
    "read_file(**/id_ed25519*)",
    "read_file(**/.netrc)",
    "read_file(**/.pgpass)",
];

/// Where the verdicts of [`SECRET_FILES`] say they come from.
pub const SECRET_FILES_SOURCE: &str = "axon's built-in rules for secret files (`ask_secret_files = false` under [permissions] in \
     your own config removes them)";
