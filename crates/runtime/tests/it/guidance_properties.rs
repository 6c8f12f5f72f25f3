//! Seed 001's properties of loading skills from git repositories, one
//! proptest each (the system prompt's are core's:
//! `crates/core/tests/it/guidance_properties.rs`). Skill repositories are
//! real git repositories made here and cloned over `file://` URLs: no
//! network.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use axon_runtime::skill_files::{GitSkill, SkillLoader};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 100, failure_persistence: None, ..ProptestConfig::default() }
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=axon-test",
            "-c",
            "user.email=test@axon.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("git is installed");
    assert!(status.success(), "git {args:?}");
}

/// A repository whose SKILL.md says `marker`.
fn make_repo(root: &Path, name: &str, marker: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: test skill\n---\n{marker}\n"),
    )
    .unwrap();
    git(&dir, &["init", "--quiet"]);
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "--quiet", "-m", "skill"]);
    dir
}

/// Six valid repositories, made once for every case.
fn valid_repos() -> &'static (tempfile::TempDir, Vec<(String, String)>) {
    static REPOS: OnceLock<(tempfile::TempDir, Vec<(String, String)>)> = OnceLock::new();
    REPOS.get_or_init(|| {
        let root = tempfile::tempdir().unwrap();
        let repos = (0..6)
            .map(|i| {
                let marker = format!("MARKER-{i}-valid");
                let dir = make_repo(root.path(), &format!("skill{i}"), &marker);
                (format!("file://{}", dir.display()), marker)
            })
            .collect();
        (root, repos)
    })
}

proptest! {
    #![proptest_config(config())]

    /// Seed 001, property 2 (skill loading fault tolerance): "For any list
    /// of SkillItems (some with valid repository paths, some invalid),
    /// loadAllSkills returns the content of every valid skill, the number
    /// returned equals the number of valid skills, and invalid skills
    /// neither interrupt loading nor throw."
    #[test]
    fn seed001_prop2_invalid_skills_never_stop_the_valid_ones(
        picks in prop::collection::vec((any::<bool>(), 0usize..6), 0..6),
    ) {
        let (root, repos) = valid_repos();
        let cache = tempfile::tempdir().unwrap();
        let mut specs = Vec::new();
        let mut expected = Vec::new();
        for (n, (valid, i)) in picks.iter().enumerate() {
            if *valid {
                specs.push(GitSkill { name: format!("v{n}"), repo: repos[*i].0.clone(), path: None });
                expected.push(repos[*i].1.clone());
            } else {
                let missing = root.path().join(format!("missing-{n}"));
                specs.push(GitSkill { name: format!("x{n}"), repo: format!("file://{}", missing.display()), path: None });
            }
        }
        let (skills, failures) = SkillLoader::new(cache.path()).load_all(&[], &specs);
        prop_assert_eq!(skills.len(), expected.len());
        prop_assert_eq!(failures.len(), specs.len() - expected.len());
        for (skill, marker) in skills.iter().zip(&expected) {
            prop_assert_eq!(skill.content.as_str(), marker.as_str());
        }
    }

    /// Seed 001, property 3 (skill cache idempotence): "For any SkillItem,
    /// two consecutive calls of loadSkill return the same content, and the
    /// second call does not trigger a git clone (cache only)."
    #[test]
    fn seed001_prop3_a_second_load_uses_the_cache(marker in "[A-Za-z0-9]{1,40}") {
        let origin = tempfile::tempdir().unwrap();
        let repo = make_repo(origin.path(), "skill", &marker);
        let cache = tempfile::tempdir().unwrap();
        let loader = SkillLoader::new(cache.path());
        let spec = GitSkill { name: "skill".into(), repo: format!("file://{}", repo.display()), path: None };
        let first = loader.load_git(&spec).unwrap();
        // With the origin gone, only the cache can answer.
        std::fs::remove_dir_all(&repo).unwrap();
        let second = loader.load_git(&spec).unwrap();
        prop_assert_eq!(&first, &second);
        prop_assert_eq!(first.content.as_str(), marker.as_str());
    }
}
