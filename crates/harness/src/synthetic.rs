//! Synthetic model output for benchmarks and rehearsals: IFScale reports shaped like real ones (business prose in
//! which each keyword appears about once, in the surface forms the scoring rules must classify), deterministic for
//! a seed. `cargo xtask bench scoring` times the matcher on them.

use std::collections::HashSet;

use prompt_gen::rng::Mt19937;
use scoring::ifscale::stem;

/// Common words of business prose.
pub const FILLER: &[&str] = &[
    "the",
    "company",
    "market",
    "growth",
    "quarter",
    "strategy",
    "operations",
    "team",
    "results",
    "customers",
    "and",
    "of",
    "to",
    "in",
    "for",
    "with",
    "our",
    "across",
    "while",
    "during",
    "improved",
    "expanded",
    "reduced",
    "overall",
    "segment",
    "performance",
    "outlook",
    "management",
    "board",
    "risk",
    "plan",
    "year",
    "fiscal",
    "new",
    "product",
    "services",
    "region",
    "global",
    "capital",
    "investment",
    "report",
    "section",
    "period",
    "remained",
    "strong",
    "stable",
    "increased",
    "compared",
    "previous",
    "significant",
    "key",
    "drivers",
    "initiatives",
];

/// A generated report and the keywords it was asked to contain, in list order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntheticReport {
    pub keywords: Vec<String>,
    pub text: String,
}

/// Filler words: [`FILLER`] plus `extra`, leaving out every keyword of `vocab` (any case).
pub fn filler_words(extra: &[String], vocab: &[String]) -> Vec<String> {
    let keywords: HashSet<String> = vocab.iter().map(|v| v.to_lowercase()).collect();
    FILLER
        .iter()
        .map(|w| (*w).to_owned())
        .chain(
            extra
                .iter()
                .filter(|t| !keywords.contains(&t.to_lowercase()))
                .cloned(),
        )
        .collect()
}

/// A keyword in some surface form: exact, a variant the rules must classify, or a near miss.
pub fn variant(kw: &str, rng: &mut Mt19937) -> String {
    match rng.random_interval(19) {
        0..=9 => kw.to_owned(),
        10 => format!("{kw}s"),
        11 => format!("{kw}'s"),
        12 => format!("{kw}’s"),
        13 => format!("{kw}-driven"),
        14 => kw.to_uppercase(),
        15 => format!("**{kw}**"),
        16 => format!("{kw}_x"),
        17 => format!("{kw}2024"),
        18 => format!("{kw}é"),
        _ => stem(&kw.to_lowercase()).to_owned(),
    }
}

/// `count` reports shaped like real ones: filler prose of about `report_bytes`, in which each keyword appears about
/// once (a real report mentions a constraint word once or twice): in some surface form three times in four,
/// twice now and then, left out otherwise.
pub fn reports(
    vocab: &[String],
    filler: &[String],
    count: usize,
    report_bytes: usize,
) -> Vec<SyntheticReport> {
    let mut rng = Mt19937::new(20_250_701);
    (0..count)
        .map(|i| {
            let n = (10 * (1 + (i * 17) % 37)).min(vocab.len());
            let picks = Mt19937::new((i % 5) as u32)
                .choice_without_replacement(vocab.len(), n)
                .unwrap_or_default();
            let keywords: Vec<String> = picks.iter().map(|&j| vocab[j].clone()).collect();
            let mut mentions = Vec::new();
            for k in &keywords {
                let times = match rng.random_interval(19) {
                    0..=4 => 0,
                    5..=17 => 1,
                    _ => 2,
                };
                for _ in 0..times {
                    mentions.push(variant(k, &mut rng));
                }
            }
            let text = prose(&mut rng, filler, &mentions, report_bytes, true);
            SyntheticReport { keywords, text }
        })
        .collect()
}

/// One report of about `report_bytes` for a prompt's `keywords`: each is mentioned (in some surface form of
/// [`variant`]) with probability `hit_rate`, in filler prose shaped like [`reports`]'s; deterministic for `seed`.
/// The paper-scale rehearsal's mock answers IFScale prompts with these.
pub fn report(keywords: &[&str], hit_rate: f64, report_bytes: usize, seed: u32) -> String {
    let mut rng = Mt19937::new(seed);
    let mut mentions = Vec::new();
    for k in keywords {
        if rng.random_f64() < hit_rate {
            mentions.push(variant(k, &mut rng));
        }
    }
    prose(&mut rng, FILLER, &mentions, report_bytes, false)
}

/// Filler words drawn from `filler` up to about `report_bytes` (counting the mentions), each mention put at a random
/// place, cut into sentences (ending in ", " or ". " at random when `commas`, else ". ") and now and then a new
/// section, between report tags.
fn prose<S: AsRef<str>>(
    rng: &mut Mt19937,
    filler: &[S],
    mentions: &[String],
    report_bytes: usize,
    commas: bool,
) -> String {
    let mut len: usize = mentions.iter().map(|m| m.len() + 1).sum();
    let mut words: Vec<&str> = Vec::new();
    while len < report_bytes {
        let w = filler[rng.random_interval(filler.len() as u64 - 1) as usize].as_ref();
        len += w.len() + 1;
        words.push(w);
    }
    for m in mentions {
        let at = rng.random_interval(words.len() as u64) as usize;
        words.insert(at, m);
    }
    let mut text = String::with_capacity(len + 400);
    text.push_str("<report>\n# Annual business report\n\n");
    let mut section = 1;
    let mut words = words.into_iter().peekable();
    while words.peek().is_some() {
        if rng.random_interval(30) == 0 {
            text.push_str(&format!("\n\n## Section {section}\n\n"));
            section += 1;
        }
        let sentence = 8 + rng.random_interval(12);
        for (w, word) in words.by_ref().take(sentence as usize).enumerate() {
            if w > 0 {
                text.push(' ');
            }
            text.push_str(word);
        }
        text.push_str(if commas && rng.random_interval(3) == 0 {
            ", "
        } else {
            ". "
        });
    }
    text.push_str("\n</report>\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_deterministic_sized_and_mention_their_keywords() {
        let vocab: Vec<String> = (0..60).map(|i| format!("term{i:02}x")).collect();
        let filler = filler_words(&["term01x".to_owned(), "ledger".to_owned()], &vocab);
        assert!(filler.contains(&"ledger".to_owned()) && !filler.contains(&"term01x".to_owned()));
        let a = reports(&vocab, &filler, 4, 2000);
        assert_eq!(a, reports(&vocab, &filler, 4, 2000));
        for r in &a {
            assert!(r.text.len() >= 2000 && r.text.starts_with("<report>"));
            let lower = r.text.to_lowercase();
            let stems = r
                .keywords
                .iter()
                .filter(|k| lower.contains(stem(k)))
                .count();
            // About three keywords in four are mentioned in some form.
            assert!(
                stems * 2 > r.keywords.len(),
                "{stems} of {}",
                r.keywords.len()
            );
        }
    }
}
