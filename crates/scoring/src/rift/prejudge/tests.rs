//! The pre-judge's rules as a table of (given, expected, outcome) cases, and properties of its number handling.

use proptest::prelude::*;

use super::*;

/// What the pre-judge must say about a pair.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Want {
    /// Settled correct.
    Correct,
    /// Settled incorrect (an answer without a letter or digit, a plain number that cannot be the expected one).
    Incorrect,
    /// Not settled: the LLM judge decides.
    Open,
}

use Want::{Correct, Incorrect, Open};

impl Want {
    fn of(v: Option<bool>) -> Self {
        match v {
            Some(true) => Correct,
            Some(false) => Incorrect,
            None => Open,
        }
    }
}

/// Every rule of the pre-judge, with the false CORRECTs of issue 17 as `Open` cases.
const CASES: &[(&str, &str, Want)] = &[
    // Issue 17's false CORRECTs: dots between digits, summed number words, a parenthetical that matters, case.
    ("15", "1.5", Open),
    ("314", "3.14", Open),
    (".5", "5", Open),
    ("1.50", "1.5", Open),
    ("nine nine", "18", Open),
    ("nine nine", "99", Open),
    ("Nineteen Eighty-Four", "103", Open),
    ("Nineteen Eighty-Four", "1984", Open),
    ("Henry", "Henry (VIII)", Open),
    ("Co", "CO", Open),
    ("co", "CO", Open),
    ("NaCl", "Nacl", Open),
    // Other symbols that carry meaning.
    ("C", "C++", Open),
    ("40", "\u{2212}40", Open),
    ("1/2", "1-2", Open),
    ("~~Paris~~", "Paris", Open),
    ("5", "5%", Open),
    ("102", "10\u{b2}", Open),
    ("10^2", "10\u{b2}", Correct),
    ("H2O", "H\u{2082}O", Correct),
    ("Ha", "A-ha", Open),
    ("A-Team", "Team", Open),
    ("2nd", "second", Open),
    ("2nd Amendment", "the Second Amendment", Correct),
    // Decimal numbers survive intact.
    ("3.14", "3.14", Correct),
    ("1.5", "one point five", Open),
    ("1,000", "1000", Correct),
    // Number words as well-formed phrases.
    ("twenty-one", "21", Correct),
    ("one hundred and five", "105", Correct),
    ("two thousand and three", "2003", Correct),
    ("Nineteen Eighty-Four", "nineteen eighty four", Correct),
    ("Seven", "7", Correct),
    ("the First Amendment", "1st amendment", Correct),
    // A parenthetical: part of the answer unless it is a quoted note or a final `(or X)`.
    ("Henry VIII", "Henry (VIII)", Correct),
    ("Henry (VIII)", "Henry VIII", Correct),
    ("Kissinger", "(Henry) Kissinger", Open),
    ("Herman Melville", "Herman Melville (\"Typee\")", Correct),
    (
        "Spock",
        "Dr. Benjamin Spock (\"Baby and Child Care\")",
        Open,
    ),
    ("Burma", "Burma (or Myanmar)", Correct),
    ("Myanmar", "Burma (or Myanmar)", Correct),
    ("Burma or Myanmar", "Burma (or Myanmar)", Correct),
    ("Thailand", "Burma (or Myanmar)", Open),
    ("Peking", "Peking (or Beijing) opera", Open),
    // Case: a first capital is ignored, an inner one is not.
    ("paris", "Paris", Correct),
    ("Co", "co", Correct),
    ("CO", "CO", Correct),
    ("PARIS", "Paris", Open),
    // "What is X?" / "Who is X" answer form (given side only).
    ("What is Paris?", "Paris", Correct),
    ("Who is Henry VIII", "Henry VIII", Correct),
    ("What are the Alps?", "Alps", Correct),
    ("who was Isaac Newton?", "Isaac Newton", Correct),
    ("What is", "Paris", Open),
    ("What is love", "What Is Love", Correct),
    // & and "and".
    ("Tom & Jerry", "Tom and Jerry", Correct),
    ("Simon and Garfunkel", "Simon & Garfunkel", Correct),
    // Leading articles.
    ("The Nile", "Nile", Correct),
    ("an apple", "Apple", Correct),
    ("a Tale of Two Cities", "Tale of Two Cities", Correct),
    ("The One", "1", Open),
    // Quotes and markdown around the answer.
    ("\"Paris\"", "Paris", Correct),
    ("\u{201c}Paris\u{201d}", "Paris", Correct),
    ("'Paris'", "Paris", Correct),
    ("**Paris**", "Paris", Correct),
    ("_Paris_", "Paris", Correct),
    ("`Paris`", "Paris", Correct),
    ("**What is Paris?**", "Paris", Correct),
    // A trailing explanation after a dash.
    ("Paris - because it is the capital", "Paris", Correct),
    ("Paris \u{2014} which is in France", "Paris", Correct),
    ("Paris\u{2014}since it is the capital", "Paris", Correct),
    (
        "What is Paris? - because it is the capital",
        "Paris",
        Correct,
    ),
    ("Paris - no wait, Lyon", "Paris", Incorrect),
    ("Paris \u{2014} or maybe Lyon", "Paris", Open),
    ("Paris \u{2014} it is actually Lyon", "Paris", Open),
    ("Star Wars - The Empire Strikes Back", "Star Wars", Open),
    ("Paris-because", "Paris", Open),
    // Accents, abbreviations, apostrophes.
    ("Pepé Le Pew", "pepe le pew", Correct),
    ("Washington, D.C.", "washington dc", Correct),
    ("O'Leary", "oleary", Correct),
    // No letter or digit: incorrect, unless the expected answer has none either.
    ("...", "Paris", Incorrect),
    ("+", "+", Correct),
    ("+", "%", Open),
    // Nothing else is settled.
    ("Paris France", "Paris", Open),
    ("Newton", "Isaac Newton", Open),
    // Plain numbers written alike once the thousands separators are gone.
    ("1,440", "1440", Correct),
    ("1440", "1,440", Correct),
    ("300,000", "300000", Correct),
    ("**1,440**", "1440", Correct),
    ("What is 1,440?", "1440", Correct),
    // Plain numbers that cannot be the same number.
    ("1942", "1492", Incorrect),
    ("212", "100", Incorrect),
    ("1067", "1066", Incorrect),
    ("9", "8", Incorrect),
    ("1918", "1914", Incorrect),
    ("0", "5", Incorrect),
    ("-41", "-43", Incorrect),
    ("-41", "-40", Open),
    ("\u{2212}39", "42", Incorrect),
    ("1928", "1,066", Incorrect),
    ("What is 1928?", "1066", Incorrect),
    ("**1928**", "1929", Incorrect),
    ("1928.", "1929", Incorrect),
    ("\"1928\"", "1929", Incorrect),
    ("12.5", "13.7", Incorrect),
    // Equal by value but written differently: a version, a code, a price.
    ("1.50", "1.5", Open),
    ("3.1", "3.10", Open),
    ("7", "007", Open),
    ("1440.0", "1440", Open),
    // Compatible numbers: a sign, a precision, a point, a power of ten, a short year, a European separator.
    ("40", "-40", Open),
    ("-40", "40", Open),
    ("299,792", "300,000", Open),
    ("300,000", "299,792", Open),
    ("3.14159", "3.14", Open),
    ("3.14", "3.14159", Open),
    ("1924", "1920", Open),
    ("1.5", "15", Open),
    ("0.5", "50", Open),
    ("3000", "3", Open),
    ("69", "1969", Open),
    ("1969", "69", Open),
    ("1.440", "1440", Open),
    ("1,440", "1.44", Open),
    // Not plain numbers: symbols, letters, other separators.
    ("'69", "1969", Open),
    ("5!", "120", Open),
    ("+5", "5", Open),
    ("~5", "6", Open),
    ("5%", "6", Open),
    ("1 440", "1441", Open),
    ("1,44", "145", Open),
    ("14,40", "1441", Open),
    ("1920s", "1928", Open),
    ("1928", "the 1920s", Open),
    ("5th", "6", Open),
    ("No. 5", "6", Open),
    ("5", "No. 5", Open),
    ("1928?", "1929", Open),
    ("about 1928", "1066", Open),
    ("nineteen twenty-eight", "1066", Open),
    // A hedge between different plain numbers.
    ("1789 or 1793", "1789", Incorrect),
    ("1789, or 1793", "1789", Incorrect),
    ("1789 or 1793 or 1794", "1793", Incorrect),
    ("1789 or 1,789", "1789", Open),
    ("1789 or 1790", "1789", Open),
    ("1789 or 1793", "1789 (or 1793)", Correct),
    ("1789 or Paris", "1789", Open),
    // A plain number for an answer that cannot stand for a number.
    ("1928", "the Pentagon", Incorrect),
    ("1928", "Thor", Incorrect),
    ("2", "Oxygen", Incorrect),
    ("1928", "the Great Depression", Incorrect),
    ("1928", "John F. Kennedy", Incorrect),
    ("1928", "Dwight D. Eisenhower", Open),
    ("18", "the voting age", Open),
    ("299792458", "the speed of light", Open),
    ("100", "the boiling point", Open),
    ("5", "Pentagon", Incorrect),
    ("2", "a whale", Incorrect),
    ("1999", "Prince", Incorrect),
    ("What is 1928?", "Golden Gate Bridge", Incorrect),
    // ... and answers that can: digits, numerals, number words, counts, Roman numerals, named numbers.
    ("1", "a whale", Open),
    ("1.0", "an apple", Open),
    ("11", "Apollo 11", Open),
    ("22", "Catch-22", Open),
    ("7", "7-Eleven", Open),
    ("51", "Area 51", Open),
    ("101", "Room 101", Open),
    ("1928", "the Roaring Twenties", Open),
    ("1984", "Nineteen Eighty-Four", Open),
    ("14", "Louis XIV", Open),
    ("1", "I, Robot", Open),
    ("12", "a dozen", Open),
    ("13", "a baker's dozen", Open),
    ("20", "a score", Open),
    ("87", "fourscore and seven", Open),
    ("0", "none", Open),
    ("0", "zero", Correct),
    ("0", "nothing", Open),
    ("0", "love", Open),
    ("2", "a pair", Open),
    ("2", "a couple", Open),
    ("2", "both", Open),
    ("100", "a hundred", Open),
    ("1000000", "a million", Open),
    ("1000", "a grand", Open),
    ("1", "first", Open),
    ("1", "the first", Open),
    ("3", "third", Open),
    ("16", "sixteenth", Open),
    ("10", "October", Open),
    ("12", "noon", Open),
    ("14", "a fortnight", Open),
    ("10", "a decade", Open),
    ("100", "a century", Open),
    ("3.14", "pi", Open),
    ("2.718", "e", Open),
    ("1000", "K", Open),
    ("0.5", "half", Open),
    ("4", "vier", Open),
    ("5", "cinq", Open),
    ("5", "\u{bd} dozen", Open),
    ("4", "x\u{b2}", Open),
    ("12", "\u{216b}", Open),
    // An answer that rejects the expected answer in so many words, and does not take it back.
    ("not Bras\u{ed}lia", "Bras\u{ed}lia", Incorrect),
    ("Africa, not Asia", "Asia", Incorrect),
    ("not neon, argon", "neon", Incorrect),
    ("never Mercury; Pluto", "Mercury", Incorrect),
    ("It isn't Bram Stoker", "Bram Stoker", Incorrect),
    ("it's not Paris", "Paris", Incorrect),
    ("Seville, not Granada", "Granada", Incorrect),
    (
        "Jane Austen \u{2014} no, Charlotte Bront\u{eb}",
        "Jane Austen",
        Incorrect,
    ),
    ("Madrid? No, Barcelona", "Madrid", Incorrect),
    ("Mars \u{2014} wait, Ares", "Mars", Incorrect),
    ("Paris \u{2014} correction: Lyon", "Paris", Incorrect),
    ("6 \u{2014} no, 9", "6", Incorrect),
    // ... and what does not: a bare negation of another answer, a tag question, a take-back, a restatement.
    ("not Saturn", "Jupiter", Incorrect),
    ("it isn't Mars", "Jupiter", Incorrect),
    ("not Saturn Jupiter", "Jupiter", Open),
    ("not Saturn, Jupiter", "Jupiter", Open),
    ("not really", "Paris", Open),
    ("not one", "zero", Open),
    ("probably not Paris", "Paris", Open),
    ("not Sydney but Canberra", "Canberra", Correct),
    ("not Canberra but Sydney", "Canberra", Open),
    ("the cello, not the violin", "the cello", Correct),
    ("Paris, not really", "Paris", Open),
    ("Paris, not Paris", "Paris", Open),
    ("Burma, not Myanmar", "Burma (or Myanmar)", Open),
    ("Lyon, not Paris", "Lyon", Correct),
    ("Au \u{2014} not Ag", "Au", Correct),
    ("Paris, isn't it?", "Paris", Open),
    ("hydrogen isn't it", "hydrogen", Open),
    ("not only Paris", "Paris", Open),
    ("not just Paris", "Paris", Open),
    ("Paris \u{2014} no doubt", "Paris", Open),
    ("Paris? No question", "Paris", Open),
    ("Paris? No, Paris", "Paris", Open),
    ("Paris \u{2014} no, Paris is right", "Paris", Open),
    ("Paris \u{2014} no, yes it is", "Paris", Open),
    ("not Paris, just kidding", "Paris", Open),
    ("not Paris, Paris", "Paris", Open),
    ("Paris \u{2014} no", "Paris", Open),
    (
        "Giraffe \u{2014} actually, the elephant",
        "the giraffe",
        Open,
    ),
    (
        "Paris \u{2014} actually the capital of France",
        "Paris",
        Open,
    ),
    ("not Not Fade Away", "Not Fade Away", Open),
    (
        "No Country for Old Men \u{2014} no, Fargo",
        "No Country for Old Men",
        Open,
    ),
    ("Not Fade Away", "Not Fade Away", Correct),
    // Restatements and hedges around one answer.
    ("It's Russia", "Russia", Correct),
    ("That would be vitamin D", "vitamin D", Correct),
    ("The answer is the bald eagle", "the bald eagle", Correct),
    ("maybe Mars?", "Mars", Correct),
    ("I think Wellington", "Wellington", Correct),
    ("I think it's Wellington", "Wellington", Correct),
    ("probably copper", "copper", Correct),
    ("Venice probably", "Venice", Correct),
    ("ostrich, I think", "the ostrich", Correct),
    ("Portuguese, I'd guess", "Portuguese", Correct),
    ("Rembrandt? Not sure", "Rembrandt", Correct),
    ("I'm not sure, Ringo Starr?", "Ringo Starr", Correct),
    (
        "Isaac Newton, who also worked on optics",
        "Isaac Newton",
        Correct,
    ),
    ("Egypt, maybe Sudan", "Sudan", Open),
    ("maybe Paris or Lyon", "Paris", Open),
    ("Paris, I think not", "Paris", Open),
    ("not Paris, I think", "Paris", Incorrect),
    ("It is not Paris", "Paris", Incorrect),
    ("Rome, Italy", "Rome", Open),
    ("Paris, France", "Paris", Open),
    ("Paris, or Lyon", "Paris", Open),
    ("hockey, probably", "ice hockey", Open),
    // Refusals.
    ("I don't know", "French", Incorrect),
    ("no idea", "Paris", Incorrect),
    ("Not sure", "Paris", Incorrect),
    ("I don't know", "I Don't Know", Correct),
    ("I don't know", "unknown", Open),
    ("I don't know", "Anonymous", Open),
    ("no idea", "No Idea", Correct),
    // Another numbered one: the same words but for a last Roman numeral of another value.
    ("Henry VII", "Henry VIII", Incorrect),
    ("Johann Strauss I", "Johann Strauss II", Incorrect),
    ("World War I", "World War II", Incorrect),
    ("Elizabeth II", "Elizabeth I", Incorrect),
    ("Who is Henry VII?", "Henry VIII", Incorrect),
    ("Vitamin D", "Vitamin C", Incorrect),
    ("Louis XIV", "Louis XIV", Correct),
    ("Henry IIII", "Henry IV", Open),
    ("Henry", "Henry VIII", Open),
    ("Henry 8", "Henry VIII", Open),
    ("Henry the Eighth", "Henry VIII", Open),
    ("John Paul I", "Pope John Paul II", Open),
    ("Henry VIII", "Henry (VIII)", Correct),
];

#[test]
fn pre_judge_rules_table() {
    let mut wrong = Vec::new();
    for &(given, expected, want) in CASES {
        let got = Want::of(pre_judge(given, expected));
        if got != want {
            wrong.push(format!(
                "{given:?} vs {expected:?}: got {got:?}, want {want:?} ({:?} / {:?})",
                normalize(given),
                normalize(expected)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn normal_forms() {
    let cases = [
        ("nine nine", "9 9"),
        ("Nineteen Eighty-Four", "19 84"),
        ("one two three", "1 2 3"),
        ("twenty one", "21"),
        ("three million two hundred thousand and one", "3200001"),
        ("zero", "0"),
        ("314", "314"),
        ("3.14.", "3.14"),
        ("1,000", "1,000"),
        ("CO2", "CO2"),
        ("Co", "co"),
        ("U.S.", "us"),
        ("\u{2212}40", "- 40"),
        ("C++", "c + +"),
        ("The One", "the 1"),
        ("  ", ""),
    ];
    for (input, want) in cases {
        assert_eq!(normalize(input), want, "{input:?}");
    }
}

#[test]
fn plain_numbers_match_like_the_pre_judge_for_the_flag() {
    // The flag's matching takes the numbers written alike too.
    let minutes = ExpectedForms::of("1,440");
    assert!(minutes.accepts(&GivenForms::of("1440")));
    assert!(!minutes.accepts(&GivenForms::of("1441")));
    assert!(!minutes.accepts(&GivenForms::of("1.44")));
}

#[test]
fn wrong_question_matching_is_the_pre_judges() {
    // The flag's matching is the pre-judge's: a dropped parenthetical that matters matches neither.
    let henry = ExpectedForms::of("Henry (VIII)");
    assert!(!henry.accepts(&GivenForms::of("Henry")));
    assert!(henry.accepts(&GivenForms::of("Who is Henry VIII?")));
    let burma = ExpectedForms::of("Burma (or Myanmar)");
    assert!(burma.accepts(&GivenForms::of("**Myanmar** - which was renamed")));
    assert_eq!(burma.whole, "burma or myanmar");
}

/// The digit runs of a text: maximal runs of ASCII digits, with a `.` followed by a digit and a `,` between two
/// digits inside them.
fn digit_runs(s: &str) -> Vec<String> {
    let c: Vec<char> = s.chars().collect();
    let mut runs = Vec::new();
    let mut cur = String::new();
    for i in 0..c.len() {
        let digit = |j: usize| c.get(j).is_some_and(|c| c.is_ascii_digit());
        let inner =
            (c[i] == '.' && digit(i + 1)) || (c[i] == ',' && i > 0 && digit(i - 1) && digit(i + 1));
        if c[i].is_ascii_digit() || inner {
            cur.push(c[i]);
        } else if !cur.is_empty() {
            runs.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        runs.push(cur);
    }
    runs
}

/// English words for 0 ≤ n < 1,000,000.
fn words_for(n: u64) -> String {
    const TENS: [&str; 10] = [
        "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    fn below_1000(n: u64) -> String {
        let mut parts = Vec::new();
        if n >= 100 {
            parts.push(format!("{} hundred", UNITS[(n / 100) as usize]));
        }
        let r = n % 100;
        if r > 0 {
            if n >= 100 {
                parts.push("and".to_owned());
            }
            parts.push(if r < 20 {
                UNITS[r as usize].to_owned()
            } else if r.is_multiple_of(10) {
                TENS[(r / 10) as usize].to_owned()
            } else {
                format!("{}-{}", TENS[(r / 10) as usize], UNITS[(r % 10) as usize])
            });
        }
        parts.join(" ")
    }
    match n {
        0 => "zero".to_owned(),
        n if n >= 1000 && n.is_multiple_of(1000) => format!("{} thousand", below_1000(n / 1000)),
        n if n >= 1000 => format!("{} thousand {}", below_1000(n / 1000), below_1000(n % 1000)),
        n => below_1000(n),
    }
}

#[test]
fn number_words_read_as_their_digits_and_nothing_else() {
    for n in (0..2_100).chain((2_100..1_000_000).step_by(997)) {
        let w = words_for(n);
        assert_eq!(normalize(&w), n.to_string(), "{w:?}");
        assert_eq!(pre_judge(&w, &n.to_string()), Some(true), "{w:?}");
    }
}

proptest! {
    /// Normalisation never makes two different digit strings equal: the digit runs of a text survive it unchanged
    /// (texts of digits, `.`, `,`, `-`, spaces and letters that spell no number).
    #[test]
    fn digit_runs_survive_normalization(s in "[0-9., xq-]{0,16}") {
        prop_assert_eq!(digit_runs(&normalize(&s)), digit_runs(&s));
    }

    /// Two different numbers never normalize alike, nor does a number and its digits with a dot moved or dropped.
    #[test]
    fn different_numbers_never_match(a in 0u32..100_000, b in 0u32..100_000, dot in 1usize..5) {
        let (sa, sb) = (a.to_string(), b.to_string());
        prop_assert_eq!(normalize(&sa) == normalize(&sb), a == b);
        if dot < sa.len() {
            let decimal = format!("{}.{}", &sa[..dot], &sa[dot..]);
            prop_assert_ne!(pre_judge(&sa, &decimal), Some(true));
            prop_assert_ne!(pre_judge(&decimal, &sa), Some(true));
        }
    }

    /// A number in digits is never INCORRECT against itself, written with separators, with decimals, or to a
    /// precision it rounds to; with separators it is CORRECT.
    #[test]
    fn equal_numbers_are_never_incorrect(a in 0u64..10_000_000, decimals in 0usize..3) {
        let digits = a.to_string();
        let mut grouped = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        prop_assert_eq!(pre_judge(&grouped, &digits), Some(true));
        prop_assert_eq!(pre_judge(&digits, &grouped), Some(true));
        let decimal = format!("{digits}.{}", "0".repeat(decimals.max(1)));
        prop_assert_ne!(pre_judge(&decimal, &digits), Some(false));
        prop_assert_ne!(pre_judge(&digits, &decimal), Some(false));
        let rounded = (a / 1000 * 1000).to_string();
        if a % 1000 < 500 && a >= 1000 {
            prop_assert_ne!(pre_judge(&digits, &rounded), Some(false));
            prop_assert_ne!(pre_judge(&rounded, &digits), Some(false));
        }
    }

    /// Two whole numbers at the same precision (no trailing zeros), with different significant digits and not a
    /// short year, are INCORRECT for each other.
    #[test]
    fn different_whole_numbers_are_incorrect(a in 1u64..100_000, b in 1u64..100_000) {
        prop_assume!(a % 10 != 0 && b % 10 != 0 && a != b);
        let (sa, sb) = (a.to_string(), b.to_string());
        let short_year = |x: &str, y: &str| x.len() == 2 && y.len() == 4 && y.ends_with(x);
        prop_assume!(!short_year(&sa, &sb) && !short_year(&sb, &sa));
        prop_assert_eq!(pre_judge(&sa, &sb), Some(false));
    }

    /// Adjacent numbers in words are never summed or merged: after a number that ends in a unit or a teen (which
    /// nothing can continue), the next number stays a number of its own.
    #[test]
    fn adjacent_number_words_stay_apart(a in 0u64..1000, b in 0u64..1000) {
        prop_assume!(a == 0 || (a % 100 != 0 && !(a % 100 >= 20 && a % 10 == 0)));
        let two = format!("{} {}", words_for(a), words_for(b));
        prop_assert_eq!(normalize(&two), format!("{a} {b}"));
        prop_assert_ne!(pre_judge(&two, &(a + b).to_string()), Some(true));
    }
}
