//! What a `session/prompt` carries, as a runtime prompt: its text, the
//! workspace files the editor links (attached, and read by the runtime
//! through the jail), embedded context, images. A link to anything else
//! (a folder, a file outside the workspace) is mentioned, never read.

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{ContentBlock, EmbeddedResourceResource};
use axon_protocol::Attachment;
use axon_runtime::Workspace;

/// The workspace as the editor names it (paths sent to it start there) and
/// as it is (its jail, whose root is the canonical path): a file URI from
/// the editor may start with either.
pub(crate) struct Roots {
    pub(crate) editor: PathBuf,
    pub(crate) workspace: Workspace,
}

impl Roots {
    /// A `file://` URI under the workspace, as a path relative to it.
    fn relative(&self, uri: &str) -> Option<String> {
        let path = percent_decode(uri.strip_prefix("file://")?);
        let path = Path::new(&path);
        let relative = path
            .strip_prefix(&self.editor)
            .or_else(|_| path.strip_prefix(self.workspace.root()))
            .ok()?;
        Some(relative.to_string_lossy().into_owned())
    }

    /// A `file://` URI of a regular file in the workspace, as a workspace
    /// path. The jail decides (`..` and symlinks leading out are refused);
    /// the runtime reads it through the jail again when it attaches it.
    fn workspace_file(&self, uri: &str) -> Option<String> {
        let relative = self.relative(uri)?;
        let place = self.workspace.resolve(&relative).ok()?;
        place.metadata().ok()?.is_file().then_some(relative)
    }

    fn display(&self, uri: &str) -> String {
        self.relative(uri).unwrap_or_else(|| uri.to_string())
    }
}

/// The prompt's text, and what comes with it: embedded resources, the
/// workspace files the editor links (read by the runtime through the
/// jail; any other link is mentioned in the text), images.
pub(crate) fn prompt_parts(blocks: &[ContentBlock], roots: &Roots) -> (String, Vec<Attachment>) {
    let mut text = String::new();
    let mut attachments = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&t.text);
            }
            ContentBlock::Image(image) => attachments.push(Attachment::Image {
                media_type: image.mime_type.clone(),
                data: image.data.clone(),
            }),
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(contents) => {
                    attachments.push(Attachment::Text {
                        name: roots.display(&contents.uri),
                        text: contents.text.clone(),
                    });
                }
                EmbeddedResourceResource::BlobResourceContents(contents) => {
                    text.push_str(&format!(
                        "\n(attached binary resource {}, not shown)",
                        contents.uri
                    ));
                }
                _ => {}
            },
            ContentBlock::ResourceLink(link) => match roots.workspace_file(&link.uri) {
                Some(path) => attachments.push(Attachment::File { path }),
                None => text.push_str(&format!("\n(linked: {})", link.uri)),
            },
            _ => {}
        }
    }
    (text, attachments)
}

/// `%XX` escapes decoded; a malformed escape stays as written.
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn linked_workspace_files_become_attachments() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(real.join("src")).unwrap();
        std::fs::write(real.join("src/main x.rs"), "fn main() {}").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", real.join("out.txt")).unwrap();
        let editor = PathBuf::from("/home/me/project");
        let workspace = Workspace::new(&real).unwrap();
        let roots = Roots { editor: editor.clone(), workspace };
        let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "explain"},
            {"type": "resource_link", "name": "main.rs", "uri": "file:///home/me/project/src/main%20x.rs"},
            {"type": "resource_link", "name": "passwd", "uri": "file:///etc/passwd"},
            {"type": "resource_link", "name": "src", "uri": format!("file://{}/src", real.display())},
            {"type": "resource_link", "name": "up", "uri": "file:///home/me/project/../x"},
            {"type": "resource_link", "name": "out", "uri": "file:///home/me/project/out.txt"},
            {"type": "resource", "resource": {"uri": "file:///home/me/project/a.md", "text": "unsaved"}}
        ]))
        .unwrap_or_default();
        let (text, attachments) = prompt_parts(&blocks, &roots);
        let folder = format!("file://{}/src", real.display());
        assert_eq!(
            text,
            format!(
                "explain\n(linked: file:///etc/passwd)\n(linked: {folder})\n(linked: file:///home/me/project/../x)\n(linked: file:///home/me/project/out.txt)"
            )
        );
        assert_eq!(
            attachments,
            vec![
                Attachment::File { path: "src/main x.rs".into() },
                Attachment::Text { name: "a.md".into(), text: "unsaved".into() },
            ]
        );
    }
}
