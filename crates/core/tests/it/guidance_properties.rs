//! Seed 001's properties of skills and rules, one proptest each. Skill
//! repositories are real git repositories made here and cloned over
//! `file://` URLs: no network.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use axon_core::prompt::build_system_prompt;
use axon_core::rules::Rule;
use axon_core::skills::{GitSkill, Skill, SkillLoader};
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

fn skill(name: String, content: String) -> Skill {
    Skill { name, description: "d".into(), content, source: "test".into() }
}

proptest! {
    #![proptest_config(config())]

    /// Seed 001, property 1 (skill content injection): "For any set of
    /// SkillContent objects and SkillItem configurations (some enabled,
    /// some disabled), the output of buildSystemPrompt contains the actual
    /// content text of every enabled skill and none of any disabled skill."
    #[test]
    fn seed001_prop1_enabled_skills_are_injected_and_disabled_ones_are_not(
        flags in prop::collection::vec(any::<bool>(), 0..8),
    ) {
        let all: Vec<(Skill, bool)> = flags
            .iter()
            .enumerate()
            .map(|(i, on)| (skill(format!("s{i}"), format!("CONTENT-{i}-{}", if *on { "on" } else { "off" })), *on))
            .collect();
        let enabled: Vec<Skill> = all.iter().filter(|(_, on)| *on).map(|(s, _)| s.clone()).collect();
        let (prompt, _) = build_system_prompt("base", &[], &enabled, usize::MAX);
        for (s, on) in &all {
            prop_assert_eq!(prompt.contains(&s.content), *on, "{}", s.content);
        }
    }

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

    /// Seed 001, property 6 (structured rule injection): "For any list of
    /// rule strings, the output of buildSystemPrompt contains every rule,
    /// each preceded by a numbered prefix (format `规则 N:`), the numbers
    /// starting at 1 and increasing consecutively." (axon writes `Rule N:`.)
    #[test]
    fn seed001_prop6_rules_are_numbered_from_one(texts in prop::collection::vec("[a-zA-Z0-9 ,.]{1,40}", 0..10)) {
        let rules: Vec<Rule> = texts.iter().map(|t| Rule { text: t.clone(), source: "config".into() }).collect();
        let (prompt, _) = build_system_prompt("base", &rules, &[], 0);
        let mut at = 0;
        for (n, rule) in rules.iter().enumerate() {
            let line = format!("Rule {}: {}", n + 1, rule.text);
            let found = prompt[at..].find(&line);
            prop_assert!(found.is_some(), "missing {line:?} in order");
            at += found.unwrap() + line.len();
        }
        let next = format!("Rule {}:", rules.len() + 1);
        prop_assert!(!prompt.contains(&next));
    }

    /// Seed 001, property 7 (dynamic rule update): "For any two different
    /// rule lists R1 and R2, building the prompt with R1 and then with R2,
    /// the second output contains every rule of R2 and none of the rules
    /// removed from R1."
    #[test]
    fn seed001_prop7_a_new_rule_list_replaces_the_old(
        r1 in prop::collection::btree_set(0u32..1000, 0..8),
        r2 in prop::collection::btree_set(0u32..1000, 0..8),
    ) {
        let rules = |set: &std::collections::BTreeSet<u32>| -> Vec<Rule> {
            set.iter().map(|n| Rule { text: format!("keep rule number {n:04}."), source: "config".into() }).collect()
        };
        let _ = build_system_prompt("base", &rules(&r1), &[], 0);
        let (second, _) = build_system_prompt("base", &rules(&r2), &[], 0);
        for n in &r2 {
            let rule = format!("keep rule number {n:04}.");
            prop_assert!(second.contains(&rule));
        }
        for n in r1.difference(&r2) {
            let rule = format!("keep rule number {n:04}.");
            prop_assert!(!second.contains(&rule));
        }
    }
}

/// Skills past the budget are listed, not injected, and `load_skill`
/// serves them.
#[test]
fn skills_past_the_budget_are_listed_for_load_skill() {
    let skills =
        vec![skill("small".into(), "S".repeat(100)), skill("big".into(), "B".repeat(1000))];
    let (prompt, placements) = build_system_prompt("base", &[], &skills, 500);
    use axon_core::prompt::SkillPlacement::{Injected, Listed};
    assert_eq!(placements, [Injected, Listed]);
    assert!(prompt.contains(&"S".repeat(100)) && !prompt.contains(&"B".repeat(1000)));
    assert!(prompt.contains("- big: d") && prompt.contains("load_skill"));
}
