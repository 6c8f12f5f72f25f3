//! Property tests of rule matching over generated chains: a chain is allowed
//! exactly when every part is, and a matching deny rule always wins.
//! Words come from a small alphabet (some quoted) so that parts and rules
//! collide often; operators are all the separators the scanner splits at.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use axon_permissions::{Kind, RuleSet, Source, analyze};
use proptest::prelude::*;
use serde_json::json;

const WORDS: &[&str] = &["cargo", "test", "git", "status", "ls", "-la", "src", "a b", "x;y"];
const OPERATORS: &[&str] = &[";", " ; ", "&&", " && ", "||", "|", " | ", "|&", "&", "\n", " ;\n"];

/// How one word is written in the command: bare (when it can be), single
/// or double quoted.
fn written(word: &str, style: u8) -> String {
    let needs_quotes = word.contains([' ', ';']);
    match (style % 3, needs_quotes) {
        (0, false) => word.to_string(),
        (1, _) | (0, true) => format!("'{word}'"),
        _ => format!("\"{word}\""),
    }
}

type Part = Vec<String>;

fn part() -> impl Strategy<Value = Part> {
    prop::collection::vec(prop::sample::select(WORDS), 1..4)
        .prop_map(|words| words.into_iter().map(str::to_string).collect())
}

/// A chain of parts joined by random operators, each word in a random style.
fn chain() -> impl Strategy<Value = (Vec<Part>, String)> {
    prop::collection::vec(part(), 1..5).prop_flat_map(|parts| {
        let words: usize = parts.iter().map(Vec::len).sum();
        (
            Just(parts.clone()),
            prop::collection::vec(prop::sample::select(OPERATORS), parts.len()),
            prop::collection::vec(any::<u8>(), words),
        )
            .prop_map(|(parts, operators, styles)| {
                let mut styles = styles.into_iter();
                let mut command = String::new();
                for (at, part) in parts.iter().enumerate() {
                    if at > 0 {
                        command.push_str(operators[at]);
                    }
                    let words: Vec<String> =
                        part.iter().map(|word| written(word, styles.next().unwrap_or(0))).collect();
                    command.push_str(&words.join(" "));
                }
                (parts, command)
            })
    })
}

/// A rule made from a part: a prefix of `keep` words (`:*`) or the exact part.
#[derive(Debug, Clone)]
struct Made {
    words: Vec<String>,
    prefix: bool,
}

impl Made {
    fn text(&self) -> String {
        let quoted: Vec<String> = self.words.iter().map(|w| written(w, 1)).collect();
        if self.prefix {
            format!("shell({}:*)", quoted.join(" "))
        } else {
            format!("shell({})", quoted.join(" "))
        }
    }

    fn matches(&self, part: &[String]) -> bool {
        if self.prefix { part.starts_with(&self.words) } else { part == self.words.as_slice() }
    }
}

/// Rules drawn from the parts (or unrelated ones, for noise): for each, an
/// index into the parts, how many words to keep, and whether it is a prefix.
fn made_rules(parts: &[Part], picks: &[(usize, usize, bool)]) -> Vec<Made> {
    picks
        .iter()
        .map(|&(index, keep, prefix)| {
            let part = &parts[index % parts.len()];
            let keep = 1 + keep % part.len();
            Made {
                words: part[..keep].to_vec(),
                // A shortened part only makes sense as a prefix.
                prefix: prefix || keep < part.len(),
            }
        })
        .collect()
}

fn decide(set: &RuleSet, command: &str) -> Option<Kind> {
    set.decide("shell", &json!({ "command": command }), Path::new("/ws")).kind()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_chain_is_allowed_iff_every_part_is(
        (parts, command) in chain(),
        picks in prop::collection::vec((0usize..8, 0usize..4, any::<bool>()), 0..6),
    ) {
        // The scanner sees exactly the generated parts.
        let analysis = analyze(&command, Path::new("/ws"));
        prop_assert_eq!(&analysis.parts, &parts, "{:?}", command);
        prop_assert_eq!(analysis.opaque, None);

        let made = made_rules(&parts, &picks);
        let mut set = RuleSet::new();
        let texts: Vec<String> = made.iter().map(Made::text).collect();
        set.parse_list(Kind::Allow, &texts, &Source::from("props")).unwrap();

        let every = parts.iter().all(|part| made.iter().any(|rule| rule.matches(part)));
        let want = every.then_some(Kind::Allow);
        prop_assert_eq!(decide(&set, &command), want, "{:?} with {:?}", command, texts);
    }

    #[test]
    fn deny_wins_over_allow_and_ask(
        (parts, command) in chain(),
        picks in prop::collection::vec((0usize..8, 0usize..4, any::<bool>(), 0u8..3), 1..8),
        whole_allow in any::<bool>(),
        whole_ask in any::<bool>(),
    ) {
        let mut set = RuleSet::new();
        let source = Source::from("props");
        let mut kinds = Vec::new();
        for &(index, keep, prefix, kind) in &picks {
            let rule = made_rules(&parts, &[(index, keep, prefix)]).remove(0);
            let kind = [Kind::Allow, Kind::Ask, Kind::Deny][usize::from(kind)];
            set.parse_list(kind, &[rule.text()], &source).unwrap();
            kinds.push((kind, rule));
        }
        if whole_allow {
            set.parse_list(Kind::Allow, &["shell"], &source).unwrap();
        }
        if whole_ask {
            set.parse_list(Kind::Ask, &["Bash(*)"], &source).unwrap();
        }

        let touched = |wanted: Kind| {
            kinds.iter().any(|(kind, rule)| {
                *kind == wanted && parts.iter().any(|part| rule.matches(part))
            })
        };
        let allowed = whole_allow
            || parts.iter().all(|part| {
                kinds.iter().any(|(kind, rule)| *kind == Kind::Allow && rule.matches(part))
            });
        let want = if touched(Kind::Deny) {
            Some(Kind::Deny)
        } else if whole_ask || touched(Kind::Ask) {
            Some(Kind::Ask)
        } else if allowed {
            Some(Kind::Allow)
        } else {
            None
        };
        prop_assert_eq!(decide(&set, &command), want, "{:?}", command);
        if touched(Kind::Deny) {
            // Whatever else is added, the deny stands.
            set.parse_list(Kind::Allow, &["shell", "shell(*)"], &source).unwrap();
            prop_assert_eq!(decide(&set, &command), Some(Kind::Deny));
        }
    }
}
