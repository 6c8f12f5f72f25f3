//! What every HTTP server axon runs on a developer's machine checks, once:
//! `axon mcp serve --http` and `axon web` both use it.
//!
//! - A server reachable from other machines needs a token of at least
//!   [`MIN_EXPOSED_TOKEN_CHARS`] characters ([`check_exposure`]): a tool
//!   server on a LAN address without one is a remote shell.
//! - Tokens compare in constant time ([`constant_time_eq`],
//!   [`bearer_matches`]), so timing says nothing about the right one.
//! - `Host` must name this machine or the bound address ([`Hosts`]):
//!   DNS rebinding gives a foreign page this machine's address under its
//!   own name, and the name is what gives it away.
//! - Accepted sockets have TCP_NODELAY ([`nodelay`]): a response written
//!   in pieces is not held back for the client's delayed ACK.

use std::net::SocketAddr;

use axum::http::HeaderValue;
use axum::serve::ListenerExt;
use tokio::net::TcpListener;

/// The shortest token accepted for a server reachable from other machines.
pub const MIN_EXPOSED_TOKEN_CHARS: usize = 32;

/// Why a server may not listen where it was asked to.
#[derive(Debug, thiserror::Error)]
pub enum Exposure {
    #[error(
        "refusing to serve on {0} without a token: anyone who can reach it could run the \
         tools in this workspace. Bind 127.0.0.1 or set a token with --token-env VAR"
    )]
    WithoutToken(SocketAddr),
    #[error(
        "refusing to serve on {addr} with a {chars}-character token: a token guarding a network \
         address needs at least {needed} characters. Generate one, e.g. `openssl rand -hex 32`"
    )]
    WeakToken { addr: SocketAddr, chars: usize, needed: usize },
}

/// A server other machines can reach needs a token, and one too long to
/// guess; loopback needs neither.
pub fn check_exposure(addr: SocketAddr, token: Option<&str>) -> Result<(), Exposure> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    match token {
        None => Err(Exposure::WithoutToken(addr)),
        Some(token) if token.chars().count() < MIN_EXPOSED_TOKEN_CHARS => {
            Err(Exposure::WeakToken {
                addr,
                chars: token.chars().count(),
                needed: MIN_EXPOSED_TOKEN_CHARS,
            })
        }
        Some(_) => Ok(()),
    }
}

/// A new random token: 32 bytes from the operating system, as 64 hex digits.
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `Bearer TOKEN`, the scheme in any letter case (RFC 9110 makes schemes
/// case-insensitive), the token exactly.
pub fn bearer_matches(given: &HeaderValue, token: &str) -> bool {
    let given = given.as_bytes();
    let Some(space) = given.iter().position(|&b| b == b' ') else {
        return false;
    };
    let (scheme, rest) = given.split_at(space);
    let credentials = rest.trim_ascii_start();
    scheme.eq_ignore_ascii_case(b"bearer") && constant_time_eq(credentials, token.as_bytes())
}

/// Equal-length inputs take the same time whatever they hold, so a wrong
/// token's timing says nothing about the right one.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The names a request's `Host` may give for a server bound at an address.
#[derive(Debug, Clone)]
pub struct Hosts {
    names: Vec<String>,
}

impl Hosts {
    /// This machine's loopback names, plus the bound address itself when it
    /// is a specific non-loopback one, plus `extra` (`name` or `name:port`).
    pub fn new(addr: SocketAddr, extra: &[String]) -> Hosts {
        let mut names: Vec<String> =
            ["localhost", "127.0.0.1", "::1"].into_iter().map(String::from).collect();
        let ip = addr.ip();
        if !ip.is_loopback() && !ip.is_unspecified() {
            names.push(ip.to_string());
        }
        names.extend(extra.iter().cloned());
        Hosts { names }
    }

    /// The names, as rmcp's `allowed_hosts` takes them.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether a `Host` header value (`name`, `name:port`, `[v6]:port`)
    /// names this server.
    pub fn allows(&self, host: &str) -> bool {
        let name = split_host(host);
        // An entry with a port matches only that port; one without, any.
        self.names
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(host) || allowed.eq_ignore_ascii_case(name))
    }
}

/// The name of `name:port` or `[v6]:port` (a bare v6 address stays whole).
fn split_host(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => host,
    }
}

/// The listener with TCP_NODELAY set on every accepted socket.
pub fn nodelay(
    listener: TcpListener,
) -> impl axum::serve::Listener<Io = tokio::net::TcpStream, Addr = SocketAddr> {
    listener.tap_io(|stream| {
        // A socket that refuses the option still works, only slower.
        let _ = stream.set_nodelay(true);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_by_content_and_length() {
        assert!(constant_time_eq(b"Bearer abc", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer abd", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer ab", b"Bearer abc"));
        assert!(!constant_time_eq(b"", b"Bearer abc"));
    }

    #[test]
    fn the_bearer_scheme_is_accepted_in_any_case_and_the_token_exactly() {
        let token = "s3cret-token";
        for header in ["Bearer s3cret-token", "bearer s3cret-token", "BEARER  s3cret-token"] {
            assert!(bearer_matches(&HeaderValue::from_static(header), token), "{header}");
        }
        for header in ["Bearer S3CRET-TOKEN", "Basic s3cret-token", "Bearers3cret-token", "Bearer"]
        {
            assert!(!bearer_matches(&HeaderValue::from_static(header), token), "{header}");
        }
    }

    #[test]
    fn a_network_address_needs_a_token_of_32_characters() {
        let lan: SocketAddr = "0.0.0.0:8765".parse().unwrap();
        assert!(matches!(check_exposure(lan, None), Err(Exposure::WithoutToken(_))));
        let short = check_exposure(lan, Some(&"x".repeat(31))).unwrap_err();
        assert!(matches!(short, Exposure::WeakToken { chars: 31, needed: 32, .. }));
        assert!(short.to_string().contains("32"), "{short}");
        assert!(check_exposure(lan, Some(&"x".repeat(32))).is_ok());
        // Loopback stays open to short tokens and to none.
        let local: SocketAddr = "127.0.0.1:8765".parse().unwrap();
        assert!(check_exposure(local, Some("short")).is_ok());
        assert!(check_exposure(local, None).is_ok());
    }

    #[test]
    fn new_tokens_are_64_hex_digits_and_differ() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert!(check_exposure("0.0.0.0:1".parse().unwrap(), Some(&a)).is_ok());
    }

    #[tokio::test]
    async fn accepted_sockets_have_nodelay() {
        use axum::serve::Listener;
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut listener = nodelay(listener);
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (accepted, _) = listener.accept().await;
        assert!(accepted.nodelay().unwrap());
    }

    #[test]
    fn a_specific_lan_address_is_an_allowed_host() {
        let hosts = Hosts::new("192.0.2.7:80".parse().unwrap(), &[]);
        assert!(hosts.names().contains(&"192.0.2.7".to_string()));
        assert!(hosts.allows("192.0.2.7:80"));
        let hosts = Hosts::new("0.0.0.0:80".parse().unwrap(), &[]);
        assert!(!hosts.names().contains(&"0.0.0.0".to_string()));
    }

    #[test]
    fn a_rebinding_name_is_not_this_machine() {
        let hosts = Hosts::new("127.0.0.1:8080".parse().unwrap(), &["box.lan:9000".into()]);
        for ok in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST", "[::1]:8080", "box.lan:9000"] {
            assert!(hosts.allows(ok), "{ok}");
        }
        for bad in ["attacker.example:8080", "127.0.0.1.attacker.example", "box.lan:9001", ""] {
            assert!(!hosts.allows(bad), "{bad}");
        }
    }
}
