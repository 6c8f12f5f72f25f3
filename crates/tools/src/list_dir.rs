//! `list_dir`: a folder's tree to a given depth, folders marked with `/`.
//!
//! Entries ignored by .gitignore/.ignore are left out (build output would
//! drown the listing), `.git` is left out, and the listing stops at a
//! fixed number of entries with a note.

use axon_protocol::{ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ToolError;
use crate::read::require_folder;
use crate::registry::{ToolContext, TypedTool};
use crate::walk::{Kind, WalkOptions, walk};
use crate::workspace::Workspace;

const MAX_ENTRIES: usize = 500;
const MAX_DEPTH: usize = 10;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListDirArgs {
    /// Folder to list, relative to the workspace root. Defaults to the root.
    #[serde(default)]
    pub path: Option<String>,
    /// How many levels to show: 1 lists only the folder's own entries. Defaults to 2, at most 10.
    #[serde(default)]
    pub depth: Option<usize>,
}

pub struct ListDir;

impl TypedTool for ListDir {
    type Args = ListDirArgs;
    const NAME: &'static str = "list_dir";

    fn description(&self) -> String {
        format!(
            "List a folder of the workspace as an indented tree; folder names end with `/`, \
             symlinks with `@`. Files ignored by .gitignore, and `.git`, are not shown. depth (default 2) \
             limits how deep it goes; at most {MAX_ENTRIES} entries are shown."
        )
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    async fn run(&self, ctx: &ToolContext, args: ListDirArgs) -> Result<ToolOutput, ToolError> {
        ctx.blocking(Self::NAME, move |workspace| list(workspace, &args))
            .await
            .map(ToolOutput::text)
    }
}

fn list(workspace: &Workspace, args: &ListDirArgs) -> Result<String, ToolError> {
    let user_path = args.path.as_deref().unwrap_or(".");
    let dir = workspace.resolve(user_path)?;
    let rel = workspace.relative(dir.path());
    require_folder(&dir, &rel, "a file", "use read_file to read it")?;
    let depth = args.depth.unwrap_or(2).clamp(1, MAX_DEPTH);
    let options = WalkOptions { max_depth: Some(depth), ..WalkOptions::default() };

    let mut out = vec![format!("{rel}/")];
    let mut shown = 0usize;
    let mut more = 0usize;
    let errors = walk(&dir, &options, &mut |entry| {
        if shown >= MAX_ENTRIES {
            more += 1;
            return;
        }
        let name = entry.name().to_string_lossy();
        let marker = match entry.kind {
            Kind::Dir => "/",
            Kind::Symlink => "@",
            _ => "",
        };
        out.push(format!("{}{name}{marker}", "  ".repeat(entry.depth)));
        shown += 1;
    })
    .map_err(|e| ToolError::io("list", &rel, &e))?;
    if shown == 0 {
        out.push("  (empty)".to_string());
    }
    if more > 0 {
        out.push(format!(
            "[{more} more entries not shown; list a subfolder or lower depth to see them]"
        ));
    }
    if errors > 0 {
        out.push(format!("[{errors} entries could not be read]"));
    }
    Ok(out.join("\n"))
}
