//! Ctrl-C keeps what is paid for: SIGINT and SIGTERM handling for the commands that call models.
//!
//! Installed once, when a command builds its inference client ([`crate::client::ClientArgs::client`]). The
//! first signal stops the client sending new requests and says so on one line (how many requests are in flight,
//! how long they are waited for, and that a second Ctrl-C quits at once); the requests in flight are waited for
//! and their answers written, the command ends as it would after a cost limit, and [`finish`] turns its result
//! into exit code 3 (incomplete: a rerun continues). A second signal exits at once with code 130.
//! Before the client exists, a signal ends the process as usual (nothing has been sent yet).

use std::sync::OnceLock;
use std::time::Duration;

use inference_client::StopHandle;

/// The stop handle of the command's client, once the handler is installed.
static STOP: OnceLock<StopHandle> = OnceLock::new();

/// Exit code of a second signal (the shell's code for a process ended by SIGINT).
const EXIT_SIGNAL: i32 = 130;

/// Installs the handler for `stop` (only the first call per process does anything).
pub(crate) fn install(stop: StopHandle, drain: Duration) {
    if STOP.set(stop.clone()).is_err() {
        return;
    }
    // The listener is registered before this returns, so a signal right after is never missed.
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<bool>();
    let spawned = std::thread::Builder::new()
        .name("ifstress-signals".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::warn!(error = %e, "Cannot listen for Ctrl-C; it will end the process at once.");
                    let _ = ready_tx.send(false);
                    return;
                }
            };
            rt.block_on(listen(stop, drain, ready_tx));
        });
    match spawned {
        Ok(_) => {
            let _ = ready_rx.recv_timeout(Duration::from_secs(5));
        }
        Err(e) => {
            tracing::warn!(error = %e, "Cannot listen for Ctrl-C; it will end the process at once.");
        }
    }
}

async fn listen(stop: StopHandle, drain: Duration, ready: std::sync::mpsc::Sender<bool>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (mut int, mut term) = match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(i), Ok(t)) => (i, t),
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!(error = %e, "Cannot listen for Ctrl-C; it will end the process at once.");
            let _ = ready.send(false);
            return;
        }
    };
    let _ = ready.send(true);
    let mut first = true;
    loop {
        tokio::select! {
            _ = int.recv() => {},
            _ = term.recv() => {},
        }
        if first {
            first = false;
            let in_flight = stop.stop_sending();
            tracing::warn!(
                in_flight,
                "Stopping: no new requests are sent; waiting up to {} s for the {in_flight} requests in flight and \
                 writing their answers (press Ctrl-C again to quit at once).",
                drain.as_secs_f64()
            );
        } else {
            tracing::warn!("Second signal: quitting at once.");
            std::process::exit(EXIT_SIGNAL);
        }
    }
}

/// Whether a signal stopped the command's client.
pub(crate) fn interrupted() -> bool {
    STOP.get().is_some_and(StopHandle::is_stopping)
}

/// A command's result, made incomplete (exit code 3) when a signal stopped it.
pub(crate) fn finish(result: anyhow::Result<()>) -> anyhow::Result<()> {
    if !interrupted() {
        return result;
    }
    let why = "stopped by a signal: the answers in flight were written; rerun to continue";
    match result {
        Ok(()) => Err(pipeline::Failure::Incomplete(why.to_owned()).into()),
        Err(e) if crate::exit_code(&e) == pipeline::outcome::EXIT_INCOMPLETE => Err(e),
        Err(e) => {
            tracing::warn!("After the signal: {e:#}");
            Err(pipeline::Failure::Incomplete(why.to_owned()).into())
        }
    }
}
