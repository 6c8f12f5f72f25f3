//! What the model may not write: the placeholders secrets were masked to
//! (`[SECRET:kind:abcd…]`). The model saw the placeholder, the file holds
//! the real value; writing the placeholder back would destroy the secret.
//!
//! Guarantees: `write_file` (and the notes' write), `edit_file`,
//! `multi_edit` and `apply_patch`, and their previews, refuse a text holding a placeholder
//! before they read or touch anything, with the reason and what to do.

use crate::error::ToolError;

/// `Err` when `text` (what `field` says it is) holds a placeholder.
pub(crate) fn refuse_placeholder(text: &str, field: &str) -> Result<(), ToolError> {
    if !axon_secrets::has_placeholder(text) {
        return Ok(());
    }
    Err(ToolError::failed(format!(
        "Refused: {field} holds a secret placeholder ({}…]). axon masked a secret before you \
         saw it, so the file holds the real value, not the placeholder; writing it would \
         destroy that value. Leave the placeholder's lines out of the change (edit only the \
         text around them), or ask the user to change the secret themselves.",
        axon_secrets::PLACEHOLDER_PREFIX
    )))
}
