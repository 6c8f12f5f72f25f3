//! The store with local files: a path pulled in (checked, hashed, listed
//! only when complete), pulled again as a no-op, found by exact name,
//! case-insensitive prefix or path, removed; and files that are not models
//! refused without leaving anything behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{bounded, sha256_hex, tiny_gguf};
use axon_models::{ModelError, ModelStore, PullOptions, Source, StoredModel};

async fn pull_path(store: &ModelStore, path: &std::path::Path) -> Result<StoredModel, ModelError> {
    let mut stages = Vec::new();
    let source = Source::Path(path.to_path_buf());
    let result =
        bounded(store.pull(&source, &PullOptions::default(), &mut |p| stages.push(p.stage))).await;
    if result.is_ok() {
        assert!(stages.contains(&"verifying"), "{stages:?}");
    }
    result
}

#[tokio::test]
async fn a_local_file_is_stored_listed_found_and_removed() {
    let home = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    assert_eq!(store.dir(), home.path().join("models"));
    assert!(store.list().unwrap().is_empty(), "no folder yet is an empty store");

    let small = tiny_gguf("Small", 0);
    let small_path = files.path().join("Small-Chat.Q4_0.gguf");
    std::fs::write(&small_path, &small).unwrap();
    let model = pull_path(&store, &small_path).await.unwrap();
    assert_eq!(model.name, "Small-Chat.Q4_0");
    assert_eq!(model.path, home.path().join("models/Small-Chat.Q4_0.gguf"));
    assert_eq!(model.sha256, sha256_hex(&small));
    assert_eq!(model.size, small.len() as u64);
    assert_eq!(model.architecture.as_deref(), Some("llama"));
    assert_eq!(model.source, format!("file:{}", small_path.canonicalize().unwrap().display()));
    assert!(model.pulled_at.ends_with('Z') && model.pulled_at.len() == 20, "{}", model.pulled_at);
    assert_eq!(std::fs::read(&model.path).unwrap(), small);

    // The manifest is JSON beside the file.
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(home.path().join("models/Small-Chat.Q4_0.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["sha256"], sha256_hex(&small));

    // Pulled again: nothing changes.
    let again = pull_path(&store, &small_path).await.unwrap();
    assert_eq!(again, model);

    let other = files.path().join("small-base.gguf");
    std::fs::write(&other, tiny_gguf("Base", 64)).unwrap();
    pull_path(&store, &other).await.unwrap();
    let names: Vec<String> = store.list().unwrap().into_iter().map(|m| m.name).collect();
    assert_eq!(names, ["Small-Chat.Q4_0", "small-base"]);

    assert_eq!(store.find("Small-Chat.Q4_0").unwrap().unwrap().name, "Small-Chat.Q4_0");
    assert_eq!(store.find("small-c").unwrap().unwrap().name, "Small-Chat.Q4_0");
    assert_eq!(store.find("SMALL-B").unwrap().unwrap().name, "small-base");
    let stored_path = home.path().join("models/small-base.gguf");
    assert_eq!(store.find(stored_path.to_str().unwrap()).unwrap().unwrap().name, "small-base");
    assert!(store.find("large").unwrap().is_none());
    let error = store.find("small").unwrap_err();
    let ModelError::Ambiguous { candidates, .. } = &error else { panic!("{error:?}") };
    assert_eq!(candidates.len(), 2);
    assert!(store.remove("small").is_err(), "an ambiguous name removes nothing");

    let removed = store.remove("small-base").unwrap();
    assert_eq!(removed.name, "small-base");
    assert!(!stored_path.exists());
    assert!(!home.path().join("models/small-base.json").exists());
    assert!(other.exists(), "the original file is the user's");
    let error = store.remove("small-base").unwrap_err();
    assert!(matches!(error, ModelError::NotFound { .. }), "{error:?}");
    assert!(error.to_string().contains("axon models list"), "{error}");
    assert_eq!(store.list().unwrap().len(), 1);
}

#[tokio::test]
async fn files_that_are_not_models_are_refused_and_leave_nothing() {
    let home = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());

    let text = files.path().join("readme.gguf");
    std::fs::write(&text, "# not a model\n").unwrap();
    let error = pull_path(&store, &text).await.unwrap_err();
    assert!(matches!(error, ModelError::NotGguf { .. }), "{error:?}");
    assert!(error.to_string().contains("readme.gguf"), "{error}");

    let mut cut = tiny_gguf("Cut", 0);
    cut.truncate(cut.len() - 1);
    let cut_path = files.path().join("cut.gguf");
    std::fs::write(&cut_path, &cut).unwrap();
    let error = pull_path(&store, &cut_path).await.unwrap_err().to_string();
    assert!(error.starts_with("truncated: ") && error.contains("cut.gguf"), "{error}");

    let missing = files.path().join("missing.gguf");
    let error = pull_path(&store, &missing).await.unwrap_err().to_string();
    assert!(error.contains("missing.gguf"), "{error}");

    assert!(store.list().unwrap().is_empty());
    let leftovers: Vec<_> = walk(home.path());
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[tokio::test]
async fn a_manifest_without_its_file_is_not_a_model_and_a_broken_one_is_named() {
    let home = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let path = files.path().join("m.gguf");
    std::fs::write(&path, tiny_gguf("M", 0)).unwrap();
    let model = pull_path(&store, &path).await.unwrap();
    std::fs::remove_file(&model.path).unwrap();
    assert!(store.list().unwrap().is_empty());
    assert!(store.find("m").unwrap().is_none());

    std::fs::write(store.dir().join("broken.json"), "{ not json").unwrap();
    let error = store.list().unwrap_err().to_string();
    assert!(error.contains("broken.json") && error.contains("delete it"), "{error}");
}

/// Every file under `dir`, folders left out.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[tokio::test]
async fn a_second_pull_while_one_runs_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let path = files.path().join("m.gguf");
    std::fs::write(&path, tiny_gguf("M", 0)).unwrap();
    std::fs::create_dir_all(store.partial_dir()).unwrap();
    // What a running pull holds (its own open of the folder).
    let running = std::fs::File::open(store.partial_dir()).unwrap();
    running.lock().unwrap();
    let error = pull_path(&store, &path).await.unwrap_err();
    assert!(matches!(error, ModelError::Busy { .. }), "{error:?}");
    assert!(error.to_string().contains("wait for it"), "{error}");
    drop(running);
    pull_path(&store, &path).await.unwrap();
}
