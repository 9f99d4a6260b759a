//! The server the real-server tests talk to: llama.cpp's own `llama-server` (built once into the cache folder by
//! `cargo xtask setup` / `cargo xtask test`) serving the SmolLM2 GGUF on 127.0.0.1, started per test and killed on
//! drop; or, when `IFSTRESS_REAL_SERVER_URL` names a base URL (vLLM, Ollama, a llama-server started by hand), that
//! server, for the tests that do not stop it or depend on llama-server's own errors.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use schema::env::EnvVars;

/// How long a starting server may take to load the model and answer `/health`.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// The SmolLM2 GGUF fetched by `cargo xtask setup` (or `$IFSTRESS_GGUF`).
pub(crate) fn gguf_path() -> PathBuf {
    if let Some(p) = std::env::var_os(EnvVars::IFSTRESS_GGUF).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    schema::env::cache_dir()
        .join("assets")
        .join("smollm2-135m-instruct-q4_1.gguf")
}

/// The `llama-server` program: it must be there (the tests fail, never skip, without it).
pub(crate) fn llama_server_bin() -> PathBuf {
    let bin = bench::llama_cpp::llama_server_path(&schema::env::cache_dir())
        .unwrap_or_else(|e| panic!("cannot locate llama-server: {e:#}"));
    assert!(
        bin.is_file(),
        "llama.cpp's llama-server is missing at {}: run `cargo xtask setup` (or `cargo xtask test`, which builds it \
         first; about ten minutes once)",
        bin.display()
    );
    bin
}

/// A server picked by the environment: `IFSTRESS_REAL_SERVER_URL` (with `IFSTRESS_REAL_SERVER_MODEL`, the model
/// id to request) names a running one; otherwise a managed `llama-server` with `parallel` slots.
pub(crate) enum Target {
    Managed(LlamaServer),
    External { base_url: String, model_id: String },
}

impl Target {
    pub(crate) fn from_env(parallel: usize) -> Target {
        match std::env::var(EnvVars::IFSTRESS_REAL_SERVER_URL) {
            Ok(url) if !url.trim().is_empty() => {
                let model_id = std::env::var(EnvVars::IFSTRESS_REAL_SERVER_MODEL)
                    .ok()
                    .filter(|m| !m.trim().is_empty())
                    .unwrap_or_else(|| {
                        panic!(
                            "{} is set, so {} must name the model id to request",
                            EnvVars::IFSTRESS_REAL_SERVER_URL,
                            EnvVars::IFSTRESS_REAL_SERVER_MODEL
                        )
                    });
                Target::External {
                    base_url: url.trim().trim_end_matches('/').to_owned(),
                    model_id,
                }
            }
            _ => Target::Managed(LlamaServer::start(parallel)),
        }
    }

    pub(crate) fn base_url(&self) -> String {
        match self {
            Target::Managed(s) => s.base_url(),
            Target::External { base_url, .. } => base_url.clone(),
        }
    }

    pub(crate) fn model_id(&self) -> &str {
        match self {
            Target::Managed(_) => LlamaServer::MODEL_ID,
            Target::External { model_id, .. } => model_id,
        }
    }

    pub(crate) fn managed(&self) -> Option<&LlamaServer> {
        match self {
            Target::Managed(s) => Some(s),
            Target::External { .. } => None,
        }
    }
}

/// A `llama-server` child on a free port of 127.0.0.1, with one thread and a 2 048-token context shared by its
/// `parallel` slots; its output goes to a log file. Killed on drop.
pub(crate) struct LlamaServer {
    child: Option<Child>,
    port: u16,
    parallel: usize,
    logs: tempfile::TempDir,
    starts: u32,
}

impl LlamaServer {
    /// The model id the tests request (llama-server serves its one model whatever id is asked for).
    pub(crate) const MODEL_ID: &'static str = "smollm2-135m-instruct";
    /// The context size given with `-c`.
    pub(crate) const CTX: usize = 2048;

    pub(crate) fn start(parallel: usize) -> LlamaServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut server = LlamaServer {
            child: None,
            port,
            parallel,
            logs: tempfile::tempdir().expect("a log folder"),
            starts: 0,
        };
        server.spawn();
        server
    }

    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn log_path(&self, start: u32) -> PathBuf {
        self.logs.path().join(format!("llama-server-{start}.log"))
    }

    /// Everything the server printed, over every start.
    pub(crate) fn log(&self) -> String {
        (1..=self.starts)
            .map(|n| std::fs::read_to_string(self.log_path(n)).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn spawn(&mut self) {
        let gguf = gguf_path();
        assert!(
            gguf.is_file(),
            "the SmolLM2 GGUF {} is missing: run `cargo xtask setup` (or `cargo xtask test`)",
            gguf.display()
        );
        self.starts += 1;
        let log = std::fs::File::create(self.log_path(self.starts)).expect("a log file");
        let child = Command::new(llama_server_bin())
            .args(["--host", "127.0.0.1", "--port", &self.port.to_string()])
            .arg("-m")
            .arg(&gguf)
            .args(["--alias", Self::MODEL_ID])
            .args(["--parallel", &self.parallel.to_string()])
            .args(["-c", &Self::CTX.to_string(), "-t", "1", "--metrics"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("a log handle"))
            .stderr(log)
            .spawn()
            .expect("llama-server starts");
        self.child = Some(child);
        self.wait_healthy();
    }

    /// Waits until `/health` answers 200 (the model is loaded); panics with the log when the server exits or
    /// takes too long.
    fn wait_healthy(&mut self) {
        let started = Instant::now();
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().expect("try_wait"))
            {
                panic!(
                    "llama-server exited ({status}) while starting:\n{}",
                    self.log()
                );
            }
            if http_get(&format!("http://127.0.0.1:{}/health", self.port))
                .is_ok_and(|(status, _)| status == 200)
            {
                return;
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "llama-server did not become healthy within {START_TIMEOUT:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the server: SIGKILL (llama-server does not exit on SIGTERM while a request is in flight; it hangs in
    /// its clean-up), and waits for it to exit.
    pub(crate) fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and returns when it is healthy.
    pub(crate) fn restart(&mut self) -> Instant {
        self.stop();
        self.spawn();
        Instant::now()
    }

    /// One value of llama-server's Prometheus `/metrics` (`llamacpp:<name>`).
    pub(crate) fn metric(&self, name: &str) -> f64 {
        let (status, body) = http_get(&format!("http://127.0.0.1:{}/metrics", self.port))
            .unwrap_or_else(|e| panic!("GET /metrics: {e}"));
        assert_eq!(status, 200, "{body}");
        let key = format!("llamacpp:{name} ");
        body.lines()
            .find_map(|l| l.strip_prefix(&key))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no metric {name} in:\n{body}"))
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A GET of a URL through a real HTTP client: the status and the body.
pub(crate) fn http_get(url: &str) -> std::io::Result<(u16, String)> {
    let failed = |e: reqwest::Error| std::io::Error::other(format!("GET {url}: {e}"));
    let response = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .and_then(|c| c.get(url).send())
        .map_err(failed)?;
    let status = response.status().as_u16();
    Ok((status, response.text().map_err(failed)?))
}

/// Lines of a JSONL file that exist so far (0 when it does not exist yet).
pub(crate) fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}
