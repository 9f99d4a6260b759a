//! The Slurm recipe of `docs/scaling.md` on a real Slurm: Debian's own `slurmctld`, `slurmd` and `munged`
//! (packages `slurm-wlm` and `munge`, which `.ci/run` installs) started per test as one node on 127.0.0.1 in a
//! temporary folder, and killed on drop. Without them the test fails, never skips.
//!
//! On the mock provider with both judges and the judge check on: a 3-task job array of `pipeline --shard auto/3`,
//! one task cancelled mid-run and resubmitted alone (`sbatch --array=1`), one cancelled mid-run and put back with
//! `scontrol requeue`, then a dependent merge job; the merged run's tables, figures and `summary.md` (what
//! `shards::outputs` compares) equal a single run's byte for byte, the merge sends no request, and the shards send
//! what the single run sends (the judge checks run once).

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use mock_provider::{MockServer, Responder};

use crate::shards::{mock_config, output, outputs, workspace, xtask};

/// How long the daemons may take to show the node idle.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a job may take to reach the state waited for (a bound against a hang, not a speed requirement).
const JOB_TIMEOUT: Duration = Duration::from_secs(600);

/// The programs the test runs, and the package each comes from.
const PROGRAMS: [(&str, &str); 8] = [
    ("munged", "munge"),
    ("slurmctld", "slurm-wlm"),
    ("slurmd", "slurm-wlm"),
    ("sinfo", "slurm-wlm"),
    ("sbatch", "slurm-wlm"),
    ("squeue", "slurm-wlm"),
    ("scancel", "slurm-wlm"),
    ("scontrol", "slurm-wlm"),
];

/// The node's name in `slurm.conf` (given to `slurmd -N`, so the machine's host name does not matter).
const NODE: &str = "node0";

/// `prog` on the PATH or in the system folders Debian installs daemons into (a user's PATH may lack `/usr/sbin`).
fn find(prog: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/bin", "/sbin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(prog))
        .find(|p| p.is_file())
}

/// A port of 127.0.0.1 free when asked.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The user the test runs as: Slurm's daemons run as it, and it owns the jobs.
fn user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id -un");
    assert!(out.status.success(), "id -un failed");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A single-node Slurm: `munged` with its own key and socket, `slurmctld -D` and `slurmd -D` on free ports of
/// 127.0.0.1, everything (configuration, state, spool, logs) in one temporary folder. Every Slurm command goes
/// through [`Slurm::cmd`], which points `SLURM_CONF` at it. Drop cancels the jobs left and kills the daemons.
struct Slurm {
    dir: tempfile::TempDir,
    bins: BTreeMap<&'static str, PathBuf>,
    user: String,
    /// munged, slurmctld, slurmd, in start order.
    daemons: Vec<(&'static str, Child)>,
}

impl Slurm {
    /// Writes the configuration and starts the daemons (without waiting for them: see [`Slurm::wait_idle`]).
    fn start() -> Slurm {
        let mut bins = BTreeMap::new();
        let mut missing = Vec::new();
        for (prog, package) in PROGRAMS {
            match find(prog) {
                Some(p) => {
                    bins.insert(prog, p);
                }
                None => missing.push(format!("`{prog}` (package {package})")),
            }
        }
        assert!(
            missing.is_empty(),
            "Slurm is not installed: {} not found on the PATH or in /usr/sbin. Install the Debian packages with \
             `apt-get install slurm-wlm munge` (`.ci/run` installs them); the test does not run without them",
            missing.join(", ")
        );
        let dir = tempfile::tempdir().expect("a temporary folder");
        // munged refuses a socket in a folder that not everyone can enter.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
            std::fs::set_permissions(dir.path().join(sub), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        let mut key = vec![0u8; 1024];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut key))
            .expect("random bytes for the munge key");
        let key_path = dir.path().join("munge/munge.key");
        std::fs::OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .open(&key_path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &key))
            .expect("the munge key");
        let user = user();
        let d = dir.path().display().to_string();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let conf = format!(
            "ClusterName=ifstress-test\n\
             SlurmctldHost=localhost(127.0.0.1)\n\
             SlurmctldPort={ctld}\n\
             SlurmdPort={slurmd}\n\
             SlurmUser={user}\n\
             SlurmdUser={user}\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={d}/munge/socket\n\
             StateSaveLocation={d}/state\n\
             SlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/log/slurmctld.log\n\
             SlurmdLogFile={d}/log/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             JobCompType=jobcomp/none\n\
             MpiDefault=none\n\
             MailProg=/bin/true\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_CPU\n\
             SlurmdParameters=config_overrides\n\
             ReturnToService=2\n\
             NodeName={NODE} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
             PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            ctld = free_port(),
            slurmd = free_port(),
        );
        std::fs::write(dir.path().join("slurm.conf"), conf).unwrap();
        let mut slurm = Slurm {
            dir,
            bins,
            user,
            daemons: Vec::new(),
        };
        let socket = slurm.dir.path().join("munge/socket");
        slurm.spawn(
            "munged",
            &[
                "-F",
                &format!("--socket={}", socket.display()),
                &format!("--key-file={}", key_path.display()),
                &format!("--pid-file={d}/munge/munged.pid"),
                &format!("--seed-file={d}/munge/munged.seed"),
                &format!("--log-file={d}/log/munged-file.log"),
            ],
        );
        let started = Instant::now();
        while !socket.exists() {
            slurm.assert_running();
            assert!(
                started.elapsed() < START_TIMEOUT,
                "munged did not create its socket within {START_TIMEOUT:?}:\n{}",
                slurm.logs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        slurm.spawn("slurmctld", &["-D"]);
        slurm.spawn("slurmd", &["-D", "-N", NODE]);
        slurm
    }

    fn spawn(&mut self, name: &'static str, args: &[&str]) {
        let log = std::fs::File::create(self.dir.path().join(format!("log/{name}.out"))).unwrap();
        let child = self
            .cmd(name)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{name} does not start: {e}"));
        self.daemons.push((name, child));
    }

    /// A Slurm program with `SLURM_CONF` pointing at this cluster, and none of the caller's own Slurm variables
    /// (a test run inside a Slurm job must not hand its job's to the commands).
    fn cmd(&self, prog: &str) -> Command {
        let mut cmd = Command::new(&self.bins[prog]);
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy();
            if ["SLURM_", "SBATCH_", "SQUEUE_", "SINFO_", "SCONTROL_"]
                .iter()
                .any(|p| k.starts_with(p))
            {
                cmd.env_remove(&*k);
            }
        }
        cmd.env("SLURM_CONF", self.dir.path().join("slurm.conf"));
        cmd
    }

    /// Runs a Slurm command to success and returns its standard output; panics with everything the cluster
    /// logged otherwise.
    fn run(&self, prog: &str, args: &[&str], cwd: Option<&Path>) -> String {
        let mut cmd = self.cmd(prog);
        cmd.args(args);
        if let Some(cwd) = cwd {
            cmd.current_dir(cwd);
        }
        let out = cmd.output().unwrap_or_else(|e| panic!("{prog}: {e}"));
        assert!(
            out.status.success(),
            "`{prog} {}` failed ({}):\n{}\n{}",
            args.join(" "),
            out.status,
            output(&out),
            self.logs()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `sbatch --parsable` from `cwd` (the job's working folder, its outputs `slurm-<job>[_<task>].out` there):
    /// the job id.
    fn sbatch(&self, cwd: &Path, args: &[&str]) -> String {
        let mut all = vec!["--parsable", "--output", "slurm-%j.out"];
        if args.iter().any(|a| a.starts_with("--array")) {
            all[2] = "slurm-%A_%a.out";
        }
        all.extend(args);
        let out = self.run("sbatch", &all, Some(cwd));
        // `--parsable` prints `<id>` or `<id>;<cluster>`.
        let id = out.trim().split(';').next().unwrap_or_default().to_owned();
        assert!(
            !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()),
            "sbatch printed no job id: {out}"
        );
        id
    }

    /// Panics with the logs when a daemon has exited.
    fn assert_running(&mut self) {
        let mut exited = None;
        for (name, child) in &mut self.daemons {
            if let Some(status) = child.try_wait().unwrap() {
                exited = Some(format!("{name} exited ({status})"));
            }
        }
        if let Some(e) = exited {
            panic!("{e}:\n{}", self.logs());
        }
    }

    /// Waits until `sinfo` shows the node idle.
    fn wait_idle(&mut self) {
        let started = Instant::now();
        loop {
            self.assert_running();
            let out = self
                .cmd("sinfo")
                .args(["--noheader", "--nodes", NODE, "--format", "%T"])
                .output()
                .unwrap();
            if out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "idle" {
                return;
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "Slurm's node {NODE} was not idle within {START_TIMEOUT:?} (last `sinfo`: {}):\n{}",
                output(&out).trim(),
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A job's (or array task's, `<job>_<i>`) state and reason, from `scontrol show job`.
    fn job(&self, id: &str) -> (String, String) {
        let out = self.run("scontrol", &["show", "job", "--oneliner", id], None);
        let field = |name: &str| {
            out.split_whitespace()
                .find_map(|w| w.strip_prefix(name))
                .unwrap_or_default()
                .to_owned()
        };
        (field("JobState="), field("Reason="))
    }

    /// Waits until the job's state satisfies `done`, and returns it; panics (with the job's output and the
    /// cluster's logs) on a dependency that can never be satisfied or after [`JOB_TIMEOUT`].
    fn wait_job(&self, id: &str, jobs: &Path, done: impl Fn(&str, &str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let (state, reason) = self.job(id);
            if done(&state, &reason) {
                return state;
            }
            assert!(
                reason != "DependencyNeverSatisfied" && started.elapsed() < JOB_TIMEOUT,
                "job {id}: {state} ({reason}) after {:?}:\n{}\n{}",
                started.elapsed(),
                job_outputs(jobs),
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the job has ended, and its processes with it, and returns its final state. `scontrol` shows a
    /// cancelled job CANCELLED at once, while its processes may still be finishing (they drain their requests in
    /// flight); `squeue` shows it COMPLETING until slurmd has seen them all exit.
    fn wait_ended(&self, id: &str, jobs: &Path) -> String {
        self.wait_job(id, jobs, |state, _| {
            matches!(
                state,
                "COMPLETED"
                    | "CANCELLED"
                    | "FAILED"
                    | "TIMEOUT"
                    | "NODE_FAIL"
                    | "PREEMPTED"
                    | "BOOT_FAIL"
                    | "DEADLINE"
                    | "OUT_OF_MEMORY"
            ) && self
                .run(
                    "squeue",
                    &["--noheader", "--states=all", "--jobs", id, "--format=%T"],
                    None,
                )
                .trim()
                != "COMPLETING"
        })
    }

    /// Every log file of the daemons.
    fn logs(&self) -> String {
        let mut text = String::new();
        let mut paths: Vec<PathBuf> = std::fs::read_dir(self.dir.path().join("log"))
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        paths.sort();
        for p in paths {
            let log = std::fs::read_to_string(&p).unwrap_or_default();
            text.push_str(&format!("--- {}\n{log}\n", p.display()));
        }
        text
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        // Cancel what is left, and wait a little until it is gone, so no job step outlives the daemons.
        let ctld_alive = self
            .daemons
            .iter_mut()
            .any(|(name, c)| *name == "slurmctld" && c.try_wait().is_ok_and(|s| s.is_none()));
        if ctld_alive {
            let _ = self
                .cmd("scancel")
                .args(["--user", &self.user])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let until = Instant::now() + Duration::from_secs(20);
            while Instant::now() < until {
                let left = self
                    .cmd("squeue")
                    .args(["--noheader", "--format", "%i"])
                    .stderr(Stdio::null())
                    .output();
                if left.is_ok_and(|o| o.stdout.iter().all(u8::is_ascii_whitespace)) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        for (_, child) in self.daemons.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Every `slurm-*.out` job output in `dir`, for failure messages.
fn job_outputs(dir: &Path) -> String {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    paths.retain(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("slurm-") && n.ends_with(".out"))
    });
    paths.sort();
    paths
        .iter()
        .map(|p| {
            format!(
                "--- {}\n{}\n",
                p.display(),
                std::fs::read_to_string(p).unwrap_or_default()
            )
        })
        .collect()
}

/// Holds the mock's answers: once `limit` requests have passed, the next one waits (the mock answers on one
/// thread, so every later one waits too) until the gate opens. With one task running, a held request is a
/// request of that task in flight: the test cancels the task then, so it is cancelled mid-run every time.
#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Default)]
struct GateState {
    passed: u64,
    limit: Option<u64>,
    holding: bool,
}

impl Gate {
    /// Called by the mock for every request.
    fn pass(&self) {
        let mut s = self.state.lock().unwrap();
        while s.limit.is_some_and(|l| s.passed >= l) {
            s.holding = true;
            self.changed.notify_all();
            s = self.changed.wait(s).unwrap();
        }
        s.holding = false;
        s.passed += 1;
    }

    /// Lets `n` more requests through, then holds the next.
    fn hold_after(&self, n: u64) {
        let mut s = self.state.lock().unwrap();
        s.limit = Some(s.passed + n);
    }

    fn open(&self) {
        self.state.lock().unwrap().limit = None;
        self.changed.notify_all();
    }

    /// Waits until a request is held; false after `timeout`.
    fn wait_holding(&self, timeout: Duration) -> bool {
        let s = self.state.lock().unwrap();
        let (s, _) = self
            .changed
            .wait_timeout_while(s, timeout, |s| !s.holding)
            .unwrap();
        s.holding
    }
}

/// Opens the gate when dropped (declared after the mock, so it drops first): a failing test never leaves the
/// mock's thread waiting, which the mock's own drop would wait for.
struct OpenOnDrop(Arc<Gate>);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

/// FNV-1a: a hash that is the same in every process and Rust version.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The judges' verdicts as a function of the prompt: coherence scores from 3 to 9 and RIFT grades about one in
/// three INCORRECT, so which control items a judge check draws shows in its sensitivity and specificity (a judge
/// that says the same for everything would hide a different draw). Everything else: the scripted replies.
fn verdict(last: &str) -> Option<String> {
    let h = fnv(last);
    if last.contains("Reply with one JSON object") {
        Some(format!(
            r#"{{"reason": "Scored by the test's hash.", "score": {}}}"#,
            3 + h % 7
        ))
    } else if last.contains("You grade answers to trivia questions") {
        Some(
            if h.is_multiple_of(3) {
                "INCORRECT"
            } else {
                "CORRECT"
            }
            .to_owned(),
        )
    } else {
        None
    }
}

/// The shards test's workspace with the judge check on: every judge gets its control items, and the judges
/// (which fail the check, as [`verdict`] is not a good judge) are kept so the run goes on to its tables.
fn judged_workspace(dir: &Path, mock: &MockServer) {
    workspace(dir, mock, "mock");
    let path = dir.join("run.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let head = text
        .find("[judge-check]")
        .map_or(text.as_str(), |at| &text[..at]);
    std::fs::write(
        &path,
        format!("{head}[judge-check]\nenabled = true\nkeep-failed-judge = true\n",),
    )
    .unwrap();
}

/// Releases the held array task `task` with the gate set to hold its request after `n`, cancels it with
/// `scancel` while that request is in flight, then lets the request be answered; returns once the task ended
/// (CANCELLED), with its shard folder incomplete.
fn cancel_mid_run(slurm: &Slurm, gate: &Gate, task: &str, shard: &Path, jobs: &Path) {
    gate.hold_after(3);
    slurm.run("scontrol", &["release", task], None);
    assert!(
        gate.wait_holding(JOB_TIMEOUT),
        "task {task} sent no 4th request:\n{}\n{}",
        job_outputs(jobs),
        slurm.logs()
    );
    let (state, _) = slurm.job(task);
    assert_eq!(state, "RUNNING", "task {task} holds a request");
    slurm.run("scancel", &[task], None);
    // The task's first SIGTERM stops new requests and waits for those in flight: answer them.
    gate.open();
    let state = slurm.wait_ended(task, jobs);
    assert_eq!(state, "CANCELLED", "task {task}:\n{}", job_outputs(jobs));
    let manifest = std::fs::read_to_string(shard.join("shard.json")).unwrap_or_default();
    assert!(
        !manifest.contains("\"complete\": true"),
        "task {task} was cancelled before its shard was complete: {manifest}"
    );
}

#[test]
fn a_slurm_job_array_with_a_cancelled_resubmitted_and_a_requeued_task_merges_into_the_single_run() {
    let gate = Arc::new(Gate::default());
    let mut cfg = mock_config();
    let g = Arc::clone(&gate);
    cfg.responder = Some(Responder(Arc::new(move |_, last| {
        g.pass();
        verdict(last)
    })));
    let mock = MockServer::start(cfg, 0).unwrap();
    // Declared before the cluster, so the jobs are cancelled before their folders go.
    let whole = tempfile::tempdir().unwrap();
    let split = tempfile::tempdir().unwrap();
    // The daemons start while the single run goes.
    let mut slurm = Slurm::start();
    let _open = OpenOnDrop(Arc::clone(&gate));

    judged_workspace(whole.path(), &mock);
    let out = xtask(
        whole.path(),
        &["pipeline", "--config", "run.toml", "--no-progress"],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", output(&out));
    let single = mock.requests();
    assert!(
        whole
            .path()
            .join("artifacts/runs/split/judge-check.json")
            .is_file(),
        "the single run checked its judges"
    );

    slurm.wait_idle();
    let dir = split.path();
    judged_workspace(dir, &mock);
    // The recipe's script: every task one shard of 3 (the binary itself rather than `cargo xtask`; no Chromium).
    std::fs::write(
        dir.join("shard.sh"),
        format!(
            "#!/bin/bash\nset -euo pipefail\nexport PATH=/nonexistent NO_COLOR=1\n\
             exec '{}' pipeline --config run.toml --shard auto/3 --no-progress\n",
            env!("CARGO_BIN_EXE_xtask")
        ),
    )
    .unwrap();
    let shard = |i: usize| dir.join(format!("artifacts/runs/split-shard-{i}-of-3"));
    let array = slurm.sbatch(dir, &["--hold", "--array=0-2", "shard.sh"]);
    // docs/scaling.md: a job `afterok` on an array with a failed task never runs (checked below).
    let never = slurm.sbatch(
        dir,
        &[&format!("--dependency=afterok:{array}"), "--wrap", "true"],
    );

    // Task 1, cancelled mid-run (and so, to Slurm, failed: the `afterok` job will never run).
    let task1 = format!("{array}_1");
    cancel_mid_run(&slurm, &gate, &task1, &shard(1), dir);
    // Task 2, cancelled mid-run, then requeued: the same job id and task, run again from its start.
    let task2 = format!("{array}_2");
    cancel_mid_run(&slurm, &gate, &task2, &shard(2), dir);
    slurm.run("scontrol", &["requeue", &task2], None);
    // A requeued job only becomes eligible after a delay (two minutes with Slurm 22.05): start it now.
    slurm.run(
        "scontrol",
        &["update", &format!("jobid={task2}"), "StartTime=now"],
        None,
    );
    // Task 1 resubmitted alone: Slurm gives it SLURM_ARRAY_TASK_MIN=1 and SLURM_ARRAY_TASK_COUNT=1, and
    // `--shard auto/3` still runs shard 1 of 3.
    let again = slurm.sbatch(dir, &["--array=1", "shard.sh"]);
    // Task 0, as the array started it.
    slurm.run("scontrol", &["release", &format!("{array}_0")], None);

    // The merge, held until the shards are done so the requests they sent can be counted apart from its own.
    let merge = slurm.sbatch(
        dir,
        &[
            "--hold",
            &format!("--dependency=afterany:{array},afterok:{again}"),
            "--wrap",
            &format!(
                "export PATH=/nonexistent NO_COLOR=1; exec '{}' merge --config run.toml --no-progress \
                 --out artifacts/runs/split artifacts/runs/split-shard-*-of-3",
                env!("CARGO_BIN_EXE_xtask")
            ),
        ],
    );
    for task in [format!("{array}_0"), task2.clone(), format!("{again}_1")] {
        let state = slurm.wait_ended(&task, dir);
        assert_eq!(state, "COMPLETED", "task {task}:\n{}", job_outputs(dir));
    }
    let read = |name: String| std::fs::read_to_string(dir.join(&name)).unwrap_or_default();
    // Every shard's last line names it and says it is complete, and the cancelled task had said that it stopped
    // (its output file was not reused: task 2's was, by the requeued run, which starts it afresh).
    for (file, i) in [
        (format!("slurm-{array}_0.out"), 0),
        (format!("slurm-{array}_2.out"), 2),
        (format!("slurm-{again}_1.out"), 1),
    ] {
        let text = read(file.clone());
        assert!(
            text.contains(&format!("shard {i}/3:")) && text.contains("merge the shards"),
            "{file}:\n{text}"
        );
    }
    let text = read(format!("slurm-{array}_1.out"));
    assert!(text.contains("stopped by a signal"), "{text}");
    // Every task ran a shard of 3, and no other split was started.
    let mut folders: Vec<String> = std::fs::read_dir(dir.join("artifacts/runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    assert_eq!(
        folders,
        [
            "split-shard-0-of-3",
            "split-shard-1-of-3",
            "split-shard-2-of-3"
        ],
        "{}",
        job_outputs(dir)
    );
    // The judge checks ran in shard 0 alone (a check run in another shard too would mostly be answered from the
    // shared cache, so the request count below could not show it; its folder does).
    for i in 0..3 {
        for bench in ["rift", "ifscale"] {
            let checked = shard(i).join(bench).join("judge-check");
            assert_eq!(
                checked.is_dir(),
                i == 0,
                "{}: judge checks belong to shard 0 alone",
                checked.display()
            );
        }
    }
    // Every answer and every control item was asked for once over the shards, the cancelled tasks' included
    // (their requests in flight were answered and written, and the resumed tasks sent only the rest), except the
    // race of `shards.rs`: a judge prompt common to items of two shards running at the same time may be sent by
    // both.
    let sharded = mock.requests() - single;
    assert!(
        (single..=single + 4).contains(&sharded),
        "{sharded} requests over the shards for {single} in the single run:\n{}",
        job_outputs(dir)
    );

    // Once every task has ended, the `afterok` job is left for ever.
    slurm.wait_job(&never, dir, |_, reason| {
        reason == "DependencyNeverSatisfied"
    });
    slurm.run("scancel", &[&never], None);

    assert_eq!(slurm.job(&merge).0, "PENDING", "the merge is held");
    let before = mock.requests();
    slurm.run("scontrol", &["release", &merge], None);
    let state = slurm.wait_ended(&merge, dir);
    assert_eq!(state, "COMPLETED", "the merge:\n{}", job_outputs(dir));
    assert_eq!(mock.requests(), before, "the merge sends nothing");

    // The merged run against the single run, byte for byte, apart from what `shards::outputs` leaves out: the
    // summary's wall-time line, and two columns of its cost table, output tokens per second (latency measured in
    // other processes) and requests answered by the cache (the shards share one cache, and which shard finds an
    // answer there depends on timing).
    let a = outputs(&whole.path().join("artifacts/runs/split"));
    let b = outputs(&dir.join("artifacts/runs/split"));
    assert!(
        a.keys().any(|k| k.starts_with("figures")) && a.keys().any(|k| k.starts_with("tables"))
    );
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (path, bytes) in &a {
        assert!(
            &b[path] == bytes,
            "{} differs:\n{}\n---\n{}",
            path.display(),
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&b[path])
        );
    }
}
