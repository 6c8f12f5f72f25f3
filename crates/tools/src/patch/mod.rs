//! `apply_patch`: Codex's patch format (add, update with context chunks,
//! delete, move), several files at once, all or nothing.
//!
//! The whole patch is worked out in memory first (`plan`): it is read
//! (`parse`), every path resolved through the workspace jail, every file
//! read through its handle (the editor's text when buffers are attached,
//! bounded like `edit_file`), and every chunk applied (`apply`), later
//! sections seeing what earlier ones left. Any refusal there (a bad line, a
//! path outside, a missing file, a chunk whose lines are not found, with
//! the closest lines) changes nothing. Only then is anything written:
//! every new content through the one writer (`write_whole`: atomic, or the
//! editor), deletions last; if one fails, the files already written are
//! put back as they were. The preview is `plan` without the write: the
//! diff of every file, exactly what would be written.

mod apply;
mod parse;

pub use parse::patch_paths;

use axon_protocol::{Preview, ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::buffers::{Text, read_whole, write_whole};
use crate::edit::MAX_EDIT_BYTES;
use crate::error::ToolError;
use crate::preview::{cap, invalid, unified_diff_named};
use crate::read::hard_link_note;
use crate::registry::{ToolContext, TypedTool};
use crate::resolved::{Opened, Resolved};
use crate::text::looks_binary;
use crate::workspace::Workspace;
use crate::write::{check_parents, create_parents, not_regular, write_error};
use parse::FileOp;

/// Lines of diff in the result before it is cut.
const MAX_RESULT_DIFF_LINES: usize = 120;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ApplyPatchArgs {
    /// The whole patch, from '*** Begin Patch' to '*** End Patch'.
    pub input: String,
}

pub struct ApplyPatch;

impl TypedTool for ApplyPatch {
    type Args = ApplyPatchArgs;
    const NAME: &'static str = "apply_patch";

    fn description(&self) -> String {
        "Add, change, delete and move files with one patch, all or nothing. Format:\n\
         *** Begin Patch\n\
         *** Add File: path/new.txt\n\
         +every line of the new file, each starting with +\n\
         *** Update File: path/old.rs\n\
         *** Move to: path/renamed.rs   (optional)\n\
         @@ fn main()   (a line above the change, to find it; may be a bare @@)\n\
         \x20unchanged line (starts with a space)\n\
         -removed line\n\
         +added line\n\
         *** Delete File: path/gone.txt\n\
         *** End Patch\n\
         Give about 3 unchanged lines around each change, copied exactly; add '*** End of File' \
         after a chunk that ends the file. Paths are relative to the workspace. Returns the diff."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::DESTRUCTIVE
    }

    async fn run(&self, ctx: &ToolContext, args: ApplyPatchArgs) -> Result<ToolOutput, ToolError> {
        ctx.blocking(Self::NAME, move |workspace| {
            write_planned(workspace, plan(workspace, &args.input)?)
        })
        .await
        .map(ToolOutput::text)
    }

    fn preview(&self, ctx: &ToolContext, args: &ApplyPatchArgs) -> Option<Preview> {
        Some(match plan(&ctx.workspace, &args.input) {
            Ok(planned) => preview_planned(&planned),
            Err(e) => invalid(&e),
        })
    }
}

/// One file a patch touches: as it is, and as the patch leaves it.
struct File {
    place: Resolved,
    rel: String,
    /// The content now; `None` when there is no file.
    before: Option<String>,
    /// The content the patch leaves; `None` when it leaves no file.
    after: Option<String>,
    /// The file this one was moved from, when a move made it.
    moved_from: Option<String>,
    /// The hard-link warning, or empty.
    link_note: String,
    /// An `Add File` replaced the file's whole content.
    replaced: bool,
}

impl File {
    fn changed(&self) -> bool {
        self.before != self.after
    }
}

/// A patch worked out in memory, not yet written: the files it changes,
/// in the order the patch first names them.
struct Planned {
    files: Vec<File>,
}

/// Everything apply_patch does before writing, shared with its preview.
fn plan(workspace: &Workspace, input: &str) -> Result<Planned, ToolError> {
    // A masked secret's placeholder, as added text or as context copied
    // from what the model saw: either would write it over the real value
    // or never match the file.
    crate::placeholder::refuse_placeholder(input, "the patch")?;
    let ops = parse::parse(input)
        .map_err(|why| ToolError::failed(format!("Invalid patch: {why}. Nothing was changed.")))?;
    let mut files: Vec<File> = Vec::new();
    for op in ops {
        match op {
            FileOp::Add { path, content } => {
                let at = file(workspace, &mut files, &path)?;
                files[at].replaced = files[at].after.is_some();
                files[at].after = Some(content);
            }
            FileOp::Delete { path } => {
                not_a_link(workspace, &path, "delete")?;
                let at = file(workspace, &mut files, &path)?;
                if files[at].after.take().is_none() {
                    return Err(ToolError::failed(format!(
                        "Cannot delete '{}': there is no such file. Nothing was changed.",
                        files[at].rel
                    )));
                }
            }
            FileOp::Update { path, move_to, chunks } => {
                if move_to.is_some() {
                    not_a_link(workspace, &path, "move")?;
                }
                let at = file(workspace, &mut files, &path)?;
                let rel = files[at].rel.clone();
                let Some(text) = &files[at].after else {
                    return Err(ToolError::failed(format!(
                        "Cannot update '{rel}': there is no such file (to create it, use '*** Add \
                         File: {path}' with every line starting with '+'). Nothing was changed."
                    )));
                };
                let updated = apply::apply_chunks(&rel, text, &chunks).map_err(|e| {
                    let link_note = &files[at].link_note;
                    ToolError::failed(format!("{link_note}{e}"))
                })?;
                let Some(to) = move_to else {
                    files[at].after = Some(updated);
                    continue;
                };
                let dest = file(workspace, &mut files, &to)?;
                if dest != at {
                    files[at].after = None;
                    files[dest].moved_from = Some(rel);
                }
                files[dest].after = Some(updated);
            }
        }
    }
    files.retain(File::changed);
    if files.is_empty() {
        return Err(ToolError::failed(
            "The patch leaves every file as it was; nothing would change.",
        ));
    }
    for file in files.iter().filter(|f| f.after.is_some()) {
        check_parents(workspace, &file.place)?;
    }
    Ok(Planned { files })
}

/// Refuses to delete or move `path` when it names a symbolic link: the
/// workspace resolves a link to its target, which the patch would then
/// remove, leaving the link dangling, when the link itself was meant.
fn not_a_link(workspace: &Workspace, path: &str, action: &str) -> Result<(), ToolError> {
    let written = std::path::Path::new(path);
    let Some(name) = written.file_name() else { return Ok(()) };
    let parent = written.parent().and_then(|p| p.to_str()).filter(|p| !p.is_empty());
    // A folder that cannot be resolved is reported by the file's own resolve.
    let Ok(folder) = workspace.resolve(parent.unwrap_or(".")) else { return Ok(()) };
    let link = folder.child(name).symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
    if link {
        return Err(ToolError::failed(format!(
            "Cannot {action} '{path}': it is a symbolic link, and a patch changes files, not              links (it would {action} the file the link points to). Remove or rename the link              with shell. Nothing was changed."
        )));
    }
    Ok(())
}

/// The index in `files` of the file at `path`, read on first use.
fn file(workspace: &Workspace, files: &mut Vec<File>, path: &str) -> Result<usize, ToolError> {
    let place = workspace.resolve(path)?;
    let rel = workspace.relative(place.path());
    if let Some(at) = files.iter().position(|f| f.rel == rel) {
        return Ok(at);
    }
    if place.rel().as_os_str().is_empty() {
        return Err(ToolError::failed(format!(
            "'{path}' is the workspace folder itself; a patch names files"
        )));
    }
    let (before, link_note) = read_current(workspace, &place, &rel)?;
    files.push(File {
        place,
        rel,
        after: before.clone(),
        before,
        moved_from: None,
        link_note,
        replaced: false,
    });
    Ok(files.len() - 1)
}

/// The text of the file at `place` now (`None` when there is none),
/// refused as `edit_file` refuses it (a folder, a special file, too large,
/// binary, not UTF-8), and its hard-link warning.
fn read_current(
    workspace: &Workspace,
    place: &Resolved,
    rel: &str,
) -> Result<(Option<String>, String), ToolError> {
    let (file, meta) = match place.open_read() {
        Ok(Opened::File(file, meta)) => (file, meta),
        Ok(Opened::Dir) => {
            return Err(ToolError::failed(format!("'{rel}' is a folder; a patch changes files")));
        }
        Ok(Opened::Special) => return Err(not_regular(rel)),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound) => {
            return Ok((None, String::new()));
        }
        // A file where a folder of the path should be: the write would
        // say so, and so does the plan.
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
            check_parents(workspace, place)?;
            return Err(ToolError::io("read", rel, &e));
        }
        Err(e) => return Err(ToolError::io("read", rel, &e)),
    };
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::failed(format!(
            "'{rel}' is {} bytes, too large for apply_patch (limit {MAX_EDIT_BYTES})",
            meta.len()
        )));
    }
    let Text { bytes, .. } = read_whole(workspace, place, file, &meta, MAX_EDIT_BYTES)
        .map_err(|e| ToolError::io("read", rel, &e))?;
    if bytes.len() as u64 > MAX_EDIT_BYTES {
        return Err(ToolError::failed(format!(
            "'{rel}' is larger than {MAX_EDIT_BYTES} bytes; too large for apply_patch"
        )));
    }
    if looks_binary(&bytes) {
        return Err(ToolError::failed(format!(
            "Cannot patch '{rel}': it looks like a binary file"
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| ToolError::failed(format!("Cannot patch '{rel}': it is not UTF-8 text")))?;
    Ok((Some(text), hard_link_note(rel, &meta)))
}

/// Writes what [`plan`] worked out: new contents first, deletions last;
/// on a failure, what was already done is undone.
fn write_planned(workspace: &Workspace, planned: Planned) -> Result<String, ToolError> {
    let files = &planned.files;
    let mut done: Vec<&File> = Vec::new();
    let order = files
        .iter()
        .filter(|f| f.after.is_some())
        .chain(files.iter().filter(|f| f.after.is_none()));
    for file in order {
        let result = match &file.after {
            Some(text) => create_parents(workspace, &file.place)
                .and_then(|()| write_whole(workspace, &file.place, &file.rel, text)),
            None => file.place.remove_file().map_err(|e| write_error(&file.rel, &e)),
        };
        if let Err(e) = result {
            let undone = undo(workspace, &done);
            return Err(ToolError::failed(format!("{e}\n{undone}")));
        }
        done.push(file);
    }
    let mut out = String::new();
    for file in files {
        out.push_str(&file.link_note);
        if !file.link_note.is_empty() && file.after.is_some() {
            out.push_str("[It is now a file of its own: the other links keep the old content.]\n");
        }
    }
    let noun = if files.len() == 1 { "file" } else { "files" };
    out.push_str(&format!("Applied the patch ({} {noun}):\n", files.len()));
    for line in summary(files) {
        out.push_str(&line);
        out.push('\n');
    }
    let diff = diffs(files);
    let total = diff.lines().count();
    if total <= MAX_RESULT_DIFF_LINES {
        out.push_str(&diff);
    } else {
        let shown: Vec<&str> = diff.lines().take(MAX_RESULT_DIFF_LINES).collect();
        out.push_str(&shown.join("\n"));
        out.push_str(&format!("\n… ({} more diff lines)", total - MAX_RESULT_DIFF_LINES));
    }
    Ok(out)
}

/// Puts the files in `done` back as they were, last first; says how that
/// went.
fn undo(workspace: &Workspace, done: &[&File]) -> String {
    if done.is_empty() {
        return "Nothing was changed.".to_string();
    }
    let mut failed = Vec::new();
    for file in done.iter().rev() {
        let result = match &file.before {
            Some(text) => write_whole(workspace, &file.place, &file.rel, text),
            None => file.place.remove_file().map_err(|e| write_error(&file.rel, &e)),
        };
        if let Err(e) = result {
            failed.push(format!("'{}' ({e})", file.rel));
        }
    }
    if failed.is_empty() {
        "The files written before it were put back as they were: nothing was changed.".to_string()
    } else {
        format!(
            "Putting back the files written before it failed for {}: check them before going on.",
            failed.join(", ")
        )
    }
}

/// The files a move emptied, by the name of their destination.
fn move_source<'a>(files: &'a [File], file: &File) -> Option<&'a File> {
    let from = file.moved_from.as_deref()?;
    files.iter().find(|f| f.rel == from && f.after.is_none() && file.before.is_none())
}

/// Whether `file` is the source of a move shown with its destination.
fn shown_with_move(files: &[File], file: &File) -> bool {
    files.iter().any(|f| move_source(files, f).is_some_and(|s| s.rel == file.rel))
}

/// One line per change: `A path`, `M path`, `D path`, `R from -> to`.
fn summary(files: &[File]) -> Vec<String> {
    files
        .iter()
        .filter(|f| !shown_with_move(files, f))
        .map(|f| match (move_source(files, f), &f.before, &f.after) {
            (Some(source), _, _) => format!("R {} -> {}", source.rel, f.rel),
            (None, None, _) => format!("A {}", f.rel),
            (None, Some(_), None) => format!("D {}", f.rel),
            (None, Some(_), Some(_)) => format!("M {}", f.rel),
        })
        .collect()
}

/// Every file's unified diff, a move's from its old name to its new.
fn diffs(files: &[File]) -> String {
    let mut out = String::new();
    for file in files.iter().filter(|f| !shown_with_move(files, f)) {
        let (from, before) = match move_source(files, file) {
            Some(source) => (source.rel.as_str(), source.before.as_deref()),
            None => (file.rel.as_str(), file.before.as_deref()),
        };
        let after = file.after.as_deref().unwrap_or("");
        let diff = unified_diff_named(from, &file.rel, before.unwrap_or(""), after);
        if diff.is_empty() {
            // A move of an unchanged file, or an empty file added/deleted.
            out.push_str(&format!("--- a/{from}\n+++ b/{}\n", file.rel));
        } else {
            out.push_str(&diff);
        }
    }
    out
}

/// The preview: a line naming every change when there are several, the
/// hard-link warnings, then every file's diff, bounded.
fn preview_planned(planned: &Planned) -> Preview {
    let files = &planned.files;
    let mut text = String::new();
    let changes = summary(files);
    if changes.len() > 1 {
        text.push_str(&format!(
            "[The patch changes {} files: {}]\n",
            changes.len(),
            changes.join(", ")
        ));
    }
    for file in files {
        if !file.link_note.is_empty() {
            text.push_str(&file.link_note);
            text.push_str(
                "[The patch would make it a file of its own: the other links would keep the old \
                 content.]\n",
            );
        }
        if file.replaced && file.after.is_some() {
            text.push_str(&format!(
                "['{}' exists: the patch replaces its whole content]\n",
                file.rel
            ));
        }
    }
    text.push_str(&diffs(files));
    let Some(first) = files.iter().find(|f| !shown_with_move(files, f)).or(files.first()) else {
        return Preview::Invalid { message: "The patch changes no file.".to_string() };
    };
    let created = changes.len() == 1 && first.before.is_none();
    Preview::Diff { path: first.rel.clone(), diff: cap(text), created }
}
