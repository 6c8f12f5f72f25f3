//! axon's terminal UI, minus the terminal.
//!
//! [`App`] holds everything on screen and changes only through
//! [`App::on_agent_event`] (every event the session emits, passed on as
//! it comes: status, transcript, approvals with their previews, plans),
//! [`App::on_key`] / [`App::on_paste`] (what the user did) and
//! [`App::turn_started`] when the front end sends the user's request.
//! Keys that ask for work come back as [`Action`]s; the front end (the
//! `axon` binary) turns them into operations. [`draw`] renders a frame on
//! any ratatui backend, so every view is tested on `TestBackend`.
//!
//! Invariant: a frame's cost follows the screen, not the session. Each
//! transcript entry is rendered once per width and kept until it changes;
//! a frame copies only the lines it shows.

pub mod ansi;
mod app;
mod card;
mod card_body;
mod complete;
mod form;
pub mod highlight;
mod input;
mod markdown;
mod steps;
mod theme;
mod transcript;
mod view;
mod wrap;

pub use app::{
    ANSWER_GUARD, Action, Answer, App, Confirm, Mode, PendingImage, PlanDecision, PlanPanel,
    ServerStatus, Status,
};
pub use card::{CardState, ToolCard, key_arguments};
pub use complete::{COMMANDS, Completion, mentions};
pub use form::{Field, Form, Kind, Outcome};
pub use input::Input;
pub use markdown::render as render_markdown;
pub use theme::Theme;
pub use transcript::{Entry, Level, Transcript};
pub use view::draw;
