//! `axon run`'s answer as Markdown at a terminal: streamed text cut into
//! whole blocks (paragraphs, lists, code fences), each rendered as it
//! completes by the terminal UI's renderer (`axon_tui::ansi`).
//!
//! Guarantees: a block is given out only once it is complete (a blank line
//! outside a code fence ends it; the end of the reply ends the last), so a
//! fence is never rendered half-open; the text given out is exactly the
//! text taken in, cut at line ends (nothing is lost or repeated).

/// Cuts streamed Markdown into complete blocks.
#[derive(Debug, Default)]
pub struct Blocks {
    /// The block being collected, whole lines only.
    block: String,
    /// The line being received (no `\n` yet).
    line: String,
    in_fence: bool,
}

impl Blocks {
    /// Takes `text` in; answers the blocks it completed.
    pub fn push(&mut self, text: &str) -> Vec<String> {
        let mut done = Vec::new();
        for piece in text.split_inclusive('\n') {
            self.line.push_str(piece);
            if !piece.ends_with('\n') {
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let trimmed = line.trim();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                self.in_fence = !self.in_fence;
            }
            if trimmed.is_empty() && !self.in_fence {
                if !self.block.trim().is_empty() {
                    done.push(std::mem::take(&mut self.block));
                }
                // Blank lines between blocks are the renderer's to draw.
                self.block.clear();
                continue;
            }
            self.block.push_str(&line);
        }
        done
    }

    /// The reply ended: what is left, as the last block.
    pub fn finish(&mut self) -> Option<String> {
        let mut rest = std::mem::take(&mut self.block);
        rest.push_str(&std::mem::take(&mut self.line));
        self.in_fence = false;
        (!rest.trim().is_empty()).then_some(rest)
    }

    /// Drops what was received and not given out (a retried reply).
    pub fn clear(&mut self) {
        *self = Blocks::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str, step: usize) -> Vec<String> {
        let mut blocks = Blocks::default();
        let chars: Vec<char> = text.chars().collect();
        let mut out = Vec::new();
        for piece in chars.chunks(step) {
            out.extend(blocks.push(&piece.iter().collect::<String>()));
        }
        out.extend(blocks.finish());
        out
    }

    #[test]
    fn blocks_end_at_blank_lines_outside_fences_however_the_text_arrives() {
        let text =
            "# Title\n\nA paragraph\non two lines.\n\n```sh\necho a\n\necho b\n```\n\n- one\n- two";
        let expected = vec![
            "# Title\n".to_string(),
            "A paragraph\non two lines.\n".to_string(),
            "```sh\necho a\n\necho b\n```\n".to_string(),
            "- one\n- two".to_string(),
        ];
        for step in [1, 2, 3, 7, 100] {
            assert_eq!(cut(text, step), expected, "in pieces of {step}");
        }
    }

    #[test]
    fn nothing_is_given_out_before_its_block_ends() {
        let mut blocks = Blocks::default();
        assert!(blocks.push("```rust\nfn main() {}\n\n").is_empty(), "the fence is open");
        assert_eq!(blocks.push("```\n\n"), vec!["```rust\nfn main() {}\n\n```\n".to_string()]);
        assert!(blocks.push("half a para").is_empty());
        blocks.clear();
        assert_eq!(blocks.finish(), None, "a cleared reply leaves nothing");
    }
}
