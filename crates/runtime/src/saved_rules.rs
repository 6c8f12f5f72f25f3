//! The permission rules in effect for a workspace, to see and revoke: the
//! ones "always" answers saved (`axon permissions list|rm`, the UI's
//! `/permissions`) and the config files' own.
//!
//! Guarantees: the saved rules are the workspace's trust file as it is on
//! disk, numbered from 1 in the order they were added (the numbers `rm`
//! takes); the config files' rules follow, each with its file (changed
//! there, never here). Removing goes through `Trust::update` (locked,
//! atomic); a rule that is not saved is an error that names the trust file
//! and says how to see what is. A running session keeps the rules it
//! loaded: a removal applies to the sessions started after it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use axon_permissions::{Trust, trust_path};

use crate::config::Effective;

/// The rules in effect for one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleList {
    /// The workspace's trust file, where "always" saves.
    pub trust_file: PathBuf,
    /// The rules "always" saved, in the order they were added.
    pub saved: Vec<String>,
    /// The config files' rules: (file, "allow" | "ask" | "deny", rule).
    pub configured: Vec<(PathBuf, &'static str, String)>,
}

/// The rules in effect for `workspace` (its canonical root).
pub fn list(config: &Effective, workspace: &Path) -> Result<RuleList> {
    let trust = Trust::load(&config.data, workspace)?;
    let mut configured = Vec::new();
    for (path, file) in &config.permissions {
        for (kind, rules) in [("allow", &file.allow), ("ask", &file.ask), ("deny", &file.deny)] {
            configured.extend(rules.iter().map(|rule| (path.clone(), kind, rule.clone())));
        }
    }
    Ok(RuleList { trust_file: trust_path(&config.data, workspace), saved: trust.allow, configured })
}

impl RuleList {
    /// The list for people: numbered saved rules, how to remove one, then
    /// the config files' rules by file.
    pub fn render(&self) -> String {
        let mut text = String::new();
        if self.saved.is_empty() {
            let _ = writeln!(
                text,
                "No rules saved for this workspace (answering \"always\" to an approval saves \
                 one in {}).",
                self.trust_file.display()
            );
        } else {
            let _ = writeln!(
                text,
                "Saved by \"always\" (in {}; `axon permissions rm N` removes rule N):",
                self.trust_file.display()
            );
            for (number, rule) in self.saved.iter().enumerate() {
                let _ = writeln!(text, "  {:>3}  allow  {rule}", number + 1);
            }
        }
        let mut file: Option<&Path> = None;
        for (path, kind, rule) in &self.configured {
            if file != Some(path.as_path()) {
                let _ = writeln!(text, "From {} (edit that file to change them):", path.display());
                file = Some(path);
            }
            let _ = writeln!(text, "       {kind:<5}  {rule}");
        }
        text.trim_end().to_string()
    }
}

/// Removes the saved rule `which` (its number in [`list`], or its text)
/// from `workspace`'s trust file; answers the rule removed.
pub fn remove(data: &Path, workspace: &Path, which: &str) -> Result<String> {
    let (trust, removed) = Trust::update(data, workspace, |trust| trust.remove_allow(which))?;
    match removed {
        Some(rule) => Ok(rule),
        None => {
            let file = trust_path(data, workspace);
            let saved = match trust.allow.len() {
                0 => "no rules are saved there".to_string(),
                1 => "1 rule is saved there, number 1".to_string(),
                n => format!("{n} rules are saved there, numbered 1 to {n}"),
            };
            bail!(
                "no saved rule `{}` for {} ({saved}, in {}); `axon permissions list` shows them \
                 with their numbers",
                which.trim(),
                workspace.display(),
                file.display()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_rule_is_removed_by_number_or_text_and_a_missing_one_is_an_error() {
        let data = tempfile::tempdir().unwrap();
        let workspace = Path::new("/work/project");
        let rules: Vec<String> =
            ["shell(cargo test:*)", "write_file(src/**)", "shell(ls:*)"].map(String::from).into();
        Trust::update(data.path(), workspace, |trust| trust.add_allow(&rules)).unwrap().1.unwrap();

        assert_eq!(remove(data.path(), workspace, "2").unwrap(), "write_file(src/**)");
        assert_eq!(remove(data.path(), workspace, " shell(ls:*) ").unwrap(), "shell(ls:*)");
        let left = Trust::load(data.path(), workspace).unwrap();
        assert_eq!(left.allow, vec!["shell(cargo test:*)".to_string()]);

        let error = remove(data.path(), workspace, "7").unwrap_err().to_string();
        assert!(error.contains("no saved rule `7`"), "{error}");
        assert!(error.contains("1 rule is saved there, number 1"), "{error}");
        assert!(error.contains("axon permissions list"), "{error}");
        let error = remove(data.path(), workspace, "shell(rm:*)").unwrap_err().to_string();
        assert!(error.contains(&trust_path(data.path(), workspace).display().to_string()));
    }

    #[test]
    fn the_list_numbers_saved_rules_and_names_each_configs_file() {
        let list = RuleList {
            trust_file: PathBuf::from("/data/trust/p-00.toml"),
            saved: vec!["shell(cargo test:*)".into(), "edit_file(src/**)".into()],
            configured: vec![(PathBuf::from("/home/u/config.toml"), "deny", "shell(rm:*)".into())],
        };
        let text = list.render();
        assert!(text.contains("in /data/trust/p-00.toml; `axon permissions rm N`"), "{text}");
        assert!(
            text.contains("    1  allow  shell(cargo test:*)\n    2  allow  edit_file(src/**)")
        );
        assert!(text.contains("From /home/u/config.toml (edit that file"), "{text}");
        assert!(text.ends_with("deny   shell(rm:*)"), "{text}");
        let empty = RuleList { saved: vec![], configured: vec![], ..list };
        assert!(empty.render().starts_with("No rules saved for this workspace"));
    }
}
