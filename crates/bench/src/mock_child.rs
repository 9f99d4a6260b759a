//! The benchmarks' mock server in a child process (this binary with `--serve-mock`), so the benchmark's own CPU time
//! and the mock's are measured apart: [`serve`] is the child's side, [`MockChild`] the parent's.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use anyhow::Context;
use mock_provider::{MockConfig, MockServer};

/// Set on a child mock: exit when stdin closes.
const EXIT_ON_EOF: &str = "IFSTRESS_MOCK_EXIT_ON_EOF";

/// Serves `cfg` on `port` (0 picks a free one), its base URL the first line on stdout, until stdin closes in a child
/// of [`MockChild`], or until the process is killed when started by hand; returns the mock, still running, for its
/// counters.
#[allow(clippy::print_stdout)]
pub(crate) fn serve(cfg: MockConfig, port: u16) -> anyhow::Result<MockServer> {
    let mock = MockServer::start(cfg, port).context("starting the mock server")?;
    println!("{}", mock.base_url());
    std::io::stdout().flush()?;
    if std::env::var_os(EXIT_ON_EOF).is_some() {
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut sink);
    } else {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    Ok(mock)
}

/// A mock serving in a child process, stopped (stdin closed, then waited for) on [`MockChild::stop`] or drop.
pub(crate) struct MockChild {
    child: Child,
    /// The base URL it printed (`http://127.0.0.1:<port>/v1`).
    pub(crate) url: String,
    pub(crate) addr: std::net::SocketAddr,
    stdout: BufReader<ChildStdout>,
}

impl MockChild {
    /// Starts `cmd` (this binary's `--serve-mock` command line) and reads the URL it prints.
    pub(crate) fn start(mut cmd: Command) -> anyhow::Result<MockChild> {
        let mut child = cmd
            .env(EXIT_ON_EOF, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("starting the mock server process")?;
        let mut stdout = BufReader::new(child.stdout.take().context("mock stdout")?);
        let mut url = String::new();
        stdout.read_line(&mut url)?;
        let url = url.trim().to_owned();
        let addr = url
            .strip_prefix("http://")
            .and_then(|u| u.strip_suffix("/v1"))
            .and_then(|a| a.parse().ok())
            .with_context(|| {
                format!("the mock server did not start (it printed {url:?}, not its URL)")
            })?;
        Ok(MockChild {
            child,
            url,
            addr,
            stdout,
        })
    }

    /// The child's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the mock; returns the last line it printed.
    pub(crate) fn stop(mut self) -> anyhow::Result<String> {
        drop(self.child.stdin.take());
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        self.child.wait()?;
        Ok(line.trim().to_owned())
    }
}

impl Drop for MockChild {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}
