//! The evasion table: commands written so the analyzer and `sh` would
//! disagree about what runs. Under `deny = ["shell(rm:*)"]` each must be
//! denied (when the rm can be read) or asked about (when it cannot), never
//! left to the default; under any set of prefix rules they are never
//! allowed unless every part can be read and is allowed; and no "always"
//! rule is suggested for one the rules cannot read.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use axon_permissions::{Kind, RuleSet, Source, Verdict, analyze, suggest};
use serde_json::json;

use crate::common::{WS, rules};

fn allowing(allow: &[String]) -> RuleSet {
    let mut set = RuleSet::new();
    set.parse_list(Kind::Allow, allow, &Source::from("test config")).unwrap();
    set
}

fn decide(set: &RuleSet, command: &str) -> Verdict {
    set.decide("shell", &json!({ "command": command }), Path::new(WS))
}

/// Read: the rm is seen, so the deny rule itself applies.
const DENIED: &[&str] = &[
    "echo $((1<<2))\nrm -rf ~",
    "echo $(( 1 << 2 ))\nrm -rf ~",
    "echo \"$((1<<2))\"\nrm -rf ~",
    "((x=1<<2))\nrm -rf ~",
    "echo $[1<<2]\nrm -rf ~",
    "cat <<EOF\n$((1<<2))\nEOF\nrm -rf ~",
    "echo ${x/<<A/}\nrm -rf ~\nA",
    "echo $((x<<2)); rm -rf ~",
    "env -S 'rm -rf ~'",
    "env -iS'rm -rf' ~",
    "env --split-string='-i rm -rf ~'",
    "find . -exec rm -rf {} +",
    "find . -name '*.o' -execdir rm {} \\;",
    "find . -ok rm {} \\;",
    "find . -okdir rm -f {} ';'",
    "find . -exec sudo rm {} +",
    "find . -exec sh -c 'rm -rf \"$1\"' _ {} \\;",
    "ls | xargs rm",
    "ls | xargs -n 1 -P 4 rm -f",
    "bash -o pipefail -c 'rm -rf ~'",
    "bash +o posix -ec 'rm -rf ~'",
    "trap 'rm -rf ~' EXIT",
    "watch -n 1 rm -rf ~",
    "su -c 'rm -rf ~' root",
    "flock /tmp/lock -c 'rm -rf ~'",
    "fish -c 'rm -rf ~'",
    "command eval 'rm -rf ~'",
];

/// Unread: what runs is hidden from the words, so the deny rule could apply.
const ASKED: &[&str] = &[
    "x=rm; $x -rf ~",
    "rm${IFS}-rf${IFS}~",
    "/bin/r? -rf ~",
    "/bin/r[m] -rf ~",
    "/bin/r* -rf ~",
    "$'\\x72m' -rf ~",
    "{rm,-rf,~}",
    "sudo $x -rf ~",
    "`echo rm` -rf ~",
    "$(echo rm) -rf ~",
    "echo 'rm -rf ~' | sh",
    "echo 'rm -rf ~' | bash -s",
    "echo 'rm -rf ~' | sudo -u root dash -",
    "echo 'rm -rf ~' | zsh",
    "echo 'rm -rf ~' | ksh",
    "bash <<< 'rm -rf ~'",
    "bash <<EOF\nrm -rf ~\nEOF",
    "sh /dev/stdin <<< 'rm -rf ~'",
    "bash /dev/fd/3 3<<< 'rm -rf ~'",
    "eval",
    "source /dev/stdin <<< 'rm -rf ~'",
    ". /proc/self/fd/0",
    "echo 'rm -rf ~' | xargs -0 sh -c",
    "echo rm | xargs -I% % -rf ~",
    "bash -c '$0 -rf ~' rm",
    "eval \"$cmd\"",
    "x='a[$(rm -rf ~)]'; echo $((x))",
    "x='a[$(rm -rf ~)]'; ((x))",
    "x='a[$(rm -rf ~)]'; echo ${!x}",
    "x='a[$(rm -rf ~)]'; echo ${y:x}",
    "x='$(rm -rf ~)'; echo ${x@P}",
    "x='a[$(rm -rf ~)]'; echo ${a[x]}",
    "x='a[$(rm -rf ~)]'; let x",
    "x='a[$(rm -rf ~)]'; declare -i y=x",
    "declare 'a[$(rm -rf ~)]=1'",
    "printf -v 'a[$(rm -rf ~)]' x",
    "read 'a[$(rm -rf ~)]' <<< 1",
    "[ -v 'a[$(rm -rf ~)]' ]",
    "PS4='$(rm -rf ~)'; set -x; true",
    "env 'BASH_FUNC_ls%%=() { rm -rf ~; }' bash -c ls",
    "hash -p /bin/rm ls; ls -rf ~",
    "mapfile -C 'rm -rf ~' -c 1 a < notes.txt",
    "(cd / && echo hi)",
];

/// Programs whose rule allows whatever they run, knowingly (wrappers,
/// shells, `eval`); "always" never offers one.
const RUNS_ANYTHING: &[&str] =
    &["xargs", "sudo", "command", "bash", "sh", "fish", "eval", "time", "env"];

/// A prefix rule for every part's program (except rm itself and the
/// programs whose rule allows anything), and for `env`, `find`, `trap`,
/// `watch`, `su` and `flock`: more than any "always" answers could add.
fn allow_every_program(command: &str) -> Vec<String> {
    allow_programs(command, &[&["rm"], RUNS_ANYTHING].concat())
}

/// `shell(echo:*)` and the others above, and a prefix rule for every
/// part's program but those in `skip`.
fn allow_programs(command: &str, skip: &[&str]) -> Vec<String> {
    let analysis = analyze(command, Path::new(WS));
    let mut allow: Vec<String> = ["echo", "find", "env", "trap", "watch", "su", "flock"]
        .iter()
        .map(|program| format!("shell({program}:*)"))
        .collect();
    for part in &analysis.parts {
        let Some(program) = part.iter().find(|word| !word.contains('=')) else { continue };
        let name = program.rsplit('/').next().unwrap_or(program);
        if skip.contains(&name) {
            continue;
        }
        let rule = format!("shell({}:*)", shlex::try_quote(program).unwrap());
        if axon_permissions::Rule::parse(&rule).is_ok() && !allow.contains(&rule) {
            allow.push(rule);
        }
    }
    allow
}

#[test]
fn readable_evasions_are_denied() {
    let deny = rules(&[], &[], &["shell(rm:*)"]);
    let ask = rules(&[], &["shell(rm:*)"], &[]);
    let allow_all = rules(&["shell"], &[], &["shell(rm:*)"]);
    for command in DENIED {
        assert_eq!(decide(&deny, command).kind(), Some(Kind::Deny), "{command:?}");
        assert_eq!(decide(&ask, command).kind(), Some(Kind::Ask), "{command:?}");
        assert_eq!(decide(&allow_all, command).kind(), Some(Kind::Deny), "{command:?}");
    }
}

#[test]
fn unreadable_commands_are_asked_about_naming_the_rule() {
    let deny = rules(&[], &[], &["shell(git push:*)", "shell(rm:*)"]);
    let ask = rules(&[], &["shell(rm:*)"], &[]);
    let allow_all = rules(&["shell"], &[], &["shell(rm:*)"]);
    let none = rules(&["shell(ls:*)"], &[], &[]);
    for command in ASKED {
        let Verdict::Ask { rule, source } = decide(&deny, command) else {
            panic!("{command:?}: {:?}", decide(&deny, command));
        };
        assert!(rule.starts_with("deny shell(git push:*) could apply"), "{command:?}: {rule}");
        assert!(rule.contains("a command the rules cannot read: "), "{command:?}: {rule}");
        assert_eq!(source, "test config");
        let Verdict::Ask { rule, .. } = decide(&ask, command) else {
            panic!("{command:?}: {:?}", decide(&ask, command));
        };
        assert!(rule.starts_with("ask shell(rm:*) could apply"), "{command:?}: {rule}");
        assert_eq!(decide(&allow_all, command).kind(), Some(Kind::Ask), "{command:?}");
        // With no deny or ask rule, the caller's default applies, as before.
        assert_eq!(decide(&none, command), Verdict::None, "{command:?}");
    }
}

#[test]
fn evasions_are_never_allowed_by_prefix_rules() {
    for command in DENIED.iter().chain(ASKED) {
        let allow = allow_every_program(command);
        let set = allowing(&allow);
        assert_ne!(decide(&set, command).kind(), Some(Kind::Allow), "{command:?} with {allow:?}");
    }
    // The same kind of set does allow a readable command it covers.
    let set = allowing(&allow_every_program("echo $((1<<2)) && ls"));
    assert_eq!(decide(&set, "echo $((1<<2)) && ls").kind(), Some(Kind::Allow));
}

#[test]
fn no_rule_is_suggested_for_an_unreadable_command() {
    let ws = Path::new(WS);
    for command in ASKED {
        assert_eq!(suggest("shell", &json!({ "command": command }), ws), None, "{command:?}");
    }
    for command in [
        "find . -exec grep -l x {} +",
        "env -S 'ls -la'",
        "echo a | sh",
        "ls | xargs -I{} cp {} /tmp",
        "$EDITOR notes.txt",
    ] {
        assert_eq!(suggest("shell", &json!({ "command": command }), ws), None, "{command:?}");
    }
    let find = suggest("shell", &json!({ "command": "find . -name '*.rs'" }), ws).unwrap();
    assert_eq!(find.rules, ["shell(find:*)"]);
    let echo = suggest("shell", &json!({ "command": "echo $((1 << 2))" }), ws).unwrap();
    assert_eq!(echo.rules, ["shell(echo:*)"]);
}

#[test]
fn ordinary_commands_stay_readable() {
    // Under a deny rule these are neither denied nor asked about, and a
    // rule for each of their programs allows them.
    let deny = rules(&[], &[], &["shell(rm:*)"]);
    for command in [
        "cargo test --workspace 2>&1 | tail -20",
        "echo $HOME ${USER} ${TMPDIR:-/tmp} ${#PATH} ${f%.rs}",
        "echo $((1 + 2)) $[3*4]",
        "ls *.rs src/[a-z]*.rs",
        "[ -f Cargo.toml ] && cargo build",
        "test -n \"$x\" && echo set",
        "export PATH=$PATH:/opt/bin",
        "read -r -p '[y/N] ' answer",
        "printf '[%s]\\n' a b",
        "sh scripts/check.sh --fast",
        "bash -c 'cargo fmt --check'",
        "find . -name '*.rs' -newer Cargo.toml",
        "git ls-files | xargs -n 50 wc -l",
        "time cargo test",
        "env RUST_LOG=debug cargo run",
        "local x=1",
        "mapfile -t lines < notes.txt",
    ] {
        assert_eq!(decide(&deny, command), Verdict::None, "{command:?}");
        let allow = allowing(&allow_programs(command, &[]));
        assert_eq!(decide(&allow, command).kind(), Some(Kind::Allow), "{command:?}");
    }
}

#[test]
fn commands_run_through_find_env_or_trap_are_checked_but_never_allowed() {
    // Read in full, so a deny rule that does not match leaves them alone,
    // but a rule on `find` (which "always" offers) must not vouch for what
    // `-exec` runs.
    let deny = rules(&[], &[], &["shell(rm:*)"]);
    for command in [
        "find . -name '*.rs' -exec grep -l TODO {} +",
        "env -S 'cargo test'",
        "trap 'echo done' EXIT",
        "watch -n 5 cargo test",
        "bash -c 'find . -exec wc -l {} +'",
    ] {
        assert_eq!(decide(&deny, command), Verdict::None, "{command:?}");
        let allow = allowing(&allow_programs(command, &[]));
        assert_eq!(decide(&allow, command), Verdict::None, "{command:?} with {allow:?}");
    }
}
