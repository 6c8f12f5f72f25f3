//! Rule sets and the verdict they give a tool call.
//!
//! Guarantees: deny beats ask beats allow, whatever order the rules were
//! added in. A `shell` call is allowed only when a whole-tool rule allows
//! it or when it is not opaque, can be read in full, runs nothing through a
//! program not taken for an interpreter (`find -exec`, `env -S`), and every
//! one of its simple commands matches an allow rule: prefix and exact rules
//! never allow a command whose words do not show all it runs. Deny and ask
//! look at every part, including those nested in substitutions and those
//! behind wrappers (`sudo`, `env`, `bash -c`, `find -exec`, ...). A command
//! the rules cannot read (`Reading::unreadable`: `$x -rf ~`, `… | sh`, a
//! subshell, ...) that no deny rule matches is asked about whenever a deny
//! or ask rule for `shell` exists, the verdict naming that rule, since it
//! could apply to what the command hides. A path rule matches only a `path`
//! argument inside the workspace. With no rule deciding, the verdict is
//! `Verdict::None` and the caller's default applies.

use std::fmt;
use std::path::Path;

use crate::command::{Analysis, analyze};
use crate::effective::{self, Reading, reading};
use crate::path;
use crate::rule::{Arg, Rule, RuleError};

/// What a rule does to the calls it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Allow,
    Ask,
    Deny,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Allow => "allow",
            Kind::Ask => "ask",
            Kind::Deny => "deny",
        })
    }
}

/// Where a rule was written, shown with the verdict it gives
/// (`/home/u/.config/axon/config.toml`, `trust file`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Source(pub String);

impl Source {
    pub fn new(source: impl Into<String>) -> Source {
        Source(source.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Source {
    fn from(source: &str) -> Source {
        Source(source.to_string())
    }
}

impl From<String> for Source {
    fn from(source: String) -> Source {
        Source(source)
    }
}

/// What the rules say about one call; each decision names the rule (or, for
/// an allowed chain, the rules joined by `, `) and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Deny {
        rule: String,
        source: String,
    },
    Ask {
        rule: String,
        source: String,
    },
    Allow {
        rule: String,
        source: String,
    },
    /// No rule decides: the caller's default applies.
    None,
}

impl Verdict {
    /// The kind of the deciding rule, `None` when no rule decides.
    pub fn kind(&self) -> Option<Kind> {
        match self {
            Verdict::Deny { .. } => Some(Kind::Deny),
            Verdict::Ask { .. } => Some(Kind::Ask),
            Verdict::Allow { .. } => Some(Kind::Allow),
            Verdict::None => None,
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    kind: Kind,
    rule: Rule,
    source: Source,
}

/// Allow, ask and deny rules from every place they were written.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    entries: Vec<Entry>,
}

/// One call as the rules see it.
struct Call<'a> {
    tool: &'a str,
    workspace: &'a Path,
    /// `shell` calls with a `command` string.
    analysis: Option<Analysis>,
    /// How far the rules can read what the shell command runs.
    reading: Reading,
    /// The `path` argument relative to the workspace; `None` when absent or outside.
    path: Option<String>,
    /// The host of a `url` argument (`web_fetch`), as domain rules compare it.
    host: Option<String>,
}

impl RuleSet {
    pub fn new() -> RuleSet {
        RuleSet::default()
    }

    pub fn add(&mut self, kind: Kind, rule: Rule, source: Source) {
        self.entries.push(Entry { kind, rule, source });
    }

    /// Parses and adds `rules`; all or nothing: on the first bad rule,
    /// nothing is added and the error names the rule and `source`.
    pub fn parse_list<S: AsRef<str>>(
        &mut self,
        kind: Kind,
        rules: &[S],
        source: &Source,
    ) -> Result<(), RuleError> {
        let parsed = rules
            .iter()
            .map(|text| Rule::parse(text.as_ref()).map_err(|e| e.with_origin(source.as_str())))
            .collect::<Result<Vec<_>, _>>()?;
        for rule in parsed {
            self.add(kind, rule, source.clone());
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The rules in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (Kind, &Rule, &Source)> {
        self.entries.iter().map(|e| (e.kind, &e.rule, &e.source))
    }

    /// The verdict for calling `tool` with `args` in `workspace` (its
    /// canonical root).
    pub fn decide(&self, tool: &str, args: &serde_json::Value, workspace: &Path) -> Verdict {
        if tool == "apply_patch" {
            return self.decide_patch(args, workspace);
        }
        self.decide_one(tool, args, workspace)
    }

    /// An `apply_patch` call, judged file by file (`crate::patch`): each
    /// file it names is an `edit_file` call of that path, and, for a file it
    /// creates (added, or a move's destination), a `write_file` call too,
    /// whose deny and ask rules hold. Rules naming `apply_patch` itself
    /// hold as well, for the whole patch or (with a glob) per file. Deny
    /// or ask for any file is the verdict of the whole patch; it is allowed
    /// only when every file is.
    fn decide_patch(&self, args: &serde_json::Value, workspace: &Path) -> Verdict {
        let input = args.get("input").and_then(|v| v.as_str()).unwrap_or_default();
        let files = crate::patch::files(input);
        if files.is_empty() {
            return self.decide_one("apply_patch", &serde_json::json!({}), workspace);
        }
        let mut allowed: Vec<Verdict> = Vec::new();
        let mut asked: Option<Verdict> = None;
        for file in &files {
            let args = serde_json::json!({ "path": file.path });
            let as_patch = self.decide_one("apply_patch", &args, workspace);
            let as_edit = self.decide_one("edit_file", &args, workspace);
            let as_write = if file.created {
                self.decide_one("write_file", &args, workspace)
            } else {
                Verdict::None
            };
            let verdicts = [&as_patch, &as_edit, &as_write];
            if let Some(deny) = verdicts.iter().find(|v| matches!(v, Verdict::Deny { .. })) {
                return (*deny).clone();
            }
            if asked.is_none() {
                asked = verdicts
                    .iter()
                    .find(|v| matches!(v, Verdict::Ask { .. }))
                    .map(|v| (*v).clone());
            }
            if let Some(allow) =
                [as_patch, as_edit].into_iter().find(|v| matches!(v, Verdict::Allow { .. }))
            {
                allowed.push(allow);
            }
        }
        if let Some(ask) = asked {
            return ask;
        }
        if allowed.len() != files.len() {
            return Verdict::None;
        }
        let mut rules: Vec<String> = Vec::new();
        let mut sources: Vec<String> = Vec::new();
        for verdict in allowed {
            if let Verdict::Allow { rule, source } = verdict {
                if !rules.contains(&rule) {
                    rules.push(rule);
                }
                if !sources.contains(&source) {
                    sources.push(source);
                }
            }
        }
        Verdict::Allow { rule: rules.join(", "), source: sources.join(", ") }
    }

    /// The verdict for one call of `tool` as its arguments stand.
    fn decide_one(&self, tool: &str, args: &serde_json::Value, workspace: &Path) -> Verdict {
        let tool = crate::rule::rules_name(tool);
        let command = args.get("command").and_then(|c| c.as_str());
        let analysis = (tool == "shell")
            .then_some(command)
            .flatten()
            .map(|command| analyze(command, workspace));
        let call = Call {
            tool,
            workspace,
            reading: analysis
                .as_ref()
                .map(|analysis| reading(analysis, workspace))
                .unwrap_or_default(),
            analysis,
            path: args
                .get("path")
                .and_then(|p| p.as_str())
                .and_then(|p| path::relative(workspace, p)),
            host: crate::domain::url_host(args),
        };
        if let Some(entry) = self.first(Kind::Deny, |rule| call.touches(rule)) {
            return Verdict::Deny {
                rule: entry.rule.text().to_string(),
                source: entry.source.0.clone(),
            };
        }
        let asked = self.first(Kind::Ask, |rule| call.touches(rule));
        if let Some(why) = &call.reading.unreadable {
            let could = self.first(Kind::Deny, |rule| call.could_apply(rule)).or_else(|| {
                asked.is_none().then(|| self.first(Kind::Ask, |rule| call.could_apply(rule)))?
            });
            if let Some(entry) = could {
                return Verdict::Ask {
                    rule: format!(
                        "{} {} could apply to a command the rules cannot read: {why}",
                        entry.kind,
                        entry.rule.text()
                    ),
                    source: entry.source.0.clone(),
                };
            }
        }
        if let Some(entry) = asked {
            return Verdict::Ask {
                rule: entry.rule.text().to_string(),
                source: entry.source.0.clone(),
            };
        }
        if let Some(entry) = self.first(Kind::Allow, |rule| call.covers(rule)) {
            return Verdict::Allow {
                rule: entry.rule.text().to_string(),
                source: entry.source.0.clone(),
            };
        }
        self.allow_every_part(&call).unwrap_or(Verdict::None)
    }

    fn first(&self, kind: Kind, mut matches: impl FnMut(&Rule) -> bool) -> Option<&Entry> {
        self.entries.iter().find(|e| e.kind == kind && matches(&e.rule))
    }

    /// Allow for a shell call that is not opaque, that prefix rules may
    /// allow (`Reading::not_allowable`), and whose every part matches some
    /// allow rule.
    fn allow_every_part(&self, call: &Call<'_>) -> Option<Verdict> {
        let analysis = call.analysis.as_ref()?;
        let not_allowable = call.reading.not_allowable().is_some();
        if analysis.opaque.is_some() || not_allowable || analysis.parts.is_empty() {
            return None;
        }
        let mut rules: Vec<&str> = Vec::new();
        let mut sources: Vec<&str> = Vec::new();
        for part in &analysis.parts {
            let entry = self.first(Kind::Allow, |rule| {
                rule.matches_tool(call.tool)
                    && matches!(rule.arg(), Arg::Command(pattern) if pattern.matches(part))
            })?;
            if !rules.contains(&entry.rule.text()) {
                rules.push(entry.rule.text());
            }
            if !sources.contains(&entry.source.as_str()) {
                sources.push(entry.source.as_str());
            }
        }
        Some(Verdict::Allow { rule: rules.join(", "), source: sources.join(", ") })
    }
}

impl Call<'_> {
    /// Whether a deny or ask rule applies: any part (as written or
    /// unwrapped) of a shell command is enough.
    fn touches(&self, rule: &Rule) -> bool {
        if !rule.matches_tool(self.tool) {
            return false;
        }
        match rule.arg() {
            Arg::Whole => true,
            Arg::Path(glob) => self.path.as_deref().is_some_and(|p| glob.is_match(p)),
            Arg::Domain(domain) => self.host.as_deref().is_some_and(|h| domain.matches(h)),
            Arg::Command(pattern) => self.analysis.as_ref().is_some_and(|analysis| {
                effective::any(analysis, self.workspace, &mut |program, args| {
                    pattern.matches_split(program, args)
                })
            }),
        }
    }

    /// Whether a deny or ask rule on this call's commands could match
    /// something that a command the rules cannot read hides.
    fn could_apply(&self, rule: &Rule) -> bool {
        rule.matches_tool(self.tool) && matches!(rule.arg(), Arg::Command(_))
    }

    /// Whether one allow rule covers the whole call on its own.
    fn covers(&self, rule: &Rule) -> bool {
        if !rule.matches_tool(self.tool) {
            return false;
        }
        match rule.arg() {
            Arg::Whole => true,
            Arg::Path(glob) => self.path.as_deref().is_some_and(|p| glob.is_match(p)),
            Arg::Domain(domain) => self.host.as_deref().is_some_and(|h| domain.matches(h)),
            Arg::Command(_) => false,
        }
    }
}
