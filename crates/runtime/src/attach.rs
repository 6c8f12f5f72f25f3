//! Files attached to a prompt: read through the workspace's handle (so an
//! attachment can name nothing outside it), bounded, and quoted so the
//! model sees where each starts and ends. An image file (PNG, JPEG, GIF,
//! WebP by its bytes) is attached as the image, checked and scaled by
//! `axon_tools::prepare_image` as `read_file` does; so is an image a front
//! end sends as data (pasted or dropped in a panel, an ACP image block), so
//! no front end can hand the model a corrupt image, another type under an
//! image's name, or one past the APIs' limits.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use axon_protocol::{Attachment, ContentPart, Message};
use axon_tools::{Opened, PreparedImage, Workspace};

/// The most of one attached file put into a prompt.
const MAX_ATTACHMENT: u64 = 256 * 1024;

/// What an attached file gives the prompt.
pub enum Attached {
    Text(String),
    Image(PreparedImage),
}

/// The text of workspace file `path`, or its image.
pub fn read_file(workspace: &Workspace, path: &str) -> Result<Attached, String> {
    let place = workspace.resolve(path).map_err(|e| format!("cannot attach {path}: {e}"))?;
    let (file, meta) = match place.open_read() {
        Ok(Opened::File(file, meta)) => (file, meta),
        Ok(Opened::Dir) => return Err(format!("cannot attach {path}: it is a folder")),
        Ok(Opened::Special) => {
            return Err(format!("cannot attach {path}: it is not a regular file"));
        }
        Err(e) => return Err(format!("cannot attach {path}: {e}")),
    };
    let mut reader = BufReader::new(file);
    let head = reader.fill_buf().map_err(|e| format!("cannot attach {path}: {e}"))?;
    if axon_tools::sniff_image(head).is_some() {
        return image_of(reader, meta.len(), path).map(Attached::Image);
    }
    let mut bytes = Vec::new();
    reader
        .take(MAX_ATTACHMENT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot attach {path}: {e}"))?;
    let cut = bytes.len() as u64 > MAX_ATTACHMENT;
    bytes.truncate(MAX_ATTACHMENT as usize);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        text.push_str(&format!("\n[… cut at {} KiB]", MAX_ATTACHMENT / 1024));
    }
    Ok(Attached::Text(text))
}

/// An image file the user named on the command line (`axon run --image`)
/// as an attachment. The user's own argument, not the model's, so it may
/// lie outside the workspace; checked and scaled as `read_file`'s images.
pub fn user_image(path: &Path) -> Result<Attachment, String> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| format!("cannot open the image {name}: {e}"))?;
    let len = file.metadata().map_err(|e| format!("cannot read the image {name}: {e}"))?.len();
    let image = image_of(file, len, &name)?;
    Ok(Attachment::Image { media_type: image.media_type, data: image.data })
}

/// The image in `reader` (`len` bytes by its metadata, named `name`),
/// refused past the size limit before it is read, then read capped.
fn image_of(reader: impl Read, len: u64, name: &str) -> Result<PreparedImage, String> {
    if len > axon_tools::MAX_IMAGE_FILE_BYTES {
        return Err(axon_tools::image_too_large(name, len).to_string());
    }
    let mut bytes = Vec::new();
    reader
        .take(axon_tools::MAX_IMAGE_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    axon_tools::prepare_image(&bytes, name).map_err(|e| e.to_string())
}

/// An image a front end sent as base64 `data` (declared `media_type`), as
/// the model is sent it: its bytes decide its type, and it is scaled to
/// the APIs' limits like an attached file.
pub fn sent_image(media_type: &str, data: &str) -> Result<PreparedImage, String> {
    use base64::Engine as _;
    let name = format!("the attached {media_type} image");
    // Base64 is 4/3 of its bytes: refuse what cannot fit before decoding.
    let len = data.len() as u64 / 4 * 3;
    if len > axon_tools::MAX_IMAGE_FILE_BYTES {
        return Err(axon_tools::image_too_large(&name, len).to_string());
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| format!("cannot attach {name}: its data is not base64 ({e})"))?;
    axon_tools::prepare_image(&bytes, &name).map_err(|e| e.to_string())
}

pub use axon_protocol::attachment::quote;

/// The one line telling the user that `message`'s images go to `model`,
/// which takes text only; `None` when there are none or it takes them.
/// The wire sends each as a line saying it was not shown, so the model can
/// say so too.
pub(crate) fn unseen_images(model: &str, message: &Message) -> Option<String> {
    let count = message.content.iter().filter(|p| matches!(p, ContentPart::Image { .. })).count();
    if count == 0 || axon_llm::takes_images(model) {
        return None;
    }
    let what = if count == 1 { "the image is" } else { "the images are" };
    Some(format!(
        "{model} takes text only: {what} not sent (the model is told); switch to a model that \
         takes images to show it"
    ))
}
