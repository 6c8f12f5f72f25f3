//! `GET /api/events`: the session's events as Server-Sent Events.
//!
//! A page gets `event: reset`, the whole log and `event: replayed` when it
//! connects (or when its `Last-Event-ID` cannot be continued exactly), then
//! every entry as it is appended, each with its `id:`. A comment every
//! [`KEEP_ALIVE`] finds connections the browser dropped. The stream ends
//! when the server stops, so shutting down never waits on an open page.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::log::{Entry, EventLog, Read};

/// How often an idle stream says it is alive.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The event stream for a page that last saw `Last-Event-ID` (if any).
pub fn events(log: EventLog, headers: &HeaderMap, stop: CancellationToken) -> Response {
    let after =
        headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| log.parse_id(v));
    let reader = Reader { latest: log.subscribe(), log, after, stop };
    let body = Body::from_stream(stream::unfold(reader, |mut reader| async move {
        let frame = reader.next().await?;
        Some((Ok::<Bytes, std::convert::Infallible>(frame), reader))
    }));
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Proxies that buffer (nginx) would hold tokens back.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

struct Reader {
    log: EventLog,
    latest: watch::Receiver<u64>,
    /// The last id this page has; `None` until it has the log.
    after: Option<u64>,
    stop: CancellationToken,
}

impl Reader {
    /// The next bytes to send, waiting for them; `None` ends the stream.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if self.stop.is_cancelled() {
                return None;
            }
            // Marked seen before reading: an entry appended after the read
            // wakes the wait below.
            self.latest.borrow_and_update();
            match self.log.read(self.after) {
                Read::Restart(entries) => {
                    let mut out = String::from("event: reset\ndata: {}\n\n");
                    self.after = Some(entries.last().map_or(0, |e| e.id));
                    frames(&mut out, &self.log, &entries);
                    // The page knows the replay is drawn when it gets here.
                    out.push_str("event: replayed\ndata: {}\n\n");
                    return Some(Bytes::from(out));
                }
                Read::Next(entries) if !entries.is_empty() => {
                    self.after = entries.last().map(|e| e.id);
                    let mut out = String::new();
                    frames(&mut out, &self.log, &entries);
                    return Some(Bytes::from(out));
                }
                Read::Next(_) => {}
            }
            tokio::select! {
                changed = self.latest.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
                () = tokio::time::sleep(KEEP_ALIVE) => return Some(Bytes::from_static(b": alive\n\n")),
                () = self.stop.cancelled() => return None,
            }
        }
    }
}

/// Entries as SSE frames (their JSON is one line: serde never writes a raw
/// newline inside a string).
fn frames(out: &mut String, log: &EventLog, entries: &[Entry]) {
    for entry in entries {
        out.push_str("id: ");
        out.push_str(&log.public_id(entry.id));
        out.push_str("\ndata: ");
        out.push_str(&entry.data);
        out.push_str("\n\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_become_frames_with_this_logs_ids() {
        let log = EventLog::new();
        log.push_event("header", r#"{"type":"header"}"#.into(), None);
        log.push_event("token", r#"{"type":"token","text":"a\nb"}"#.into(), Some("a\nb"));
        let Read::Restart(entries) = log.read(None) else { panic!("a new reader restarts") };
        let mut out = String::new();
        frames(&mut out, &log, &entries);
        let (one, two) = (log.public_id(1), log.public_id(2));
        assert_eq!(
            out,
            format!(
                "id: {one}\ndata: {{\"type\":\"header\"}}\n\nid: {two}\ndata: {{\"type\":\"token\",\"text\":\"a\\nb\"}}\n\n"
            )
        );
    }
}
