//! The pre-judge's rules for plain numbers (`docs/rift-judging.md`, "Plain numbers").
//!
//! A plain number is a whole answer that is only a number written in digits: an optional minus sign (`-` or `−`
//! right before the digits), digits with or without thousands separators (`1,440`: groups of exactly three after
//! the first), and an optional decimal part (`3.14`, `.5`). Around it only white space, markdown emphasis
//! (`*`, `_`, backticks), a pair of quotes, a final `.` and (on the given side) a leading Jeopardy!-style
//! `What is … ?` may stand. Nothing else: `'69`, `5!`, `5%`, `+5`, `~5`, `No. 5`, `1920s`, `5th` and `1 440` are
//! not plain numbers.
//!
//! - Both sides plain and written alike once the thousands separators are gone (`1,440` = `1440`, sign and
//!   every digit equal): CORRECT. Equal by value but written differently (`1.50` / `1.5`, `007` / `7`, `3.10` /
//!   `3.1`) is left open: a version or section number, a code, a price.
//! - Both sides plain and *incompatible*: INCORRECT. Two numbers are compatible, and stay open, when any reading of
//!   one could be the other at another precision or in another notation: equal absolute values (`-40` / `40`:
//!   "40 below zero"); one rounds to the other at the other's precision (`299,792` / `300,000`, `3.14159` / `3.14`,
//!   `1924` / `1920`); the same significant digits at another power of ten (`1.5` / `15`, `0.5` / `50`, `3` /
//!   `3,000`: a dropped point, a percentage, a unit prefix); a two-digit year for a four-digit one (`69` / `1969`).
//!   A number with one separator before exactly three digits has a second, European reading (`1.440` = 1440,
//!   `1,440` = 1.44), and both readings must be incompatible.
//! - A hedge between plain numbers that are pairwise incompatible (`1789 or 1793`): INCORRECT, whatever the expected
//!   answer (unless it is that very hedge, which the pre-judge's matching accepts first).
//! - The given answer plain and the expected one without any digit or numeral character and without a word that
//!   can stand for a number ([`stands_for_a_number`]): INCORRECT. A year given for `the Pentagon` is wrong; a year
//!   for `the Roaring Twenties`, `Nineteen Eighty-Four`, `Louis XIV` or `a dozen` stays open.

use unicode_normalization::UnicodeNormalization;

/// A number as written: its sign, integer digits (separators removed) and decimal digits.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Written {
    negative: bool,
    int: String,
    frac: String,
}

/// A plain number: how it is written and every way of reading it (the first is the English reading).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlainNumber {
    written: Written,
    readings: Vec<Written>,
}

impl PlainNumber {
    /// The plain number `text` is, if it is one; `question_form` also accepts a leading `What is … ?` (the given
    /// side).
    pub(crate) fn parse(text: &str, question_form: bool) -> Option<Self> {
        let core = unwrap(text, question_form)?;
        let (negative, body) = match core.strip_prefix(['-', '\u{2212}']) {
            Some(rest) => (true, rest),
            None => (false, core),
        };
        let written = english(body, negative)?;
        let mut readings = vec![written.clone()];
        readings.extend(european(body, negative));
        Some(Self { written, readings })
    }

    /// Written alike: the same sign and digits once the thousands separators are gone.
    pub(crate) fn same_as(&self, other: &Self) -> bool {
        self.written == other.written
    }

    /// No reading of one can be the other (see the module docs): the pair is certainly two different numbers.
    pub(crate) fn incompatible_with(&self, other: &Self) -> bool {
        self.readings
            .iter()
            .all(|a| other.readings.iter().all(|b| !compatible(a, b)))
    }

    /// Whether some reading of the number is exactly one (`1`, `1.0`, `01`): then an article may stand for it.
    pub(crate) fn may_be_one(&self) -> bool {
        self.readings.iter().any(|r| {
            r.int.trim_start_matches('0') == "1" && r.frac.trim_end_matches('0').is_empty()
        })
    }
}

/// Whether the answer hedges between plain numbers that are pairwise incompatible (`1789 or 1793`): two or more
/// different numbers, so no one answer.
pub(crate) fn different_alternatives(given: &str) -> bool {
    let lower = given.to_ascii_lowercase();
    let numbers: Option<Vec<PlainNumber>> = lower
        .split(" or ")
        .map(|side| PlainNumber::parse(side.trim().trim_end_matches(','), false))
        .collect();
    numbers.is_some_and(|n| {
        n.len() >= 2
            && n.iter()
                .enumerate()
                .all(|(i, a)| n[i + 1..].iter().all(|b| a.incompatible_with(b)))
    })
}

/// The text inside the wrappers a plain number may have.
fn unwrap(text: &str, question_form: bool) -> Option<&str> {
    let mut t = text.trim();
    loop {
        let before = t;
        t = t.trim_matches(['*', '_', '`']).trim();
        for (open, close) in [('"', '"'), ('\u{201c}', '\u{201d}'), ('\'', '\'')] {
            if t.chars().count() >= 2 && t.starts_with(open) && t.ends_with(close) {
                t = t[open.len_utf8()..t.len() - close.len_utf8()].trim();
            }
        }
        if question_form {
            t = without_question(t);
        }
        if let Some(rest) = t.strip_suffix('.')
            && rest.ends_with(|c: char| c.is_ascii_digit())
        {
            t = rest;
        }
        if t == before {
            break;
        }
    }
    (!t.is_empty()).then_some(t)
}

/// `What is 1928?` → `1928` (what / which / when + is / are / was / were, with or without the final `?`).
fn without_question(t: &str) -> &str {
    let body = t.strip_suffix('?').unwrap_or(t);
    let mut words = body.splitn(3, ' ');
    let (Some(w1), Some(w2), Some(rest)) = (words.next(), words.next(), words.next()) else {
        return t;
    };
    let asks = ["what", "which", "when"]
        .iter()
        .any(|w| w1.eq_ignore_ascii_case(w))
        && ["is", "are", "was", "were"]
            .iter()
            .any(|w| w2.eq_ignore_ascii_case(w));
    if asks { rest.trim() } else { t }
}

/// The English reading: `,` separates thousands (groups of exactly three digits), `.` starts the decimals.
fn english(body: &str, negative: bool) -> Option<Written> {
    let (int_part, frac) = match body.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (body, None),
    };
    let frac = match frac {
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => f,
        Some(_) => return None,
        None => "",
    };
    let int = if int_part.contains(',') {
        let mut groups = int_part.split(',');
        let first = groups.next()?;
        let ok = (1..=3).contains(&first.len())
            && first.bytes().all(|b| b.is_ascii_digit())
            && groups.all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()));
        if !ok {
            return None;
        }
        int_part.replace(',', "")
    } else if int_part.bytes().all(|b| b.is_ascii_digit()) {
        int_part.to_owned()
    } else {
        return None;
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    // Numbers too long to compare exactly are not treated as plain.
    (int.len() + frac.len() <= 30).then(|| Written {
        negative,
        int,
        frac: frac.to_owned(),
    })
}

/// The European reading of a number whose last separator comes before exactly three digits (`1.440` = 1440,
/// `1,440` = 1.44), when it has one.
fn european(body: &str, negative: bool) -> Option<Written> {
    let swapped: String = body
        .chars()
        .map(|c| match c {
            '.' => ',',
            ',' => '.',
            c => c,
        })
        .collect();
    let (seps, last_group) = (
        body.matches(['.', ',']).count(),
        body.rsplit(['.', ',']).next().map_or(0, str::len),
    );
    let ambiguous = seps >= 1 && last_group == 3 && !(body.contains('.') && body.contains(','));
    if !ambiguous {
        return None;
    }
    english(&swapped, negative).filter(|w| Some(w) != english(body, negative).as_ref())
}

/// Whether two readings may be the same answer (module docs): equal absolute values, one rounding to the other,
/// the same significant digits, or a two-digit year for a four-digit one.
fn compatible(a: &Written, b: &Written) -> bool {
    let scale = a.frac.len().max(b.frac.len());
    let (Some(x), Some(y)) = (scaled(a, scale), scaled(b, scale)) else {
        return true;
    };
    let diff = x.abs_diff(y);
    let rounds = |w: &Written| unit(w, scale).is_none_or(|u| diff.saturating_mul(2) <= u);
    diff == 0 || rounds(a) || rounds(b) || significant(a) == significant(b) || short_year(a, b)
}

/// The absolute value in units of 10^-scale, if it fits.
fn scaled(w: &Written, scale: usize) -> Option<u128> {
    let digits = format!("{}{}{}", w.int, w.frac, "0".repeat(scale - w.frac.len()));
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Some(0);
    }
    digits.parse().ok()
}

/// The precision of a number as written, in units of 10^-scale: its last decimal place, or for a whole number the
/// place of its last non-zero digit (`300,000` is given to the hundred thousand).
fn unit(w: &Written, scale: usize) -> Option<u128> {
    let exp = if w.frac.is_empty() {
        let zeros = w.int.len() - w.int.trim_end_matches('0').len();
        let zeros = if w.int.trim_start_matches('0').is_empty() {
            0
        } else {
            zeros
        };
        scale + zeros
    } else {
        scale - w.frac.len()
    };
    10u128.checked_pow(u32::try_from(exp).ok()?)
}

/// The significant digits, without the point and the leading and trailing zeros (`0.50` → `5`, `3,000` → `3`).
fn significant(w: &Written) -> String {
    let all = format!("{}{}", w.int, w.frac);
    all.trim_start_matches('0').trim_end_matches('0').to_owned()
}

/// A two-digit year for a four-digit one (`69` / `1969`), either way round.
fn short_year(a: &Written, b: &Written) -> bool {
    let year = |w: &Written| w.frac.is_empty() && w.int.len() == 4;
    let short = |w: &Written| w.frac.is_empty() && w.int.len() == 2;
    (year(a) && short(b) && a.int.ends_with(&b.int))
        || (year(b) && short(a) && b.int.ends_with(&a.int))
}

/// English number words, ordinals and words made from them, matched at the start of a word (`fourscore`,
/// `nineteenth`, `sixties`, `fortnight`).
pub const NUMBER_WORD_STEMS: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "thir",
    "four",
    "five",
    "fif",
    "six",
    "seven",
    "eight",
    "eigh",
    "nine",
    "nint",
    "ten",
    "eleven",
    "twel",
    "twen",
    "fort",
    "hundred",
    "thousand",
    "million",
    "billion",
    "trillion",
    "quadrillion",
    "zillion",
    "first",
    "second",
    "half",
    "halv",
    "quarter",
    "doubl",
    "tripl",
    "quadru",
    "quint",
    "sext",
    "sept",
    "octo",
    "octe",
    "dec",
    "cent",
    "millenni",
    "infinit",
    "numer",
    "number",
    "googol",
];

/// Whole words that can stand for a number or a count (a trailing `s` is ignored): zero words, collective
/// numerals, multipliers, quantities with a fixed count, named numbers and constants, names of a quantity whose
/// value a number could give (`the speed of light`, `the boiling point`), months, and the numbers one to ten,
/// hundred and thousand in French, Spanish, Italian and German.
pub const NUMBER_WORDS: &[&str] = &[
    "none",
    "nil",
    "nought",
    "naught",
    "nothing",
    "nada",
    "zilch",
    "zip",
    "love",
    "duck",
    "no",
    "nobody",
    "oh",
    "once",
    "twice",
    "thrice",
    "single",
    "solo",
    "sole",
    "lone",
    "alone",
    "only",
    "unit",
    "unity",
    "ace",
    "deuce",
    "trey",
    "both",
    "pair",
    "couple",
    "brace",
    "duo",
    "duet",
    "dual",
    "twin",
    "trio",
    "triad",
    "dyad",
    "monad",
    "dozen",
    "score",
    "gross",
    "myriad",
    "lakh",
    "crore",
    "grand",
    "several",
    "many",
    "few",
    "multiple",
    "countless",
    "all",
    "every",
    "each",
    "some",
    "any",
    "noon",
    "midnight",
    "oclock",
    "week",
    "percent",
    "per",
    "pi",
    "phi",
    "tau",
    "ratio",
    "speed",
    "temperature",
    "point",
    "value",
    "rate",
    "mass",
    "year",
    "date",
    "population",
    "sum",
    "total",
    "square",
    "root",
    "cube",
    "prime",
    "power",
    "factorial",
    "mean",
    "average",
    "median",
    "height",
    "length",
    "distance",
    "weight",
    "density",
    "degree",
    "size",
    "amount",
    "quantity",
    "constant",
    "age",
    "majority",
    "anniversary",
    "jubilee",
    "par",
    "dime",
    "nickel",
    "penny",
    "pence",
    "buck",
    "quid",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "november",
    "un",
    "une",
    "uno",
    "una",
    "ein",
    "eins",
    "eine",
    "deux",
    "dos",
    "due",
    "zwei",
    "trois",
    "tres",
    "tre",
    "drei",
    "quatre",
    "cuatro",
    "quattro",
    "vier",
    "cinq",
    "cinco",
    "cinque",
    "funf",
    "seis",
    "sei",
    "sechs",
    "siete",
    "sette",
    "sieben",
    "huit",
    "ocho",
    "otto",
    "acht",
    "neuf",
    "nueve",
    "nove",
    "neun",
    "dix",
    "diez",
    "dieci",
    "zehn",
    "cien",
    "cento",
    "hundert",
    "mille",
    "mil",
    "tausend",
];

/// Whether `expected` may stand for a number (so a plain number given for it stays open): it has a digit or
/// another numeral character (`½`, `²`, `Ⅻ`), a one-letter word that can abbreviate a number (`e`, `k`, `m`, `b`,
/// `g`, `o`), a word made only of Roman numeral letters (`XIV`, `I`, `mix`, `civil`), a word starting with one of [`NUMBER_WORD_STEMS`], one of
/// [`NUMBER_WORDS`], or, when the given number may be one, the article `a` or `an`.
pub fn stands_for_a_number(expected: &str, given_may_be_one: bool) -> bool {
    if expected.chars().any(char::is_numeric) {
        return true;
    }
    let folded: String = expected
        .nfkd()
        .filter(char::is_ascii)
        .flat_map(char::to_lowercase)
        .filter(|c| *c != '\'')
        .collect();
    folded
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .any(|w| {
            let singular = w.strip_suffix('s').filter(|s| !s.is_empty()).unwrap_or(w);
            (w.len() == 1 && "ekmbgo".contains(w))
                || w.chars().all(|c| "ivxlcdm".contains(c))
                || NUMBER_WORD_STEMS.iter().any(|s| w.starts_with(s))
                || NUMBER_WORDS.contains(&w)
                || NUMBER_WORDS.contains(&singular)
                || (given_may_be_one && matches!(w, "a" | "an"))
        })
}
