//! Scans the files named on the command line with the built-in rules and
//! prints each finding (`path:line kind first4…`), then the totals and the
//! throughput. How the false-positive rate on a repository is measured:
//!
//! ```sh
//! git ls-files -z | xargs -0 cargo run --release -p axon-secrets --example scan --
//! ```
//!
//! Files that are not UTF-8 are scanned as lossy text, as tools show them.

#![allow(clippy::print_stdout)] // an example: printing is its job

use std::time::Instant;

fn main() {
    let rules = axon_secrets::builtin();
    rules.compile_all();
    let mut bytes = 0usize;
    let mut files = 0usize;
    let mut matches = 0usize;
    let mut elapsed = std::time::Duration::ZERO;
    for path in std::env::args().skip(1) {
        let Ok(data) = std::fs::read(&path) else { continue };
        let text = String::from_utf8_lossy(&data);
        let started = Instant::now();
        let (masked_text, found) = axon_secrets::mask(&text);
        elapsed += started.elapsed();
        bytes += data.len();
        files += 1;
        for masked in found {
            matches += 1;
            // The masked line: this prints no secret it found.
            let line = masked_text.lines().nth(masked.line - 1).unwrap_or_default();
            let shown: String = line.trim().chars().take(100).collect();
            println!("{path}:{} {}  {shown}", masked.line, masked.kind);
        }
    }
    #[allow(clippy::cast_precision_loss)]
    let mb = bytes as f64 / 1e6;
    println!(
        "{files} files, {mb:.2} MB, {matches} matches, {:.3} s scanning, {:.1} MB/s",
        elapsed.as_secs_f64(),
        mb / elapsed.as_secs_f64().max(1e-9)
    );
}
