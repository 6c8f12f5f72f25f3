//! Files attached to a prompt: read through the workspace's handle (so an
//! attachment can name nothing outside it), bounded, and quoted so the
//! model sees where each starts and ends. An image file (PNG, JPEG, GIF,
//! WebP by its bytes) is attached as the image, checked and scaled by
//! `axon_tools::prepare_image` as `read_file` does.

use std::io::{BufRead, BufReader, Read};

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
        if meta.len() > axon_tools::MAX_IMAGE_FILE_BYTES {
            return Err(axon_tools::image_too_large(path, meta.len()).to_string());
        }
        let mut bytes = Vec::new();
        reader
            .take(axon_tools::MAX_IMAGE_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot attach {path}: {e}"))?;
        return axon_tools::prepare_image(&bytes, path)
            .map(Attached::Image)
            .map_err(|e| e.to_string());
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

pub use axon_protocol::attachment::quote;
