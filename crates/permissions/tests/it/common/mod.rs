//! What the rule tables share: a workspace path and a rule set from three
//! lists, as a config file would give them.

#![allow(clippy::unwrap_used)]

use axon_permissions::{Kind, RuleSet, Source};

pub const WS: &str = "/home/u/proj";

pub fn rules(allow: &[&str], ask: &[&str], deny: &[&str]) -> RuleSet {
    let mut set = RuleSet::new();
    let source = Source::from("test config");
    set.parse_list(Kind::Allow, allow, &source).unwrap();
    set.parse_list(Kind::Ask, ask, &source).unwrap();
    set.parse_list(Kind::Deny, deny, &source).unwrap();
    set
}
