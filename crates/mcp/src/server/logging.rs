//! `logging/setLevel` and the log messages a session receives.
//!
//! Logging is deprecated in newer protocol revisions (SEP-2577) but hosts
//! still show it, so each session keeps its own threshold (info until the
//! host sets one). A call is logged at debug when it starts and finishes, at
//! warning when it fails: by default a host hears only about failures, and
//! a busy session's successful calls cost no extra messages.

#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::json;

/// The syslog levels of MCP logging, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl From<LoggingLevel> for LogLevel {
    fn from(level: LoggingLevel) -> Self {
        match level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info => LogLevel::Info,
            LoggingLevel::Notice => LogLevel::Notice,
            LoggingLevel::Warning => LogLevel::Warning,
            LoggingLevel::Error => LogLevel::Error,
            LoggingLevel::Critical => LogLevel::Critical,
            LoggingLevel::Alert => LogLevel::Alert,
            LoggingLevel::Emergency => LogLevel::Emergency,
        }
    }
}

impl From<LogLevel> for LoggingLevel {
    fn from(level: LogLevel) -> Self {
        match level {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
            LogLevel::Critical => LoggingLevel::Critical,
            LogLevel::Alert => LoggingLevel::Alert,
            LogLevel::Emergency => LoggingLevel::Emergency,
        }
    }
}

const LEVELS: [LogLevel; 8] = [
    LogLevel::Debug,
    LogLevel::Info,
    LogLevel::Notice,
    LogLevel::Warning,
    LogLevel::Error,
    LogLevel::Critical,
    LogLevel::Alert,
    LogLevel::Emergency,
];

/// One session's threshold.
#[derive(Clone)]
pub(crate) struct Logger {
    threshold: Arc<AtomicU8>,
}

impl Default for Logger {
    fn default() -> Self {
        Logger { threshold: Arc::new(AtomicU8::new(LogLevel::Info as u8)) }
    }
}

impl Logger {
    pub(crate) fn set(&self, level: LogLevel) {
        self.threshold.store(level as u8, Ordering::Relaxed);
    }

    fn threshold(&self) -> LogLevel {
        let index = usize::from(self.threshold.load(Ordering::Relaxed));
        LEVELS.get(index).copied().unwrap_or(LogLevel::Info)
    }

    /// Sends one message about `tool` if the session wants `level`.
    pub(crate) async fn send(
        &self,
        peer: &Peer<RoleServer>,
        level: LogLevel,
        tool: &str,
        message: &str,
        elapsed: Option<Duration>,
    ) {
        if level < self.threshold() {
            return;
        }
        let mut data = json!({ "tool": tool, "message": message });
        if let Some(elapsed) = elapsed {
            data["elapsed_ms"] = json!(elapsed.as_millis() as u64);
        }
        let mut param = LoggingMessageNotificationParam::new(level.into(), data);
        param.logger = Some("axon".to_string());
        let _ = peer.notify_logging_message(param).await;
    }
}
