//! The agent's conversation: messages with their token costs, recorded to a
//! [`Journal`] as they join.
//!
//! Trimming shrinks what is sent; the journal (a session file) has already
//! kept every message, so nothing the user did is lost with it.
//!
//! Costs are estimates until the conversation nears the window; from then
//! on ([`History::count_exactly_past`]) every message, those already held
//! included, is counted with the model's tokenizer, so all the costs in a
//! history are always of one kind.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axon_protocol::{Message, Usage};

use crate::context;
use crate::tokens::TokenCounter;

/// Where a conversation is recorded as it happens (a session file).
pub trait Journal: Send + Sync {
    /// A message joined the history; `tokens` is its cost (estimated, or
    /// exact once the tokenizer is loaded), kept so a resume need not count
    /// again.
    fn message(&self, message: &Message, tokens: u64);
    /// A model call used these tokens.
    fn usage(&self, usage: &Usage);
    /// All but the newest `kept` messages were replaced by `summary`, with
    /// `carried` (the state carried forward verbatim) beside it.
    fn compacted(&self, summary: &str, carried: Option<&str>, kept: usize);
    /// The request being worked on failed with `reason`; it stays the last
    /// message, and asking it again answers it rather than repeating it.
    fn turn_failed(&self, _reason: &str) {}
    /// The newest `messages` messages were taken back (a refused request
    /// and what followed it): they are not sent again, nor resumed.
    fn withdrawn(&self, _messages: usize) {}
    /// From the next message on, `provider`'s `model` answers (a fallback
    /// took over, or the first provider took back).
    fn model_changed(&self, _provider: &str, _model: &str) {}
}

pub(crate) struct History {
    messages: Vec<Message>,
    /// Uncorrected token cost of each message, same length as `messages`:
    /// all estimates or, once the counter is loaded, all exact.
    tokens: Vec<u64>,
    pub(crate) counter: TokenCounter,
    journal: Option<Arc<dyn Journal>>,
}

impl History {
    pub(crate) fn new(model: &str) -> Self {
        History {
            messages: Vec::new(),
            tokens: Vec::new(),
            counter: TokenCounter::for_model(model),
            journal: None,
        }
    }

    pub(crate) fn set_journal(&mut self, journal: Option<Arc<dyn Journal>>) {
        self.journal = journal;
    }

    pub(crate) fn messages(&self) -> &[Message] {
        &self.messages
    }

    pub(crate) fn len(&self) -> usize {
        self.messages.len()
    }

    /// Replaces everything without recording it (a resumed session's
    /// messages are already in its file). Calls left open by a crash are
    /// closed by [`History::close_open_calls`] before the next request,
    /// which records the results it adds, so the file and the history
    /// always hold the same messages. `known` counts are used while the
    /// counter estimates; once it is exact they are counted again, since a
    /// file's counts may be estimates.
    pub(crate) fn replace(&mut self, messages: Vec<Message>, known: Vec<Option<u64>>) {
        let exact = self.counter.is_loaded();
        self.tokens = messages
            .iter()
            .enumerate()
            .map(|(i, m)| match known.get(i).copied().flatten() {
                Some(count) if !exact => count,
                _ => self.counter.message(m),
            })
            .collect();
        self.messages = messages;
    }

    /// Gives dangling tool calls their "interrupted" results. Results that
    /// go at the end (a run that died mid-tool) are recorded like any other
    /// message, so the file and the history agree; results for calls in the
    /// middle (a file from elsewhere) are kept in memory only, since the
    /// file can only be appended to and a result must follow its call.
    pub(crate) fn close_open_calls(&mut self) {
        let mut messages = self.messages.clone();
        context::close_open_calls(&mut messages);
        if messages.len() == self.messages.len() {
            return;
        }
        let appended_only = messages[..self.messages.len()] == self.messages[..];
        if appended_only {
            let added: Vec<Message> = messages.drain(self.messages.len()..).collect();
            for message in added {
                self.push(message);
            }
        } else {
            self.tokens = messages.iter().map(|m| self.counter.message(m)).collect();
            self.messages = messages;
        }
    }

    /// Appends a message, stamped with the time, and records it.
    pub(crate) fn push(&mut self, mut message: Message) {
        if message.timestamp_ms.is_none() {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
            message.timestamp_ms = i64::try_from(now.as_millis()).ok();
        }
        let tokens = self.counter.message(&message);
        if let Some(journal) = &self.journal {
            journal.message(&message, tokens);
        }
        self.tokens.push(tokens);
        self.messages.push(message);
    }

    /// Takes back the messages from `index` on, and records that.
    pub(crate) fn withdraw_from(&mut self, index: usize) {
        let count = self.messages.len().saturating_sub(index);
        if count == 0 {
            return;
        }
        self.messages.truncate(index);
        self.tokens.truncate(index);
        if let Some(journal) = &self.journal {
            journal.withdrawn(count);
        }
    }

    pub(crate) fn record_failure(&self, reason: &str) {
        if let Some(journal) = &self.journal {
            journal.turn_failed(reason);
        }
    }

    pub(crate) fn record_usage(&self, usage: &Usage) {
        if let Some(journal) = &self.journal {
            journal.usage(usage);
        }
    }

    /// Uncorrected tokens of every message.
    pub(crate) fn raw_tokens(&self) -> u64 {
        self.tokens.iter().sum()
    }

    /// The corrected tokens of a request with a preamble of
    /// `preamble(counter)` tokens and this history, counted exactly if that is past
    /// `threshold`: the tokenizer is then loaded, every message counted
    /// again with it, and the correction learned from reports carried over
    /// to the exact counts. Once switched it stays exact: the memory is
    /// paid, and a conversation that has grown this far tends to grow.
    pub(crate) fn count_exactly_past(
        &mut self,
        preamble: &dyn Fn(&TokenCounter) -> u64,
        threshold: u64,
    ) -> u64 {
        let counted = preamble(&self.counter) + self.raw_tokens();
        if self.counter.is_loaded() || self.counter.corrected(counted) <= threshold {
            return self.counter.corrected(counted);
        }
        self.counter.load();
        self.tokens = self.messages.iter().map(|m| self.counter.message(m)).collect();
        let exact = preamble(&self.counter) + self.raw_tokens();
        self.counter.carry_correction(counted, exact);
        self.counter.corrected(exact)
    }

    /// Trims to `budget` (corrected tokens) with `fixed` (raw) always sent.
    pub(crate) fn fit(&mut self, fixed: u64, budget: u64, keep: usize) -> (usize, usize) {
        let scale = self.counter.scale().max(0.01);
        let raw_budget = (budget as f64 / scale) as u64;
        context::trim_to_budget(&mut self.messages, &mut self.tokens, fixed, raw_budget, keep)
    }

    pub(crate) fn trim_half(&mut self, keep: usize) -> (usize, usize) {
        context::trim_half(&mut self.messages, &mut self.tokens, keep)
    }

    /// Replaces the first `replaced` messages by `summary` and `carried`
    /// (led into the first kept user message) and records the compaction.
    pub(crate) fn compact(&mut self, summary: &str, carried: Option<&str>, replaced: usize) {
        let replaced = replaced.min(self.messages.len());
        let mut rest: Vec<Message> = self.messages.split_off(replaced);
        if let Some(journal) = &self.journal {
            journal.compacted(summary, carried, rest.len());
        }
        axon_protocol::compaction::apply_summary(&mut rest, summary, carried);
        self.tokens = rest.iter().map(|m| self.counter.message(m)).collect();
        self.messages = rest;
    }

    /// `provider`'s `model` answers from now on: the history is counted with
    /// its tokenizer (estimating until loaded), and the change recorded.
    pub(crate) fn model_changed(&mut self, provider: &str, model: &str) {
        self.counter = TokenCounter::for_model(model);
        self.tokens = self.messages.iter().map(|m| self.counter.message(m)).collect();
        if let Some(journal) = &self.journal {
            journal.model_changed(provider, model);
        }
    }

    /// A new conversation: nothing of the old one is sent again.
    pub(crate) fn clear(&mut self) {
        self.messages.clear();
        self.tokens.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::exact_from;

    fn exact(model: &str, messages: &[Message]) -> u64 {
        let counter = TokenCounter::for_model(model);
        counter.load();
        messages.iter().map(|m| counter.message(m)).sum()
    }

    #[test]
    fn the_tokenizer_is_loaded_only_near_the_window() {
        let window = 4000;
        let mut history = History::new("deepseek-chat");
        history.push(Message::user("What does this crate do?"));
        history.push(Message::assistant("It keeps the conversation within the window."));
        history.count_exactly_past(&|c| c.preamble("You are axon.", &[]), exact_from(window));
        assert!(!history.counter.is_loaded(), "a short conversation is only estimated");

        let mut grew = 0;
        loop {
            let sent = history
                .count_exactly_past(&|c| c.preamble("You are axon.", &[]), exact_from(window));
            if history.counter.is_loaded() {
                // What it returns is now the exact count (no reports, so
                // no correction).
                let exact = history.counter.preamble("You are axon.", &[]) + history.raw_tokens();
                assert_eq!(sent, exact);
                break;
            }
            history.push(Message::user(format!("question {grew}: {}", "fn main() {} ".repeat(40))));
            grew += 1;
            assert!(grew < 100, "never switched");
        }
        assert!(history.counter.is_loaded());
        assert_eq!(history.raw_tokens(), exact("deepseek-chat", history.messages()));
        // Switched near the threshold, not long after it: exact counts
        // are at most twice it (the estimate is not under by 2x).
        let sent = history.counter.preamble("You are axon.", &[]) + history.raw_tokens();
        assert!(sent <= 2 * exact_from(window), "{sent}");
        // Messages that join later are counted exactly too.
        history.push(Message::assistant("ok"));
        assert_eq!(history.raw_tokens(), exact("deepseek-chat", history.messages()));
    }

    #[test]
    fn recorded_counts_are_used_only_while_estimating() {
        let messages = vec![Message::user("hello there"), Message::assistant("hi")];
        let mut history = History::new("gpt-4o");
        history.replace(messages.clone(), vec![Some(50), None]);
        assert_eq!(history.raw_tokens(), 50 + history.counter.message(&messages[1]));
        history.counter.load();
        history.replace(messages.clone(), vec![Some(50), None]);
        assert_eq!(history.raw_tokens(), exact("gpt-4o", &messages));
    }
}
