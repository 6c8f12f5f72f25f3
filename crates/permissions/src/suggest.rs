//! The rule an approval's "always" offers, and how it is described.
//!
//! Guarantees: every suggested rule parses and matches the call it was made
//! for; nothing is suggested for a call no safe rule can describe: an opaque
//! command or one the rules cannot read in full or vouch for by its program
//! (`$x -rf`, `| sh`, `find -exec`, `env -S`, `trap`, ...: see `effective`),
//! a leading assignment, a shell or wrapper (`bash`, `sudo`, `env`, `xargs`,
//! `eval`, ...) whose rule would allow anything, an interpreter given code
//! inline (`python -c`, `node -e`, any option before the script), a path
//! outside the workspace or inside `.git` / `.axon`. A fetch gets a rule for
//! its URL's host (`web_fetch(domain:docs.rs)`), never for every page.

use std::path::Path;

use crate::command::analyze;
use crate::effective::{SHELLS, WRAPPERS, reading};
use crate::path;
use crate::rule::Rule;

/// Rules to add for "always", and a sentence saying what they allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    pub rules: Vec<String>,
    pub description: String,
}

/// Tools whose second word names what they do (`cargo test`, `git status`).
const SUBCOMMANDS: &[&str] = &[
    "git", "cargo", "npm", "pnpm", "yarn", "go", "make", "docker", "kubectl", "pip", "pip3", "uv",
    "poetry", "bundle", "rake", "mix", "dotnet", "gradle", "mvn", "npx", "pnpx", "bunx", "uvx",
];

/// Programs that run code given to them; a rule on the program alone would
/// allow any code.
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "node",
    "ruby",
    "perl",
    "php",
    "deno",
    "bun",
    "lua",
    "Rscript",
    "pwsh",
    "powershell",
    "osascript",
    "tclsh",
    "awk",
    "gawk",
];

/// Other programs a blanket rule must not cover.
const REFUSED: &[&str] = &["eval", "source", ".", "su", "ssh"];

/// What "always" would add for this call, or `None` when no rule is safe.
pub fn suggest(tool: &str, args: &serde_json::Value, workspace: &Path) -> Option<Suggestion> {
    let tool = crate::rule::rules_name(tool);
    let suggestion = match tool {
        "shell" => shell(args.get("command")?.as_str()?, workspace)?,
        "edit_file" | "write_file" => file(tool, args.get("path")?.as_str()?, workspace)?,
        "apply_patch" => patch(args.get("input")?.as_str()?, workspace)?,
        "web_fetch" => {
            let host = crate::domain::url_host(args)?;
            Suggestion {
                rules: vec![format!("web_fetch(domain:{host})")],
                description: format!("allow web_fetch of pages on {host}"),
            }
        }
        other => {
            Suggestion { rules: vec![other.to_string()], description: format!("allow {other}") }
        }
    };
    // A rule that does not parse, or that names a glob instead of the tool,
    // would not mean what the description says.
    let sound = suggestion.rules.iter().all(|text| Rule::parse(text).is_ok())
        && !(tool != "shell" && tool.contains('*'));
    sound.then_some(suggestion)
}

fn shell(command: &str, workspace: &Path) -> Option<Suggestion> {
    let analysis = analyze(command, workspace);
    if analysis.opaque.is_some()
        || analysis.parts.is_empty()
        || reading(&analysis, workspace).not_allowable().is_some()
    {
        return None;
    }
    let mut rules = Vec::new();
    let mut shown = Vec::new();
    for part in &analysis.parts {
        let words = prefix_words(part)?;
        let quoted = words
            .iter()
            .map(|word| shlex::try_quote(word).ok())
            .collect::<Option<Vec<_>>>()?
            .join(" ");
        let rule = format!("shell({quoted}:*)");
        if !rules.contains(&rule) {
            rules.push(rule);
            shown.push(format!("`{}`", words.join(" ")));
        }
    }
    Some(Suggestion {
        rules,
        description: format!("allow {} commands in this workspace", and_list(&shown)),
    })
}

/// The words a prefix rule for `argv` keeps.
fn prefix_words(argv: &[String]) -> Option<Vec<String>> {
    let program = argv.first()?;
    if program.contains('=') {
        return None;
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    if WRAPPERS.contains(&name) || SHELLS.contains(&name) || REFUSED.contains(&name) {
        return None;
    }
    let second = argv.get(1).filter(|word| !word.starts_with('-'));
    if INTERPRETERS.contains(&name) {
        // `python3 -m pytest` or `python3 tool.py`; nothing inline.
        if argv.get(1).is_some_and(|word| word == "-m") {
            let module = argv.get(2).filter(|word| !word.starts_with('-'))?;
            return Some(vec![program.clone(), "-m".to_string(), module.clone()]);
        }
        let script = second?;
        if matches!(script.as_str(), "eval" | "repl" | "exec" | "-") {
            return None;
        }
        return Some(vec![program.clone(), script.clone()]);
    }
    match second {
        Some(sub) if SUBCOMMANDS.contains(&name) => Some(vec![program.clone(), sub.clone()]),
        _ => Some(vec![program.clone()]),
    }
}

/// `edit_file` rules for every file a patch names (the rules its files are
/// judged by), or `None` when one of them gets no rule.
fn patch(input: &str, workspace: &Path) -> Option<Suggestion> {
    let mut rules: Vec<String> = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    for named in crate::patch::files(input) {
        let one = file("edit_file", &named.path, workspace)?;
        for rule in one.rules {
            if !rules.contains(&rule) {
                rules.push(rule);
                let what = one.description.strip_prefix("allow edit_file ").unwrap_or_default();
                shown.push(what.to_string());
            }
        }
    }
    if rules.is_empty() {
        return None;
    }
    Some(Suggestion { rules, description: format!("allow edit_file {}", and_list(&shown)) })
}

fn file(tool: &str, target: &str, workspace: &Path) -> Option<Suggestion> {
    let relative = path::relative(workspace, target)?;
    let mut components = relative.split('/');
    let first = components.next().filter(|first| !first.is_empty())?;
    if first == ".git" || first == ".axon" {
        return None;
    }
    let escaped = escape_glob(first);
    Some(if components.next().is_some() {
        Suggestion {
            rules: vec![format!("{tool}({escaped}/**)")],
            description: format!("allow {tool} in {first}/"),
        }
    } else {
        Suggestion {
            rules: vec![format!("{tool}({escaped})")],
            description: format!("allow {tool} on {first}"),
        }
    })
}

/// `name` as a glob matching exactly itself.
fn escape_glob(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (at, c) in name.chars().enumerate() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') || (at == 0 && c == '~') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}
