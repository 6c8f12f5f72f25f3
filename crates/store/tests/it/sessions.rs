//! Session files: the seed's round-trip property, and every way a crash or a
//! stray edit can leave a file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;

use axon_protocol::{ContentPart, Message, Role, ToolCall, ToolOutput, Usage};
use axon_store::{LoadError, Record, Redactor, SessionStore, load, to_markdown};
use proptest::prelude::*;
use serde_json::json;

fn text() -> impl Strategy<Value = String> {
    // No '-' or '_': random text must not look like an API key to the redactor.
    "[a-zA-Z0-9 .,!?\n\"\\\\{}é中🙂]{0,40}"
}

fn message() -> impl Strategy<Value = Message> {
    let call = (text(), "[a-z]{1,12}", any::<u8>()).prop_map(|(id, name, n)| ToolCall {
        id: format!("call{id}").replace(['\n', ' '], ""),
        name,
        arguments: json!({"n": n, "s": "x"}),
    });
    (
        prop_oneof![Just(Role::User), Just(Role::Assistant), Just(Role::Tool), Just(Role::System)],
        prop::collection::vec(text(), 0..3),
        prop::collection::vec(call, 0..3),
        any::<bool>(),
        prop::option::of(0i64..4_000_000_000_000),
        prop::option::of(text()),
        // Images go to the session's image folder and come back from it.
        prop::collection::vec(
            (
                prop_oneof![Just("image/png"), Just("image/jpeg"), Just("image/webp")],
                prop::collection::vec(any::<u8>(), 0..48),
            ),
            0..2,
        ),
    )
        .prop_map(|(role, texts, calls, is_error, timestamp_ms, thinking, images)| {
            use base64::Engine as _;
            let mut content: Vec<ContentPart> = texts.into_iter().map(ContentPart::text).collect();
            content.extend(images.into_iter().map(|(media_type, bytes)| ContentPart::Image {
                media_type: media_type.to_string(),
                data: base64::engine::general_purpose::STANDARD.encode(bytes),
            }));
            if let Some(thinking) = thinking {
                content
                    .push(ContentPart::Thinking { text: thinking, signature: Some("sig".into()) });
            }
            let mut message = match role {
                Role::Tool => Message::tool_result("call1", ToolOutput { content, is_error }),
                _ => Message { role, content, ..Message::user("") },
            };
            if role == Role::Assistant {
                message.tool_calls = calls;
            }
            message.timestamp_ms = timestamp_ms;
            message
        })
}

fn store() -> (tempfile::TempDir, SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    (dir, store)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    /// Seed 002, property 1 (conversation serialization round trip): "For
    /// any valid Conversation object, serializing it to JSON and then
    /// deserializing it back should produce an equivalent Conversation
    /// object, with all messages, tool calls, timestamps, roles and
    /// metadata preserved."
    #[test]
    fn seed002_prop1_conversation_roundtrip(
        messages in prop::collection::vec(message(), 0..12),
        usages in prop::collection::vec((0u64..100_000, 0u64..10_000), 0..4),
        title in "[a-zA-Z0-9 ]{1,30}",
    ) {
        let (_dir, store) = store();
        let workspace = Path::new("/work/space");
        let mut writer = store.create(&title, workspace, "deepseek", "deepseek-chat", Redactor::default()).unwrap();
        for message in &messages {
            writer.append(&Record::message(message.clone())).unwrap();
        }
        for (input, output) in &usages {
            let usage = Usage { input_tokens: *input, output_tokens: *output, ..Usage::default() };
            writer.append(&Record::Usage { usage }).unwrap();
        }
        let session = load(writer.path()).unwrap();
        prop_assert!(session.warnings.is_empty(), "{:?}", session.warnings);
        let loaded: Vec<Message> = session.messages().cloned().collect();
        prop_assert_eq!(&loaded, &messages);
        let conversation = session.conversation();
        prop_assert_eq!(conversation.metadata.model.as_str(), "deepseek-chat");
        let total: u64 = usages.iter().map(|(i, o)| i + o).sum();
        prop_assert_eq!(conversation.metadata.total_tokens, total);
        // The protocol document itself round-trips exactly too.
        let json = axon_store::to_json(&session);
        let back: axon_protocol::Conversation = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back, conversation);
    }

    /// A file cut at any byte (a crash mid-write) loads every complete line
    /// and never panics; only a cut header is an error.
    #[test]
    fn a_file_cut_anywhere_keeps_every_complete_line(permille in 0usize..=1000) {
        let (_dir, store) = store();
        let mut writer = store.create("t", Path::new("/w"), "p", "m", Redactor::default()).unwrap();
        for i in 0..10 {
            writer.append(&Record::message(Message::user(format!("message {i}")))).unwrap();
        }
        let bytes = std::fs::read(writer.path()).unwrap();
        let cut = bytes.len() * permille / 1000;
        std::fs::write(writer.path(), &bytes[..cut]).unwrap();
        let header_end = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
        match load(writer.path()) {
            Ok(session) => {
                // Every newline after the header's ends one complete message line;
                // a cut just before a newline leaves that line whole too.
                let mut complete = bytes[..cut].iter().filter(|&&b| b == b'\n').count().saturating_sub(1);
                if cut >= header_end && cut < bytes.len() && bytes[cut] == b'\n' {
                    complete += 1;
                }
                prop_assert_eq!(session.messages().count(), complete);
                prop_assert!(session.warnings.len() <= 1);
            }
            Err(_) => prop_assert!(cut < header_end),
        }
    }
}

/// The same at every single byte of a file, not just a sample.
#[test]
fn a_file_cut_at_every_byte_loads_or_fails_only_in_the_header() {
    let (_dir, store) = store();
    let mut writer = store.create("t", Path::new("/w"), "p", "m", Redactor::default()).unwrap();
    for i in 0..5 {
        writer.append(&Record::message(Message::user(format!("message {i}")))).unwrap();
    }
    let path = writer.path().to_path_buf();
    let bytes = std::fs::read(&path).unwrap();
    let header_end = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    for cut in 0..=bytes.len() {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        match load(&path) {
            Ok(session) => {
                let whole = bytes[..cut].iter().filter(|&&b| b == b'\n').count().saturating_sub(1)
                    + usize::from(cut >= header_end && cut < bytes.len() && bytes[cut] == b'\n');
                assert_eq!(session.messages().count(), whole, "cut at {cut}");
            }
            Err(e) => assert!(cut < header_end, "cut at {cut}: {e}"),
        }
    }
}

#[test]
fn a_torn_last_line_is_dropped_with_a_warning() {
    let (_dir, store) = store();
    let mut writer = store.create("t", Path::new("/w"), "p", "m", Redactor::default()).unwrap();
    writer.append(&Record::message(Message::user("kept"))).unwrap();
    let mut file = std::fs::OpenOptions::new().append(true).open(writer.path()).unwrap();
    file.write_all(br#"{"type":"message","message":{"role":"assis"#).unwrap();
    let session = load(writer.path()).unwrap();
    assert_eq!(session.messages().count(), 1);
    assert_eq!(session.warnings.len(), 1);
    assert!(session.warnings[0].contains("last line was cut off"), "{:?}", session.warnings);
}

#[test]
fn a_garbage_line_in_the_middle_is_skipped_and_named() {
    let (_dir, store) = store();
    let mut writer = store.create("t", Path::new("/w"), "p", "m", Redactor::default()).unwrap();
    writer.append(&Record::message(Message::user("one"))).unwrap();
    let mut file = std::fs::OpenOptions::new().append(true).open(writer.path()).unwrap();
    file.write_all(b"\x00garbage{{\n").unwrap();
    writer.append(&Record::message(Message::user("two"))).unwrap();
    let session = load(writer.path()).unwrap();
    let texts: Vec<String> = session.messages().map(Message::text).collect();
    assert_eq!(texts, ["one", "two"]);
    assert!(session.warnings[0].contains("line 3: unreadable"), "{:?}", session.warnings);
}

#[test]
fn unreadable_files_fail_with_the_file_and_line() {
    let (dir, _store) = store();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, "").unwrap();
    let err = load(&path).unwrap_err();
    assert!(matches!(err, LoadError::Empty(_)) && err.to_string().contains("x.jsonl"), "{err}");

    std::fs::write(&path, "not json\n").unwrap();
    let err = load(&path).unwrap_err().to_string();
    assert!(err.contains("x.jsonl, line 1: not a session header"), "{err}");

    std::fs::write(&path, r#"{"type":"session","version":99,"id":"a"}"#).unwrap();
    let err = load(&path).unwrap_err().to_string();
    assert!(err.contains("newer axon (schema version 99"), "{err}");

    std::fs::write(&path, r#"{"type":"notes","version":1}"#).unwrap();
    assert!(load(&path).unwrap_err().to_string().contains("not \"session\""));
}

#[test]
fn secrets_never_reach_the_file() {
    let (_dir, store) = store();
    let key = "dsk-0123456789abcdefABCDEF".to_string();
    let mut writer =
        store.create("t", Path::new("/w"), "p", "m", Redactor::new(vec![key.clone()])).unwrap();
    let leak = format!(
        "env: DEEPSEEK_API_KEY={key}\nOPENAI_API_KEY=sk-proj-abcdefghijklmnop1234\ncurl -H 'Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123'"
    );
    writer.append(&Record::message(Message::tool_result("c", ToolOutput::text(leak)))).unwrap();
    let raw = std::fs::read_to_string(writer.path()).unwrap();
    assert!(!raw.contains(&key) && !raw.contains("sk-proj-abcdefghijklmnop1234"), "{raw}");
    assert!(!raw.contains("ghp_abcdefghijklmnopqrstuvwxyz0123"), "{raw}");
    let session = load(writer.path()).unwrap();
    assert!(session.warnings.is_empty());
    assert!(session.messages().next().unwrap().text().contains("[redacted]"));
}

#[test]
fn list_find_latest_and_remove() {
    let (_dir, store) = store();
    let a = store.create("first task", Path::new("/a"), "p", "m", Redactor::default()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut b =
        store.create("second task", Path::new("/b"), "p", "m", Redactor::default()).unwrap();
    b.append(&Record::message(Message::user("hi"))).unwrap();
    b.append(&Record::Usage {
        usage: Usage { input_tokens: 10, output_tokens: 5, ..Usage::default() },
    })
    .unwrap();
    let all = store.list(None).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].id, b.id(), "newest first");
    assert_eq!((all[0].messages, all[0].tokens), (1, 15));
    assert_eq!(store.list(Some(Path::new("/a"))).unwrap()[0].id, a.id());
    assert_eq!(store.latest(Path::new("/b")).unwrap().unwrap().header.id, b.id());
    let prefix = &b.id()[..b.id().len() - 2];
    assert_eq!(store.open(prefix).unwrap().header.title, "second task");
    assert!(store.open("nope").unwrap_err().to_string().contains("no session matches 'nope'"));
    store.remove(a.id()).unwrap();
    assert_eq!(store.list(None).unwrap().len(), 1);
}

#[test]
fn compactions_shape_the_resumed_history_and_keep_the_file_whole() {
    let (_dir, store) = store();
    let mut writer = store.create("t", Path::new("/w"), "p", "m", Redactor::default()).unwrap();
    for text in ["one", "two", "three"] {
        writer.append(&Record::message(Message::user(text))).unwrap();
        writer.append(&Record::message(Message::assistant(format!("re {text}")))).unwrap();
    }
    writer
        .append(&Record::Compaction {
            summary: "did one and two".into(),
            carried: Some("[ ] update the tests".into()),
            kept: 2,
            at: 0,
        })
        .unwrap();
    writer.append(&Record::message(Message::assistant("done"))).unwrap();
    let session = load(writer.path()).unwrap();
    assert_eq!(session.messages().count(), 7);
    let history = session.history();
    assert_eq!(history.len(), 3);
    assert_eq!(history[0].role, Role::User);
    assert!(history[0].text().contains("did one and two") && history[0].text().ends_with("three"));
    // The state carried verbatim comes back on resume, after the summary.
    let lead = history[0].text();
    let (summary, carried) = (lead.find("did one").unwrap(), lead.find("[ ] update").unwrap());
    assert!(summary < carried, "{lead}");
    let markdown = to_markdown(&session);
    assert!(
        markdown.contains("## Turn 3: user") && markdown.contains("### Assistant"),
        "{markdown}"
    );
}

#[test]
fn appending_after_a_torn_line_loses_nothing_readable() {
    let (_dir, store) = store();
    let mut writer = store.create("t", Path::new("/w"), "p", "m", Redactor::default()).unwrap();
    writer.append(&Record::message(Message::user("whole"))).unwrap();
    let path = writer.path().to_path_buf();
    // A complete last record whose newline was never written.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.pop();
    std::fs::write(&path, &bytes).unwrap();
    let session = load(&path).unwrap();
    let mut writer = store.append_to(&session, Redactor::default()).unwrap();
    writer.append(&Record::message(Message::user("next"))).unwrap();
    let texts: Vec<String> = load(&path).unwrap().messages().map(Message::text).collect();
    assert_eq!(texts, ["whole", "next"]);
}

#[test]
fn a_key_in_the_first_prompt_never_reaches_the_header_or_a_listing() {
    let (dir, store) = store();
    let key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ";
    let configured = "my-configured-secret-value";
    let prompt = format!("use {key} and {configured} to call the API and tell me what it says");
    let writer = store
        .create(&prompt, Path::new("/w"), "p", "m", Redactor::new(vec![configured.into()]))
        .unwrap();
    let raw = std::fs::read_to_string(writer.path()).unwrap();
    // The title is cut at 60 characters: not even the key's first part may stay.
    assert!(!raw.contains("sk-proj-abcdefgh") && !raw.contains("my-configured"), "{raw}");
    assert!(raw.contains("[redacted]"), "{raw}");
    let listed = store.list(None).unwrap();
    assert!(listed[0].title.starts_with("use [redacted] and [redacted]"), "{:?}", listed[0].title);

    // A file written before titles were redacted is masked when listed and loaded.
    let old = dir.path().join("sessions").join("20250101-000000-abcd.jsonl");
    let header = json!({"type": "session", "version": 1, "id": "20250101-000000-abcd",
        "title": format!("try {key}"), "workspace": "/w", "provider": "p", "model": "m",
        "created_at": 0});
    std::fs::write(&old, format!("{header}\n")).unwrap();
    for summary in store.list(None).unwrap() {
        assert!(!summary.title.contains("abcdefghijklmnop"), "{summary:?}");
    }
    let session = store.open("20250101-000000-abcd").unwrap();
    assert_eq!(session.header.title, "try [redacted]");
    assert!(!to_markdown(&session).contains("abcdefghijklmnop"));
}

/// `append` hands each record to the operating system at once: another
/// reader (a resume after `kill -9`) sees it before any `sync`, and with
/// the writer still open, so nothing waits in a buffer of axon's.
#[test]
fn appended_records_are_readable_before_a_sync() {
    let (_dir, store) = store();
    let mut writer = store.create("t", Path::new("/w"), "p", "m", Redactor::default()).unwrap();
    writer.append(&Record::message(Message::user("asked"))).unwrap();
    writer.append(&Record::message(Message::assistant("answered"))).unwrap();
    let session = store.open(writer.id()).unwrap();
    let texts: Vec<String> = session.messages().map(Message::text).collect();
    assert_eq!(texts, ["asked", "answered"]);

    writer.sync().unwrap();
    writer.append(&Record::message(Message::user("next"))).unwrap();
    let texts: Vec<String> =
        store.open(writer.id()).unwrap().messages().map(Message::text).collect();
    assert_eq!(texts, ["asked", "answered", "next"]);
}

#[test]
fn a_read_of_a_dot_env_leaves_no_secret_in_the_file() {
    // Issue 30 §2.11: a read_file of 13 kinds left most in clear. The kinds
    // themselves are covered in axon-secrets; this is the file's side.
    let (_dir, store) = store();
    let mut writer = store.create("t", Path::new("/w"), "p", "m", Redactor::default()).unwrap();
    let secrets = [
        ["sk_", "live_IZsNbNP0nqdzyPifDaH7pbek"].concat(),
        ["xox", "b-986581603946-914819742444-GfipSuhXbA6VGtlHPlEPvGC3"].concat(),
        ["AIza", "QRicn8-H9GGvxxK1CB9V3MWWM8VNruLPcyp"].concat(),
        ["hf_", "XvJcLJqzUYOIcTCQajMFNxqCHiiyHeVvbm"].concat(),
        ["glpat", "-08as2iWFLMbORa95mT-9"].concat(),
        "S3cr3t-Passw0rd".to_string(),
        ["sk-", "7444723a1711ad378583a506bf517746"].concat(),
    ];
    let env = format!(
        "STRIPE={}\nSLACK={}\nGOOGLE={}\nHF={}\nGITLAB={}\nDATABASE_URL=postgres://app:{}@db/app\n\
         DEEPSEEK={}\n",
        secrets[0], secrets[1], secrets[2], secrets[3], secrets[4], secrets[5], secrets[6]
    );
    writer.append(&Record::message(Message::tool_result("c", ToolOutput::text(env)))).unwrap();
    let raw = std::fs::read_to_string(writer.path()).unwrap();
    for secret in &secrets {
        assert!(!raw.contains(secret.as_str()), "{secret} in {raw}");
    }
}

#[cfg(unix)]
#[test]
fn the_data_folder_and_session_files_are_the_user_s_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = SessionStore::new(&data);
    let writer = store.create("t", Path::new("/w"), "p", "m", Redactor::default()).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&data.join("sessions")), 0o700);
    assert_eq!(mode(writer.path()), 0o600);
    // A file an older axon left world-readable is fixed when appended to.
    std::fs::set_permissions(writer.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let session = load(writer.path()).unwrap();
    drop(store.append_to(&session, Redactor::default()).unwrap());
    assert_eq!(mode(writer.path()), 0o600);
}
