//! Every retry decision of the client, in one place: what a failed attempt means for its request and its model,
//! and how long to wait before the next attempt.
//!
//! A failure is one of three things:
//! - **retry**: the server or the network may do better next time (rate limits, 5xx, timeouts, broken or empty
//!   bodies, provider errors reported inside a 200);
//! - **give up**: this request will fail again as sent (400, unknown statuses, or the server said
//!   `x-should-retry: false`); the prompt gets a failed record and a rerun tries again;
//! - **stop the model**: no request of this model can succeed (401, 403, 404) or none should be sent (402, out of
//!   credits); the run stops with one error line.
//!
//! What a failure says about the endpoint (whether it is dead and ejected) is the limiter's (`Slot::failed`).
//!
//! Waits are exponential back-off with equal jitter, raised to the server's hint (`retry-after-ms`, `retry-after`
//! in seconds or as an HTTP date) and capped at ten minutes.
//!
//! [`drive`] is the one retry loop: chat requests, embeddings and Batch API calls each hand it their attempt and
//! get back the answer, the last failure, or word that sending was stopped before an attempt could be made.
//!
//! A test lists every status with its class.

use std::time::{Duration, SystemTime};

use schema::ErrorClass;

use crate::config::ModelConfig;
use crate::parse::Failure;
use crate::stop::StopHandle;

/// The longest wait a server's hint can impose before one attempt.
const MAX_HINTED_WAIT: Duration = Duration::from_secs(600);

/// What a failed attempt means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Try this request again (if attempts remain).
    Retry,
    /// Write a failed record for this request; other requests go on.
    GiveUp,
    /// Stop every request of this model: retrying cannot help, or must not be paid for.
    StopModel,
}

/// The decision for a failure's class alone.
pub(crate) fn decide_class(class: ErrorClass) -> Decision {
    match class {
        ErrorClass::RateLimited
        | ErrorClass::ServerError
        | ErrorClass::RequestTimeout
        | ErrorClass::Conflict
        | ErrorClass::Timeout
        | ErrorClass::Connection
        | ErrorClass::InvalidJson
        | ErrorClass::EmptyChoices
        | ErrorClass::TruncatedBody
        | ErrorClass::Engine
        | ErrorClass::ProviderError => Decision::Retry,
        ErrorClass::BadRequest | ErrorClass::OtherStatus => Decision::GiveUp,
        ErrorClass::Unauthorized
        | ErrorClass::Forbidden
        | ErrorClass::NotFound
        | ErrorClass::PaymentRequired => Decision::StopModel,
    }
}

/// The decision for a failure: its class, unless the server said `x-should-retry: false` (then a retryable
/// failure is given up; a fatal one still stops the model).
pub(crate) fn decide(f: &Failure) -> Decision {
    match (decide_class(f.class), f.should_retry) {
        (Decision::Retry, Some(false)) => Decision::GiveUp,
        (d, _) => d,
    }
}

/// Whether the server asked us to slow down (the endpoint's adaptive limit halves).
pub(crate) fn is_overload(f: &Failure) -> bool {
    f.class == ErrorClass::RateLimited || f.status == Some(503)
}

/// Class of a non-success HTTP status.
pub(crate) fn status_class(status: u16) -> ErrorClass {
    match status {
        429 => ErrorClass::RateLimited,
        408 => ErrorClass::RequestTimeout,
        409 => ErrorClass::Conflict,
        400 => ErrorClass::BadRequest,
        401 => ErrorClass::Unauthorized,
        402 => ErrorClass::PaymentRequired,
        403 => ErrorClass::Forbidden,
        404 => ErrorClass::NotFound,
        500..=599 => ErrorClass::ServerError,
        _ => ErrorClass::OtherStatus,
    }
}

/// What the server's headers say about retrying.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Hints {
    /// `retry-after-ms`, else `retry-after` (seconds or an HTTP date).
    pub(crate) retry_after: Option<Duration>,
    /// `x-should-retry: true | false`.
    pub(crate) should_retry: Option<bool>,
}

impl Hints {
    /// Reads the hints from response headers (`get` returns a header's value by lower-case name).
    pub(crate) fn from_headers<'a>(
        get: impl Fn(&str) -> Option<&'a str>,
        now: SystemTime,
    ) -> Hints {
        let ms = get("retry-after-ms")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| Duration::from_secs_f64((v / 1000.0).min(3600.0)));
        let retry_after = ms.or_else(|| get("retry-after").and_then(|v| parse_retry_after(v, now)));
        let should_retry = get("x-should-retry").and_then(|v| match v.trim() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        });
        Hints {
            retry_after,
            should_retry,
        }
    }
}

/// `Retry-After` as delta-seconds or an HTTP date.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0)
            .then(|| Duration::from_secs_f64(secs.min(3600.0)));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The wait before attempt `n + 1`: the jittered back-off, raised to the server's hint (never below a quarter of
/// the back-off, never above ten minutes).
pub(crate) fn delay(backoff: Duration, hint: Option<Duration>) -> Duration {
    match hint {
        Some(h) => h.min(MAX_HINTED_WAIT).max(backoff / 4),
        None => backoff,
    }
}

/// Exponential back-off with equal jitter, from a small deterministic-per-request generator.
pub(crate) struct Jitter(u64);

impl Jitter {
    pub(crate) fn new(key: &str) -> Jitter {
        let seed = key.bytes().take(16).fold(0x9E37_79B9_7F4A_7C15u64, |h, b| {
            h.rotate_left(5) ^ u64::from(b)
        });
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        Jitter(seed ^ u64::from(nanos))
    }

    fn next_f64(&mut self) -> f64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Back-off before attempt `n + 1`: half of `min(max, base · 2^(n-1))` plus a random part of the other half.
    pub(crate) fn backoff(&mut self, n: u32, base: f64, max: f64) -> Duration {
        let full = (base * 2f64.powi(n.saturating_sub(1).min(30) as i32)).min(max);
        Duration::from_secs_f64(full / 2.0 + self.next_f64() * full / 2.0)
    }
}

/// How one request's attempts are retried.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    /// Attempts at most (a free resend aside).
    pub(crate) max_attempts: u32,
    /// Back-off before attempt `n + 1`: from `base_s · 2^(n-1)` up to `max_s` (see [`Jitter::backoff`]).
    pub(crate) base_s: f64,
    pub(crate) max_s: f64,
    /// A first failure whose pooled connection was closed unanswered (most often a keep-alive connection the server
    /// had just closed) is sent again at once on a new connection, not counted against `max_attempts`.
    pub(crate) resend_closed: bool,
}

impl Rules {
    /// The model's `max-attempts`, `retry-base-s` and `retry-max-s`, without free resends.
    pub(crate) fn of(model: &ModelConfig) -> Rules {
        Rules {
            max_attempts: model.max_attempts,
            base_s: model.retry_base_s,
            max_s: model.retry_max_s,
            resend_closed: false,
        }
    }
}

/// The attempt [`drive`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Try {
    /// 1 for the first attempt, counting free resends.
    pub(crate) n: u32,
    /// Send it on a new connection (a free resend).
    pub(crate) fresh: bool,
}

/// What [`drive`] decided after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Verdict {
    /// The attempt that failed.
    pub(crate) n: u32,
    /// The wait before the next attempt (zero for the last one and for a free resend).
    pub(crate) wait: Duration,
    /// No attempt follows.
    pub(crate) last: bool,
}

/// How a request's attempts ended.
#[derive(Debug)]
pub(crate) enum Ended<T> {
    Answered(T),
    /// The last attempt's failure: not to be retried, or `max_attempts` reached.
    Failed(Failure),
    /// An attempt could not be made (its closure said so: sending was stopped).
    NotMade,
}

/// The retry loop: makes attempts with `attempt` until one answers, one fails for good, or none can be made.
///
/// `attempt` is told which attempt to make; its future gives `None` when it cannot make one. After each failure
/// `failed` is told what was decided, before the wait. Waits follow [`Rules`], [`decide`] and
/// [`delay`], with jitter seeded by `seed`; with a `stop` handle a wait ends early once sending is stopped (the next
/// attempt is still asked for, and its closure sees the stop).
pub(crate) async fn drive<T, F>(
    rules: Rules,
    seed: &str,
    stop: Option<&StopHandle>,
    mut attempt: impl FnMut(Try) -> F,
    mut failed: impl FnMut(&Failure, Verdict),
) -> Ended<T>
where
    F: Future<Output = Option<Result<T, Failure>>>,
{
    let mut jitter = Jitter::new(seed);
    let mut n = 0;
    let mut free_resend = 0;
    let mut fresh = false;
    loop {
        n += 1;
        let f = match attempt(Try { n, fresh }).await {
            None => return Ended::NotMade,
            Some(Ok(answer)) => return Ended::Answered(answer),
            Some(Err(f)) => f,
        };
        let resend_now = rules.resend_closed && f.closed && free_resend == 0;
        if resend_now {
            free_resend = 1;
        }
        fresh = resend_now;
        let last = decide(&f) != Decision::Retry || n - free_resend >= rules.max_attempts;
        let wait = if last || resend_now {
            Duration::ZERO
        } else {
            delay(jitter.backoff(n, rules.base_s, rules.max_s), f.retry_after)
        };
        failed(&f, Verdict { n, wait, last });
        if last {
            return Ended::Failed(f);
        }
        match stop {
            Some(stop) => {
                stop.sleep(wait).await;
            }
            None => tokio::time::sleep(wait).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The complete list of what is retried, given up and stopped on. A new error class must be added here.
    #[test]
    fn what_is_retried() {
        use Decision::*;
        use ErrorClass::*;
        let table = [
            (RateLimited, Retry),
            (ServerError, Retry),
            (RequestTimeout, Retry),
            (Conflict, Retry),
            (Timeout, Retry),
            (Connection, Retry),
            (InvalidJson, Retry),
            (EmptyChoices, Retry),
            (TruncatedBody, Retry),
            (Engine, Retry),
            (ProviderError, Retry),
            (BadRequest, GiveUp),
            (OtherStatus, GiveUp),
            (Unauthorized, StopModel),
            (Forbidden, StopModel),
            (NotFound, StopModel),
            (PaymentRequired, StopModel),
        ];
        for (class, want) in table {
            assert_eq!(decide_class(class), want, "{class:?}");
        }
        // Every class is in the table: the schema's variant count is pinned by this match.
        let covered = |c: ErrorClass| match c {
            RateLimited | ServerError | RequestTimeout | Conflict | Timeout | Connection
            | InvalidJson | EmptyChoices | TruncatedBody | Engine | ProviderError | BadRequest
            | OtherStatus | Unauthorized | Forbidden | NotFound | PaymentRequired => true,
        };
        assert!(table.iter().all(|(c, _)| covered(*c)));
        assert_eq!(table.len(), 17);
    }

    #[test]
    fn statuses_map_to_classes() {
        let cases = [
            (429, ErrorClass::RateLimited),
            (408, ErrorClass::RequestTimeout),
            (409, ErrorClass::Conflict),
            (400, ErrorClass::BadRequest),
            (401, ErrorClass::Unauthorized),
            (402, ErrorClass::PaymentRequired),
            (403, ErrorClass::Forbidden),
            (404, ErrorClass::NotFound),
            (500, ErrorClass::ServerError),
            (503, ErrorClass::ServerError),
            (418, ErrorClass::OtherStatus),
        ];
        for (status, class) in cases {
            assert_eq!(status_class(status), class, "{status}");
        }
    }

    fn failure(class: ErrorClass, should_retry: Option<bool>) -> Failure {
        Failure {
            class,
            status: None,
            message: String::new(),
            retry_after: None,
            should_retry,
            usage: None,
            closed: false,
        }
    }

    #[test]
    fn x_should_retry_false_gives_up_but_never_hides_a_fatal_error() {
        assert_eq!(
            decide(&failure(ErrorClass::ServerError, Some(false))),
            Decision::GiveUp
        );
        assert_eq!(
            decide(&failure(ErrorClass::ServerError, Some(true))),
            Decision::Retry
        );
        assert_eq!(
            decide(&failure(ErrorClass::BadRequest, Some(true))),
            Decision::GiveUp
        );
        assert_eq!(
            decide(&failure(ErrorClass::PaymentRequired, Some(false))),
            Decision::StopModel
        );
    }

    #[test]
    fn hints_prefer_milliseconds_then_seconds_then_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let date = httpdate::fmt_http_date(now + Duration::from_secs(7));
        let read = |pairs: Vec<(&str, String)>| {
            Hints::from_headers(
                |name| {
                    pairs
                        .iter()
                        .find(|(k, _)| *k == name)
                        .map(|(_, v)| v.as_str())
                },
                now,
            )
        };
        assert_eq!(
            read(vec![
                ("retry-after-ms", "1500".into()),
                ("retry-after", "9".into())
            ])
            .retry_after,
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            read(vec![("retry-after", "3".into())]).retry_after,
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            read(vec![("retry-after", date)]).retry_after,
            Some(Duration::from_secs(7))
        );
        assert_eq!(read(vec![("retry-after", "soon".into())]).retry_after, None);
        assert_eq!(
            read(vec![("x-should-retry", "false".into())]).should_retry,
            Some(false)
        );
        assert_eq!(read(vec![]), Hints::default());
    }

    #[test]
    fn hinted_waits_are_bounded() {
        let b = Duration::from_secs(4);
        assert_eq!(delay(b, None), b);
        assert_eq!(
            delay(b, Some(Duration::from_secs(30))),
            Duration::from_secs(30)
        );
        assert_eq!(delay(b, Some(Duration::ZERO)), Duration::from_secs(1));
        assert_eq!(delay(b, Some(Duration::from_secs(7200))), MAX_HINTED_WAIT);
    }

    fn rules(max_attempts: u32) -> Rules {
        Rules {
            max_attempts,
            base_s: 1.0,
            max_s: 8.0,
            resend_closed: false,
        }
    }

    /// Runs [`drive`] over scripted outcomes (`None`: the attempt cannot be made); returns how it ended, the
    /// attempts it asked for and its verdicts, with the virtual time at each attempt.
    async fn script(
        rules: Rules,
        stop: Option<&StopHandle>,
        outcomes: Vec<Option<Result<u32, Failure>>>,
    ) -> (Ended<u32>, Vec<(Try, Duration)>, Vec<Verdict>) {
        let t0 = tokio::time::Instant::now();
        let mut outcomes = outcomes.into_iter();
        let mut tries = Vec::new();
        let mut verdicts = Vec::new();
        let ended = drive(
            rules,
            "seed",
            stop,
            |t| {
                tries.push((t, t0.elapsed()));
                std::future::ready(outcomes.next().expect("no attempt beyond the script"))
            },
            |_, v| verdicts.push(v),
        )
        .await;
        (ended, tries, verdicts)
    }

    fn server_error() -> Option<Result<u32, Failure>> {
        Some(Err(failure(ErrorClass::ServerError, None)))
    }

    /// Back-off on tokio's paused clock: each attempt starts exactly when the wait its verdict gave is over.
    #[tokio::test(start_paused = true)]
    async fn each_attempt_waits_exactly_its_back_off() {
        let (ended, tries, verdicts) = script(
            rules(6),
            None,
            vec![server_error(), server_error(), server_error(), Some(Ok(7))],
        )
        .await;
        assert!(matches!(ended, Ended::Answered(7)), "{ended:?}");
        assert_eq!(verdicts.len(), 3);
        for (k, v) in verdicts.iter().enumerate() {
            assert_eq!((v.n, v.last), (k as u32 + 1, false));
            // Equal jitter: between half and all of min(max, base · 2^(n-1)).
            let full = Duration::from_secs_f64((2f64.powi(k as i32)).min(8.0));
            assert!(v.wait >= full / 2 && v.wait <= full, "{v:?}");
            let (t, started) = tries[k + 1];
            assert_eq!(
                t,
                Try {
                    n: k as u32 + 2,
                    fresh: false
                }
            );
            // The next attempt starts when the wait is over (the timer wheel rounds up to whole milliseconds).
            let gap = started - tries[k].1;
            assert!(
                gap >= v.wait && gap < v.wait + Duration::from_millis(1),
                "{gap:?} vs {v:?}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_hint_sets_the_wait() {
        let mut hinted = failure(ErrorClass::RateLimited, None);
        hinted.retry_after = Some(Duration::from_secs(7));
        let (ended, tries, verdicts) =
            script(rules(3), None, vec![Some(Err(hinted)), Some(Ok(1))]).await;
        assert!(matches!(ended, Ended::Answered(1)), "{ended:?}");
        assert_eq!(verdicts[0].wait, Duration::from_secs(7));
        assert_eq!(tries[1].1, Duration::from_secs(7));
    }

    #[tokio::test(start_paused = true)]
    async fn the_last_attempt_and_a_fatal_failure_do_not_wait() {
        let (ended, tries, verdicts) =
            script(rules(2), None, vec![server_error(), server_error()]).await;
        assert!(matches!(ended, Ended::Failed(_)), "{ended:?}");
        assert_eq!(tries.len(), 2);
        assert_eq!(
            (verdicts[1].n, verdicts[1].wait, verdicts[1].last),
            (2, Duration::ZERO, true)
        );
        let fatal = Some(Err(failure(ErrorClass::Unauthorized, None)));
        let t0 = tokio::time::Instant::now();
        let (ended, tries, verdicts) = script(rules(6), None, vec![fatal]).await;
        assert!(matches!(ended, Ended::Failed(f) if f.class == ErrorClass::Unauthorized));
        assert_eq!((tries.len(), verdicts[0].last), (1, true));
        assert_eq!(t0.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn a_closed_connection_is_sent_again_at_once_and_not_counted() {
        let mut closed = failure(ErrorClass::Connection, None);
        closed.closed = true;
        let resend = Rules {
            resend_closed: true,
            ..rules(2)
        };
        let (ended, tries, verdicts) = script(
            resend,
            None,
            vec![Some(Err(closed.clone())), server_error(), server_error()],
        )
        .await;
        assert!(matches!(ended, Ended::Failed(_)), "{ended:?}");
        // The resend is free: two counted attempts after it.
        assert_eq!(tries.len(), 3);
        assert_eq!(tries[1], (Try { n: 2, fresh: true }, Duration::ZERO));
        assert!(!tries[2].0.fresh);
        assert_eq!(verdicts[0].wait, Duration::ZERO);
        assert!(verdicts[1].wait > Duration::ZERO && !verdicts[1].last);
        assert!(verdicts[2].last);
        // Without the rule, a closed connection is an ordinary failure.
        let (_, tries, verdicts) = script(rules(1), None, vec![Some(Err(closed))]).await;
        assert_eq!((tries.len(), verdicts[0].last), (1, true));
    }

    /// A stop during a wait ends the wait at once; the next attempt is asked for, and says it cannot be made.
    #[tokio::test(start_paused = true)]
    async fn a_stop_ends_the_wait_and_no_attempt_follows() {
        let stop = StopHandle::default();
        let stopper = {
            let stop = stop.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                stop.stop_sending();
            })
        };
        let mut long = failure(ErrorClass::RateLimited, None);
        long.retry_after = Some(Duration::from_secs(60));
        let (ended, tries, _) = script(rules(6), Some(&stop), vec![Some(Err(long)), None]).await;
        stopper.await.unwrap();
        assert!(matches!(ended, Ended::NotMade), "{ended:?}");
        assert_eq!(tries[1].1, Duration::from_millis(100));
    }
}
