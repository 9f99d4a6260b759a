//! Stage 6: collapse morphological variants to one WordNet lemma.
//!
//! Candidates come from the `wordnet_stemmer` crate, which repeats its suffix rules until something matches
//! (verb: earnings→earning→earn; noun: assess→asses→ass). A lemma is accepted only when one rule application or
//! one exception-list entry turns the surface form into it and the lemma is itself a WordNet word of that part of
//! speech. Parts of speech are tried noun first, then verb, adjective, adverb; as soon as the surface form is a
//! WordNet word of the part being tried and no valid lemma differs from it, the surface form is kept.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use wordnet_stemmer::{ADJ, ADV, NOUN, VERB, WordnetStemmer};

use crate::Error;

const POS: [(usize, &str, &str, &str); 4] = [
    (NOUN, "noun", "index.noun", "noun.exc"),
    (VERB, "verb", "index.verb", "verb.exc"),
    (ADJ, "adj", "index.adj", "adj.exc"),
    (ADV, "adv", "index.adv", "adv.exc"),
];

/// WordNet's one-step detachment rules (the ones morphy uses), per part of speech.
const RULES: [&[(&str, &str)]; 4] = [
    &[
        ("s", ""),
        ("ses", "s"),
        ("ves", "f"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ],
    &[
        ("s", ""),
        ("ies", "y"),
        ("es", "e"),
        ("es", ""),
        ("ed", "e"),
        ("ed", ""),
        ("ing", "e"),
        ("ing", ""),
    ],
    &[("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    &[],
];

/// What the lemmatizer decided for one word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lemma {
    pub lemma: String,
    /// Part of speech the decision was made for (`noun`, `verb`, `adj`, `adv`), `None` when WordNet does not know the word.
    pub pos: Option<&'static str>,
    /// The crate proposed a lemma that was rejected as an over-applied rule or a non-word.
    pub rejected: Option<String>,
}

/// The guarded WordNet lemmatizer.
pub struct Lemmatizer {
    stemmer: WordnetStemmer,
    words: [HashSet<String>; 4],
    /// Single words some synset spells in lowercase: common words, as opposed to names WordNet only knows
    /// capitalized (`Virginia`, `Acer`).
    common: HashSet<String>,
    exceptions: [HashMap<String, Vec<String>>; 4],
}

impl Lemmatizer {
    /// Loads WordNet from `dir` (the folder with `index.noun` etc., e.g. `/usr/share/wordnet/`).
    pub fn load(dir: &Path) -> Result<Lemmatizer, Error> {
        let mut base = dir.to_string_lossy().into_owned();
        if !base.ends_with('/') {
            base.push('/');
        }
        if !dir.join("index.noun").is_file() {
            return Err(Error::Input {
                path: dir.to_owned(),
                what: "WordNet index.noun not found (Debian: apt-get install -y --no-install-recommends wordnet-base)"
                    .to_owned(),
            });
        }
        let stemmer = WordnetStemmer::new(&base).map_err(|e| Error::io(dir, e))?;
        let mut words: [HashSet<String>; 4] = Default::default();
        let mut exceptions: [HashMap<String, Vec<String>>; 4] = Default::default();
        for (i, _, index, exc) in POS {
            let p = dir.join(index);
            let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
            for line in text.lines().filter(|l| !l.starts_with(' ')) {
                if let Some(w) = line.split(' ').next().filter(|w| !w.is_empty()) {
                    words[i].insert(w.to_owned());
                }
            }
            let p = dir.join(exc);
            let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
            for line in text.lines() {
                let mut it = line.split_whitespace();
                if let Some(form) = it.next() {
                    exceptions[i]
                        .entry(form.to_owned())
                        .or_default()
                        .extend(it.map(str::to_owned));
                }
            }
        }
        let mut common = HashSet::new();
        for data in ["data.noun", "data.verb", "data.adj", "data.adv"] {
            let p = dir.join(data);
            let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
            for line in text.lines().filter(|l| !l.starts_with(' ')) {
                // offset lex_filenum ss_type w_cnt (hex) then w_cnt pairs of word and lex_id.
                let fields: Vec<&str> = line.splitn(5, ' ').collect();
                let (Some(count), Some(rest)) = (fields.get(3), fields.get(4)) else {
                    continue;
                };
                let count = usize::from_str_radix(count, 16).unwrap_or(0);
                for word in rest.split(' ').step_by(2).take(count) {
                    // Adjectives may carry a position marker: `galore(ip)`.
                    let word = word.split('(').next().unwrap_or(word);
                    if word.bytes().all(|b| b.is_ascii_lowercase()) {
                        common.insert(word.to_owned());
                    }
                }
            }
        }
        Ok(Lemmatizer {
            stemmer,
            words,
            common,
            exceptions,
        })
    }

    /// True when `word` (lowercase) is a WordNet lemma of part of speech `pos` (`wordnet_stemmer::NOUN` etc.).
    pub fn is_word(&self, pos: usize, word: &str) -> bool {
        self.words[pos].contains(word)
    }

    /// Every noun lemma in WordNet's `index.noun` (lowercase; multi-word ones joined by `_`), in no set order.
    pub fn nouns(&self) -> impl Iterator<Item = &str> {
        self.words[NOUN].iter().map(String::as_str)
    }

    /// True when `word` (any case), or its lemma, is a common word: spelled in lowercase by some WordNet synset.
    /// False for names WordNet knows only capitalized and for words it does not know.
    pub fn is_common_word(&self, word: &str) -> bool {
        let w = word.to_lowercase();
        self.common.contains(&w) || self.common.contains(&self.lemmatize(&w).lemma)
    }

    /// True when one rule application or one exception entry turns `surface` into `lemma` for `pos`.
    fn one_step(&self, pos: usize, surface: &str, lemma: &str) -> bool {
        if self.exceptions[pos]
            .get(surface)
            .is_some_and(|v| v.iter().any(|l| l == lemma))
        {
            return true;
        }
        RULES[pos].iter().any(|(old, new)| {
            surface.strip_suffix(old).is_some_and(|stem| {
                stem.len() + new.len() == lemma.len()
                    && lemma.starts_with(stem)
                    && lemma.ends_with(new)
            })
        })
    }

    /// Lemmatizes one word. Acronyms (all capitals) and words WordNet does not know are returned as they are.
    pub fn lemmatize(&self, word: &str) -> Lemma {
        if word.len() > 1 && word.bytes().all(|b| b.is_ascii_uppercase()) {
            return Lemma {
                lemma: word.to_owned(),
                pos: None,
                rejected: None,
            };
        }
        let w = word.to_lowercase();
        let mut rejected = None;
        for (pos, name, _, _) in POS {
            let proposed = self.stemmer.lemma(pos, &w);
            if proposed != w {
                if self.is_word(pos, &proposed) && self.one_step(pos, &w, &proposed) {
                    return Lemma {
                        lemma: proposed,
                        pos: Some(name),
                        rejected,
                    };
                }
                tracing::debug!(word = %w, pos = name, proposed = %proposed, "Rejected an over-applied lemma.");
                rejected.get_or_insert(proposed);
            }
            if self.is_word(pos, &w) {
                return Lemma {
                    lemma: w,
                    pos: Some(name),
                    rejected,
                };
            }
        }
        Lemma {
            lemma: w,
            pos: None,
            rejected,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wordnet() -> Lemmatizer {
        let dir = Path::new("/usr/share/wordnet/");
        assert!(
            dir.join("index.noun").is_file(),
            "WordNet is missing from /usr/share/wordnet/: install it with `apt-get install -y --no-install-recommends wordnet-base`"
        );
        Lemmatizer::load(dir).unwrap()
    }

    #[test]
    fn the_crate_really_has_the_faults_we_guard_against() {
        let wn = wordnet();
        assert_eq!(wn.stemmer.lemma(VERB, "earnings"), "earn");
        assert_eq!(wn.stemmer.lemma(VERB, "holdings"), "hold");
        assert_eq!(wn.stemmer.lemma(VERB, "filings"), "file");
        assert_eq!(wn.stemmer.lemma(VERB, "savings"), "save");
        assert_eq!(wn.stemmer.lemma(NOUN, "assess"), "ass");
        assert_eq!(wn.stemmer.lemma(NOUN, "possess"), "posse");
    }

    #[test]
    fn guarded_lemmas_avoid_the_faults() {
        let wn = wordnet();
        for (word, lemma) in [
            ("earnings", "earnings"),
            ("holdings", "holding"),
            ("filings", "filing"),
            ("savings", "saving"),
            ("assess", "assess"),
            ("possess", "possess"),
            ("Revenues", "revenue"),
            ("leases", "lease"),
            ("leasing", "lease"),
            ("liabilities", "liability"),
        ] {
            assert_eq!(wn.lemmatize(word).lemma, lemma, "{word}");
        }
        let a = wn.lemmatize("assess");
        assert_eq!((a.pos, a.rejected.as_deref()), (Some("verb"), Some("ass")));
        assert_eq!(wn.lemmatize("GAAP").lemma, "GAAP");
        assert_eq!(wn.lemmatize("zzqx").pos, None);
    }

    #[test]
    fn names_are_not_common_words() {
        let wn = wordnet();
        for w in [
            "agreement",
            "Trustee",
            "notes",
            "jewelry",
            "castle",
            "liabilities",
        ] {
            assert!(wn.is_common_word(w), "{w}");
        }
        for w in ["virginia", "Acer", "kurian", "lucasfilm", "mayer"] {
            assert!(!wn.is_common_word(w), "{w}");
        }
    }

    #[test]
    fn missing_wordnet_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = Lemmatizer::load(dir.path()).err().unwrap().to_string();
        assert!(err.contains("wordnet-base"), "{err}");
    }
}
