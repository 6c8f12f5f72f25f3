//! What to tell the user when a sandboxed command failed: which of the
//! sandbox's rules most likely refused it (read from the errors the
//! command printed) and what the user can do about it.
//!
//! Guarantees: [`refusal`] names a rule only when the output carries the
//! error that rule produces (`Read-only file system` for a protected
//! entry's read-only mount, `Device or resource busy` for moving or
//! removing one, `Permission denied` for Landlock, `Operation not
//! permitted` for seccomp, a failed name lookup or connection with the
//! network off), so a failing test does not get blamed on the sandbox;
//! [`remedies`] always lists the three ways out with their exact
//! spelling.

use crate::policy::{Mode, Policy};
use crate::probe::Confinement;

/// The one-line rule that most likely refused a command whose output is
/// `output`, or `None` when nothing in it looks like a refusal.
pub fn refusal(policy: &Policy, confinement: Confinement, output: &str) -> Option<String> {
    let said = |words: &[&str]| words.iter().any(|word| output.contains(word));
    let protected = protected_list(policy);
    if said(&["Read-only file system", "EROFS"]) {
        return Some(format!("a protected entry is read-only in the sandbox ({protected})"));
    }
    if said(&["Device or resource busy", "EBUSY"]) && confinement != Confinement::LandlockOnly {
        return Some(format!(
            "a protected entry, or a folder holding one, cannot be moved or removed in the \
             sandbox ({protected})"
        ));
    }
    if said(&["Permission denied", "EACCES"]) {
        return Some(match (policy.mode, confinement) {
            (Mode::ReadOnly, _) => {
                "the sandbox is read-only: commands write only in $TMPDIR".to_owned()
            }
            (_, Confinement::LandlockOnly) => format!(
                "the sandbox lets commands write only in the workspace and $TMPDIR, and on this \
                 machine (Landlock-only, no mount namespace) not into the protected entries \
                 ({protected}) nor create, remove or rename entries in a folder holding one (the \
                 top of a repository)"
            ),
            _ => "the sandbox lets commands write only in the workspace, $TMPDIR and the \
                  writable roots"
                .to_owned(),
        });
    }
    if said(&["Operation not permitted", "EPERM"]) {
        let network = if policy.network { "" } else { "the network, " };
        return Some(format!(
            "the sandbox's seccomp filter refuses {network}ptrace, mount, namespaces, device \
             nodes, and changing other processes' limits or priority (EPERM)"
        ));
    }
    let offline = [
        "Could not resolve",
        "Couldn't connect",
        "Failed to connect",
        "Network is unreachable",
        "Temporary failure in name resolution",
        "Name or service not known",
        "getaddrinfo",
        "failed to lookup address",
    ];
    if !policy.network && said(&offline) {
        return Some("the network is off in the sandbox".to_owned());
    }
    None
}

/// What the user can do when the sandbox refused a command.
pub fn remedies(policy: &Policy) -> String {
    let mut text = String::from(
        "The user can approve this one call with `unsandboxed: true` (asked every time), ",
    );
    if policy.mode == Mode::WorkspaceWrite {
        text.push_str(
            "add the folder to `writable_roots = [\"/path\"]` under [sandbox] in their config, ",
        );
    } else {
        text.push_str("set `mode = \"workspace-write\"` under [sandbox] in their config, ");
    }
    if !policy.network {
        text.push_str("set `network = true` under [sandbox], ");
    }
    text.push_str("or run axon with `--sandbox off` (no sandbox at all).");
    text
}

fn protected_list(policy: &Policy) -> String {
    policy
        .protected
        .iter()
        .map(|name| match name.as_str() {
            ".git" => "every repository's .git config, hooks and info, and .git files".to_owned(),
            other => other.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::Namespaces;

    fn policy() -> Policy {
        Policy::new(Mode::WorkspaceWrite, "/w", "/t")
    }

    #[test]
    fn each_error_names_its_rule() {
        let ns = Confinement::Namespace(Namespaces::UserAndMount);
        let rofs = refusal(&policy(), ns, "sh: .git/config: Read-only file system").unwrap();
        assert!(rofs.contains("protected entry is read-only") && rofs.contains(".mcp.json"));
        let busy = refusal(&policy(), ns, "mv: cannot move '.git': Device or resource busy");
        assert!(busy.unwrap().contains("cannot be moved or removed"));
        let landlock =
            refusal(&policy(), Confinement::LandlockOnly, "touch: NEW: Permission denied").unwrap();
        assert!(landlock.contains("Landlock-only") && landlock.contains("top of a repository"));
        let seccomp = refusal(&policy(), ns, "Operation not permitted").unwrap();
        assert!(seccomp.contains("seccomp"));
        assert_eq!(refusal(&policy(), ns, "test failed: 1 != 2"), None);
    }

    #[test]
    fn remedies_spell_the_settings() {
        let text = remedies(&policy());
        for needle in
            ["`unsandboxed: true`", "`writable_roots", "`network = true`", "`--sandbox off`"]
        {
            assert!(text.contains(needle), "{needle}: {text}");
        }
    }
}
