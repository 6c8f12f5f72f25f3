//! A panel for one test: a scripted model, a workspace and a home folder,
//! `WebServer` serving them on a free loopback port until dropped, and a
//! browser on its page once the page says it is ready.

use std::time::Duration;

use axon_runtime::config::{Dirs, Effective};
use axon_runtime::{SessionConfig, Workspace};
use axon_testkit::webdriver::Browser;
use axon_testkit::{Reply, ScriptedServer};
use tokio_util::sync::CancellationToken;

/// How long anything may take on a busy machine.
pub const PATIENCE: Duration = Duration::from_secs(60);

pub struct Panel {
    pub server: ScriptedServer,
    pub url: String,
    stop: CancellationToken,
    served: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    _workspace: tempfile::TempDir,
    _home: tempfile::TempDir,
    // Last: the tasks above run on it.
    runtime: tokio::runtime::Runtime,
}

impl Panel {
    pub fn start(script: Vec<Reply>) -> Panel {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let server = runtime.block_on(ScriptedServer::start(script)).unwrap();
        let config = format!(
            "provider = \"scripted\"\n[providers.scripted]\nkind = \"openai\"\nbase_url = \"{}\"\n\
             model = \"gpt-4.1\"\napi_key = \"test-key\"\ncontext_window = 100000\n",
            server.openai_base()
        );
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        let dirs = Dirs {
            config_file: home.path().join("config.toml"),
            data: home.path().join("data"),
            cache: home.path().join("cache"),
        };
        let root = Workspace::new(workspace.path()).unwrap();
        let effective = Effective::load(&dirs, root.root()).unwrap();
        // As `axon web` configures its session.
        let mut config = SessionConfig::new(root, dirs, effective);
        config.interactive = true;
        config.preview_actions = true;
        config.replay_history = true;
        let options = axon_web::Options {
            listen: "127.0.0.1:0".parse().unwrap(),
            token: None,
            allowed_hosts: Vec::new(),
        };
        let web = runtime.block_on(axon_web::WebServer::start(config, options)).unwrap();
        let url = web.url();
        let stop = CancellationToken::new();
        let served = runtime.spawn(web.serve(stop.clone()));
        Panel {
            server,
            url,
            stop,
            served: Some(served),
            _workspace: workspace,
            _home: home,
            runtime,
        }
    }

    /// A browser on the panel, once its first replay is shown.
    pub fn open(&self) -> Browser {
        let browser = Browser::start(1280, 900, false).unwrap();
        browser.goto(&self.url).unwrap();
        browser.wait_for("document.body && document.body.dataset.ready === '1'", PATIENCE).unwrap();
        browser
    }
}

impl Drop for Panel {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(served) = self.served.take() {
            let _ = self.runtime.block_on(served);
        }
    }
}

/// No script error and no CSP violation was logged.
pub fn console_is_clean(browser: &Browser) {
    let problems = browser.console_problems().unwrap();
    assert!(problems.is_empty(), "the console has problems: {problems:#?}");
}

/// A screenshot into `target/web-screenshots/NAME.png` (looked at by a
/// person, not committed).
pub fn shot(browser: &Browser, name: &str) {
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/web-screenshots");
    browser.settled_screenshot(&dir.join(format!("{name}.png")), PATIENCE).unwrap();
}
