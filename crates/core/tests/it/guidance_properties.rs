//! Seed 001's properties of skills and rules in the system prompt, one
//! proptest each. Those of loading skills from git repositories (properties
//! 2 and 3) are the runtime's, which reads and clones them
//! (`crates/runtime/tests/it/guidance_properties.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axon_core::prompt::build_system_prompt;
use axon_core::rules::Rule;
use axon_core::skills::Skill;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 100, failure_persistence: None, ..ProptestConfig::default() }
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
