//! Third-party peers (installed by `scripts/peers` into `tests/peers/`) run
//! as child processes on loopback: started, awaited until they print their
//! address, and killed when dropped.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

/// A path inside `tests/peers`, which must exist: the peers are part of the
/// test suite, not optional extras.
pub fn peer_path(rel: &str) -> PathBuf {
    let path = peers_dir().join(rel);
    assert!(
        path.exists(),
        "{} is missing: the third-party test peers are not installed; run scripts/peers",
        path.display()
    );
    path
}

pub struct Peer {
    child: Child,
    /// The base URL the peer printed, e.g. `http://127.0.0.1:40123`.
    pub url: String,
}

impl Peer {
    /// Starts `command` and waits until a line on `stream` (stdout or
    /// stderr) contains `marker` followed by the URL.
    pub fn start(mut command: Command, from_stderr: bool, marker: &str) -> Peer {
        command.stdin(Stdio::null());
        if from_stderr {
            command.stderr(Stdio::piped()).stdout(Stdio::null());
        } else {
            command.stdout(Stdio::piped()).stderr(Stdio::null());
        }
        let mut child = command.spawn().expect("cannot start the test peer");
        let pipe: Box<dyn Read + Send> = if from_stderr {
            Box::new(child.stderr.take().expect("piped stderr"))
        } else {
            Box::new(child.stdout.take().expect("piped stdout"))
        };
        let (tx, rx) = mpsc::channel();
        let marker = marker.to_string();
        // Keeps reading after the address is found, so the peer never blocks
        // on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(rest) = line.split(&marker).nth(1) {
                    let url = rest.split_whitespace().next().unwrap_or_default();
                    let _ = tx.send(url.trim_end_matches('/').to_string());
                }
            }
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => Peer { child, url },
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the test peer did not report its address within 60 s");
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain-HTTP client for the peers' control APIs.
pub fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().timeout(Duration::from_secs(30)).build().expect("HTTP client")
}
