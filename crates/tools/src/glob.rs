//! `glob`: workspace files whose paths match a pattern.
//!
//! Patterns follow gitignore rules, the ones users already know from
//! ripgrep's `-g` and `.gitignore`: `*` never crosses `/`; a pattern without
//! `/` (`*.rs`) matches a file name at any depth; a pattern with `/`
//! (`src/**/*.rs`) is anchored at the searched folder. Files ignored by
//! .gitignore are not returned, `.git` is skipped, symlinks are not followed.

use axon_protocol::{ToolAnnotations, ToolOutput};
use ignore::overrides::OverrideBuilder;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ToolError;
use crate::registry::{ToolContext, TypedTool};
use crate::walk::{Kind, WalkOptions, walk_parallel};
use crate::workspace::Workspace;
use std::sync::{Mutex, PoisonError};

const MAX_PATHS: usize = 1000;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GlobArgs {
    /// The pattern, e.g. `*.md` (any depth) or `src/**/*.rs` (anchored at path).
    pub pattern: String,
    /// Folder to search in, relative to the workspace root. Defaults to the root.
    #[serde(default)]
    pub path: Option<String>,
}

pub struct Glob;

impl TypedTool for Glob {
    type Args = GlobArgs;
    const NAME: &'static str = "glob";

    fn description(&self) -> String {
        format!(
            "Find files by path pattern (gitignore syntax): `*.md` matches at any depth, \
             `src/**/*.rs` is anchored at the searched folder, `*` never crosses `/`. Returns \
             workspace-relative paths, sorted, at most {MAX_PATHS}. Ignores files excluded by \
             .gitignore."
        )
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    async fn run(&self, ctx: &ToolContext, args: GlobArgs) -> Result<ToolOutput, ToolError> {
        ctx.blocking(Self::NAME, move |workspace| {
            let paths = glob_paths(workspace, &args.pattern, args.path.as_deref())?;
            Ok(render(&args.pattern, &paths))
        })
        .await
        .map(ToolOutput::text)
    }
}

fn render(pattern: &str, paths: &[String]) -> String {
    if paths.is_empty() {
        return format!("No files match '{pattern}'.");
    }
    let shown = &paths[..paths.len().min(MAX_PATHS)];
    let mut out = shown.join("\n");
    if paths.len() > MAX_PATHS {
        out.push_str(&format!(
            "\n[{} more files match; use a narrower pattern or path to see them]",
            paths.len() - MAX_PATHS
        ));
    }
    out
}

/// Every matching file, workspace-relative and sorted. Blocking.
pub(crate) fn glob_paths(
    workspace: &Workspace,
    pattern: &str,
    path: Option<&str>,
) -> Result<Vec<String>, ToolError> {
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return Err(ToolError::failed("pattern is empty; give a glob such as '**/*.rs'"));
    }
    if pattern.starts_with('!') {
        return Err(ToolError::failed(format!(
            "pattern '{pattern}' only excludes; give a pattern of files to find"
        )));
    }
    let root = workspace.resolve(path.unwrap_or("."))?;
    let rel = workspace.relative(root.path());
    crate::read::require_folder(&root, &rel, "a file", "give the folder to search in as path")?;
    let overrides = OverrideBuilder::new(root.path())
        .add(pattern)
        .and_then(|b| b.build())
        .map_err(|e| ToolError::failed(format!("Invalid glob '{pattern}': {e}")))?;
    let found = Mutex::new(Vec::new());
    walk_parallel(&root, &WalkOptions::default(), &|entry| {
        if entry.kind == Kind::File && overrides.matched(entry.place.path(), false).is_whitelist() {
            let rel = workspace.relative(entry.place.path());
            found.lock().unwrap_or_else(PoisonError::into_inner).push(rel);
        }
    })
    .map_err(|e| ToolError::io("search", &workspace.relative(root.path()), &e))?;
    let mut paths = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    paths.sort();
    Ok(paths)
}
