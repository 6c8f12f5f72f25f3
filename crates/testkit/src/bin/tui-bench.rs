//! Frame times of the terminal UI with a long transcript: `tui-bench
//! [LINES] [WIDTH] [HEIGHT]` builds a session of at least LINES transcript
//! lines (answers with lists and highlighted code, tool cards), then times
//! frames drawn through ratatui's crossterm backend into memory (the escape
//! sequences a terminal would get, encoded and counted, not displayed).
//! Prints one line per case: name, median µs, p99 µs, worst µs.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::Instant;

use axon_protocol::{AgentEvent, ToolCall, ToolOutput};
use axon_tui::{App, Theme, draw};
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use serde_json::json;

type Term = Terminal<CrosstermBackend<Counter>>;

/// Takes what a terminal would get and only counts it.
struct Counter(u64);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u16>().ok());
    let lines = args.next().flatten().map_or(5_000, usize::from);
    let width = args.next().flatten().unwrap_or(120);
    let height = args.next().flatten().unwrap_or(40);
    let mut terminal = match Terminal::with_options(
        CrosstermBackend::new(Counter(0)),
        TerminalOptions { viewport: Viewport::Fixed(Rect::new(0, 0, width, height)) },
    ) {
        Ok(terminal) => terminal,
        Err(e) => {
            eprintln!("tui-bench: cannot make a terminal: {e}");
            std::process::exit(1);
        }
    };
    let mut app = App::new(Theme::COLOR);
    let built = long_session(&mut app, lines, usize::from(width));
    println!("# transcript: {built} lines at {width}x{height}");

    report("idle_frame", (0..1_000).map(|_| frame(&mut terminal, &mut app)).collect());

    app.turn_started();
    app.on_agent_event(AgentEvent::Token { text: "Streaming: ".into() });
    let streaming = (0..1_000)
        .map(|n| {
            let text = if n % 40 == 39 { "\n\n".to_string() } else { format!("word{n} ") };
            let start = Instant::now();
            app.on_agent_event(AgentEvent::Token { text });
            draw_only(&mut terminal, &mut app);
            micros(start)
        })
        .collect();
    report("token_to_screen", streaming);
    app.turn_finished(None);

    let typing = (0..1_000)
        .map(|n| {
            let code = if n % 50 == 49 { KeyCode::Backspace } else { KeyCode::Char('a') };
            let start = Instant::now();
            app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
            draw_only(&mut terminal, &mut app);
            micros(start)
        })
        .collect();
    report("key_to_screen", typing);

    let scrolling = (0..200)
        .map(|n| {
            let code = if n % 20 < 10 { KeyCode::PageUp } else { KeyCode::PageDown };
            let start = Instant::now();
            app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
            draw_only(&mut terminal, &mut app);
            micros(start)
        })
        .collect();
    report("page_scroll", scrolling);

    // A resize renders every entry again at the new width: the worst case.
    let resizes = (0..20)
        .map(|n| {
            let w = if n % 2 == 0 { width - 20 } else { width };
            let start = Instant::now();
            let _ = terminal.resize(Rect::new(0, 0, w, height));
            draw_only(&mut terminal, &mut app);
            micros(start)
        })
        .collect();
    report("resize_frame", resizes);
}

fn long_session(app: &mut App, lines: usize, width: usize) -> usize {
    let mut n = 0;
    loop {
        let total = app.transcript.line_count(width);
        if total >= lines {
            return total;
        }
        n += 1;
        app.transcript
            .push(axon_tui::Entry::User(format!("Question {n}: what does module {n} do?")));
        let id = format!("call_{n}");
        let call = ToolCall {
            id: id.clone(),
            name: "read_file".into(),
            arguments: json!({"path": format!("src/m{n}.rs")}),
        };
        app.on_agent_event(AgentEvent::Action { call, refused: false, preview: None });
        let body = (1..=12)
            .map(|l| format!("{l} | let value_{l} = compute({l});"))
            .collect::<Vec<_>>()
            .join("\n");
        app.on_agent_event(AgentEvent::Observation {
            call_id: id,
            name: "read_file".into(),
            output: ToolOutput::text(body),
        });
        app.on_agent_event(AgentEvent::Token {
            text: format!(
                "## Module {n}\n\nIt **computes** values and *caches* them. Steps:\n\n1. read the input\n2. call `compute`\n3. store the result\n\n```rust\nfn compute(x: u32) -> u32 {{\n    // doubles it\n    x * 2 + {n}\n}}\n```\n\nThat is all."
            ),
        });
        app.on_agent_event(AgentEvent::Answer { text: String::new() });
    }
}

fn frame(terminal: &mut Term, app: &mut App) -> u128 {
    let start = Instant::now();
    draw_only(terminal, app);
    micros(start)
}

fn draw_only(terminal: &mut Term, app: &mut App) {
    if let Err(e) = terminal.draw(|f| draw(f, app)) {
        eprintln!("tui-bench: draw failed: {e}");
        std::process::exit(1);
    }
}

fn micros(start: Instant) -> u128 {
    start.elapsed().as_micros()
}

fn report(name: &str, mut samples: Vec<u128>) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    println!("{name} {} {} {}", at(0.5), at(0.99), samples[samples.len() - 1]);
}
