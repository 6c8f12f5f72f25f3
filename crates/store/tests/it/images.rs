//! Images kept beside the session file by their hash: the file stays
//! small, loading gives every image back byte for byte, a missing or
//! altered image is a note and a warning, and files from before keep
//! loading.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use axon_protocol::{ContentPart, Message, ToolOutput};
use axon_store::{Record, Redactor, Session, SessionStore, atif_json, load, to_atif, to_markdown};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest, Sha256};

/// A megabyte that no compression shrinks, starting like a PNG.
fn big_image() -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(35);
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend((0..1_048_576).map(|_| rng.u8(..)));
    bytes
}

fn image_part(bytes: &[u8]) -> ContentPart {
    ContentPart::Image { media_type: "image/png".into(), data: BASE64.encode(bytes) }
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// A session that read `bytes` with read_file: the call, and its result
/// carrying the image.
fn session_with(store: &SessionStore, bytes: &[u8]) -> PathBuf {
    let mut writer =
        store.create("look at shot.png", Path::new("/w"), "p", "m", Redactor::default()).unwrap();
    writer.append(&Record::message(Message::user("look at shot.png"))).unwrap();
    let result = ToolOutput {
        content: vec![ContentPart::text("Image 'shot.png': PNG"), image_part(bytes)],
        is_error: false,
    };
    writer.append(&Record::message(Message::tool_result("call1", result))).unwrap();
    writer.sync().unwrap();
    writer.path().to_path_buf()
}

fn images_of(session: &Session) -> Vec<(String, String)> {
    session
        .messages()
        .flat_map(|m| &m.content)
        .filter_map(|part| match part {
            ContentPart::Image { media_type, data } => Some((media_type.clone(), data.clone())),
            _ => None,
        })
        .collect()
}

fn blob_files(session: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(session.with_extension("images"))
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn a_megabyte_image_leaves_a_small_file_and_comes_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let bytes = big_image();
    let path = session_with(&store, &bytes);

    // Inline, the line alone would be 1.4 MB of base64.
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 2_048, "the session file is {size} bytes");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&format!("\"sha256\":\"{}\"", sha256(&bytes))), "{text}");
    assert!(text.contains("\"bytes\":1048584"), "{text}");

    let blobs = blob_files(&path);
    assert_eq!(blobs.len(), 1, "{blobs:?}");
    let blob = std::fs::read(&blobs[0]).unwrap();
    assert_eq!(blob, bytes);
    assert_eq!(blobs[0].file_name().unwrap().to_str().unwrap(), format!("{}.png", sha256(&blob)));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&blobs[0]), 0o600);
        assert_eq!(mode(&path.with_extension("images")), 0o700);
    }

    let session = load(&path).unwrap();
    assert!(session.warnings.is_empty(), "{:?}", session.warnings);
    assert_eq!(images_of(&session), [("image/png".to_string(), BASE64.encode(&bytes))]);
    // Listing reads no image, and a sessions folder entry is a session.
    let listed = store.list(None).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].messages, 2);
}

#[test]
fn the_same_image_twice_is_one_file_and_a_continued_session_finds_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let bytes = b"\x89PNG\r\n\x1a\nsmall picture".to_vec();
    let other = b"GIF89a another".to_vec();
    let path = session_with(&store, &bytes);
    let session = load(&path).unwrap();
    let mut writer = store.append_to(&session, Redactor::default()).unwrap();
    let mut message = Message::user("again, and a gif");
    message.content.push(image_part(&bytes));
    message
        .content
        .push(ContentPart::Image { media_type: "image/gif".into(), data: BASE64.encode(&other) });
    writer.append(&Record::message(message)).unwrap();
    writer.sync().unwrap();

    let names: Vec<String> = blob_files(&path)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut expected = vec![format!("{}.png", sha256(&bytes)), format!("{}.gif", sha256(&other))];
    expected.sort();
    assert_eq!(names, expected);
    let images = images_of(&load(&path).unwrap());
    let data: Vec<&str> = images.iter().map(|(_, d)| d.as_str()).collect();
    assert_eq!(data, [BASE64.encode(&bytes), BASE64.encode(&bytes), BASE64.encode(&other)]);
    // The history a resume sends holds them too.
    let history = load(&path).unwrap().history();
    assert_eq!(
        history.iter().flat_map(|m| &m.content).filter(|p| p.as_text().is_none()).count(),
        3
    );
}

#[test]
fn a_missing_or_altered_image_is_a_note_and_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let bytes = b"\x89PNG\r\n\x1a\nthe original".to_vec();
    let path = session_with(&store, &bytes);
    let blob = blob_files(&path).remove(0);

    std::fs::write(&blob, b"\x89PNG\r\n\x1a\nthe 0riginal").unwrap();
    let session = load(&path).unwrap();
    assert!(images_of(&session).is_empty());
    let result = session.messages().nth(1).unwrap().text();
    assert!(result.contains("was changed or damaged (the sha256 does not match)"), "{result}");
    assert!(result.starts_with("Image 'shot.png': PNG[an image (image/png, sha256 "), "{result}");
    assert_eq!(session.warnings.len(), 1, "{:?}", session.warnings);
    assert!(session.warnings[0].contains("line 3: image "), "{:?}", session.warnings);
    assert!(session.warnings[0].contains("the model is told it is missing"));

    // Named again (the same image read once more), the copy is mended.
    let mut writer = store.append_to(&session, Redactor::default()).unwrap();
    let mut again = Message::user("once more");
    again.content.push(image_part(&bytes));
    writer.append(&Record::message(again)).unwrap();
    assert_eq!(std::fs::read(&blob).unwrap(), bytes);
    let mended = load(&path).unwrap();
    assert_eq!(images_of(&mended).len(), 2, "{:?}", mended.warnings);

    std::fs::remove_file(&blob).unwrap();
    let session = load(&path).unwrap();
    let result = session.messages().nth(1).unwrap().text();
    assert!(result.contains("cannot be read"), "{result}");
    assert!(result.contains(&blob.display().to_string()), "{result}");
    assert_eq!(session.warnings.len(), 2, "both lines naming it: {:?}", session.warnings);
    // Exports still work from what was loaded.
    assert!(to_markdown(&session).contains("no longer available"));
}

#[test]
fn a_reference_naming_a_path_reads_nothing_outside_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let path = session_with(&store, b"picture");
    std::fs::write(dir.path().join("secret.png"), b"outside").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let tampered = text.replace(&sha256(b"picture"), "../../secret");
    std::fs::write(&path, tampered).unwrap();
    let session = load(&path).unwrap();
    assert!(images_of(&session).is_empty());
    let result = session.messages().nth(1).unwrap().text();
    assert!(result.contains("names no valid sha256 ('../../secret')"), "{result}");
}

#[test]
fn a_session_with_inline_images_from_before_still_loads() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let path = sessions.join("20260101-000000-abcd.jsonl");
    let data = BASE64.encode(b"an old inline picture");
    let lines = [
        r#"{"type":"session","version":1,"id":"20260101-000000-abcd","title":"old","workspace":"/w","provider":"p","model":"m","created_at":1}"#.to_string(),
        format!(
            r#"{{"type":"message","message":{{"role":"user","content":[{{"type":"text","text":"see"}},{{"type":"image","media_type":"image/jpeg","data":"{data}"}}]}}}}"#
        ),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let session = load(&path).unwrap();
    assert!(session.warnings.is_empty(), "{:?}", session.warnings);
    assert_eq!(images_of(&session), [("image/jpeg".to_string(), data.clone())]);

    // Continued, its new images go by reference; the old line stays.
    let mut writer =
        SessionStore::new(dir.path()).append_to(&session, Redactor::default()).unwrap();
    let mut message = Message::user("and this");
    message.content.push(image_part(b"a new picture"));
    writer.append(&Record::message(message)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&data));
    assert!(!text.contains(&BASE64.encode(b"a new picture")));
    assert_eq!(images_of(&load(&path).unwrap()).len(), 2);
}

#[test]
fn removing_a_session_removes_its_images() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let kept = session_with(&store, b"picture");
    let removed = session_with(&store, b"picture");
    let id = removed.file_stem().unwrap().to_str().unwrap().to_string();
    assert_eq!(store.remove(&id).unwrap(), id);
    assert!(!removed.exists());
    assert!(!removed.with_extension("images").exists());
    // The other session named the same image: its copy is its own.
    assert_eq!(images_of(&load(&kept).unwrap()).len(), 1);
    // A session without images is removed as before.
    let mut writer = store.create("plain", Path::new("/w"), "p", "m", Redactor::default()).unwrap();
    writer.append(&Record::message(Message::user("plain"))).unwrap();
    let plain = writer.id().to_string();
    assert_eq!(store.remove(&plain).unwrap(), plain);
}

#[test]
fn an_atif_export_names_the_image_and_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let bytes = b"\x89PNG\r\n\x1a\nexported".to_vec();
    let path = session_with(&store, &bytes);
    let export = to_atif(&load(&path).unwrap(), "0.0.0").unwrap();
    let json = atif_json(&export.trajectory);
    let name = format!("<id>.images/{}.png", sha256(&bytes));
    assert!(json.contains(&name), "{json}");
    assert!(!json.contains(&BASE64.encode(&bytes)), "{json}");
}
