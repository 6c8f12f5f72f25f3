//! Showing a streamed reply without its tool blocks, in work linear in the
//! reply: what [`VisibleText`] shows is what [`parse`](super::parse) leaves as text, and
//! each byte of an open block is looked at a bounded number of times, however
//! small the deltas it arrives in.

use serde_json::Value;

use crate::json_end::ValueEnd;
use crate::scan_cost::ScanCost;

use super::{CLOSE, FENCE};

/// Streamed reply text with the tool blocks taken out, for showing as it
/// arrives: the blocks are shown as tool calls (or warnings) once the reply
/// is parsed, never as answer text. Text that might be the start of a
/// fence is held back until it is known not to be.
///
/// The work is linear in the reply: a block's body is read once as it
/// grows, never again from its start at every delta, so a 200 KB
/// `write_file` block streamed in 4-byte pieces costs a few readings of it,
/// not gigabytes.
#[derive(Debug, Default)]
pub struct VisibleText {
    /// Text not yet shown: a possible fence start, or a block's body.
    pending: String,
    in_block: bool,
    /// Where the reading of the open block's body stands.
    scan: BlockScan,
    work: ScanCost,
}

impl VisibleText {
    pub fn new() -> Self {
        VisibleText::default()
    }

    /// Takes the next piece of the reply; returns what may be shown now.
    pub fn push(&mut self, delta: &str) -> String {
        self.pending.push_str(delta);
        self.advance(false)
    }

    /// The end of the reply: what was held back and can be shown (an
    /// unclosed block is not).
    pub fn finish(&mut self) -> String {
        self.advance(true)
    }

    /// Shows what can be shown; `at_end`: no more text will come, so
    /// nothing is held back and an open block is settled for good.
    fn advance(&mut self, at_end: bool) -> String {
        let mut shown = String::new();
        loop {
            if self.in_block {
                match self.scan.end(&self.pending, at_end, &mut self.work) {
                    Some(end) => {
                        self.pending.drain(..end);
                        self.leave_block();
                    }
                    None => {
                        if at_end {
                            self.pending.clear();
                            self.leave_block();
                        }
                        return shown;
                    }
                }
            } else if let Some(start) = self.pending.find(FENCE) {
                self.work.add(start + FENCE.len());
                shown.push_str(&self.pending[..start]);
                self.pending.drain(..start + FENCE.len());
                self.in_block = true;
            } else if at_end {
                shown.push_str(&std::mem::take(&mut self.pending));
                return shown;
            } else {
                self.work.add(self.pending.len());
                // Keep back the longest tail that could begin a fence.
                let keep = (1..FENCE.len().min(self.pending.len() + 1))
                    .rev()
                    .find(|&n| {
                        self.pending.is_char_boundary(self.pending.len() - n)
                            && FENCE.starts_with(&self.pending[self.pending.len() - n..])
                    })
                    .unwrap_or(0);
                let cut = self.pending.len() - keep;
                shown.push_str(&self.pending[..cut]);
                self.pending.drain(..cut);
                return shown;
            }
        }
    }

    fn leave_block(&mut self) {
        self.in_block = false;
        self.scan = BlockScan::default();
    }

    /// Bytes looked at so far.
    #[cfg(test)]
    fn work(&self) -> usize {
        self.work.0
    }
}

/// The reading of an open block's body (what follows its fence), kept
/// between deltas. Where the block ends is decided as [`parse`](super::parse) decides it:
/// serde reads the JSON value first (so a ``` inside a string does not end
/// the block), then the closing fence must follow, else the block runs to
/// the first ``` in its body. Serde cannot resume a reading, so it is asked
/// only when its answer can have changed, and its answer is kept once more
/// text cannot change it:
///
/// - when a structure scan (brackets and strings, one pass over each new
///   byte) sees the value close: for JSON that is valid so far, the scan
///   sees exactly what serde does, so serde then finds the value, or an
///   error, and either is final;
/// - when the body holds a ``` and has doubled since serde last read it:
///   JSON that the scan misreads (it is invalid somewhere) may end at that
///   fence, and doubling keeps these readings to twice the body in all;
/// - at the end of the reply.
///
/// Each byte is thus looked at a bounded number of times.
#[derive(Debug, Default)]
struct BlockScan {
    /// The structure scan of the body's first value.
    structure: ValueEnd,
    /// The scan saw the first value close; it reads no further.
    closed: bool,
    /// The first ``` of the body, once seen, and where to look for it next
    /// (two bytes back from the end, for a fence split across deltas).
    first_close: Option<usize>,
    close_from: usize,
    /// The body's length when serde last read it.
    read_len: Option<usize>,
    /// Serde's reading, once more text cannot change it.
    settled: Option<Settled>,
}

#[derive(Debug, Clone, Copy)]
enum Settled {
    /// A value: the body up to `text_from` is the value and whitespace
    /// after it.
    Value { text_from: usize },
    /// Not JSON: the block runs to the first ```.
    Invalid,
}

impl BlockScan {
    /// Where the block ends in `body`, or `None` while more text could
    /// change the answer (or, at the end, when it never closes).
    fn end(&mut self, body: &str, at_end: bool, work: &mut ScanCost) -> Option<usize> {
        self.find_close(body, work);
        if self.settled.is_none() {
            let closed_now = self.scan_structure(body, work);
            let doubled = self.read_len.is_none_or(|len| body.len() >= 2 * len.max(1));
            let due = closed_now
                || (at_end && self.read_len != Some(body.len()))
                || (self.first_close.is_some() && doubled);
            if due {
                self.read(body, work);
            }
        }
        match self.settled? {
            Settled::Invalid => self.first_close.map(|i| i + CLOSE.len()),
            Settled::Value { text_from } => {
                let rest = &body[text_from..];
                let trimmed = rest.trim_start();
                let text_from = text_from + (rest.len() - trimmed.len());
                work.add(rest.len() - trimmed.len() + CLOSE.len());
                self.settled = Some(Settled::Value { text_from });
                if trimmed.starts_with(CLOSE) {
                    Some(text_from + CLOSE.len())
                } else if CLOSE.starts_with(trimmed) {
                    // Whitespace or part of the fence: wait for the rest.
                    None
                } else {
                    self.first_close.map(|i| i + CLOSE.len())
                }
            }
        }
    }

    /// Looks for the body's first ``` in what arrived since the last look.
    fn find_close(&mut self, body: &str, work: &mut ScanCost) {
        if self.first_close.is_some() {
            return;
        }
        let from = self.close_from.min(body.len());
        // ``` is ASCII and UTF-8 never uses its bytes inside a character,
        // so a byte search finds what `str::find` would.
        let found =
            body.as_bytes()[from..].windows(CLOSE.len()).position(|w| w == CLOSE.as_bytes());
        work.add(body.len() - from);
        match found {
            Some(i) => self.first_close = Some(from + i),
            None => self.close_from = body.len().saturating_sub(CLOSE.len() - 1).max(from),
        }
    }

    /// Reads the new bytes for brackets and strings; true when the first
    /// value closes among them.
    fn scan_structure(&mut self, body: &str, work: &mut ScanCost) -> bool {
        if self.closed {
            return false;
        }
        self.closed = self.structure.feed(body.as_bytes(), work).is_some();
        self.closed
    }

    /// Asks serde, keeping its answer when more text cannot change it.
    fn read(&mut self, body: &str, work: &mut ScanCost) {
        work.add(body.len());
        self.read_len = Some(body.len());
        let mut values = serde_json::Deserializer::from_str(body).into_iter::<Value>();
        self.settled = match values.next() {
            Some(Ok(value)) => {
                let after_json = values.byte_offset();
                // A number at the very end may still grow; anything else,
                // or a value with text after it, is what it is.
                let self_delimited =
                    matches!(value, Value::Object(_) | Value::Array(_) | Value::String(_));
                (self_delimited || after_json < body.len())
                    .then_some(Settled::Value { text_from: after_json })
            }
            Some(Err(e)) if e.is_eof() => None,
            None => None,
            Some(Err(_)) => Some(Settled::Invalid),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text_protocol::parse;
    use serde_json::json;

    /// What a reply streamed in pieces of `size` bytes shows.
    fn shown(reply: &str, size: usize) -> String {
        let mut visible = VisibleText::new();
        let mut out = String::new();
        let chars: Vec<char> = reply.chars().collect();
        for piece in chars.chunks(size) {
            out.push_str(&visible.push(&piece.iter().collect::<String>()));
        }
        out + &visible.finish()
    }

    #[test]
    fn streamed_blocks_are_not_shown_as_text() {
        let reply = "Let me look.\n```json:tool\n{\"tool\": \"read_note\", \"params\": {\"content\": \"```x```\"}}\n```\nthen `code` and\n```json:tool\n{not json}\n```\nend ``";
        for size in [1, 2, 3, 5, 7, 100] {
            assert_eq!(shown(reply, size), "Let me look.\n\nthen `code` and\n\nend ``", "{size}");
        }
        assert_eq!(
            shown("no blocks ```rust\nfn x() {}\n```", 4),
            "no blocks ```rust\nfn x() {}\n```"
        );
        assert_eq!(shown("cut off ```json:tool\n{\"tool\": \"x\"", 3), "cut off ");
    }

    #[test]
    fn a_large_block_streamed_in_tiny_deltas_is_read_in_linear_work() {
        let mut content = String::new();
        while content.len() < 300_000 {
            content.push_str(
                "## Part\nSome `code` and \"quotes\" \\ here.\n```rust\nfn x() {}\n```\n",
            );
        }
        let call =
            json!({"tool": "write_file", "params": {"path": "README.md", "content": content}});
        let reply = format!("Writing it.\n```json:tool\n{call}\n```\nDone.");
        let mut visible = VisibleText::new();
        let mut out = String::new();
        for piece in reply.as_bytes().chunks(4) {
            out.push_str(&visible.push(std::str::from_utf8(piece).unwrap()));
        }
        // Shown as it arrives, not only at the end.
        assert_eq!(out, "Writing it.\n\nDone.");
        assert_eq!(visible.finish(), "");
        assert_eq!(parse(&reply).calls[0].as_ref().unwrap().params["content"], content.as_str());
        assert!(
            visible.work() <= 8 * reply.len(),
            "looked at {} bytes for a reply of {}",
            visible.work(),
            reply.len()
        );
    }

    /// The streaming reader before it was made linear: every delta re-read
    /// the whole open block. Kept as the reference for what is shown.
    fn quadratic_shown(reply: &[String]) -> String {
        fn block_end(body: &str) -> Option<usize> {
            let mut values = serde_json::Deserializer::from_str(body).into_iter::<Value>();
            match values.next() {
                Some(Ok(_)) => {
                    let after_json = values.byte_offset();
                    let rest = &body[after_json..];
                    let trimmed = rest.trim_start();
                    if trimmed.starts_with(CLOSE) {
                        return Some(after_json + (rest.len() - trimmed.len()) + CLOSE.len());
                    }
                    if CLOSE.starts_with(trimmed) {
                        return None;
                    }
                    body.find(CLOSE).map(|i| i + CLOSE.len())
                }
                Some(Err(e)) if e.is_eof() => None,
                None => None,
                Some(Err(_)) => body.find(CLOSE).map(|i| i + CLOSE.len()),
            }
        }
        let (mut pending, mut in_block, mut shown) = (String::new(), false, String::new());
        for delta in reply {
            pending.push_str(delta);
            loop {
                if in_block {
                    match block_end(&pending) {
                        Some(end) => {
                            pending.drain(..end);
                            in_block = false;
                        }
                        None => break,
                    }
                } else if let Some(start) = pending.find(FENCE) {
                    shown.push_str(&pending[..start]);
                    pending.drain(..start + FENCE.len());
                    in_block = true;
                } else {
                    let keep = (1..FENCE.len().min(pending.len() + 1))
                        .rev()
                        .find(|&n| {
                            pending.is_char_boundary(pending.len() - n)
                                && FENCE.starts_with(&pending[pending.len() - n..])
                        })
                        .unwrap_or(0);
                    let cut = pending.len() - keep;
                    shown.push_str(&pending[..cut]);
                    pending.drain(..cut);
                    break;
                }
            }
        }
        if in_block { shown } else { shown + &pending }
    }

    #[test]
    fn random_replies_show_what_the_full_rereading_showed() {
        const PIECES: [&str; 22] = [
            "```json:tool\n",
            "```",
            "`",
            "``",
            "{",
            "}",
            "[",
            "]",
            "\"",
            "\\",
            ":",
            ",",
            "\n",
            " ",
            "a",
            "1",
            "é",
            "true",
            "json",
            "{\"tool\": \"x\", \"params\": {}}",
            "\"```\"",
            "x\"",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |bound: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % bound as u64) as usize
        };
        for round in 0..20_000 {
            let count = next(40);
            let reply: String = (0..count).map(|_| PIECES[next(PIECES.len())]).collect();
            let chars: Vec<char> = reply.chars().collect();
            let size = 1 + next(8);
            let deltas: Vec<String> =
                chars.chunks(size).map(|piece| piece.iter().collect()).collect();
            let mut visible = VisibleText::new();
            let mut out: String = deltas.iter().map(|delta| visible.push(delta)).collect();
            out.push_str(&visible.finish());
            assert_eq!(out, quadratic_shown(&deltas), "round {round}: {reply:?} in {size}s");
        }
    }

    #[test]
    fn text_after_a_block_the_structure_scan_misreads_is_shown_as_it_arrives() {
        // Invalid JSON whose ``` sits in what looks like a string: serde ends
        // the block at that ```, the bracket scan never sees the value close.
        let reply = "a\n```json:tool\n{\"x\": y \"```\" and then some more words\nb";
        for size in [1, 3, 100] {
            let mut visible = VisibleText::new();
            let chars: Vec<char> = reply.chars().collect();
            let during: String = chars
                .chunks(size)
                .map(|piece| visible.push(&piece.iter().collect::<String>()))
                .collect();
            assert_eq!(during, "a\n\" and then some more words\nb", "{size}");
            assert_eq!(visible.finish(), "");
        }
    }
}
