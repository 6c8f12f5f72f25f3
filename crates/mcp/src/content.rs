//! MCP tool results as axon tool outputs.

use axon_protocol::{ContentPart, ToolOutput};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Text, images and audio map directly; embedded resources become their
/// text (or a note for binary blobs); links and structured content are
/// described in text so the model sees them.
pub(crate) fn to_output(result: CallToolResult) -> ToolOutput {
    let mut content = Vec::new();
    for block in result.content {
        match block {
            ContentBlock::Text(text) => content.push(ContentPart::text(text.text)),
            ContentBlock::Image(image) => {
                content.push(ContentPart::Image { media_type: image.mime_type, data: image.data });
            }
            ContentBlock::Audio(audio) => {
                content.push(ContentPart::Audio { media_type: audio.mime_type, data: audio.data });
            }
            ContentBlock::Resource(embedded) => {
                content.push(ContentPart::text(resource_text(&embedded.resource)))
            }
            ContentBlock::ResourceLink(link) => content.push(ContentPart::text(format!(
                "[resource link: {} ({}){}]",
                link.uri,
                link.name,
                link.description.map(|d| format!(": {d}")).unwrap_or_default()
            ))),
            _ => content.push(ContentPart::text("[content of a kind axon does not know]")),
        }
    }
    if let Some(structured) = result.structured_content
        && content.is_empty()
    {
        content.push(ContentPart::text(structured.to_string()));
    }
    if content.is_empty() {
        content.push(ContentPart::text("(no output)"));
    }
    ToolOutput { content, is_error: result.is_error.unwrap_or(false) }
}

/// A resource's contents as text for the model.
pub(crate) fn resource_text(resource: &ResourceContents) -> String {
    match resource {
        ResourceContents::TextResourceContents { uri, text, .. } => {
            format!("[resource {uri}]\n{text}")
        }
        ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => format!(
            "[resource {uri}: binary {}, {} bytes base64]",
            mime_type.as_deref().unwrap_or("data"),
            blob.len()
        ),
        _ => "[a resource of a kind axon does not know]".to_string(),
    }
}
