//! [`with_text_calls`]: a provider's event stream with the calls its text
//! holds turned into tool-call events. Every other event passes through
//! unchanged and in order; no text is lost (text that is not a call comes
//! out as text, only later when it might have been one).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;
use serde_json::Value;

use super::{CallExtractor, Piece};
use crate::{EventStream, FinishReason, LlmError, ProviderEvent};

/// Wraps a provider's event stream: text deltas go through a
/// [`CallExtractor`] for `tool_names`, and each call found in them becomes
/// `ToolCallStart { id: "call_text_N" }`, one `ToolCallDelta` with its
/// arguments as JSON text, and `ToolCallEnd`.
///
/// The calls are given when the model finishes (before `Finish`), with
/// indexes after every native call of the stream; `Finish(Stop)` becomes
/// `Finish(ToolCalls)` when there are any. Native calls pass through
/// untouched; a call found in the text that repeats a native call of the
/// same stream (same name and arguments, as a server that both parsed a
/// call and leaked its text would send) is dropped. Before an error, what
/// was held back is given out, so no text is lost. What is held back is
/// announced as `TextHeld` (and `HeldTextSettled` once it is given out or
/// taken), so a turn cancelled while text is held still keeps it.
pub fn with_text_calls(stream: EventStream, tool_names: Vec<String>) -> EventStream {
    Box::pin(TextCalls {
        inner: stream,
        extractor: CallExtractor::new(tool_names),
        out: VecDeque::new(),
        found: Vec::new(),
        native: BTreeMap::new(),
        given: 0,
        next_index: 0,
        inner_done: false,
        held: 0,
    })
}

struct TextCalls {
    inner: EventStream,
    extractor: CallExtractor,
    /// Events ready to give.
    out: VecDeque<Result<ProviderEvent, LlmError>>,
    /// Calls found in the text, given at the end.
    found: Vec<(String, Value)>,
    /// Native calls by index: name and arguments so far.
    native: BTreeMap<usize, (String, String)>,
    /// Text calls given so far.
    given: usize,
    /// The least index the next text call may take.
    next_index: usize,
    inner_done: bool,
    /// Bytes of the extractor's held text announced as `TextHeld`.
    held: usize,
}

impl TextCalls {
    fn take(&mut self, event: ProviderEvent) {
        match event {
            ProviderEvent::TextDelta(text) => {
                let pieces = self.extractor.push(&text);
                let only_added =
                    pieces.is_empty() && self.extractor.held().len() == self.held + text.len();
                self.pieces(pieces);
                if only_added {
                    // The common case while a block is read: no copy of
                    // what is held, only the new piece.
                    self.held += text.len();
                    self.out.push_back(Ok(ProviderEvent::TextHeld(text)));
                } else {
                    self.announce_held();
                }
            }
            ProviderEvent::ToolCallStart { index, ref name, .. } => {
                self.native.insert(index, (name.clone(), String::new()));
                self.out.push_back(Ok(event));
            }
            ProviderEvent::ToolCallDelta { index, ref arguments } => {
                if let Some((_, so_far)) = self.native.get_mut(&index) {
                    so_far.push_str(arguments);
                }
                self.out.push_back(Ok(event));
            }
            ProviderEvent::Finish(reason) => {
                self.flush();
                let reason = match reason {
                    FinishReason::Stop if self.given > 0 => FinishReason::ToolCalls,
                    other => other,
                };
                self.out.push_back(Ok(ProviderEvent::Finish(reason)));
            }
            other => self.out.push_back(Ok(other)),
        }
    }

    fn pieces(&mut self, pieces: Vec<Piece>) {
        for piece in pieces {
            match piece {
                Piece::Text(text) => self.out.push_back(Ok(ProviderEvent::TextDelta(text))),
                Piece::Call { name, arguments } => self.found.push((name, arguments)),
            }
        }
    }

    /// Announces the extractor's held text afresh after some of it was
    /// settled.
    fn announce_held(&mut self) {
        if self.held > 0 {
            self.out.push_back(Ok(ProviderEvent::HeldTextSettled));
        }
        let held = self.extractor.held();
        self.held = held.len();
        if !held.is_empty() {
            self.out.push_back(Ok(ProviderEvent::TextHeld(held.to_string())));
        }
    }

    /// The end of the text: what was held back, then the calls found.
    fn flush(&mut self) {
        let pieces = self.extractor.finish();
        self.pieces(pieces);
        self.announce_held();
        let mut repeated = BTreeSet::new();
        let after_native = self.native.keys().next_back().map_or(0, |last| last + 1);
        self.next_index = self.next_index.max(after_native);
        for (name, arguments) in std::mem::take(&mut self.found) {
            let twin = self.native.iter().find(|(index, (native_name, native_arguments))| {
                !repeated.contains(*index)
                    && *native_name == name
                    && same_arguments(native_arguments, &arguments)
            });
            if let Some((&index, _)) = twin {
                repeated.insert(index);
                continue;
            }
            let index = self.next_index;
            self.next_index += 1;
            let id = format!("call_text_{}", self.given);
            self.given += 1;
            let arguments = arguments.to_string();
            self.out.push_back(Ok(ProviderEvent::ToolCallStart { index, id, name }));
            self.out.push_back(Ok(ProviderEvent::ToolCallDelta { index, arguments }));
            self.out.push_back(Ok(ProviderEvent::ToolCallEnd { index }));
        }
    }
}

/// Whether a native call's arguments text says the same as `arguments`.
fn same_arguments(text: &str, arguments: &Value) -> bool {
    if text.trim().is_empty() {
        return arguments.as_object().is_some_and(serde_json::Map::is_empty);
    }
    serde_json::from_str::<Value>(text).is_ok_and(|native| native == *arguments)
}

impl Stream for TextCalls {
    type Item = Result<ProviderEvent, LlmError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.out.pop_front() {
                return Poll::Ready(Some(item));
            }
            if this.inner_done {
                return Poll::Ready(None);
            }
            match this.inner.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    this.inner_done = true;
                    this.flush();
                }
                Poll::Ready(Some(Ok(event))) => this.take(event),
                Poll::Ready(Some(Err(error))) => {
                    this.flush();
                    this.out.push_back(Err(error));
                }
            }
        }
    }
}
