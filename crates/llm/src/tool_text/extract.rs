//! [`CallExtractor`]: a reply streamed in, its prose and calls out in
//! order. Prose is given out as soon as it is known not to be the start of
//! a call; what it gives is the same however the reply is split, and the
//! work is linear in the reply.

use super::blocks::{Block, Marker, Match, Step, match_at};
use super::json::{CallSeq, SeqStep};
use super::{Piece, ScanCost};

/// Streamed reply text in, prose and tool calls out, in order (see the
/// [module](super) for the formats). Text that might be the start of a
/// call marker is held back until it is known either way; a reply that
/// begins with `{` is held back whole while it may be nothing but bare
/// call objects.
#[derive(Debug)]
pub struct CallExtractor {
    tool_names: Vec<String>,
    /// Text not yet given out: a possible marker start, or a block.
    pending: String,
    state: State,
    work: ScanCost,
}

#[derive(Debug)]
enum State {
    /// Nothing but whitespace so far (this many bytes): the reply may be
    /// bare call JSON.
    Start(usize),
    /// The reply began with `{`: is it all call objects?
    Bare(CallSeq),
    /// Prose, looking for markers.
    Text,
    /// `pending` begins with this marker; its block is being read.
    Block(Marker, Block),
}

impl CallExtractor {
    /// An extractor for a request offering these tools (bare JSON counts
    /// as calls only when it names them).
    pub fn new(tool_names: Vec<String>) -> Self {
        CallExtractor {
            tool_names,
            pending: String::new(),
            state: State::Start(0),
            work: ScanCost::default(),
        }
    }

    /// Takes the next piece of the reply; returns what is known now.
    pub fn push(&mut self, delta: &str) -> Vec<Piece> {
        self.pending.push_str(delta);
        self.advance(false)
    }

    /// The text received and not yet given out: held back until it is
    /// known to be prose or a call.
    pub fn held(&self) -> &str {
        &self.pending
    }

    /// The end of the reply: an unclosed block that still reads as a call
    /// is one; anything else held back is given back as text.
    pub fn finish(&mut self) -> Vec<Piece> {
        self.advance(true)
    }

    fn advance(&mut self, at_end: bool) -> Vec<Piece> {
        let mut out = Out::default();
        loop {
            match &mut self.state {
                State::Start(blank) => {
                    let rest = &self.pending[*blank..];
                    let space = rest.len() - rest.trim_start().len();
                    self.work.add(space + 1);
                    *blank += space;
                    match self.pending.as_bytes().get(*blank).copied() {
                        Some(b'{') => self.state = State::Bare(CallSeq::default()),
                        Some(_) => self.state = State::Text,
                        None if at_end => {
                            out.text(&std::mem::take(&mut self.pending));
                            return out.pieces;
                        }
                        None => return out.pieces,
                    }
                }
                State::Bare(seq) => {
                    match seq.step(&self.pending, at_end, Some(&self.tool_names), &mut self.work) {
                        SeqStep::Pending => return out.pieces,
                        SeqStep::Ended if seq.pos == self.pending.len() => {
                            for call in std::mem::take(&mut seq.calls) {
                                out.call(call);
                            }
                            self.pending.clear();
                            self.state = State::Text;
                        }
                        // Not all calls: read it all again as prose.
                        SeqStep::Ended | SeqStep::Invalid => self.state = State::Text,
                    }
                }
                State::Text => match find_marker(&self.pending, at_end, &mut self.work) {
                    Found::Marker(at, marker) => {
                        out.text(&self.pending[..at]);
                        self.pending.drain(..at);
                        self.state = State::Block(marker, Block::new(marker));
                    }
                    Found::Hold(at) => {
                        out.text(&self.pending[..at]);
                        self.pending.drain(..at);
                        return out.pieces;
                    }
                },
                State::Block(marker, block) => {
                    let skip = marker.text().len();
                    match block.step(&self.pending[skip..], at_end, &mut self.work) {
                        Step::Undecided => return out.pieces,
                        Step::Calls(calls, used) => {
                            for call in calls {
                                out.call(call);
                            }
                            self.pending.drain(..skip + used);
                        }
                        Step::Malformed => {
                            out.text(&self.pending[..skip]);
                            self.pending.drain(..skip);
                        }
                    }
                    self.state = State::Text;
                }
            }
        }
    }

    /// Bytes looked at so far.
    #[cfg(test)]
    pub(super) fn work(&self) -> usize {
        self.work.0
    }
}

/// Pieces being given out, adjacent text joined.
#[derive(Default)]
struct Out {
    pieces: Vec<Piece>,
}

impl Out {
    fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(Piece::Text(last)) => last.push_str(text),
            _ => self.pieces.push(Piece::Text(text.to_string())),
        }
    }

    fn call(&mut self, (name, arguments): (String, serde_json::Value)) {
        self.pieces.push(Piece::Call { name, arguments });
    }
}

enum Found {
    /// A marker starts here.
    Marker(usize, Marker),
    /// No marker: the text before here is prose, the rest may begin one
    /// (the length when nothing may).
    Hold(usize),
}

/// The first marker in `text`, or how much of it is surely prose. All
/// markers start with `<` or `[` and none holds another, so the first
/// position that is a marker's beginning cut off by the end of the text
/// is the start of the held-back tail.
fn find_marker(text: &str, at_end: bool, work: &mut ScanCost) -> Found {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = bytes[from..].iter().position(|&b| b == b'<' || b == b'[') {
        let at = from + offset;
        work.add(offset + 1);
        let mut maybe = false;
        for marker in Marker::ALL {
            match match_at(text, at, marker.text()) {
                Match::Yes => return Found::Marker(at, marker),
                Match::Maybe => maybe = true,
                Match::No => {}
            }
        }
        if maybe && !at_end {
            return Found::Hold(at);
        }
        from = at + 1;
    }
    work.add(bytes.len() - from);
    Found::Hold(bytes.len())
}
