//! Images attached to the input (a pasted image file, the clipboard's
//! image): held until the next prompt takes them, shown as chips above the
//! input (`view.rs`), and taken off one by one with Backspace on an empty
//! input (`edit.rs`). Reading them is the front end's (no I/O here).

use super::App;
use crate::transcript::Level;

/// An image waiting in the input to go with the next prompt: its name
/// (the file's, or "clipboard image") and the image itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingImage {
    pub name: String,
    pub attachment: axon_protocol::Attachment,
}

impl App {
    /// Attaches an image to the input (a pasted image file, the
    /// clipboard's image): shown above the input, sent with the next
    /// prompt.
    pub fn attach_image(&mut self, name: String, attachment: axon_protocol::Attachment) {
        self.images.push(PendingImage { name, attachment });
    }

    /// Whether a paste may become an attachment: no form takes it.
    pub fn takes_attachments(&self) -> bool {
        self.forms.is_empty()
    }

    /// The input's images, to go with the prompt just sent; the
    /// transcript names them under it.
    pub(super) fn take_images(&mut self) -> Vec<axon_protocol::Attachment> {
        let images = std::mem::take(&mut self.images);
        if !images.is_empty() {
            let names: Vec<&str> = images.iter().map(|i| i.name.as_str()).collect();
            self.notice(Level::Info, format!("attached: {}", names.join(", ")));
        }
        images.into_iter().map(|i| i.attachment).collect()
    }
}
