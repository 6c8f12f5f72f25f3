//! The session's event log, as every connected page reads it.
//!
//! Every event gets the next id; a page reads the log from its start (a new
//! page, or one that cannot continue) or from just after the last id it
//! saw (an `EventSource` reconnecting, or the live stream itself). Two
//! rules keep the log about the size of the conversation it shows:
//!
//! - A run of `token` (or `thought`) events is merged into one entry once
//!   the run ends, so a replay carries the text, not every piece of it. The
//!   merged entry keeps the ids it covers (`first..=id`) and where each
//!   piece ended, so a reader whose last piece is inside it gets the rest
//!   of the text as one entry: merging never makes a live page start over.
//! - When the conversation is replaced (a `history` event for a new
//!   conversation or another session resumed), everything before it but the
//!   header is dropped. The `history` that follows the opening
//!   `session_started` (a session resumed at start) replaces nothing.
//!
//! A reader continues where the log has the entry after its last id, or
//! the rest of a merged run; anywhere else (its place was dropped, or the
//! id is from another server) it must start over from the log's start.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::watch;

/// One entry: the ids it covers and what the page receives.
#[derive(Debug, Clone)]
pub struct Entry {
    pub first: u64,
    pub id: u64,
    /// The agent event's JSON, sent as `data`.
    pub data: Arc<str>,
    /// For a merged run: its text and where each piece ended.
    run: Option<Arc<Run>>,
}

/// A merged run's text, and `(piece id, byte offset where it ended)` for
/// each piece, in order.
#[derive(Debug)]
struct Run {
    kind: Merge,
    text: String,
    ends: Vec<(u64, usize)>,
}

impl Entry {
    fn new(id: u64, data: Arc<str>) -> Entry {
        Entry { first: id, id, data, run: None }
    }

    /// What is left of this entry for a reader that has everything up to
    /// `after` (an id inside a merged run), as an entry of its own.
    fn rest_after(&self, after: u64) -> Option<Entry> {
        let run = self.run.as_ref()?;
        let at = run.ends.binary_search_by_key(&after, |(id, _)| *id).ok()?;
        let text = run.text.get(run.ends[at].1..)?;
        let data = serde_json::json!({ "type": run.kind.kind(), "text": text }).to_string();
        Some(Entry { first: after + 1, id: self.id, data: data.into(), run: None })
    }
}

/// The kind of entry a run can merge into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Merge {
    Token,
    Thought,
}

impl Merge {
    fn of(kind: &str) -> Option<Merge> {
        match kind {
            "token" => Some(Merge::Token),
            "thought" => Some(Merge::Thought),
            _ => None,
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Merge::Token => "token",
            Merge::Thought => "thought",
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    entries: Vec<Entry>,
    last: u64,
    /// The run of mergeable entries at the end: where it starts, and its
    /// text and piece ends so far.
    run: Option<(usize, Run)>,
}

/// What a reader gets for its place in the log.
#[derive(Debug)]
pub enum Read {
    /// The entries after its place.
    Next(Vec<Entry>),
    /// Its place is gone: forget what was shown and take these, the whole
    /// log.
    Restart(Vec<Entry>),
}

/// The log, shared by the task that appends and the pages that read.
#[derive(Debug, Clone)]
pub struct EventLog {
    inner: Arc<Mutex<Inner>>,
    latest: watch::Sender<u64>,
    /// This log's name among the logs of every server run: ids are only
    /// meaningful with it (a page of yesterday's server must not continue
    /// into today's conversation at the same number).
    epoch: Arc<str>,
}

impl EventLog {
    pub fn new() -> EventLog {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let epoch = format!("{:x}{:x}", nanos, std::process::id());
        EventLog { inner: Arc::default(), latest: watch::Sender::new(0), epoch: epoch.into() }
    }

    /// Appends an agent event (`data` is its JSON; `kind` its `type`).
    pub fn push_event(&self, kind: &str, data: String, text: Option<&str>) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let merge = Merge::of(kind);
        if merge.is_none() || inner.run.as_ref().map(|(_, run)| run.kind) != merge {
            close_run(&mut inner);
        }
        if kind == "history" && !inner.entries.last().is_some_and(|e| is_kind(e, "session_started"))
        {
            // The header, if there is one, stays first.
            let keep = usize::from(inner.entries.first().is_some_and(|e| is_kind(e, "header")));
            inner.entries.truncate(keep);
        }
        inner.last += 1;
        let id = inner.last;
        if let (Some(kind), Some(text)) = (merge, text) {
            let start = inner.entries.len();
            let (_, run) = inner.run.get_or_insert_with(|| {
                (start, Run { kind, text: String::new(), ends: Vec::new() })
            });
            run.text.push_str(text);
            run.ends.push((id, run.text.len()));
        }
        inner.entries.push(Entry::new(id, data.into()));
        drop(inner);
        self.latest.send_replace(id);
    }

    /// What a reader whose last id is `after` (`None`: a new reader) gets.
    pub fn read(&self, after: Option<u64>) -> Read {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(after) = after else {
            return Read::Restart(inner.entries.clone());
        };
        if after == inner.last {
            return Read::Next(Vec::new());
        }
        let at = inner.entries.partition_point(|entry| entry.id <= after);
        match inner.entries.get(at) {
            Some(entry) if entry.first == after + 1 => Read::Next(inner.entries[at..].to_vec()),
            Some(entry) if entry.first <= after => match entry.rest_after(after) {
                Some(rest) => {
                    let mut next = vec![rest];
                    next.extend_from_slice(&inner.entries[at + 1..]);
                    Read::Next(next)
                }
                None => Read::Restart(inner.entries.clone()),
            },
            _ => Read::Restart(inner.entries.clone()),
        }
    }

    /// An entry's id as pages see it: `EPOCH.ID`.
    pub fn public_id(&self, id: u64) -> String {
        format!("{}.{id}", self.epoch)
    }

    /// The id a page gives back (`Last-Event-ID`), if it is one of this
    /// log's.
    pub fn parse_id(&self, given: &str) -> Option<u64> {
        let (epoch, id) = given.trim().split_once('.')?;
        if epoch != &*self.epoch {
            return None;
        }
        id.parse().ok()
    }

    /// The last id, and a way to wait for the next.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.latest.subscribe()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).entries.len()
    }
}

/// Whether `entry` is the agent event of type `kind` (its JSON starts with
/// its tag).
fn is_kind(entry: &Entry, kind: &str) -> bool {
    entry
        .data
        .strip_prefix(r#"{"type":""#)
        .is_some_and(|rest| rest.strip_prefix(kind).is_some_and(|rest| rest.starts_with('"')))
}

/// Merges the run that just ended into one entry covering its ids.
fn close_run(inner: &mut Inner) {
    let Some((start, run)) = inner.run.take() else { return };
    if run.ends.len() < 2 {
        return;
    }
    let first = inner.entries[start].first;
    let id = inner.entries.last().map_or(first, |entry| entry.id);
    let data = serde_json::json!({ "type": run.kind.kind(), "text": run.text.as_str() });
    inner.entries.truncate(start);
    inner.entries.push(Entry {
        first,
        id,
        data: data.to_string().into(),
        run: Some(Arc::new(run)),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(log: &EventLog, text: &str) {
        let data = serde_json::json!({"type": "token", "text": text}).to_string();
        log.push_event("token", data, Some(text));
    }

    fn event(log: &EventLog, kind: &str) {
        log.push_event(kind, format!(r#"{{"type":"{kind}"}}"#), None);
    }

    fn ids(entries: &[Entry]) -> Vec<(u64, u64)> {
        entries.iter().map(|e| (e.first, e.id)).collect()
    }

    #[test]
    fn a_run_of_tokens_becomes_one_entry_once_it_ends() {
        let log = EventLog::new();
        event(&log, "header");
        event(&log, "turn_started");
        for piece in ["Hel", "lo", " world"] {
            token(&log, piece);
        }
        // While it streams, every piece is its own entry.
        assert_eq!(log.len(), 5);
        event(&log, "turn_completed");
        let Read::Restart(entries) = log.read(None) else { panic!("a new reader restarts") };
        assert_eq!(ids(&entries), vec![(1, 1), (2, 2), (3, 5), (6, 6)]);
        assert_eq!(&*entries[2].data, r#"{"type":"token","text":"Hello world"}"#);
    }

    #[test]
    fn a_reader_that_saw_every_piece_continues_after_the_merge() {
        let log = EventLog::new();
        event(&log, "header");
        token(&log, "a");
        token(&log, "b");
        // The page saw id 3, the last piece; the run is merged under it.
        event(&log, "turn_completed");
        let Read::Next(entries) = log.read(Some(3)) else { panic!("continues") };
        assert_eq!(ids(&entries), vec![(4, 4)]);
        assert!(matches!(log.read(Some(4)), Read::Next(entries) if entries.is_empty()));
    }

    #[test]
    fn a_reader_inside_a_merged_run_gets_the_rest_of_its_text() {
        let log = EventLog::new();
        event(&log, "header");
        token(&log, "a");
        token(&log, "bé");
        token(&log, "c");
        event(&log, "turn_completed");
        // The page saw "a" (id 2) when the run was merged under it.
        let Read::Next(entries) = log.read(Some(2)) else { panic!("continues") };
        assert_eq!(ids(&entries), vec![(3, 4), (5, 5)]);
        assert_eq!(&*entries[0].data, r#"{"type":"token","text":"béc"}"#);
        let Read::Next(entries) = log.read(Some(3)) else { panic!("continues") };
        assert_eq!(&*entries[0].data, r#"{"type":"token","text":"c"}"#);
        // An id the log never gave starts over.
        assert!(matches!(log.read(Some(99)), Read::Restart(_)));
    }

    #[test]
    fn thoughts_and_tokens_merge_separately() {
        let log = EventLog::new();
        log.push_event("thought", r#"{"type":"thought","text":"x"}"#.into(), Some("x"));
        log.push_event("thought", r#"{"type":"thought","text":"y"}"#.into(), Some("y"));
        token(&log, "1");
        token(&log, "2");
        event(&log, "turn_completed");
        let Read::Restart(entries) = log.read(None) else { panic!() };
        let data: Vec<&str> = entries.iter().map(|e| &*e.data).collect();
        assert_eq!(
            data,
            vec![
                r#"{"type":"thought","text":"xy"}"#,
                r#"{"type":"token","text":"12"}"#,
                r#"{"type":"turn_completed"}"#
            ]
        );
    }

    #[test]
    fn a_replaced_conversation_drops_all_but_the_header() {
        let log = EventLog::new();
        event(&log, "header");
        event(&log, "session_started");
        event(&log, "prompt");
        token(&log, "old answer");
        // A new conversation, or another session resumed.
        event(&log, "history");
        event(&log, "session_started");
        let Read::Restart(entries) = log.read(None) else { panic!() };
        assert_eq!(ids(&entries), vec![(1, 1), (5, 5), (6, 6)]);
        // A page that was at the prompt lost its place.
        assert!(matches!(log.read(Some(3)), Read::Restart(_)));
        // One that saw the old answer continues: the next entry follows it.
        assert!(matches!(log.read(Some(4)), Read::Next(e) if ids(&e) == vec![(5, 5), (6, 6)]));
    }

    #[test]
    fn the_history_of_a_session_resumed_at_start_replaces_nothing() {
        let log = EventLog::new();
        event(&log, "header");
        log.push_event("warning", r#"{"type":"warning","message":"w"}"#.into(), None);
        event(&log, "session_started");
        event(&log, "history");
        let Read::Restart(entries) = log.read(None) else { panic!() };
        assert_eq!(ids(&entries), vec![(1, 1), (2, 2), (3, 3), (4, 4)]);
        assert!(is_kind(&entries[0], "header") && !is_kind(&entries[2], "session"));
    }

    #[test]
    fn ids_of_another_server_run_are_not_this_logs() {
        let (log, other) = (EventLog::new(), EventLog::new());
        assert_eq!(log.parse_id(&log.public_id(7)), Some(7));
        assert_eq!(log.parse_id(&other.public_id(7)), None);
        assert_eq!(log.parse_id("7"), None);
        assert_eq!(log.parse_id(""), None);
    }

    #[test]
    fn readers_are_woken_by_new_entries() {
        let log = EventLog::new();
        let mut latest = log.subscribe();
        assert_eq!(*latest.borrow_and_update(), 0);
        event(&log, "header");
        assert!(latest.has_changed().unwrap());
        assert_eq!(*latest.borrow_and_update(), 1);
    }
}
