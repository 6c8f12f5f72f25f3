//! A scripted model server on loopback and `axon` configured to use it
//! through the environment, as a user would; and the reading of
//! `axon run --json` output, every line checked against the published
//! event schema ([`events`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod browser;
mod events;
pub mod tmux;
pub mod web;

use std::time::Duration;

use assert_cmd::cargo::cargo_bin;
use axon_testkit::{Reply, ScriptedServer};
pub use events::events;

/// How long a test waits for anything: generous, the machine may be busy
/// with other tests.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Waits until `done` holds, polling; false if [`PATIENCE`] runs out.
pub fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + PATIENCE;
    while std::time::Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

pub struct Setup {
    pub runtime: tokio::runtime::Runtime,
    pub server: ScriptedServer,
    pub home: tempfile::TempDir,
    pub workspace: tempfile::TempDir,
}

pub fn setup(script: Vec<Reply>) -> Setup {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let server = runtime.block_on(ScriptedServer::start(script)).unwrap();
    Setup {
        runtime,
        server,
        home: tempfile::tempdir().unwrap(),
        workspace: tempfile::tempdir().unwrap(),
    }
}

impl Setup {
    /// `axon` with a clean environment pointing at the scripted server.
    pub fn axon(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new(cargo_bin("axon"));
        self.configure(cmd.env_clear().timeout(Duration::from_secs(60)));
        cmd
    }

    pub fn configure<'a>(&self, cmd: &'a mut assert_cmd::Command) -> &'a mut assert_cmd::Command {
        cmd.env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("AXON_HOME", self.home.path())
            .env("AXON_PROVIDER", "openai")
            .env("AXON_BASE_URL", self.server.openai_base())
            .env("OPENAI_API_KEY", "sk-test-0000000000")
            .current_dir(self.workspace.path())
    }
}

impl Setup {
    /// The same environment as [`Setup::axon`], for a process the test
    /// manages itself (to signal or kill it).
    pub fn std_command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(cargo_bin("axon"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("AXON_HOME", self.home.path())
            .env("AXON_PROVIDER", "openai")
            .env("AXON_BASE_URL", self.server.openai_base())
            .env("OPENAI_API_KEY", "sk-test-0000000000")
            .current_dir(self.workspace.path());
        cmd
    }
}

/// The `(width, height)` of the images the model was sent in the user
/// messages of `request` (OpenAI chat format, PNG data URLs).
pub fn images_sent(request: &serde_json::Value) -> Vec<(u32, u32)> {
    use base64::Engine as _;
    let mut found = Vec::new();
    for message in request["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "user") {
        for part in message["content"].as_array().into_iter().flatten() {
            let Some(url) = part["image_url"]["url"].as_str() else { continue };
            let data = url.strip_prefix("data:image/png;base64,").expect(url);
            let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
            let image = image::load_from_memory(&bytes).unwrap();
            found.push((image.width(), image.height()));
        }
    }
    found
}
