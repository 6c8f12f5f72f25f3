//! A real PostgreSQL server for the tests: Debian's `postgresql` package
//! (installed by scripts/peers), initdb'd into a temporary folder, listening
//! on a free loopback port, one per test binary. Missing server binaries
//! fail the test loudly. initdb refuses to run as root, so as root the
//! server runs as the package's `postgres` user (setpriv). A small shell
//! watchdog started with the server gives it SIGINT (fast shutdown) within a
//! second of the test binary's exit, so no process outlives the run;
//! folders left by earlier runs whose binary is gone are removed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub struct Postgres {
    pub port: u16,
    bin: PathBuf,
}

static SERVER: OnceLock<Postgres> = OnceLock::new();
static NEXT_DB: AtomicUsize = AtomicUsize::new(0);

/// The test binary's server, started on first use.
pub fn server() -> &'static Postgres {
    SERVER.get_or_init(start)
}

/// A fresh, empty database on the test binary's server, as a URL.
pub fn database() -> String {
    server().create_database()
}

/// The newest installed server's bin folder (`/usr/lib/postgresql/N/bin`).
fn server_bin() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    match found.pop() {
        Some((_, bin)) => bin,
        None => panic!(
            "the PostgreSQL server is not installed (no /usr/lib/postgresql/*/bin/initdb): \
             run scripts/peers, which installs Debian's postgresql package"
        ),
    }
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

fn id_of(flag: &str) -> u32 {
    let out = Command::new("id").args([flag, "postgres"]).output().unwrap();
    assert!(
        out.status.success(),
        "as root the server runs as the `postgres` user, which is missing"
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// `program` from `bin`, run as `postgres` when we are root.
fn command(bin: &Path, program: &str) -> Command {
    let mut command = Command::new("setpriv");
    if is_root() {
        command.args(["--reuid=postgres", "--regid=postgres", "--init-groups"]);
    }
    command.arg("--").arg(bin.join(program));
    command
}

/// Runs the server (`"$@"`) and stops it once process `$1` is gone.
const WATCHDOG: &str = r#"watched=$1; shift
"$@" & server=$!
trap 'kill -INT $server 2>/dev/null; wait $server; exit 0' TERM INT
while kill -0 "$watched" 2>/dev/null && kill -0 "$server" 2>/dev/null; do sleep 1; done
kill -INT $server 2>/dev/null; wait $server"#;

/// Removes the folders of earlier runs whose test binary is gone.
fn sweep(temp: &Path) {
    for entry in std::fs::read_dir(temp).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("nova-pg-")) else { continue };
        let Some(pid) = rest.split('-').next() else { continue };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn start() -> Postgres {
    let bin = server_bin();
    let temp = std::env::temp_dir();
    sweep(&temp);
    let base = temp.join(format!("nova-pg-{}-{}", std::process::id(), fastrand::u32(..)));
    let data = base.join("data");
    std::fs::create_dir_all(&data).unwrap();
    if is_root() {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::chown(&data, Some(id_of("-u")), Some(id_of("-g"))).unwrap();
    }
    let init = command(&bin, "initdb")
        .args(["-D"])
        .arg(&data)
        .args(["-U", "nova", "--auth=trust", "--locale=C", "-E", "UTF8", "--no-sync"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        init.status.success(),
        "initdb failed: {}{}",
        String::from_utf8_lossy(&init.stdout),
        String::from_utf8_lossy(&init.stderr)
    );
    for _attempt in 0..3 {
        let port = free_port();
        let log = std::fs::File::create(base.join(format!("postgres-{port}.log"))).unwrap();
        let mut server = Command::new("sh");
        server.args(["-c", WATCHDOG, "watchdog", &std::process::id().to_string()]);
        let run_as: &[&str] = if is_root() {
            &["--reuid=postgres", "--regid=postgres", "--init-groups"]
        } else {
            &[]
        };
        server
            .arg("setpriv")
            .args(run_as)
            .arg("--")
            .arg(bin.join("postgres"))
            .arg("-D")
            .arg(&data)
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-k", ""])
            .args(["-c", "fsync=off", "-c", "max_connections=200"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        // Not waited for on success: the watchdog stops the server when this
        // binary exits. It exits itself, within a second, when the server
        // does, which is how a failed start is told from a slow one.
        #[allow(clippy::zombie_processes)]
        let mut watchdog = server.spawn().unwrap();
        let log_path = base.join(format!("postgres-{port}.log"));
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut exited = false;
        while Instant::now() < deadline {
            let ready = Command::new(bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string(), "-U", "nova"])
                .status()
                .unwrap();
            if ready.success() {
                return Postgres { port, bin };
            }
            // A probe while the server starts up is logged as FATAL ("the
            // database system is starting up"); only the server's own exit
            // ends this attempt, so a second server is never started on the
            // same data folder while the first still holds it.
            if watchdog.try_wait().unwrap().is_some() {
                exited = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        if !exited {
            // TERM, which the watchdog traps to stop the server with it.
            let _ = Command::new("kill").arg(watchdog.id().to_string()).status();
            let _ = watchdog.wait();
            panic!("PostgreSQL did not answer on port {port} within 60 s: {text}");
        }
        // Another process took the port between free_port() and the bind:
        // try another. Any other failure is the server's, and final.
        assert!(
            text.contains("could not bind"),
            "PostgreSQL failed to start on port {port}: {text}"
        );
        eprintln!("PostgreSQL could not bind port {port}, trying another: {text}");
    }
    panic!("PostgreSQL did not start (logs in {})", base.display());
}

impl Postgres {
    /// The URL of database `name`.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://nova@127.0.0.1:{}/{name}", self.port)
    }

    /// A fresh, empty database, as a URL.
    pub fn create_database(&self) -> String {
        let name =
            format!("test_{}_{}", NEXT_DB.fetch_add(1, Ordering::Relaxed), fastrand::u32(..));
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Runs `sql` in database `db` with psql, and returns what it printed.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "nova", "-d", db])
            .args(["-c", sql])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}
