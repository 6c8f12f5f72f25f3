//! Where a JSON value that streams in ends, for both readers of calls
//! written as text: the `json:tool` blocks of the text protocol
//! (`text_protocol`) and the calls a model leaks into its answer
//! (`tool_text`). One pass over brackets and strings, resumed as the text
//! grows, reads each byte once; serde then reads the value once. For JSON
//! that is valid so far this scan sees exactly where serde's value ends;
//! for invalid JSON the callers ask serde itself (at most each time the
//! text doubles), so both readers stay linear in the reply.

use crate::scan_cost::ScanCost;

/// The structure scan of one value, kept between deltas.
#[derive(Debug, Default)]
pub(crate) struct ValueEnd {
    scanned: usize,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The value's length, once it closed; nothing after it is read.
    end: Option<usize>,
}

impl ValueEnd {
    /// Reads what of `text` (the same text, grown) was not read yet;
    /// returns the first value's length once it has closed: its brackets
    /// balanced, or a string ended outside any bracket.
    pub(crate) fn feed(&mut self, text: &[u8], work: &mut ScanCost) -> Option<usize> {
        if self.end.is_some() {
            return self.end;
        }
        let new = &text[self.scanned.min(text.len())..];
        for (i, &byte) in new.iter().enumerate() {
            let closes = if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if byte == b'\\' {
                    self.escaped = true;
                } else if byte == b'"' {
                    self.in_string = false;
                }
                !self.in_string && self.depth == 0
            } else {
                match byte {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        let closes = self.depth <= 1;
                        self.depth = self.depth.saturating_sub(1);
                        if closes {
                            self.close(i + 1, work);
                            return self.end;
                        }
                    }
                    _ => {}
                }
                false
            };
            if closes {
                self.close(i + 1, work);
                return self.end;
            }
        }
        self.scanned += new.len();
        work.add(new.len());
        None
    }

    fn close(&mut self, read: usize, work: &mut ScanCost) {
        self.scanned += read;
        work.add(read);
        self.end = Some(self.scanned);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end_of(pieces: &[&str]) -> Option<usize> {
        let (mut scan, mut work, mut text) =
            (ValueEnd::default(), ScanCost::default(), String::new());
        let mut end = None;
        for piece in pieces {
            text.push_str(piece);
            end = scan.feed(text.as_bytes(), &mut work);
        }
        end
    }

    #[test]
    fn finds_where_a_value_ends_however_it_is_split() {
        let text = r#"{"a": "}\"]", "b": [1, {"c": 2}]} tail"#;
        let whole = end_of(&[text]);
        assert_eq!(whole, Some(text.len() - " tail".len()));
        for cut in 1..text.len() {
            assert_eq!(end_of(&[&text[..cut], &text[cut..]]), whole, "cut at {cut}");
        }
        assert_eq!(end_of(&[r#"  "a \" string" rest"#]), Some(15));
        assert_eq!(end_of(&[r#"{"open": ["#]), None);
    }
}
