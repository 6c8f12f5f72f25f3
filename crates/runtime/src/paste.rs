//! What the terminal UI attaches when the user pastes: a pasted image
//! file's path ([`pasted_image_path`]) and the system clipboard's image
//! ([`clipboard_image`], Ctrl+V). Both are the user's own act, like
//! `axon run --image`, so the file may lie outside the workspace; both go
//! through [`crate::attach::user_image`]'s checks (the bytes decide the
//! type, the size limit, scaled to the APIs' limits).
//!
//! Guarantees: pasted text is taken as a path only when it is exactly one
//! (quoted, `file://`, or with the backslash escapes terminals add) naming
//! an existing PNG, JPEG, GIF or WebP file; anything else stays text. The
//! clipboard tool (`wl-paste` on Wayland, `xclip` on X11) runs in a process
//! group of its own that is killed when it is done, after
//! [`CLIPBOARD_TIMEOUT`], or past [`axon_tools::MAX_IMAGE_FILE_BYTES`] of
//! output; it sees the environment without axon's secrets. Every failure
//! is one line saying what to do (which package to install).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use axon_protocol::Attachment;
use tokio::io::AsyncReadExt;

/// The longest a clipboard tool may take.
pub const CLIPBOARD_TIMEOUT: Duration = Duration::from_secs(5);

const IMAGE_EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// The image file `text` names when it is exactly one path (or `file://`
/// URL) to a PNG, JPEG, GIF or WebP file that exists; relative paths are
/// taken from `workspace`. `None`: paste it as text.
pub fn pasted_image_path(text: &str, workspace: &Path) -> Option<PathBuf> {
    let text = text.trim();
    if text.is_empty() || text.contains(['\n', '\r']) {
        return None;
    }
    let unquoted = ['"', '\'']
        .iter()
        .find_map(|q| text.strip_prefix(*q).and_then(|t| t.strip_suffix(*q)))
        .map(str::to_string);
    let path = match unquoted {
        Some(inner) => inner,
        None if text.starts_with("file://") => file_url(text)?,
        // Unquoted, a space is an escaped one (`my\ shot.png`), or it is
        // not one path.
        None => unescape(text)?,
    };
    let path = match path.strip_prefix("~/") {
        Some(rest) => PathBuf::from(std::env::var_os("HOME")?).join(rest),
        None => PathBuf::from(path),
    };
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    if !IMAGE_EXTENSIONS.contains(&extension.as_str()) {
        return None;
    }
    let path = if path.is_absolute() { path } else { workspace.join(path) };
    path.is_file().then_some(path)
}

/// `file:///a/b%20c.png` (or `file://localhost/…`) as the path it names.
fn file_url(text: &str) -> Option<String> {
    let rest = text.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') || rest.contains(char::is_whitespace) {
        return None;
    }
    percent_encoding::percent_decode_str(rest).decode_utf8().ok().map(|p| p.into_owned())
}

/// A path as a shell would read it from a terminal's drop: `\ ` is a space,
/// `\(` a parenthesis; an unescaped space means it is not one path.
fn unescape(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            c if c.is_whitespace() => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// The clipboard tool for this session: `wl-paste` under Wayland, `xclip`
/// under X11, as `(program, arguments, the package to install)`; the error
/// says why there is none.
fn clipboard_tool(
    var: impl Fn(&str) -> Option<String>,
) -> Result<(&'static str, &'static [&'static str], &'static str), String> {
    let set = |name: &str| var(name).is_some_and(|v| !v.is_empty());
    if set("WAYLAND_DISPLAY") {
        Ok(("wl-paste", &["--no-newline", "--type", "image/png"], "wl-clipboard"))
    } else if set("DISPLAY") {
        Ok(("xclip", &["-selection", "clipboard", "-t", "image/png", "-o"], "xclip"))
    } else {
        Err("no clipboard image: this terminal has no graphical session (neither \
             WAYLAND_DISPLAY nor DISPLAY is set); paste an image file's path instead"
            .to_string())
    }
}

/// The image on the system clipboard, as a PNG attachment.
pub async fn clipboard_image() -> Result<Attachment, String> {
    let (program, args, package) = clipboard_tool(|name| std::env::var(name).ok())?;
    let mut command = tokio::process::Command::new(program);
    command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    axon_process::EnvPolicy::default().configure(&mut command);
    command.process_group(0);
    axon_process::die_with_parent(&mut command);
    let mut child = match axon_process::spawn_listed(&mut command) {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "no clipboard image: {program} is not installed (install the {package} package, \
                 e.g. `sudo apt-get install {package}`)"
            ));
        }
        Err(e) => return Err(format!("no clipboard image: {program} cannot start: {e}")),
    };
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let mut child = axon_process::GroupChild::new(child);
    let limit = axon_tools::MAX_IMAGE_FILE_BYTES;
    let read = async {
        let mut bytes = Vec::new();
        let mut said = Vec::new();
        if let Some(stdout) = stdout {
            stdout.take(limit + 1).read_to_end(&mut bytes).await?;
        }
        if bytes.len() as u64 <= limit
            && let Some(stderr) = stderr
        {
            stderr.take(4096).read_to_end(&mut said).await?;
        }
        let status = if bytes.len() as u64 > limit { None } else { Some(child.wait().await?) };
        Ok::<_, std::io::Error>((bytes, said, status))
    };
    let outcome = tokio::time::timeout(CLIPBOARD_TIMEOUT, read).await;
    child.kill_group();
    let (bytes, said, status) = match outcome {
        Err(_) => {
            return Err(format!(
                "no clipboard image: {program} did not answer within {} s",
                CLIPBOARD_TIMEOUT.as_secs()
            ));
        }
        Ok(Err(e)) => return Err(format!("no clipboard image: reading {program}: {e}")),
        Ok(Ok(read)) => read,
    };
    let Some(status) = status else {
        return Err(
            axon_tools::image_too_large("the clipboard image", bytes.len() as u64).to_string()
        );
    };
    if !status.success() || bytes.is_empty() {
        let said = String::from_utf8_lossy(&said);
        let said = said.trim();
        let why = if said.is_empty() { String::new() } else { format!(" ({program}: {said})") };
        return Err(format!(
            "no image on the clipboard{why}: copy an image (a screenshot) first, or paste an \
             image file's path"
        ));
    }
    let image =
        axon_tools::prepare_image(&bytes, "the clipboard image").map_err(|e| e.to_string())?;
    Ok(Attachment::Image { media_type: image.media_type, data: image.data })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_image_path_in_any_form_a_terminal_pastes_it_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let shot = dir.path().join("my shot (1).PNG");
        std::fs::write(&shot, b"not checked here").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"text").unwrap();
        let plain = dir.path().join("plain.webp");
        std::fs::write(&plain, b"x").unwrap();
        let full = shot.display().to_string();
        let escaped = full.replace(' ', "\\ ").replace('(', "\\(").replace(')', "\\)");
        let url = format!("file://{}", full.replace(' ', "%20"));
        for pasted in [
            format!("'{full}'"),
            format!("\"{full}\"\n"),
            escaped,
            url,
            format!("  {}  ", full.replace(' ', "\\ ").replace('(', "\\(").replace(')', "\\)")),
        ] {
            assert_eq!(pasted_image_path(&pasted, dir.path()), Some(shot.clone()), "{pasted:?}");
        }
        // Relative to the workspace.
        assert_eq!(pasted_image_path("plain.webp", dir.path()), Some(plain.clone()));
        // Anything else is text.
        for text in [
            full.clone(),                                       // unescaped spaces: words
            "notes.txt".to_string(),                            // not an image
            "missing.png".to_string(),                          // not there
            format!("{} {}", plain.display(), plain.display()), // two paths
            format!("look at {}", plain.display()),
            format!("{}\n{}", plain.display(), plain.display()),
            "https://example.com/a.png".to_string(),
            String::new(),
        ] {
            assert_eq!(pasted_image_path(&text, dir.path()), None, "{text:?}");
        }
    }

    #[test]
    fn the_clipboard_tool_follows_the_session_and_none_says_why() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
        };
        let wayland = clipboard_tool(vars(&[("WAYLAND_DISPLAY", "wayland-0"), ("DISPLAY", ":0")]));
        assert_eq!(wayland.map(|t| t.0), Ok("wl-paste"));
        assert_eq!(clipboard_tool(vars(&[("DISPLAY", ":0")])).map(|t| t.0), Ok("xclip"));
        let none = clipboard_tool(vars(&[])).unwrap_err();
        assert!(none.contains("DISPLAY") && none.contains("path"), "{none}");
    }
}
