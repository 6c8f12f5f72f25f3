//! The editor's files: when the client says it can (`fs.readTextFile`,
//! `fs.writeTextFile`), the file tools read its buffers (unsaved changes
//! included) and write through it (so an edit lands in its undo history).
//!
//! The workspace jail still decides every path first (see
//! `axon_tools::Buffers`); only content goes to and from the editor. The
//! tools call this on blocking threads, so each call waits for the
//! editor's answer there, bounded in time.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol_schema::v1::{ReadTextFileRequest, WriteTextFileRequest};
use axon_runtime::Buffers;
use tokio::runtime::Handle;

use crate::rpc::Peer;

/// How long one file request may wait for the editor.
const EDITOR_TIMEOUT: Duration = Duration::from_secs(30);

pub struct EditorFiles {
    pub session_id: String,
    /// The workspace's canonical root, which the tools' paths start with.
    pub root: std::path::PathBuf,
    /// The folder as the editor named it: the paths it knows its buffers by.
    pub cwd: std::path::PathBuf,
    pub peer: Arc<Peer>,
    pub runtime: Handle,
    pub read: bool,
    pub write: bool,
}

impl EditorFiles {
    /// `path` as the editor knows it.
    fn editor_path(&self, path: &Path) -> std::path::PathBuf {
        match path.strip_prefix(&self.root) {
            Ok(relative) => self.cwd.join(relative),
            Err(_) => path.to_path_buf(),
        }
    }

    fn call(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let peer = Arc::clone(&self.peer);
        let method = method.to_string();
        self.runtime.block_on(async move {
            match tokio::time::timeout(EDITOR_TIMEOUT, peer.request(&method, params)).await {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(e)) => Err(e.message),
                Err(_) => Err(format!("the editor did not answer {method} within 30 s")),
            }
        })
    }
}

impl Buffers for EditorFiles {
    fn read(&self, path: &Path) -> Result<String, String> {
        if !self.read {
            return Err("the editor does not read files".to_string());
        }
        let request = ReadTextFileRequest::new(self.session_id.clone(), self.editor_path(path));
        let params = serde_json::to_value(request).map_err(|e| e.to_string())?;
        let answer = self.call("fs/read_text_file", params)?;
        answer
            .get("content")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| "the editor's answer has no `content`".to_string())
    }

    fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        if !self.write {
            return Err("the editor does not write files".to_string());
        }
        let request =
            WriteTextFileRequest::new(self.session_id.clone(), self.editor_path(path), text);
        let params = serde_json::to_value(request).map_err(|e| e.to_string())?;
        self.call("fs/write_text_file", params).map(|_| ())
    }

    fn writes(&self) -> bool {
        self.write
    }
}
