//! `axon web`: the chat panel of the user's designs, served to a browser on
//! this machine.
//!
//! A front end like the others: it builds nothing but a server around one
//! runtime session ([`axon_runtime::open`]). The page sends the runtime's
//! own `Op`s (`POST /api/op`) and renders its `AgentEvent`s, read as
//! Server-Sent Events from a log every open page shares
//! (`log.rs`). The page itself is embedded in the binary
//! (`assets.rs`), and every request passes the guard ([`auth`]): the token,
//! `Host`, `Origin`, and a strict Content-Security-Policy so nothing a model
//! writes can run in the page.

mod api;
mod assets;
pub mod auth;
mod fit;
mod log;
mod rewind;
mod server;
mod stream;

use std::net::SocketAddr;

pub use server::WebServer;

/// Where and to whom the panel is served.
#[derive(Debug, Clone)]
pub struct Options {
    /// The address to listen on; port 0 picks a free one.
    pub listen: SocketAddr,
    /// The token pages must present; `None` makes a random one. An address
    /// beyond loopback needs one of at least 32 characters.
    pub token: Option<String>,
    /// More `Host` names to answer to (`name` or `name:port`), for a tunnel
    /// or a LAN name.
    pub allowed_hosts: Vec<String>,
}
