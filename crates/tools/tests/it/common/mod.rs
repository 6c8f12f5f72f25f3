//! A throwaway workspace with a registry and a runtime, for driving tools
//! exactly as the agent does: by name, with JSON arguments.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use axon_protocol::ToolOutput;
use axon_tools::{Profile, ToolContext, ToolRegistry, Workspace};
use serde_json::Value;
use tempfile::TempDir;

pub struct TestWorkspace {
    /// Holds `ws/` (the workspace) and room beside it for "outside" files.
    pub base: TempDir,
    pub ctx: ToolContext,
    pub registry: ToolRegistry,
    runtime: tokio::runtime::Runtime,
}

impl TestWorkspace {
    pub fn new(profile: Profile) -> Self {
        let base = tempfile::tempdir().unwrap();
        std::fs::create_dir(base.path().join("ws")).unwrap();
        let workspace = Workspace::new(base.path().join("ws")).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        TestWorkspace {
            ctx: ToolContext::new(workspace),
            registry: profile.registry(),
            base,
            runtime,
        }
    }

    pub fn code() -> Self {
        Self::new(Profile::Code)
    }

    pub fn vault() -> Self {
        Self::new(Profile::Vault)
    }

    pub fn root(&self) -> &Path {
        self.ctx.workspace.root()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        assert!(!rel.starts_with('/'), "test paths are workspace-relative: {rel}");
        self.root().join(rel)
    }

    pub fn outside(&self) -> PathBuf {
        self.base.path().canonicalize().unwrap()
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn call(&self, name: &str, args: Value) -> ToolOutput {
        self.runtime.block_on(self.registry.call(&self.ctx, name, args))
    }

    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Every path below the base folder, relative to it, sorted.
    pub fn snapshot(&self) -> Vec<String> {
        let mut all: Vec<String> = walk(self.base.path())
            .into_iter()
            .map(|p| p.strip_prefix(self.base.path()).unwrap().to_string_lossy().into_owned())
            .collect();
        all.sort();
        all
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        out.push(path.clone());
        if entry.file_type().unwrap().is_dir() {
            out.extend(walk(&path));
        }
    }
    out
}

/// 100 cases per property (the seeds' minimum); no failure files, since
/// integration tests have no source folder for proptest to write them in.
pub fn proptest_config() -> proptest::test_runner::Config {
    proptest::test_runner::Config { cases: 100, failure_persistence: None, ..Default::default() }
}

/// Asserts an error output and returns its text.
pub fn expect_error(output: &ToolOutput) -> String {
    assert!(output.is_error, "expected an error, got: {}", output.text_content());
    output.text_content()
}

/// Asserts a successful output and returns its text.
pub fn expect_ok(output: &ToolOutput) -> String {
    assert!(!output.is_error, "expected success, got: {}", output.text_content());
    output.text_content()
}
