//! The commands deny and ask rules are checked against: each part as
//! written, plus what it would run once its wrappers are peeled off; and
//! whether the rules can read everything a command runs.
//!
//! Guarantees: a superset of the literal parts, never fewer. Leading
//! assignments and keywords (`FOO=1 rm`, `then rm`), a program given by path
//! (`/bin/rm`), wrappers (`sudo`, `env`, `xargs`, `timeout`, ...: every
//! suffix after them, since their options are not known), scripts given to
//! a shell's `-c`, `eval`, `trap`, `watch` or `su -c`, `env -S`'s split
//! string and `find -exec`'s command are all unwrapped (see `invoke`), so
//! `deny = ["shell(rm:*)"]` catches `sudo rm`, `bash -c 'rm x'`, `FOO=1 rm`
//! and `find . -exec rm {} +`. `Reading::unreadable` names what the words
//! do not show: what the scanner could not follow, a program word with an
//! expansion or a pattern (`$x`, `r?`, `{rm,-rf}`), a shell reading
//! standard input, `xargs -I`, names bash evaluates as code, and scripts
//! past the depth or count limit; `Reading::indirect`, commands run through
//! a program not taken for an interpreter (`find -exec`, `env -S`, `trap`).
//! The work is bounded whatever the input (linear in the words; scripts
//! followed 4 deep, 64 at most; 64 programs read by `invoke` per part).
//! This widens deny; it does not make deny complete (`python -c`, a script
//! written then run, a renamed copy of a program): the sandbox is the
//! boundary.

use std::path::Path;

use crate::command::{Analysis, analyze};
use crate::invoke::{self, PROMPTS};

/// Keywords that only precede the command they run.
const KEYWORDS: &[&str] = &["!", "if", "then", "else", "elif", "while", "until", "do", "{"];

/// Programs that run the rest of their arguments (after options of their own).
pub(crate) const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "nice", "nohup", "timeout", "time", "command", "builtin", "exec",
    "xargs", "stdbuf", "ionice", "setsid", "chrt", "taskset", "unbuffer", "strace", "ltrace",
    "watch", "flock", "chroot", "fakeroot",
];

/// Shells whose `-c` argument is a script.
pub(crate) const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];

/// How deep scripts and nested commands are followed.
const MAX_DEPTH: usize = 4;

/// How many scripts one command may have analysed.
const MAX_SCRIPTS: usize = 64;

/// How many programs `invoke` reads per top-level part (each is linear in
/// the part's words).
const MAX_INVOKED: usize = 64;

/// Calls `test` with every (program, arguments) a deny or ask rule should be
/// checked against for `analysis`; answers whether one returned `true`.
pub(crate) fn any(
    analysis: &Analysis,
    workspace: &Path,
    test: &mut dyn FnMut(&str, &[String]) -> bool,
) -> bool {
    let mut walk = Walk::new(workspace, test);
    analysis.parts.iter().any(|part| walk.top(part))
}

/// How far the rules can read what a command runs.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    /// Why the words may not show everything it runs (the first reason).
    pub(crate) unreadable: Option<String>,
    /// Why a rule on a program cannot vouch for a command it runs although
    /// the rules can read it (`find -exec`, `env -S`, ...).
    pub(crate) indirect: Option<String>,
}

impl Reading {
    /// Why no prefix or exact rule may allow the command, if one may not.
    pub(crate) fn not_allowable(&self) -> Option<&str> {
        self.unreadable.as_deref().or(self.indirect.as_deref())
    }
}

/// How far the rules can read what `analysis` runs.
pub(crate) fn reading(analysis: &Analysis, workspace: &Path) -> Reading {
    let mut never = |_: &str, _: &[String]| false;
    let mut walk = Walk::new(workspace, &mut never);
    walk.reading.unreadable.clone_from(&analysis.unreadable);
    for part in &analysis.parts {
        walk.top(part);
    }
    walk.reading
}

struct Walk<'a> {
    workspace: &'a Path,
    scripts: usize,
    invoked: usize,
    test: &'a mut dyn FnMut(&str, &[String]) -> bool,
    reading: Reading,
}

impl<'a> Walk<'a> {
    fn new(workspace: &'a Path, test: &'a mut dyn FnMut(&str, &[String]) -> bool) -> Walk<'a> {
        let (scripts, invoked) = (MAX_SCRIPTS, MAX_INVOKED);
        Walk { workspace, scripts, invoked, test, reading: Reading::default() }
    }

    /// Records why what runs cannot be read; the first reason is kept.
    fn note(&mut self, why: impl FnOnce() -> String) {
        if self.reading.unreadable.is_none() {
            self.reading.unreadable = Some(why());
        }
    }

    fn top(&mut self, part: &[String]) -> bool {
        self.invoked = MAX_INVOKED;
        self.part(part, 0)
    }

    /// One part. The reachable start positions are found in one pass (after
    /// a wrapper, any later word may start the command), so the cost is
    /// linear in the words whatever their number.
    fn part(&mut self, argv: &[String], depth: usize) -> bool {
        let Some((program, args)) = argv.split_first() else {
            return false;
        };
        if (self.test)(program, args) {
            return true;
        }
        let mut next_reachable = true;
        let mut after_wrapper = false;
        for (at, word) in argv.iter().enumerate() {
            let reachable = next_reachable || after_wrapper;
            next_reachable = false;
            if !reachable {
                continue;
            }
            if word.starts_with("BASH_FUNC_") {
                self.note(|| format!("it defines a function through the environment, `{word}`"));
            }
            if let Some(name) = assigned(word) {
                if PROMPTS.contains(&name) {
                    self.note(|| format!("it sets `{name}`, which bash expands or runs as code"));
                }
                next_reachable = true;
                continue;
            }
            if KEYWORDS.contains(&word.as_str()) {
                next_reachable = true;
                continue;
            }
            if is_dynamic(word) {
                self.note(|| format!("its program `{word}` is named by an expansion or a pattern"));
            }
            let rest = &argv[at + 1..];
            if at > 0 && (self.test)(word, rest) {
                return true;
            }
            let name = word.rsplit('/').next().unwrap_or(word);
            if name != word && !name.is_empty() && (self.test)(name, rest) {
                return true;
            }
            if WRAPPERS.contains(&name) {
                after_wrapper = true;
            }
            if invoke::is_special(name) && self.invoke(name, rest, depth) {
                return true;
            }
        }
        false
    }

    /// What `name` runs given `args`, checked like the parts.
    fn invoke(&mut self, name: &str, args: &[String], depth: usize) -> bool {
        if self.invoked == 0 {
            self.note(|| "it runs more commands inside commands than can be followed".into());
            return false;
        }
        self.invoked -= 1;
        let takes = invoke::takes(name, args);
        if let Some(why) = takes.unreadable {
            self.note(|| why);
        }
        if self.reading.indirect.is_none() {
            self.reading.indirect = takes.indirect;
        }
        for script in &takes.scripts {
            if self.script(script, depth) {
                return true;
            }
        }
        for command in &takes.commands {
            if depth >= MAX_DEPTH {
                self.note(|| "it nests commands too deeply to follow".into());
            } else if self.part(command, depth + 1) {
                return true;
            }
        }
        false
    }

    /// A script some program runs, analysed like a command line.
    fn script(&mut self, script: &str, depth: usize) -> bool {
        if depth >= MAX_DEPTH || self.scripts == 0 {
            self.note(|| "it nests scripts too deeply or too often to follow".into());
            return false;
        }
        self.scripts -= 1;
        let inner = analyze(script, self.workspace);
        if let Some(why) = &inner.unreadable {
            self.note(|| format!("a script it runs cannot be read: {why}"));
        }
        inner.parts.iter().any(|part| self.part(part, depth + 1))
    }
}

/// A program word bash would expand or match before running it: an
/// expansion, a substitution, a glob or a brace expansion (`[` alone is
/// the `test` program). Quoted ones are refused too, as the scanner's
/// words no longer show their quotes.
fn is_dynamic(word: &str) -> bool {
    word != "[" && word.contains(['$', '`', '*', '?', '[', '{', '…'])
}

/// The name assigned by `NAME=value`, when it is a valid shell name.
fn assigned(word: &str) -> Option<&str> {
    let (name, _) = word.split_once('=')?;
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::any;
    use crate::command::analyze;
    use std::path::Path;

    fn has(cmd: &str, want: &str) -> bool {
        let ws = Path::new("/ws");
        any(&analyze(cmd, ws), ws, &mut |program, _| program == want)
    }

    #[test]
    fn wrappers_are_peeled() {
        for cmd in [
            "rm x",
            "FOO=1 rm -rf x",
            "sudo -u root rm x",
            "sudo env A=1 rm x",
            "/bin/rm x",
            "bash -c 'rm -rf x'",
            "sh -ec \"cd a && rm x\"",
            "eval rm x",
            "if true; then rm x; fi",
            "find . | xargs rm",
            "! rm x",
            "find . -name x -exec rm {} +",
            "find . -execdir sudo rm {} \\;",
            "env -S 'rm x'",
            "env -i -S'A=1 rm' x",
            "bash -o pipefail -c 'rm x'",
            "trap 'rm x' EXIT",
            "watch -n 1 rm x",
            "su -c 'rm x' root",
            "fish -c 'rm x'",
        ] {
            assert!(has(cmd, "rm"), "{cmd}");
        }
        for cmd in [
            "bash script.sh rm",
            "echo rm",
            "git commit -m 'rm x'",
            "FOO=rm ls",
            "find . -name rm",
            "trap - rm",
        ] {
            assert!(!has(cmd, "rm"), "{cmd}");
        }
    }

    #[test]
    fn hostile_input_is_linear() {
        let cmd = "sudo ".repeat(50_000) + "rm";
        assert!(has(&cmd, "rm"));
        let nested = "bash -c 'sudo bash -c x' ".repeat(1_000);
        assert!(!has(&nested, "rm"));
        // Programs read by `invoke` after a wrapper are budgeted per part.
        for many in ["find -exec ", "env -u x ", "xargs -n 1 ", "sh -o x ", "declare x "] {
            let cmd = format!("sudo {}", many.repeat(20_000));
            assert!(!has(&cmd, "rm"), "{many}");
        }
        let long = "echo $((1<<2)) ${x:-y}; ".repeat(20_000) + "rm";
        assert!(has(&long, "rm"));
    }
}
