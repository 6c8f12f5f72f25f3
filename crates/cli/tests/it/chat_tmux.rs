//! `axon` in a real terminal: tmux runs it against the scripted model
//! server; the test types like a user and reads the screen with
//! `capture-pane`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::tmux::Tmux;
use assert_cmd::cargo::cargo_bin;
use axon_testkit::Reply;
use serde_json::json;

fn quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// Starts `axon` in a tmux session of its own, 100×30.
fn start(setup: &common::Setup) -> Tmux {
    start_with(setup, "PATH=\"$PATH\"")
}

/// [`start`] with `env` (`NAME=value …`, PATH among them) for axon.
fn start_with(setup: &common::Setup, env: &str) -> Tmux {
    let command = format!(
        "cd {} && env -i {env} TERM=xterm-256color AXON_HOME={} AXON_PROVIDER=openai \
         AXON_BASE_URL={} OPENAI_API_KEY=sk-test-0000000000 {}",
        quote(setup.workspace.path()),
        quote(setup.home.path()),
        setup.server.openai_base(),
        quote(&cargo_bin("axon")),
    );
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmux = Tmux::new(format!("axon-test-{}-{n}", std::process::id()));
    let started = tmux.run(&["new-session", "-d", "-s", "axon", "-x", "100", "-y", "30", &command]);
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    tmux.wait_for(&["Ask axon anything", "openai/"]);
    tmux
}

fn wait_until_gone(tmux: &Tmux) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while tmux.alive() {
        assert!(Instant::now() < deadline, "axon did not quit:\n{}", tmux.screen());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_user_session_in_tmux() {
    let setup = common::setup(vec![
        Reply::tool("read_file", json!({"path": "hello.md"})),
        Reply::text("The file says **hello world**."),
        Reply::Stall("Here is the start of a long answer".to_string()),
    ]);
    std::fs::write(setup.workspace.path().join("hello.md"), "hello world\n").unwrap();
    let tmux = start(&setup);
    tmux.keys(&["read hello.md", "Enter"]);
    let screen =
        tmux.wait_for(&["✓ read_file hello.md", "1 | hello world", "The file says hello world."]);
    assert!(screen.contains("› read hello.md"), "{screen}");

    // The next reply stalls mid-stream; Esc stops it and keeps what came.
    tmux.keys(&["tell me more", "Enter"]);
    tmux.wait_for(&["Here is the start of a long answer", "Working"]);
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for(&["Stopped. What was written so far is kept."]);
    assert!(screen.contains("Here is the start of a long answer"), "{screen}");
    assert!(!screen.contains("Working"), "{screen}");

    tmux.keys(&["C-c"]);
    tmux.wait_for(&["Press Ctrl-C again to quit"]);
    // The second press counts within the app's two-second window; the trip
    // through capture-pane and send-keys can take longer on a busy machine,
    // so the quitting pair is sent at once (if the first press was forgotten,
    // the first of these arms again and the second quits).
    tmux.keys(&["C-c", "C-c"]);
    wait_until_gone(&tmux);

    // The conversation was saved, partial answer included.
    let sessions = setup.home.path().join("data/sessions");
    let saved: String = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(saved.contains("hello world"), "{saved}");
    assert!(saved.contains("Here is the start of a long answer"), "{saved}");
}

#[test]
fn an_edit_is_approved_on_its_card_and_the_session_exported() {
    let setup = common::setup(vec![
        Reply::tool("write_file", json!({"path": "out.md", "content": "hi\n"})),
        Reply::text("Written."),
    ]);
    let tmux = start(&setup);
    tmux.keys(&["write out.md", "Enter"]);
    tmux.wait_for(&["Allow write_file?", "[a] always: allow write_file on out.md"]);
    assert!(!setup.workspace.path().join("out.md").exists(), "written before the answer");
    // Keys in the first moments of a question do not answer it.
    std::thread::sleep(axon_tui::ANSWER_GUARD + Duration::from_millis(100));
    tmux.keys(&["y"]);
    tmux.wait_idle(&["✓ write_file out.md", "Written."]);
    assert_eq!(std::fs::read_to_string(setup.workspace.path().join("out.md")).unwrap(), "hi\n");

    tmux.keys(&["/export notes.md", "Enter"]);
    tmux.wait_for(&["Exported the session to"]);
    let exported = std::fs::read_to_string(setup.workspace.path().join("notes.md")).unwrap();
    assert!(exported.contains("write out.md"), "{exported}");
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
}

#[test]
fn an_edit_shows_its_diff_on_the_card_before_the_answer() {
    let setup = common::setup(vec![
        Reply::tool(
            "edit_file",
            json!({"path": "notes.txt", "old_str": "hello", "new_str": "goodbye"}),
        ),
        Reply::text("Changed."),
    ]);
    let notes = setup.workspace.path().join("notes.txt");
    std::fs::write(&notes, "one\nhello\nthree\n").unwrap();
    let tmux = start(&setup);
    tmux.keys(&["say goodbye", "Enter"]);
    let screen = tmux.wait_for(&["Allow edit_file?", "- hello", "+ goodbye"]);
    assert!(screen.contains("one") && screen.contains("three"), "{screen}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "one\nhello\nthree\n", "edited early");
    std::thread::sleep(axon_tui::ANSWER_GUARD + Duration::from_millis(100));
    tmux.keys(&["y"]);
    tmux.wait_for(&["✓ edit_file", "Changed."]);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "one\ngoodbye\nthree\n");
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
}

#[test]
fn rewind_lists_turns_in_columns_and_asks_before_it_restores() {
    // Issue 31 §1 and §2: `/rewind N` acted at once; its list's columns
    // were out of line.
    let setup = common::setup(vec![
        Reply::tool("write_file", json!({"path": "a.txt", "content": "model\n"})),
        Reply::text("Written."),
        Reply::text("Talked."),
    ]);
    let file = setup.workspace.path().join("a.txt");
    let tmux = start(&setup);
    tmux.keys(&["write a", "Enter"]);
    tmux.wait_for(&["Allow write_file?"]);
    std::thread::sleep(axon_tui::ANSWER_GUARD + Duration::from_millis(100));
    tmux.keys(&["y"]);
    tmux.wait_idle(&["Written."]);
    tmux.keys(&["just talk", "Enter"]);
    tmux.wait_idle(&["Talked."]);

    tmux.keys(&["/rewind", "Enter"]);
    let screen = tmux.wait_for(&["changed files", "just talk"]);
    let column = |prompt: &str| {
        let line =
            screen.lines().find(|l| l.ends_with(prompt)).unwrap_or_else(|| panic!("{screen}"));
        line.chars().count() - prompt.chars().count()
    };
    assert_eq!(column("write a"), column("just talk"), "the prompts line up:\n{screen}");

    tmux.keys(&["/rewind 1", "Enter"]);
    let screen = tmux.wait_for(&["Rewind to before turn 1", "Rewind? (y/n)"]);
    assert!(screen.contains("files: 1 put back") && screen.contains("a.txt"), "{screen}");
    assert!(screen.contains("6 messages taken back"), "{screen}");
    assert!(file.exists(), "nothing is restored before the answer");
    tmux.keys(&["n"]);
    tmux.wait_for(&["Not rewound: nothing was changed."]);
    assert!(file.exists());

    tmux.keys(&["/rewind 1", "Enter"]);
    tmux.wait_for(&["Rewind? (y/n)"]);
    tmux.keys(&["y"]);
    tmux.wait_for(&["rewound to before turn 1"]);
    assert!(!file.exists(), "the turn's file is gone once the user said yes");
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
}

#[test]
fn the_ui_opens_with_a_welcome_and_leaves_saying_how_to_resume() {
    // Issue 31 §2: no word at start of where, with what and how to get
    // help; nothing on quit about getting back.
    let setup = common::setup(vec![Reply::text("Hello.")]);
    let tmux = start(&setup);
    let screen = tmux.wait_for(&["/help lists keys and commands"]);
    let workspace = std::fs::canonicalize(setup.workspace.path()).unwrap();
    assert!(screen.contains(&format!("axon in {}", workspace.display())), "{screen}");
    assert!(screen.contains("model openai/"), "{screen}");
    assert!(screen.contains("sandbox"), "{screen}");
    tmux.keys(&["hi", "Enter"]);
    tmux.wait_for(&["Hello."]);
    let id = std::fs::read_dir(setup.home.path().join("data/sessions"))
        .unwrap()
        .flatten()
        .find_map(|e| e.file_name().to_str()?.strip_suffix(".jsonl").map(str::to_string))
        .expect("the session was saved");
    // The pane stays after axon leaves, to read what it printed.
    assert!(tmux.run(&["set-option", "-w", "-t", "axon", "remain-on-exit", "on"]).status.success());
    tmux.keys(&["/quit", "Enter"]);
    tmux.wait_printed(&format!("resume this session with `axon --resume {id}`"));
}

#[test]
fn a_completion_popup_leaves_nothing_behind() {
    // Issue 31 §2: fragments of a closed or shrunk popup stayed on screen.
    // Wide characters under the popup: a cell half covered is where a
    // fragment would stay.
    let wide = "Hello there: 你好世界，这是一个很长的回答 🎉🎉 ".repeat(4);
    let setup = common::setup(vec![Reply::text(&[wide.as_str(); 12].join("\n\n"))]);
    std::fs::write(setup.workspace.path().join("notes.md"), "x\n").unwrap();
    let tmux = start(&setup);
    tmux.keys(&["hi", "Enter"]);
    tmux.wait_for(&["🎉🎉 Hello"]);
    let popup = |screen: &str| screen.contains('┌') || screen.contains('│') || screen.contains('└');
    tmux.keys(&["/"]);
    tmux.wait_for(&["Tab/Enter accepts", "/rewind"]);
    tmux.keys(&["r", "e"]);
    // The full popup lists /resume too: wait for the filtered one, where
    // /skills is gone (a slow build may show the full one a while).
    let shrunk = common::eventually(|| {
        let screen = tmux.screen();
        screen.contains("/resume") && !screen.contains("/skills")
    });
    assert!(shrunk, "the popup was not filtered to /re:\n{}", tmux.screen());
    tmux.keys(&["Escape"]);
    // "› /re" was on the screen before Escape too: wait until axon has
    // taken the key (the popup's title is gone), then until the redraw is
    // through; a fragment left behind stays, and fails here.
    let closed = common::eventually(|| {
        let screen = tmux.screen();
        screen.contains("› /re") && !screen.contains("Tab/Enter accepts")
    });
    assert!(closed, "Escape did not close the popup:\n{}", tmux.screen());
    let mut screen = tmux.screen();
    let clean = common::eventually(|| {
        screen = tmux.screen();
        !popup(&screen)
    });
    assert!(clean, "the popup left fragments:\n{screen}");
    tmux.keys(&["C-u", " @no"]);
    tmux.wait_for(&["@notes.md"]);
    tmux.keys(&["BSpace", "BSpace", "BSpace"]);
    // The mention is gone, and with it the popup, whole (once the frame
    // that removed the mention is all on screen: tmux may show it part
    // drawn; a fragment left behind stays, and fails here).
    assert!(common::eventually(|| !tmux.screen().contains("@no")), "{}", tmux.screen());
    let mut screen = tmux.screen();
    let clean = common::eventually(|| {
        screen = tmux.screen();
        !popup(&screen)
    });
    assert!(clean, "the popup left fragments:\n{screen}");
    tmux.keys(&["C-u", "/quit", "Enter"]);
    wait_until_gone(&tmux);
}

#[test]
fn a_call_refused_with_a_reason_tells_the_model_what_to_do_instead() {
    let setup = common::setup(vec![
        Reply::tool("write_file", json!({"path": "a.txt", "content": "x\n"})),
        Reply::text("Understood, b.txt then."),
    ]);
    let tmux = start(&setup);
    tmux.keys(&["write a", "Enter"]);
    tmux.wait_for(&["Allow write_file?", "[t] deny, telling"]);
    std::thread::sleep(axon_tui::ANSWER_GUARD + Duration::from_millis(100));
    tmux.keys(&["t"]);
    tmux.wait_for(&["Tell axon what to do instead"]);
    tmux.keys(&["use b.txt, not a.txt", "Enter"]);
    tmux.wait_idle(&["Understood, b.txt then."]);
    assert!(!setup.workspace.path().join("a.txt").exists());
    let told = setup.server.requests().last().unwrap().to_string();
    assert!(told.contains("use b.txt, not a.txt"), "the model was told: {told}");
    tmux.keys(&["/sessions", "Enter"]);
    tmux.wait_for(&["No other sessions in this workspace yet."]);
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
}

#[test]
fn without_a_terminal_the_chat_points_to_axon_run() {
    let setup = common::setup(Vec::new());
    setup
        .axon()
        .write_stdin("hello")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("the chat needs a terminal"))
        .stderr(predicates::str::contains("axon run"));
}

#[test]
fn always_says_it_saves_the_rule_and_slash_permissions_lists_it_with_how_to_remove_it() {
    let setup = common::setup(vec![
        Reply::tool("write_file", json!({"path": "out.md", "content": "hi\n"})),
        Reply::text("Written."),
    ]);
    let tmux = start(&setup);
    tmux.keys(&["write out.md", "Enter"]);
    let screen = tmux.wait_for(&["Allow write_file?", "[a] always: allow write_file on out.md"]);
    let unwrapped: String = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(unwrapped.contains("saved for this workspace's later sessions too"), "{screen}");
    std::thread::sleep(axon_tui::ANSWER_GUARD + Duration::from_millis(100));
    tmux.keys(&["a"]);
    tmux.wait_idle(&["✓ write_file out.md", "Written."]);

    tmux.keys(&["/permissions", "Enter"]);
    let screen = tmux.wait_for(&["Saved by \"always\"", "1  allow  write_file(out.md)"]);
    let unwrapped: String = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(unwrapped.contains("`axon permissions rm N` removes rule N"), "{screen}");
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
}

#[test]
fn slash_ps_lists_the_background_commands() {
    let setup = common::setup(vec![
        Reply::tool("shell", json!({"command": "sleep 300", "background": true})),
        Reply::text("Started."),
    ]);
    let tmux = start(&setup);
    // A sandboxed command runs without asking.
    tmux.keys(&["start the server", "Enter"]);
    tmux.wait_idle(&["Started."]);
    tmux.keys(&["/ps", "Enter"]);
    let screen = tmux.wait_for(&["Background commands:", "bg1  sleep 300  (running"]);
    assert!(screen.contains("shell_kill"), "{screen}");
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
}

#[test]
fn an_unfocused_terminal_gets_a_desktop_notification_when_a_call_waits() {
    let setup = common::setup(vec![
        Reply::tool("write_file", json!({"path": "out.md", "content": "hi\n"})),
        Reply::text("Written."),
    ]);
    let config = setup.home.path().join("config.toml");
    let written = std::fs::read_to_string(&config).unwrap_or_default();
    std::fs::write(&config, written + "\nnotify = \"osc9\"\n").unwrap();
    let tmux = start(&setup);
    // Everything axon writes to its terminal, escapes included.
    let raw = setup.workspace.path().join("raw.out");
    let piped = tmux.run(&["pipe-pane", "-o", "-t", "axon", &format!("cat >> {}", quote(&raw))]);
    assert!(piped.status.success(), "{}", String::from_utf8_lossy(&piped.stderr));
    // The terminal reports the user went elsewhere (CSI O).
    tmux.run(&["send-keys", "-t", "axon", "-H", "1b", "5b", "4f"]);
    tmux.keys(&["write out.md", "Enter"]);
    tmux.wait_for(&["Allow write_file?"]);
    let wanted = "\x1b]9;axon needs your permission to use write_file\x07";
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let seen = String::from_utf8_lossy(&std::fs::read(&raw).unwrap_or_default()).to_string();
        if seen.contains(wanted) {
            break;
        }
        assert!(Instant::now() < deadline, "no notification in what axon wrote: {seen:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Back in focus: the answer raises nothing more.
    tmux.run(&["send-keys", "-t", "axon", "-H", "1b", "5b", "49"]);
    std::thread::sleep(axon_tui::ANSWER_GUARD + Duration::from_millis(100));
    tmux.keys(&["y"]);
    tmux.wait_idle(&["Written."]);
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
    let seen = String::from_utf8_lossy(&std::fs::read(&raw).unwrap_or_default()).to_string();
    assert_eq!(seen.matches("\x1b]9;").count(), 1, "{seen:?}");
}

/// A PNG of `width`×`height` for the image tests.
fn png(width: u32, height: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([x as u8, y as u8, 9]));
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img).write_to(&mut png, image::ImageFormat::Png).unwrap();
    png.into_inner()
}

/// Pastes `text` into the pane as a terminal does (bracketed, since axon
/// asks for it).
fn paste(tmux: &Tmux, text: &str) {
    assert!(tmux.run(&["set-buffer", "-b", "pasted", "--", text]).status.success());
    assert!(tmux.run(&["paste-buffer", "-p", "-d", "-b", "pasted", "-t", "axon"]).status.success());
}

/// A pasted path to an image file, outside the workspace, with the
/// backslash-escaped spaces a terminal's drop gives, becomes an image
/// attachment (a chip above the input) that reaches the model; a pasted
/// path to anything else, and other text, is pasted as text.
#[test]
fn a_pasted_image_path_is_attached_and_reaches_the_model() {
    let setup = common::setup(vec![Reply::text("A small gradient.")]);
    let elsewhere = tempfile::tempdir().unwrap();
    let shot = elsewhere.path().join("my shot.png");
    std::fs::write(&shot, png(40, 20)).unwrap();
    let notes = elsewhere.path().join("notes.txt");
    std::fs::write(&notes, "words\n").unwrap();
    let tmux = start(&setup);
    paste(&tmux, &shot.display().to_string().replace(' ', "\\ "));
    tmux.wait_for(&["[image my shot.png]", "Backspace removes the last"]);
    // Backspace on the empty input takes it off; pasted again as a quoted
    // path, it is back.
    tmux.keys(&["BSpace"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while tmux.screen().contains("[image my shot.png]") {
        assert!(Instant::now() < deadline, "{}", tmux.screen());
        std::thread::sleep(Duration::from_millis(50));
    }
    paste(&tmux, &format!("'{}'", shot.display()));
    tmux.wait_for(&["[image my shot.png]"]);
    // Not an image: the path is text in the input.
    paste(&tmux, &format!("{} ", notes.display()));
    tmux.wait_for(&["notes.txt"]);
    tmux.keys(&["C-u"]);
    tmux.keys(&["what is this?", "Enter"]);
    tmux.wait_for(&["attached: my shot.png", "A small gradient."]);
    let requests = setup.server.requests();
    assert_eq!(common::images_sent(&requests[0]), [(40, 20)], "{}", requests[0]);
    let sent = requests[0].to_string();
    assert!(!sent.contains("notes.txt"), "the text paste was cleared: {sent}");
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
}

/// An `@shot.png` mention of a workspace image sends the image itself (the
/// runtime reads it through the jail, scaled to the model's limits).
#[test]
fn an_image_mentioned_with_at_reaches_the_model() {
    let setup = common::setup(vec![Reply::text("A mentioned gradient.")]);
    std::fs::write(setup.workspace.path().join("shot.png"), png(48, 16)).unwrap();
    let tmux = start(&setup);
    // The completion offers it once axon has listed the workspace's files:
    // then the mention is known.
    tmux.keys(&["describe @sho"]);
    tmux.wait_for(&["@shot.png"]);
    tmux.keys(&["t.png please", "Enter"]);
    tmux.wait_idle(&["A mentioned gradient."]);
    let requests = setup.server.requests();
    assert_eq!(common::images_sent(&requests[0]), [(48, 16)], "{}", requests[0]);
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
}

/// Kills a child the test started when dropped (Xvfb, xclip).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A real X server (Xvfb) on a display it picks itself; its number.
fn xvfb() -> (Killed, String) {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new("Xvfb")
        .args(["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "320x240x24"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("Xvfb is needed for this test (scripts/peers installs the xvfb package)");
    let mut line = String::new();
    let stdout = child.stdout.take().unwrap();
    std::io::BufReader::new(stdout).read_line(&mut line).unwrap();
    let display = format!(":{}", line.trim());
    assert!(display.len() > 1, "Xvfb said no display number");
    (Killed(child), display)
}

/// Ctrl+V reads the clipboard's image through xclip on a real X server:
/// with nothing on the clipboard it says so; with a PNG put there by
/// `xclip -i`, the image is attached and the model receives it.
#[test]
fn ctrl_v_attaches_the_clipboard_image_from_a_real_x_server() {
    let setup = common::setup(vec![Reply::text("A clipboard gradient.")]);
    let (_xvfb, display) = xvfb();
    let tmux = start_with(&setup, &format!("PATH=\"$PATH\" DISPLAY={display}"));
    tmux.keys(&["C-v"]);
    tmux.wait_for(&["no image on the clipboard"]);

    let file = tempfile::tempdir().unwrap();
    let shot = file.path().join("shot.png");
    std::fs::write(&shot, png(30, 10)).unwrap();
    // -quiet: xclip serves the selection in the foreground (no daemon left
    // behind), until the test kills it.
    let _xclip = Killed(
        std::process::Command::new("xclip")
            .args(["-quiet", "-selection", "clipboard", "-t", "image/png", "-i"])
            .arg(&shot)
            .env("DISPLAY", &display)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("xclip is needed for this test (scripts/peers installs it)"),
    );
    // xclip owns the selection once it answers a read.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let read = std::process::Command::new("xclip")
            .args(["-selection", "clipboard", "-t", "image/png", "-o"])
            .env("DISPLAY", &display)
            .output()
            .unwrap();
        if read.status.success() && read.stdout.starts_with(b"\x89PNG") {
            break;
        }
        assert!(Instant::now() < deadline, "xclip never served the image");
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.keys(&["C-v"]);
    tmux.wait_for(&["[image clipboard image]"]);
    tmux.keys(&["describe it", "Enter"]);
    tmux.wait_for(&["A clipboard gradient."]);
    let requests = setup.server.requests();
    assert_eq!(common::images_sent(&requests[0]), [(30, 10)], "{}", requests[0]);
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
}

/// Without a clipboard tool, or without a graphical session, Ctrl+V is one
/// line saying what to install or do.
#[test]
fn ctrl_v_without_a_clipboard_tool_says_what_to_install() {
    let setup = common::setup(vec![]);
    let empty = tempfile::tempdir().unwrap();
    let tmux = start_with(&setup, &format!("PATH={} DISPLAY=:99", quote(empty.path())));
    tmux.keys(&["C-v"]);
    tmux.wait_for(&["xclip is not installed", "xclip package"]);
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
    let tmux = start(&setup);
    tmux.keys(&["C-v"]);
    tmux.wait_for(&["no graphical session"]);
    tmux.keys(&["/quit", "Enter"]);
    wait_until_gone(&tmux);
}
