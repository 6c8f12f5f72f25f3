//! The vault profile (seed 000): `read_note`, `create_note`, `list_folder`.
//!
//! Note paths are vault-relative (a leading `/` is the vault root) and get
//! `.md` appended when they lack it. `read_note` forgives the model's small
//! slips: a wrong letter case or a note moved to another folder is found when
//! exactly one note fits. Characters other platforms forbid in file names
//! (`< > : " | ? *`) are refused so a vault stays portable.
//!
//! `create_note`'s preview is write_file's, reached through the same path
//! handling and reworded errors as the note itself. With an editor's
//! buffers attached, notes are read from and written through the editor as
//! files are (see the `buffers` module).

use axon_protocol::{ContentPart, Preview, ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::buffers::{Text, read_whole};
use crate::error::{PathError, ToolError};
use crate::preview::invalid;
use crate::read::{hard_link_note, open_regular, require_folder};
use crate::registry::{ToolContext, TypedTool};
use crate::resolved::Resolved;
use crate::text::looks_binary;
use crate::walk::{Kind, WalkOptions, walk};
use crate::workspace::Workspace;
use crate::write::{WriteMode, preview_write, write_text};

const FORBIDDEN: &[char] = &['<', '>', ':', '"', '|', '?', '*'];
/// Bytes of one note read_note reads; a larger file is refused before it
/// is held in memory.
const MAX_NOTE_BYTES: u64 = 16 * 1024 * 1024;
/// Entries one list_folder call shows.
const MAX_FOLDER_ENTRIES: usize = 1000;
/// Notes examined when looking for a near match.
const MAX_FUZZY_CANDIDATES: usize = 50_000;

/// Appends `.md` to a note path that does not end with it.
pub fn normalize_note_path(path: &str) -> String {
    if path.ends_with(".md") { path.to_string() } else { format!("{path}.md") }
}

/// The vault-relative form of a note or folder path: `/` and `` mean the root.
fn vault_relative(path: &str) -> &str {
    let trimmed = path.trim_start_matches('/');
    if trimmed.is_empty() { "." } else { trimmed }
}

fn check_characters(path: &str) -> Result<(), ToolError> {
    if let Some(c) = path.chars().find(|c| FORBIDDEN.contains(c) || c.is_control()) {
        let shown = if c.is_control() { format!("{:?}", c) } else { format!("'{c}'") };
        return Err(ToolError::Path(PathError::Invalid {
            path: path.escape_debug().to_string(),
            reason: format!(
                "it contains {shown}; note names cannot contain < > : \" | ? * or control characters"
            ),
        }));
    }
    Ok(())
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadNoteArgs {
    /// Note path relative to the vault root, e.g. `Daily/2025-01-15.md` (`.md` is added when missing).
    pub path: String,
}

pub struct ReadNote;

impl TypedTool for ReadNote {
    type Args = ReadNoteArgs;
    const NAME: &'static str = "read_note";

    fn description(&self) -> String {
        "Read a note from the vault and return its exact Markdown content. The path is relative \
         to the vault root; `.md` is added when missing. If the exact path does not exist, a \
         note differing only in letter case or folder is used when exactly one fits."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    async fn run(&self, ctx: &ToolContext, args: ReadNoteArgs) -> Result<ToolOutput, ToolError> {
        ctx.blocking(Self::NAME, move |workspace| read_note(workspace, &args.path)).await
    }
}

fn read_note(workspace: &Workspace, requested: &str) -> Result<ToolOutput, ToolError> {
    let note = normalize_note_path(vault_relative(requested));
    check_characters(&note)?;
    let place = workspace.resolve(&note)?;
    if place.symlink_metadata().is_ok() {
        return Ok(ToolOutput::text(read_text(workspace, &place)?));
    }
    let Some(found) = fuzzy_match(workspace, &note) else {
        return Err(ToolError::FileNotFound(note));
    };
    let place = workspace.resolve(&found)?;
    let content = read_text(workspace, &place)?;
    Ok(ToolOutput {
        content: vec![
            ContentPart::text(format!("[No note at '{note}'; showing '{found}' instead.]")),
            ContentPart::text(content),
        ],
        is_error: false,
    })
}

fn read_text(workspace: &Workspace, place: &Resolved) -> Result<String, ToolError> {
    let rel = workspace.relative(place.path());
    let (file, meta) = open_regular(place, &rel)?;
    let Text { bytes, .. } = read_whole(workspace, place, file, &meta, MAX_NOTE_BYTES)
        .map_err(|e| ToolError::io("read", &rel, &e))?;
    if bytes.len() as u64 > MAX_NOTE_BYTES {
        return Err(ToolError::failed(format!(
            "'{rel}' is larger than {} MiB, too large to read as a note; use search to find \
             what you need in it",
            MAX_NOTE_BYTES / (1024 * 1024)
        )));
    }
    if looks_binary(&bytes) {
        return Err(ToolError::failed(format!("Cannot read '{rel}': it is not a text note")));
    }
    // The note's exact content is the seed's promise; a hard-link warning
    // goes before it as its own line.
    let note = hard_link_note(&rel, &meta);
    Ok(format!("{note}{}", String::from_utf8_lossy(&bytes)))
}

/// The one note whose path equals `wanted` ignoring case, or else the one
/// note anywhere whose file name does. `None` when nothing or several fit.
fn fuzzy_match(workspace: &Workspace, wanted: &str) -> Option<String> {
    let wanted_lower = wanted.to_lowercase();
    let wanted_name = wanted_lower.rsplit('/').next().unwrap_or(&wanted_lower).to_string();
    let mut notes: Vec<String> = Vec::new();
    let root = workspace.resolve(".").ok()?;
    let options = WalkOptions { skip_hidden: true, ..WalkOptions::default() };
    walk(&root, &options, &mut |entry| {
        if entry.kind == Kind::File
            && notes.len() < MAX_FUZZY_CANDIDATES
            && entry.name().as_encoded_bytes().ends_with(b".md")
        {
            notes.push(workspace.relative(entry.place.path()));
        }
    })
    .ok()?;
    let unique = |mut fits: Vec<&String>| (fits.len() == 1).then(|| fits.remove(0).clone());
    unique(notes.iter().filter(|p| p.to_lowercase() == wanted_lower).collect()).or_else(|| {
        unique(
            notes
                .iter()
                .filter(|p| p.to_lowercase().rsplit('/').next() == Some(wanted_name.as_str()))
                .collect(),
        )
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateNoteArgs {
    /// Note path relative to the vault root (`.md` is added when missing). Missing folders are created.
    pub path: String,
    /// The Markdown content.
    pub content: String,
    /// `overwrite` (default) replaces an existing note; `append` adds to its end.
    #[serde(default)]
    pub mode: WriteMode,
}

pub struct CreateNote;

impl TypedTool for CreateNote {
    type Args = CreateNoteArgs;
    const NAME: &'static str = "create_note";

    fn description(&self) -> String {
        "Create or update a note in the vault. mode=overwrite (default) replaces an existing \
         note, mode=append adds the content to its end. Missing folders are created; `.md` is \
         added when missing. Names cannot contain < > : \" | ? *."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::DESTRUCTIVE
    }

    async fn run(&self, ctx: &ToolContext, args: CreateNoteArgs) -> Result<ToolOutput, ToolError> {
        let (note, absolute) = note_target(&args.path)?;
        ctx.blocking(Self::NAME, move |workspace| {
            write_text(workspace, &note, &args.content, args.mode)
                .map_err(|e| outside_vault(e, absolute))
        })
        .await
        .map(ToolOutput::text)
    }

    fn preview(&self, ctx: &ToolContext, args: &CreateNoteArgs) -> Option<Preview> {
        let preview = note_target(&args.path).and_then(|(note, absolute)| {
            preview_write(&ctx.workspace, &note, &args.content, args.mode)
                .map_err(|e| outside_vault(e, absolute))
        });
        Some(preview.unwrap_or_else(|e| invalid(&e)))
    }
}

/// The note path `create_note` writes, and whether it was given absolute.
/// An absolute path is taken as one, as write_file takes it: inside the
/// vault it is used, anywhere else it is refused, never quietly turned into
/// a folder of the vault.
fn note_target(path: &str) -> Result<(String, bool), ToolError> {
    let absolute = path.starts_with('/') && !path.trim_start_matches('/').is_empty();
    let note = if absolute {
        normalize_note_path(path)
    } else {
        normalize_note_path(vault_relative(path))
    };
    check_characters(&note)?;
    Ok((note, absolute))
}

/// An absolute note path outside the vault, refused in the vault's terms.
fn outside_vault(error: ToolError, absolute: bool) -> ToolError {
    match error {
        ToolError::Path(PathError::OutsideWorkspace { path, .. }) if absolute => {
            ToolError::failed(format!(
                "Path '{path}' is outside the workspace (the vault); note paths are relative \
                 to the vault root (for example '{}')",
                path.trim_start_matches('/')
            ))
        }
        other => other,
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListFolderArgs {
    /// Folder path relative to the vault root; "" or "/" is the root.
    #[serde(default)]
    pub path: String,
}

pub struct ListFolder;

impl TypedTool for ListFolder {
    type Args = ListFolderArgs;
    const NAME: &'static str = "list_folder";

    fn description(&self) -> String {
        "List the notes and folders directly inside a vault folder, each line marked \
         `[folder]` or `[file]`. \"\" or \"/\" is the vault root."
            .to_string()
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    async fn run(&self, ctx: &ToolContext, args: ListFolderArgs) -> Result<ToolOutput, ToolError> {
        ctx.blocking(Self::NAME, move |workspace| list_folder(workspace, &args.path))
            .await
            .map(ToolOutput::text)
    }
}

fn list_folder(workspace: &Workspace, requested: &str) -> Result<String, ToolError> {
    let folder = vault_relative(requested);
    let place = workspace.resolve(folder)?;
    let rel = workspace.relative(place.path());
    require_folder(&place, &rel, "a note", "use read_note to read it")?;
    let mut items: Vec<(Kind, String)> = Vec::new();
    // Hidden names and ignore rules are the walk's business elsewhere; a
    // folder listing shows what is there.
    let dir = place.open_dir().map_err(|e| ToolError::io("list", &rel, &e))?;
    let entries = dir.entries().map_err(|e| ToolError::io("list", &rel, &e))?;
    for entry in entries.filter_map(Result::ok) {
        let kind = match entry.file_type() {
            Ok(t) if t.is_symlink() => Kind::Symlink,
            Ok(t) if t.is_dir() => Kind::Dir,
            Ok(t) if t.is_file() => Kind::File,
            _ => Kind::Other,
        };
        items.push((kind, entry.file_name().to_string_lossy().into_owned()));
    }
    // Folders first, then notes, each by name.
    items.sort_by(|a, b| (b.0 == Kind::Dir).cmp(&(a.0 == Kind::Dir)).then_with(|| a.1.cmp(&b.1)));
    if items.is_empty() {
        return Ok(format!("'{rel}' is empty."));
    }
    let total = items.len();
    let mut lines: Vec<String> = items
        .into_iter()
        .take(MAX_FOLDER_ENTRIES)
        .map(|(kind, name)| match kind {
            Kind::Dir => format!("[folder] {name}/"),
            Kind::Symlink => format!("[symlink] {name}@"),
            _ => format!("[file] {name}"),
        })
        .collect();
    if total > MAX_FOLDER_ENTRIES {
        lines.push(format!(
            "[{} more entries not shown; list a subfolder, or use glob or search to find notes]",
            total - MAX_FOLDER_ENTRIES
        ));
    }
    Ok(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vault_paths_are_rooted_at_the_vault() {
        assert_eq!(vault_relative("/"), ".");
        assert_eq!(vault_relative(""), ".");
        assert_eq!(vault_relative("/Daily/x.md"), "Daily/x.md");
    }
}
