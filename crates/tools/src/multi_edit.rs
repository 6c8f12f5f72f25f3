//! `multi_edit`: several exact replacements in one file, all or none.
//!
//! Each edit is `edit_file`'s (the same matching, the same refusals with
//! the same hints, CRLF kept) and applies to the text the edits before it
//! left, so a later edit may match what an earlier one wrote. If any edit
//! cannot be made, nothing is written and the message names which one
//! failed and why. The file is read once and written once, atomically (or
//! through the editor when its buffers are attached), and the preview is
//! the diff of all the edits together: exactly what would be written.

use axon_protocol::{Preview, ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::edit::{Replacement, plan, preview_planned, write_planned};
use crate::error::ToolError;
use crate::registry::{ToolContext, TypedTool};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MultiEditArgs {
    /// Path of the file, relative to the workspace root.
    pub path: String,
    /// The replacements, applied in order, each to the result of the ones before it. All are made or none.
    pub edits: Vec<Replacement>,
}

pub struct MultiEdit;

impl TypedTool for MultiEdit {
    type Args = MultiEditArgs;
    const NAME: &'static str = "multi_edit";

    fn description(&self) -> String {
        "Make several exact replacements in one file at once, all or none: each edit is an \
         edit_file (old_str must match exactly, whitespace included, and once unless \
         replace_all) applied to the text the edits before it left. Prefer it to several \
         edit_file calls on the same file. Returns a diff of the whole change."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::DESTRUCTIVE
    }

    async fn run(&self, ctx: &ToolContext, args: MultiEditArgs) -> Result<ToolOutput, ToolError> {
        ctx.blocking(Self::NAME, move |workspace| {
            write_planned(workspace, plan(workspace, &args.path, &args.edits)?)
        })
        .await
        .map(ToolOutput::text)
    }

    fn preview(&self, ctx: &ToolContext, args: &MultiEditArgs) -> Option<Preview> {
        Some(preview_planned(plan(&ctx.workspace, &args.path, &args.edits)))
    }
}
