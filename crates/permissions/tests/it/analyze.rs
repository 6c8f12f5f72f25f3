//! The command scanner on its own: ordinary commands are understood word
//! for word, opaque ones still show their parts, broken syntax is opaque,
//! redirection targets are judged, and hostile nesting stays bounded.

use axon_permissions::analyze;
use std::path::Path;

fn parts(cmd: &str) -> (Vec<Vec<String>>, Option<String>) {
    let a = analyze(cmd, Path::new("/ws"));
    (a.parts, a.opaque)
}

fn words(list: &[&[&str]]) -> Vec<Vec<String>> {
    list.iter().map(|p| p.iter().map(|w| w.to_string()).collect()).collect()
}

#[test]
fn ordinary_commands_are_understood() {
    let cases: &[(&str, &[&[&str]])] = &[
        ("cargo test --workspace", &[&["cargo", "test", "--workspace"]]),
        ("git status", &[&["git", "status"]]),
        ("ls -la src", &[&["ls", "-la", "src"]]),
        ("cargo test 2>&1 | tail -20", &[&["cargo", "test"], &["tail", "-20"]]),
        ("grep -rn \"a|b\" src", &[&["grep", "-rn", "a|b", "src"]]),
        ("echo 'a && b'", &[&["echo", "a && b"]]),
        (
            "find . -name x -exec rm {} \\;",
            &[&["find", ".", "-name", "x", "-exec", "rm", "{}", ";"]],
        ),
        ("cargo test \\\n  --all", &[&["cargo", "test", "--all"]]),
        ("ls # a comment; rm x", &[&["ls"]]),
        ("ls &&\n  cargo test", &[&["ls"], &["cargo", "test"]]),
        ("echo a#b", &[&["echo", "a#b"]]),
        ("echo \"\" x", &[&["echo", "", "x"]]),
        ("time cargo test", &[&["time", "cargo", "test"]]),
        ("cat <<'EOF'\n$(rm x); rm y\nEOF\nls", &[&["cat"], &["ls"]]),
        ("cat <<-EOF > out.txt\n\tbody\n\tEOF", &[&["cat"]]),
        ("sort <<< \"a b\"", &[&["sort"]]),
        ("cargo test -- --nocapture", &[&["cargo", "test", "--", "--nocapture"]]),
        ("git log --format='%H %s' -n 5", &[&["git", "log", "--format=%H %s", "-n", "5"]]),
        ("rg \"foo(bar)\" src", &[&["rg", "foo(bar)", "src"]]),
        ("echo ${HOME}", &[&["echo", "${HOME}"]]),
        ("ls -la | grep -v \"^d\" > files.txt", &[&["ls", "-la"], &["grep", "-v", "^d"]]),
        ("git commit -m \"fix: a (b); c\"", &[&["git", "commit", "-m", "fix: a (b); c"]]),
        ("cd .. && ls", &[&["cd", ".."], &["ls"]]),
        ("python3 -c 'print(1)'", &[&["python3", "-c", "print(1)"]]),
        ("echo \"it's\" 'say \"hi\"'", &[&["echo", "it's", "say \"hi\""]]),
        ("echo $((1<<2))\nls", &[&["echo", "$((1<<2))"], &["ls"]]),
        ("echo $(( 1 << 2 )) \"$((3>>1))\"", &[&["echo", "$((1<<2))", "$((3>>1))"]]),
        ("echo $[1<<2] x", &[&["echo", "$[1<<2]", "x"]]),
        ("echo ${HOME:-/tmp} ${#x} ${f%.rs}", &[&["echo", "${HOME:-/tmp}", "${#x}", "${f%.rs}"]]),
        ("cat <<EOF\n$((1<<2)) ${x}\nEOF\nls", &[&["cat"], &["ls"]]),
    ];
    for (cmd, want) in cases {
        let (got, opaque) = parts(cmd);
        assert_eq!(opaque, None, "{cmd:?}");
        assert_eq!(got, words(want), "{cmd:?}");
    }
}

#[test]
fn opaque_commands_still_show_their_parts() {
    let cases: &[(&str, &[&[&str]])] = &[
        ("cargo test $(rm x)", &[&["rm", "x"], &["cargo", "test", "$(…)"]]),
        ("echo \"`rm x`\"", &[&["rm", "x"], &["echo", "$(…)"]]),
        ("(rm x)", &[&["rm", "x"]]),
        ("{ rm x; }", &[&["rm", "x"]]),
        ("if true; then rm x; fi", &[&["if", "true"], &["then", "rm", "x"], &["fi"]]),
        ("diff <(ls a) b", &[&["ls", "a"], &["diff", "$(…)", "b"]]),
        ("cat <<EOF\n$(rm x)\nEOF", &[&["cat"], &["rm", "x"]]),
        ("echo $'a\\'; rm x'", &[&["echo", "…"]]),
        ("((x=1<<2))\nrm x", &[&["rm", "x"]]),
        (
            "echo $((x<<2)) $(rm y)\nrm x",
            &[&["rm", "y"], &["echo", "$((…))", "$(…)"], &["rm", "x"]],
        ),
        ("echo $(( $(rm y) ))", &[&["rm", "y"], &["echo", "$((…))"]]),
        ("echo $((ls); rm y)", &[&["ls"], &["rm", "y"], &["echo", "$(…)"]]),
        ("((ls) )", &[&["ls"]]),
        ("echo ${x/<<A/}\nrm x\nA", &[&["echo", "${…}"], &["rm", "x"], &["A"]]),
        ("echo ${x:-$(rm y)} z", &[&["rm", "y"], &["echo", "${…}", "z"]]),
        ("echo \"${a[1]}\"", &[&["echo", "${…}"]]),
    ];
    for (cmd, want) in cases {
        let (got, opaque) = parts(cmd);
        assert!(opaque.is_some(), "{cmd:?} should be opaque");
        assert_eq!(got, words(want), "{cmd:?}");
    }
}

#[test]
fn broken_syntax_is_opaque() {
    for cmd in [
        "echo 'a",
        "echo \"a",
        "echo a\\",
        "ls && ",
        "ls | ",
        "; ls",
        "ls ;; rm",
        "ls >",
        "ls > ;",
        "echo $(ls",
        "echo )",
        "a=(1 2)",
        "echo `ls",
    ] {
        assert!(parts(cmd).1.is_some(), "{cmd:?} should be opaque");
    }
}

#[test]
fn redirection_targets() {
    for ok in [
        "ls > out.txt",
        "ls >> sub/out.txt",
        "ls > /ws/out",
        "ls 2> /dev/null",
        "ls &> log",
        "ls >&2",
        "ls 2>&-",
        "ls > a/../b",
        "wc < input",
        "ls >| x",
    ] {
        assert_eq!(parts(ok).1, None, "{ok:?}");
    }
    for bad in [
        "ls > ../x",
        "ls > /etc/x",
        "ls > /tmp/../etc/x",
        "ls > /ws/../x",
        "ls 2>/etc/x",
        "ls &>> /etc/x",
        "ls >& /etc/x",
        "ls > $HOME/x",
        "ls > ~/x",
        "ls > *.txt",
        "ls > .git/config",
        "ls > ./.axon/x",
        "wc < /etc/shadow",
        "ls > ''",
    ] {
        assert!(parts(bad).1.is_some(), "{bad:?} should be opaque");
    }
}

#[test]
fn deep_nesting_stays_bounded() {
    for open in ["$(", "$((", "((", "$[", "${", "$(( $(", "\"$(("] {
        let cmd = open.repeat(10_000);
        assert!(parts(&cmd).1.is_some(), "{open:?}");
        let closed = format!("{}{}", open.repeat(5_000), "))".repeat(5_000));
        assert!(parts(&closed).1.is_some(), "{open:?}");
    }
}
