//! What rewinding a session to the start of one of its turns means: which
//! checkpoint holds the files as they were, and how many messages of the
//! conversation to take back.
//!
//! Guarantees: the files are those of the first checkpoint taken in that
//! turn or later (no earlier turn's tools changed a file after it), or none
//! when nothing was changed since; the conversation is cut back to just
//! before the turn's request, through a `Withdrawn` record appended by the
//! caller (the file is never rewritten). A compaction after the turn
//! summarised the messages a cut would need, so the conversation then
//! cannot be rewound (the files still can), and says so.

use std::collections::HashSet;

use crate::{Record, Session};

/// A rewind of a session to just before turn `turn`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewind {
    pub turn: u32,
    /// The request that began the turn, for showing.
    pub prompt: String,
    /// The checkpoint whose files to restore; `None` when no tool changed
    /// a file from that turn on.
    pub snapshot: Option<String>,
    /// Messages to take back; `Err` says why the conversation cannot be
    /// rewound.
    pub withdraw: Result<usize, String>,
    /// Turns from this one on that changed files without a checkpoint,
    /// and why: what they changed is not undone.
    pub missed: Vec<(u32, String)>,
    /// Each turn from this one on that took a checkpoint, as (the snapshot
    /// before it, the snapshot after it): exactly what the turns changed.
    /// `None` when one of them has no snapshot after it (a session of an
    /// older axon, a turn that was cut short by a crash).
    pub changes: Option<Vec<(String, String)>>,
}

/// One turn of a session, for a picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnSummary {
    pub turn: u32,
    pub prompt: String,
    /// Whether this turn's tools changed files: a checkpoint was taken and
    /// the files after the turn differ from it (a turn whose only write was
    /// refused took a checkpoint but changed nothing).
    pub changed_files: bool,
    pub at: i64,
}

impl Session {
    /// How many turns the session has begun (the next one is this + 1).
    pub fn turn_count(&self) -> u32 {
        self.records
            .iter()
            .filter_map(|r| match r {
                Record::Turn { turn, .. } => Some(*turn),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Turns whose messages were all taken back since (by a rewind, or a
    /// refused request): nothing of them is left to rewind.
    fn undone_turns(&self) -> HashSet<u32> {
        let mut len = 0usize;
        let mut starts: Vec<(u32, usize)> = Vec::new();
        let mut undone = HashSet::new();
        for (i, record) in self.records.iter().enumerate() {
            match record {
                Record::Message { .. } => len += 1,
                Record::Turn { turn, .. } => starts.push((*turn, len)),
                Record::Withdrawn { .. } | Record::Compaction { .. } => {
                    let before = len;
                    let upto = Session { records: self.records[..=i].to_vec(), ..self.clone() };
                    len = upto.history().len();
                    if matches!(record, Record::Withdrawn { .. }) {
                        undone.extend(starts.iter().filter(|(_, s)| *s >= len).map(|(t, _)| *t));
                    } else {
                        // What a summary replaced moved every later start.
                        let shift = before.saturating_sub(len);
                        for (_, start) in &mut starts {
                            *start = start.saturating_sub(shift);
                        }
                    }
                }
                _ => {}
            }
        }
        undone
    }

    /// The newest turn not undone yet (what a bare rewind undoes).
    pub fn last_turn(&self) -> Option<u32> {
        self.turns().last().map(|t| t.turn)
    }

    /// Every turn not undone, oldest first, with its request.
    pub fn turns(&self) -> Vec<TurnSummary> {
        let undone = self.undone_turns();
        let mut turns: Vec<TurnSummary> = Vec::new();
        let mut awaiting_prompt = false;
        for record in &self.records {
            match record {
                Record::Turn { turn, at } => {
                    turns.push(TurnSummary {
                        turn: *turn,
                        prompt: String::new(),
                        changed_files: false,
                        at: *at,
                    });
                    awaiting_prompt = true;
                }
                Record::Message { message, .. } if awaiting_prompt => {
                    if let Some(last) = turns.last_mut() {
                        last.prompt = message.text();
                    }
                    awaiting_prompt = false;
                }
                Record::Checkpoint { turn, .. } => {
                    if let Some(summary) = turns.iter_mut().find(|t| t.turn == *turn) {
                        summary.changed_files = true;
                    }
                }
                Record::TurnChanged { turn, changed: Some(0), .. } => {
                    if let Some(summary) = turns.iter_mut().find(|t| t.turn == *turn) {
                        summary.changed_files = false;
                    }
                }
                _ => {}
            }
        }
        turns.retain(|t| !undone.contains(&t.turn));
        turns
    }

    /// What rewinding to just before turn `turn` takes; why not, when the
    /// session has no such turn or it was undone already.
    pub fn rewind_to(&self, turn: u32) -> Result<Rewind, String> {
        let id = &self.header.id;
        let start = self
            .records
            .iter()
            .position(|r| matches!(r, Record::Turn { turn: t, .. } if *t == turn))
            .ok_or_else(|| match self.last_turn() {
                Some(last) => format!("session {id} has no turn {turn} (its latest is {last})"),
                None => format!("session {id} has no recorded turns to rewind to"),
            })?;
        let prompt = self
            .turns()
            .into_iter()
            .find(|t| t.turn == turn)
            .map(|t| t.prompt)
            .ok_or_else(|| {
                format!(
                    "turn {turn} of session {id} was undone already (`axon rewind --list` shows \
                     the turns left)"
                )
            })?;
        let snapshot = self.records[start..].iter().find_map(|r| match r {
            Record::Checkpoint { turn: t, snapshot, .. } if *t >= turn => Some(snapshot.clone()),
            _ => None,
        });
        let missed = self.records[start..]
            .iter()
            .filter_map(|r| match r {
                Record::CheckpointMissed { turn: t, reason, .. } if *t >= turn => {
                    Some((*t, reason.clone()))
                }
                _ => None,
            })
            .collect();
        let mut changes = Some(Vec::new());
        for (i, record) in self.records.iter().enumerate().skip(start) {
            let Record::Checkpoint { turn: t, snapshot, .. } = record else { continue };
            if *t < turn {
                continue;
            }
            let after = self.records[i..].iter().find_map(|r| match r {
                Record::TurnChanged { turn: a, snapshot, .. } if a == t => Some(snapshot.clone()),
                _ => None,
            });
            match (after, changes.as_mut()) {
                (Some(after), Some(list)) => list.push((snapshot.clone(), after)),
                _ => changes = None,
            }
        }
        let compacted_after =
            self.records[start..].iter().any(|r| matches!(r, Record::Compaction { .. }));
        let withdraw = if compacted_after {
            Err(format!(
                "the conversation was compacted after turn {turn}, so its messages from then on \
                 are a summary now; the files can still be rewound (--files-only)"
            ))
        } else {
            let before = Session { records: self.records[..start].to_vec(), ..self.clone() };
            Ok(self.history().len().saturating_sub(before.history().len()))
        };
        Ok(Rewind { turn, prompt, snapshot, withdraw, missed, changes })
    }

    /// For each recorded message ([`Session::messages`], in order): whether
    /// it was taken back since (by a rewind, or a refused request), so
    /// that showing and counting a session can leave it out or mark it.
    pub fn undone_messages(&self) -> Vec<bool> {
        let mut undone = Vec::new();
        // The recorded messages the history holds now, by index.
        let mut history: Vec<usize> = Vec::new();
        for record in &self.records {
            match record {
                Record::Message { .. } => {
                    history.push(undone.len());
                    undone.push(false);
                }
                Record::Withdrawn { messages, .. } => {
                    let keep = history.len().saturating_sub(*messages);
                    for index in history.drain(keep..) {
                        undone[index] = true;
                    }
                }
                // What a summary replaced is still the conversation's.
                Record::Compaction { kept, .. } => {
                    let replaced = history.len().saturating_sub(*kept);
                    history.drain(..replaced);
                }
                _ => {}
            }
        }
        undone
    }

    /// Every checkpoint id the session recorded (to prune with it).
    pub fn snapshots(&self) -> Vec<String> {
        self.records
            .iter()
            .filter_map(|r| match r {
                Record::Checkpoint { snapshot, .. } | Record::TurnChanged { snapshot, .. } => {
                    Some(snapshot.clone())
                }
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Header;
    use axon_protocol::Message;

    fn session(records: Vec<Record>) -> Session {
        Session {
            path: "s.jsonl".into(),
            header: Header {
                version: 1,
                id: "s".into(),
                title: "t".into(),
                workspace: "/w".into(),
                provider: "p".into(),
                model: "m".into(),
                created_at: 0,
            },
            records,
            warnings: Vec::new(),
        }
    }

    fn turn(turn: u32, prompt: &str, answer: &str) -> Vec<Record> {
        vec![
            Record::Turn { turn, at: 0 },
            Record::message(Message::user(prompt)),
            Record::message(Message::assistant(answer)),
        ]
    }

    #[test]
    fn a_rewind_takes_back_the_turns_messages_and_finds_the_next_checkpoint() {
        let mut records = turn(1, "first", "one");
        records.extend(turn(2, "second", "two"));
        records.push(Record::Checkpoint {
            turn: 2,
            snapshot: "abc".into(),
            skipped: vec![],
            at: 0,
        });
        records.extend(turn(3, "third", "three"));
        let s = session(records);
        assert_eq!(s.turn_count(), 3);
        let back = s.rewind_to(1).unwrap();
        assert_eq!(back.prompt, "first");
        assert_eq!(back.snapshot.as_deref(), Some("abc"), "turn 1 changed nothing; turn 2 did");
        assert_eq!(back.withdraw, Ok(6));
        let back = s.rewind_to(3).unwrap();
        assert_eq!(back.snapshot, None, "nothing changed from turn 3 on");
        assert_eq!(back.withdraw, Ok(2));
        assert!(s.rewind_to(4).is_err());
        let turns = s.turns();
        assert_eq!(turns.len(), 3);
        assert!(turns[1].changed_files && !turns[0].changed_files);
    }

    #[test]
    fn the_snapshots_after_each_turn_say_what_the_turns_changed() {
        let mut records = turn(1, "first", "one");
        records.push(Record::Checkpoint { turn: 1, snapshot: "b1".into(), skipped: vec![], at: 0 });
        records.push(Record::TurnChanged { turn: 1, snapshot: "a1".into(), changed: None, at: 0 });
        records.extend(turn(2, "second", "two"));
        records.push(Record::Checkpoint { turn: 2, snapshot: "b2".into(), skipped: vec![], at: 0 });
        let s = session(records.clone());
        assert_eq!(s.rewind_to(2).unwrap().changes, None, "turn 2 has no snapshot after it");
        records.push(Record::TurnChanged { turn: 2, snapshot: "a2".into(), changed: None, at: 0 });
        let s = session(records);
        let back = s.rewind_to(1).unwrap();
        assert_eq!(back.snapshot.as_deref(), Some("b1"));
        let spans = [("b1".to_string(), "a1".to_string()), ("b2".to_string(), "a2".to_string())];
        assert_eq!(back.changes.as_deref(), Some(&spans[..]));
        assert_eq!(s.rewind_to(2).unwrap().changes.as_deref(), Some(&spans[1..]));
    }

    #[test]
    fn a_compaction_after_the_turn_stops_only_the_conversation_rewind() {
        let mut records = turn(1, "first", "one");
        records.extend(turn(2, "second", "two"));
        records.push(Record::Compaction { summary: "sum".into(), carried: None, kept: 2, at: 0 });
        let s = session(records);
        assert!(s.rewind_to(1).unwrap().withdraw.is_err());
        assert_eq!(s.rewind_to(1).unwrap().snapshot, None);
    }

    #[test]
    fn an_undone_turn_is_not_offered_again() {
        let mut records = turn(1, "first", "one");
        records.extend(turn(2, "second", "two"));
        records.extend(turn(3, "third", "three"));
        records.push(Record::Withdrawn { messages: 2, at: 0 });
        let s = session(records.clone());
        assert_eq!(s.last_turn(), Some(2), "turn 3 was undone");
        let again = s.rewind_to(3).unwrap_err();
        assert!(again.contains("undone already"), "{again}");
        assert_eq!(s.rewind_to(2).unwrap().withdraw, Ok(2));
        records.extend(turn(4, "fourth", "four"));
        let s = session(records);
        let undone = s.undone_messages();
        assert_eq!(undone, [false, false, false, false, true, true, false, false]);
        let left: Vec<u32> = s.turns().iter().map(|t| t.turn).collect();
        assert_eq!(left, [1, 2, 4]);
        assert_eq!(s.rewind_to(2).unwrap().withdraw, Ok(4));
    }

    #[test]
    fn a_turn_whose_writes_changed_nothing_did_not_change_files() {
        let mut records = turn(1, "refused write", "ok");
        records.push(Record::Checkpoint { turn: 1, snapshot: "b1".into(), skipped: vec![], at: 0 });
        records.push(Record::TurnChanged {
            turn: 1,
            snapshot: "a1".into(),
            changed: Some(0),
            at: 0,
        });
        records.extend(turn(2, "real write", "ok"));
        records.push(Record::Checkpoint { turn: 2, snapshot: "b2".into(), skipped: vec![], at: 0 });
        records.push(Record::TurnChanged {
            turn: 2,
            snapshot: "a2".into(),
            changed: Some(1),
            at: 0,
        });
        let changed: Vec<bool> = session(records).turns().iter().map(|t| t.changed_files).collect();
        assert_eq!(changed, [false, true]);
    }

    #[test]
    fn a_turn_without_its_checkpoint_is_named() {
        let mut records = turn(1, "first", "one");
        records.push(Record::CheckpointMissed { turn: 1, reason: "git is missing".into(), at: 0 });
        let s = session(records);
        let back = s.rewind_to(1).unwrap();
        assert_eq!(back.snapshot, None);
        assert_eq!(back.missed, [(1, "git is missing".to_string())]);
    }
}
