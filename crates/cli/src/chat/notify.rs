//! Desktop notifications from the terminal UI: when a turn ends, or a call
//! or a form waits on the user, while the terminal is not in focus.
//!
//! Guarantees: nothing is written while the terminal has focus (or has not
//! said it lost it: a terminal without focus reporting never gets one);
//! one notification per thing that waits; the text is the UI's own words
//! with every control character taken out, so a tool or server name cannot
//! end the escape early and write to the terminal; `off` writes nothing.

use std::io::Write;

use axon_protocol::{AgentEvent, StopReason};
use axon_runtime::config::NotifyMethod;

/// How the terminal is told: chosen once from the config and the
/// terminal's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Osc9,
    Osc777,
    Bell,
    Off,
}

impl Signal {
    /// The configured method, `auto` resolved by the terminal's variables
    /// (`TERM_PROGRAM`, `TERM`, `TMUX`).
    pub fn choose(method: NotifyMethod, env: impl Fn(&str) -> Option<String>) -> Signal {
        match method {
            NotifyMethod::Osc9 => Signal::Osc9,
            NotifyMethod::Osc777 => Signal::Osc777,
            NotifyMethod::Bell => Signal::Bell,
            NotifyMethod::Off => Signal::Off,
            // tmux passes neither escape on by default; it marks a bell.
            NotifyMethod::Auto if env("TMUX").is_some() => Signal::Bell,
            NotifyMethod::Auto => {
                let program = env("TERM_PROGRAM").unwrap_or_default();
                let term = env("TERM").unwrap_or_default();
                if matches!(program.as_str(), "iTerm.app" | "WezTerm" | "ghostty")
                    || term.contains("kitty")
                    || term.contains("ghostty")
                {
                    Signal::Osc9
                } else if term.starts_with("foot") || term.starts_with("rxvt") {
                    Signal::Osc777
                } else {
                    Signal::Bell
                }
            }
        }
    }

    /// The bytes that raise `message`.
    pub fn bytes(self, message: &str) -> Vec<u8> {
        let message: String = message.chars().filter(|c| !c.is_control()).take(200).collect();
        match self {
            Signal::Osc9 => format!("\x1b]9;{message}\x07").into_bytes(),
            Signal::Osc777 => format!("\x1b]777;notify;axon;{message}\x07").into_bytes(),
            Signal::Bell => b"\x07".to_vec(),
            Signal::Off => Vec::new(),
        }
    }
}

/// The UI's notifier: the terminal's focus and what to say.
pub struct Notifier {
    signal: Signal,
    focused: bool,
}

impl Notifier {
    pub fn new(signal: Signal) -> Notifier {
        Notifier { signal, focused: true }
    }

    /// The terminal said it gained or lost focus.
    pub fn focus(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// What to write for `event`, if it waits on an absent user.
    pub fn on_event(&self, event: &AgentEvent) -> Option<Vec<u8>> {
        if self.focused || self.signal == Signal::Off {
            return None;
        }
        let message = match event {
            AgentEvent::ApprovalRequested { call, .. } => {
                format!("axon needs your permission to use {}", call.name)
            }
            AgentEvent::Elicitation { server, .. } => format!("{server} asks you for input"),
            AgentEvent::PlanProposed { .. } => "axon proposes a plan for you to approve".into(),
            AgentEvent::TurnCompleted { stop_reason, .. } => match stop_reason {
                StopReason::Cancelled => return None,
                StopReason::EndTurn => "axon has finished".into(),
                other => format!("axon stopped: {}", stop_words(*other)),
            },
            _ => return None,
        };
        Some(self.signal.bytes(&message))
    }

    /// Writes what `event` calls for; a terminal that cannot take it is
    /// not worth an error.
    pub fn notify(&self, event: &AgentEvent) {
        if let Some(bytes) = self.on_event(event) {
            let mut out = std::io::stdout();
            let _ = out.write_all(&bytes).and_then(|()| out.flush());
        }
    }
}

fn stop_words(reason: StopReason) -> &'static str {
    match reason {
        StopReason::EndTurn => "finished",
        StopReason::MaxIterations => "the step limit was reached",
        StopReason::Cancelled => "cancelled",
        StopReason::Refusal => "the model declined",
        _ => "an error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn auto_picks_the_terminal_s_own_escape_and_the_bell_where_it_cannot_tell() {
        let auto = |pairs: &[(&str, &str)]| Signal::choose(NotifyMethod::Auto, env(pairs));
        assert_eq!(auto(&[("TERM_PROGRAM", "iTerm.app")]), Signal::Osc9);
        assert_eq!(auto(&[("TERM", "xterm-kitty")]), Signal::Osc9);
        assert_eq!(auto(&[("TERM", "foot")]), Signal::Osc777);
        assert_eq!(auto(&[("TERM", "xterm-256color")]), Signal::Bell);
        assert_eq!(auto(&[("TERM_PROGRAM", "WezTerm"), ("TMUX", "/tmp/t,1,0")]), Signal::Bell);
        assert_eq!(Signal::choose(NotifyMethod::Off, env(&[])), Signal::Off);
    }

    #[test]
    fn a_name_cannot_end_the_escape_or_write_to_the_terminal() {
        let bytes = Signal::Osc9.bytes("use evil\x07\x1b]0;owned\x1b\\ now");
        assert_eq!(bytes, b"\x1b]9;use evil]0;owned\\ now\x07".to_vec());
        let bytes = Signal::Osc777.bytes("done");
        assert_eq!(bytes, b"\x1b]777;notify;axon;done\x07".to_vec());
    }

    #[test]
    fn only_an_unfocused_terminal_is_told_and_a_cancel_is_not_news() {
        let mut notifier = Notifier::new(Signal::Osc9);
        let done = AgentEvent::TurnCompleted {
            turn: 1,
            stop_reason: StopReason::EndTurn,
            usage: axon_protocol::Usage::default(),
            context_tokens: 0,
            cost_usd: None,
            session_usage: axon_protocol::Usage::default(),
            session_cost_usd: None,
        };
        assert_eq!(notifier.on_event(&done), None, "in focus");
        notifier.focus(false);
        assert_eq!(notifier.on_event(&done), Some(b"\x1b]9;axon has finished\x07".to_vec()));
        let cancelled = AgentEvent::TurnCompleted {
            turn: 2,
            stop_reason: StopReason::Cancelled,
            usage: axon_protocol::Usage::default(),
            context_tokens: 0,
            cost_usd: None,
            session_usage: axon_protocol::Usage::default(),
            session_cost_usd: None,
        };
        assert_eq!(notifier.on_event(&cancelled), None);
        let mut off = Notifier::new(Signal::Off);
        off.focus(false);
        assert_eq!(off.on_event(&done), None);
    }
}
