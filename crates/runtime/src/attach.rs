//! Files attached to a prompt: read through the workspace's handle (so an
//! attachment can name nothing outside it), bounded, and quoted so the
//! model sees where each starts and ends.

use std::io::Read;

use axon_tools::{Opened, Workspace};

/// The most of one attached file put into a prompt.
const MAX_ATTACHMENT: u64 = 256 * 1024;

/// The text of workspace file `path`.
pub fn read_file(workspace: &Workspace, path: &str) -> Result<String, String> {
    let place = workspace.resolve(path).map_err(|e| format!("cannot attach {path}: {e}"))?;
    let file = match place.open_read() {
        Ok(Opened::File(file, _)) => file,
        Ok(Opened::Dir) => return Err(format!("cannot attach {path}: it is a folder")),
        Ok(Opened::Special) => {
            return Err(format!("cannot attach {path}: it is not a regular file"));
        }
        Err(e) => return Err(format!("cannot attach {path}: {e}")),
    };
    let mut bytes = Vec::new();
    file.take(MAX_ATTACHMENT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot attach {path}: {e}"))?;
    let cut = bytes.len() as u64 > MAX_ATTACHMENT;
    bytes.truncate(MAX_ATTACHMENT as usize);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        text.push_str(&format!("\n[… cut at {} KiB]", MAX_ATTACHMENT / 1024));
    }
    Ok(text)
}

pub use axon_protocol::attachment::quote;
