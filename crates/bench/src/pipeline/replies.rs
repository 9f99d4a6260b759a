//! What the paper-scale rehearsal's mock answers (a [`Responder`] for the mock provider), and the
//! synthetic Jeopardy!-shaped question set it answers from.
//!
//! Every reply is a deterministic function of the request (and, for IFScale, of how many times the same prompt was
//! asked before: attempt k of a sample gets the k-th report), so two rehearsals give the same files:
//! - RIFT model (`rehearsal-rift`): follows the prompt's arrows from question 1 and answers each question from the
//!   gold table: mostly right, sometimes with a spelling slip or an added detail (the judge's work), sometimes
//!   another answer or the next question's answer (a wrong question), now and then "unknown"; errors grow with
//!   depth; some replies leave an answer out or add an extra item. A baseline prompt gets one answer.
//! - RIFT judge (`rehearsal-rift-judge`): CORRECT when the given answer (without a leading `What is` and what
//!   follows its `?`, or a trailing ` (final answer)`) is the expected one up to case, a swapped pair of letters or
//!   added words, INCORRECT otherwise; so it passes the judge check.
//! - IFScale models (`rehearsal-ifscale-<x>`): a report of a few thousand bytes mentioning each required keyword
//!   with a probability that falls with the number of keywords (model `a` best, `c` worst); one first attempt in
//!   fifty is a refusal too short to count (rule b).
//! - Coherence judge (`rehearsal-coherence-judge`): `{"reason": …, "score": s}` with s mostly 7–9 and 5 for about
//!   one report in twelve (below the paper's threshold of 6, so that sample is asked again). It scores by a hash,
//!   not by reading, so it fails the judge check; the rehearsal keeps its verdicts on purpose
//!   (`keep-failed-judge`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mock_provider::Responder;
use prompt_gen::rng::Mt19937;
use schema::rift::Question;

/// Model ids the rehearsal's models file gives the mock.
pub const RIFT_MODEL: &str = "rehearsal-rift";
pub const RIFT_JUDGE: &str = "rehearsal-rift-judge";
pub const COHERENCE_JUDGE: &str = "rehearsal-coherence-judge";
pub const IFSCALE_PREFIX: &str = "rehearsal-ifscale-";

const FIRST: &[&str] = &[
    "Abraham",
    "Marie",
    "George",
    "Ada",
    "Louis",
    "Clara",
    "Isaac",
    "Frida",
    "Henry",
    "Emily",
    "Nikola",
    "Harriet",
    "Charles",
    "Jane",
    "Ludwig",
    "Amelia",
    "Victor",
    "Rosa",
    "Galileo",
    "Edith",
    "Oscar",
    "Greta",
    "Winston",
    "Virginia",
    "Pablo",
    "Sojourner",
    "Thomas",
    "Florence",
    "Johann",
    "Mary",
    "Ulysses",
    "Zora",
];
const LAST: &[&str] = &[
    "Lincoln",
    "Curie",
    "Washington",
    "Lovelace",
    "Pasteur",
    "Barton",
    "Newton",
    "Kahlo",
    "Hudson",
    "Dickinson",
    "Tesla",
    "Tubman",
    "Darwin",
    "Austen",
    "Beethoven",
    "Earhart",
    "Hugo",
    "Parks",
    "Galilei",
    "Wharton",
    "Wilde",
    "Garbo",
    "Churchill",
    "Woolf",
    "Picasso",
    "Truth",
    "Edison",
    "Nightingale",
    "Bach",
    "Shelley",
    "Grant",
    "Hurston",
    "Rushmore",
    "Tahoe",
    "Superior",
    "Everest",
    "Kilimanjaro",
    "Sahara",
    "Amazon",
    "Danube",
];
const THINGS: &[&str] = &[
    "river",
    "painter",
    "inventor",
    "novel",
    "mountain",
    "composer",
    "president",
    "island",
    "poet",
    "element",
    "empire",
    "opera",
    "physicist",
    "canal",
    "queen",
    "treaty",
    "dynasty",
    "volcano",
    "explorer",
    "cathedral",
];
const PLACES: &[&str] = &[
    "France", "Peru", "Kenya", "Norway", "Japan", "Chile", "Egypt", "Canada", "Italy", "India",
    "Ghana", "Spain", "Brazil", "Greece", "Mexico", "Nepal", "Poland", "Turkey", "Vietnam",
    "Ireland",
];
const CATEGORIES: &[&str] = &[
    "HISTORY",
    "SCIENCE",
    "LITERATURE",
    "GEOGRAPHY",
    "MUSIC",
    "ART",
    "POTPOURRI",
    "WORLD CAPITALS",
    "INVENTORS",
    "THE BODY HUMAN",
    "POETS & POETRY",
    "U.S. PRESIDENTS",
];

/// `n` Jeopardy!-shaped questions (rows 0…n−1), deterministic: an 80–120-character question each, a one- to
/// three-word answer without commas, a category and a clue value.
pub fn synthetic_questions(n: usize) -> Vec<Question> {
    let mut rng = Mt19937::new(19_000_019);
    let mut pick = |list: &[&'static str]| -> &'static str {
        list[rng.random_interval(list.len() as u64 - 1) as usize]
    };
    (0..n)
        .map(|row| {
            let (first, last) = (pick(FIRST), pick(LAST));
            let answer = match row % 4 {
                0 => last.to_owned(),
                3 => format!("the {} {last}", pick(THINGS)),
                _ => format!("{first} {last}"),
            };
            let year = 1500 + row % 520;
            let question = format!(
                "Clue {row}: in {year} this {} from {} gave its name to a famous {} in {}",
                pick(THINGS),
                pick(PLACES),
                pick(THINGS),
                pick(PLACES),
            );
            let value = 200 * (1 + (row % 5) as u32);
            Question {
                row: row as u64,
                question,
                answer,
                category: pick(CATEGORIES).to_owned(),
                value: Some(value),
                value_normalized: Some(value),
                round: "Jeopardy!".to_owned(),
                air_date: "2004-01-01".to_owned(),
                show_number: Some(4000 + (row / 61) as u32),
                source: Some(format!("synthetic#{row}")),
                rephrased: false,
            }
        })
        .collect()
}

/// Requests the rehearsal's mock answered, by kind.
#[derive(Debug, Default)]
pub struct Counts {
    pub rift: AtomicU64,
    pub rift_judge: AtomicU64,
    pub ifscale: AtomicU64,
    pub coherence_judge: AtomicU64,
    pub other: AtomicU64,
}

impl Counts {
    /// `rift=… rift_judge=… ifscale=… coherence_judge=… other=…`, the line the mock prints when it stops.
    pub fn line(&self) -> String {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "rift={} rift_judge={} ifscale={} coherence_judge={} other={}",
            g(&self.rift),
            g(&self.rift_judge),
            g(&self.ifscale),
            g(&self.coherence_judge),
            g(&self.other)
        )
    }
}

/// The rehearsal's reply function over the gold answers of `questions`.
pub fn responder(questions: &[Question], counts: Arc<Counts>) -> Responder {
    let gold: HashMap<String, String> = questions
        .iter()
        .map(|q| (q.question.clone(), q.answer.clone()))
        .collect();
    let answers: Vec<String> = questions.iter().map(|q| q.answer.clone()).collect();
    let asked: Mutex<HashMap<u64, u32>> = Mutex::new(HashMap::new());
    Responder(Arc::new(move |model: &str, last: &str| {
        let bump = |a: &AtomicU64| a.fetch_add(1, Ordering::Relaxed);
        if model == RIFT_MODEL {
            bump(&counts.rift);
            Some(rift_reply(last, &gold, &answers))
        } else if model == RIFT_JUDGE {
            bump(&counts.rift_judge);
            Some(rift_verdict(last))
        } else if model == COHERENCE_JUDGE {
            bump(&counts.coherence_judge);
            let s = if hash(last.as_bytes()).is_multiple_of(12) {
                5
            } else {
                7 + hash(last.as_bytes()) % 3
            };
            Some(format!(
                "{{\"reason\": \"Reads like a business report.\", \"score\": {s}}}"
            ))
        } else if let Some(which) = model.strip_prefix(IFSCALE_PREFIX) {
            bump(&counts.ifscale);
            let key = hash(last.as_bytes());
            let attempt = {
                let mut m = asked.lock().unwrap_or_else(|e| e.into_inner());
                let n = m.entry(key).or_insert(0);
                *n += 1;
                *n - 1
            };
            Some(ifscale_report(which, last, key, attempt))
        } else {
            bump(&counts.other);
            None
        }
    }))
}

/// FNV-1a, 64 bits.
fn hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One answer to a question: what a model says for it at `depth` (0 for a baseline) of a prompt of `num`.
fn answer(
    q: &str,
    gold: &HashMap<String, String>,
    answers: &[String],
    next: Option<&str>,
    depth: usize,
    num: usize,
    salt: u64,
) -> String {
    let Some(right) = gold.get(q) else {
        return "unknown".to_owned();
    };
    let h = hash(q.as_bytes());
    // Deeper answers go wrong more often: up to 12 points more at the end of a 300-question prompt.
    let drift = mix(h ^ salt) % 1000;
    if depth > 0
        && num > 0
        && (drift as usize) < 120 * depth / num.max(300)
        && let Some(n) = next
    {
        return gold.get(n).cloned().unwrap_or_else(|| "unknown".to_owned());
    }
    match h % 100 {
        0..=71 => right.clone(),
        72..=77 => swap_letters(right),
        78..=81 => format!("{right} of course"),
        82..=93 => answers[(mix(h) % answers.len() as u64) as usize].clone(),
        94..=96 => next
            .and_then(|n| gold.get(n))
            .cloned()
            .unwrap_or_else(|| "unknown".to_owned()),
        _ => "unknown".to_owned(),
    }
}

fn swap_letters(s: &str) -> String {
    let mut c: Vec<char> = s.chars().collect();
    let n = c.len();
    if n >= 4 {
        c.swap(n - 2, n - 3);
    }
    c.into_iter().collect()
}

/// A RIFT prompt's reply: the answers in traversal order, comma-separated.
fn rift_reply(last: &str, gold: &HashMap<String, String>, answers: &[String]) -> String {
    const ARROW: &str = " → ";
    // Baseline: the whole message is one question.
    if !last.contains(ARROW) {
        return answer(last.trim(), gold, answers, None, 0, 0, 0);
    }
    let mut questions: Vec<&str> = Vec::new();
    let mut next: Vec<Option<usize>> = Vec::new();
    for line in last.lines() {
        let Some((head, tail)) = line.split_once(ARROW) else {
            continue;
        };
        let q = head.split_once(". ").map_or(head, |(_, q)| q);
        questions.push(q);
        next.push(
            tail.rsplit(' ')
                .next()
                .and_then(|k| k.parse::<usize>().ok())
                .filter(|&k| k >= 1),
        );
    }
    let num = questions.len();
    let salt = hash(last.as_bytes());
    let mut order = Vec::with_capacity(num);
    let mut at = Some(1usize);
    while let Some(i) = at.filter(|&i| i <= num && order.len() < num) {
        order.push(i);
        at = next[i - 1];
    }
    let mut out: Vec<String> = order
        .iter()
        .enumerate()
        .map(|(depth, &i)| {
            let after = next[i - 1].map(|k| questions[k - 1]);
            answer(questions[i - 1], gold, answers, after, depth, num, salt)
        })
        .collect();
    // One reply in ten leaves an answer out; one in twenty adds an item.
    match mix(salt) % 20 {
        0 | 1 if out.len() > 2 => {
            let at = (mix(salt ^ 1) % out.len() as u64) as usize;
            out.remove(at);
        }
        2 => out.push("and that is all".to_owned()),
        _ => {}
    }
    out.join(", ")
}

/// The RIFT judge's one word.
fn rift_verdict(last: &str) -> String {
    let field = |name: &str| {
        last.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_lowercase())
            .unwrap_or_default()
    };
    let (expected, given) = (field("Expected answer:"), field("Given answer:"));
    // A Jeopardy!-style answer or a note after it (the judge check's known-correct controls): the answer itself.
    let given = given
        .strip_prefix("what is ")
        .map_or(given.as_str(), |rest| rest.split('?').next().unwrap_or(""))
        .trim_end_matches(" (final answer)")
        .to_owned();
    let mut a: Vec<char> = expected.chars().collect();
    let mut b: Vec<char> = given.chars().collect();
    a.sort_unstable();
    b.sort_unstable();
    let correct = !expected.is_empty() && (a == b || given.starts_with(&expected));
    if correct { "CORRECT" } else { "INCORRECT" }.to_owned()
}

/// An IFScale report for one attempt: about 6 000 bytes of business prose; each keyword is mentioned with a
/// probability falling with the number of keywords (per model), in the surface forms of `harness::synthetic`.
fn ifscale_report(which: &str, prompt: &str, key: u64, attempt: u32) -> String {
    let keywords: Vec<&str> = prompt
        .lines()
        .filter_map(|l| l.split_once("Include the exact word: '"))
        .filter_map(|(_, rest)| rest.strip_suffix("'."))
        .collect();
    let seed = mix(key ^ u64::from(attempt)) as u32;
    if attempt == 0 && seed.is_multiple_of(50) {
        return "I cannot write this report.".to_owned();
    }
    let n = keywords.len() as f64;
    let (top, slope) = match which {
        "a" => (0.99, 0.25),
        "b" => (0.95, 0.45),
        _ => (0.9, 0.65),
    };
    let hit = (top - slope * n / 500.0).clamp(0.05, 1.0);
    harness::synthetic::report(&keywords, hit, 6_000, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rift_replies_follow_the_arrows_and_judges_answer() {
        let qs = synthetic_questions(40);
        let counts = Arc::new(Counts::default());
        let r = responder(&qs, Arc::clone(&counts));
        let texts: Vec<&str> = qs[..5].iter().map(|q| q.question.as_str()).collect();
        let user = prompt_gen::rift::user_prompt(&texts, &[1, 3, 5, 2, 4]);
        let reply = (r.0)(RIFT_MODEL, &user).unwrap();
        assert_eq!(reply, (r.0)(RIFT_MODEL, &user).unwrap());
        let n = reply.split(", ").count();
        assert!((4..=6).contains(&n), "{reply}");
        let base = (r.0)(RIFT_MODEL, &qs[7].question).unwrap();
        assert!(!base.contains(','));
        let ask = |e: &str, g: &str| {
            (r.0)(
                RIFT_JUDGE,
                &format!("Question: q\nExpected answer: {e}\nGiven answer: {g}\n"),
            )
            .unwrap()
        };
        assert_eq!(ask("Ada Lovelace", "ada lovelaec"), "CORRECT");
        assert_eq!(ask("Ada Lovelace", "Ada"), "INCORRECT");
        assert_eq!(ask("Ada Lovelace", "Ada Lovelace of course"), "CORRECT");
        assert_eq!(ask("Ada Lovelace", "Marie Curie"), "INCORRECT");
        assert_eq!(
            ask("Ada Lovelace", "What is Ada Lovelace? This fits the clue."),
            "CORRECT"
        );
        assert_eq!(
            ask("Ada Lovelace", "Ada Lovelace (final answer)"),
            "CORRECT"
        );
        assert_eq!(
            ask("Ada Lovelace", "What is Marie Curie? This fits the clue."),
            "INCORRECT"
        );
        assert!(counts.line().starts_with("rift=3 rift_judge=7"));
    }
}
