//! A tmux server of a test's own (its own socket), to run `axon` in a real
//! terminal, type into it and read its screen; killed on drop.

use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn new(socket: String) -> Tmux {
        Tmux { socket }
    }

    pub fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux is needed for this test (scripts/peers installs it with apt-get)")
    }

    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "axon"]).stdout)
            .into_owned()
    }

    /// Waits until the screen shows every one of `texts`.
    pub fn wait_for(&self, texts: &[&str]) -> String {
        // Room for a machine busy with other builds: a turn that ends takes a
        // checkpoint (git) before the next command is taken.
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let screen = self.screen();
            if texts.iter().all(|t| screen.contains(t)) {
                return screen;
            }
            assert!(Instant::now() < deadline, "the screen never showed {texts:?}:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The screen and the lines scrolled off it: what a program printed
    /// just before it ended may be there, pushed up by tmux's "Pane is
    /// dead" line.
    pub fn history(&self) -> String {
        let capture = self.run(&["capture-pane", "-p", "-S", "-", "-t", "axon"]);
        String::from_utf8_lossy(&capture.stdout).into_owned()
    }

    /// Waits until the screen or the lines scrolled off it show `text`.
    pub fn wait_printed(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let history = self.history();
            if history.contains(text) {
                return history;
            }
            assert!(Instant::now() < deadline, "axon never printed {text:?}:\n{history}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the screen shows every one of `texts` and the turn has
    /// ended (no "Working…" line): the next prompt is then taken, not
    /// refused as arriving while the turn still runs (its checkpoint can
    /// take a while on a busy machine after the answer is on screen).
    pub fn wait_idle(&self, texts: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let screen = self.screen();
            if texts.iter().all(|t| screen.contains(t)) && !screen.contains("Working…") {
                return screen;
            }
            assert!(Instant::now() < deadline, "the turn never ended showing {texts:?}:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "axon"];
        args.extend(keys);
        assert!(self.run(&args).status.success());
    }

    pub fn alive(&self) -> bool {
        self.run(&["has-session", "-t", "axon"]).status.success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}
