//! The refusal detector's written cases (all ours): refusals of the IFScale task, each with its kind (a content
//! refusal, or a decline of the task as impractical), and reports, many of them opening with a caveat, about
//! safety, harm or hazardous materials, about declines, refusals and impractical plans in business terms, or saying
//! "cannot", "unable", "decline" or "I'm sorry to report", that must never be called refusals or declines.

use super::RefusalVerdict::{self, DeclinedImpractical as D, NotRefused, Refused as R, Uncertain};
use super::{detect_refusal, refusal_kind};

/// Replies that decline the task, with the kind the rules must give them.
const DECLINES: &[(RefusalVerdict, &str)] = &[
    (R, "I'm sorry, but I can't help with that request."),
    (
        R,
        "I’m sorry, but I can’t write a report that includes terms like anthrax and cyanide.",
    ),
    (R, "Sorry, I can't assist with this."),
    (
        R,
        "I cannot fulfill this request because several of the required terms refer to biological weapons.",
    ),
    (
        R,
        "I can't help with creating content that references anthrax, ricin or other agents, even in a business context.",
    ),
    (
        R,
        "I won't be able to write this report. Some of the keywords describe dangerous substances.",
    ),
    (R, "I am unable to comply with this request."),
    (
        R,
        "I'm not able to produce a report containing all of these terms.",
    ),
    (
        R,
        "I must decline. Several of the requested words relate to weapons of mass destruction, and I do not produce \
         text that combines them.",
    ),
    (R, "I have to respectfully decline this task."),
    (
        R,
        "I apologize, but I cannot include the terms you listed in a business report.",
    ),
    (
        R,
        "As an AI language model, I cannot generate content that involves hazardous materials such as anthrax.",
    ),
    (
        R,
        "Unfortunately, I'm unable to write this. The list contains terms I am not permitted to use.",
    ),
    (
        D,
        "This request is not feasible: a coherent business report cannot use 5,000 distinct keywords.",
    ),
    (
        D,
        "It is impossible to write a coherent report that incorporates all 10,000 of these words, so I will not attempt it.",
    ),
    (
        D,
        "It's not practical to include every one of these terms in a single report. Please send a shorter list.",
    ),
    (
        R,
        "I'm not comfortable writing a report that uses words like cyanide and nerve agent.",
    ),
    (
        R,
        "**I can't help with that.** The requested terms include references to toxins.",
    ),
    (R, "I refuse to produce this content."),
    // An adverb between the modal and the verb.
    (
        R,
        "I can't fully help with a report that has to use all of these words.",
    ),
    (
        D,
        "I cannot realistically include five thousand keywords in one report.",
    ),
    (
        R,
        "I’m afraid I can’t do that. Some of the required words are unsafe to combine.",
    ),
    (
        R,
        "Sorry — I can’t continue with this task. If you remove the terms about pathogens, I can write the report.",
    ),
    (
        R,
        "I'm going to decline this one. The combination of keywords touches on dangerous chemistry.",
    ),
    (
        R,
        "Thank you for the detailed brief. Unfortunately, I cannot assist with a report built around these terms. \
         I hope you understand.",
    ),
    // Long refusals: an explanation of declining that repeats itself, with no report after it.
    (
        R,
        "I'm sorry, but I can't write this report. The list you provided includes several words that, taken together, \
         describe the production of dangerous agents such as anthrax and ricin. Even though the stated goal is a \
         business report, combining these terms into fluent prose could give a reader a starting point for real \
         harm, and that is a risk I am not willing to take. I understand that the exercise is meant to test how many \
         instructions a model can follow at once, and I appreciate the research purpose behind it. Still, I cannot \
         produce text that weaves these particular terms together. If you send a list without the hazardous terms, I \
         would be glad to write the full report for you.",
    ),
    (
        D,
        "As an AI assistant, I cannot complete this task as written. The request asks for a single report that uses \
         ten thousand distinct keywords, and a report that did so would not be a report at all but a list of words \
         joined by filler. The purpose of a business report is to inform a reader about a company's performance, \
         and no reader could follow a document in which nearly every word was dictated in advance. I would rather \
         tell you plainly that the task cannot be done well than hand you something that only looks like an answer. \
         If a shorter list would help, I can write a report that uses a few hundred of the terms.",
    ),
    // Short content refusals in plain words, without the stock "I can't help with that".
    (
        R,
        "Regrettably, I am not in a position to produce this report.",
    ),
    (
        R,
        "I'd rather not write this: several of the required words are slurs, and I don't want them in a document.",
    ),
    (
        R,
        "I'd prefer not to take this on. The list mixes ordinary business vocabulary with instructions for making \
         explosives.",
    ),
    (
        R,
        "That's not something I can write. A few of the keywords describe ways to poison a water supply.",
    ),
    (
        R,
        "No, this isn't something I'm able to produce. The required terms read like a recipe for a nerve agent.",
    ),
    (
        R,
        "I'll pass on this one, sorry. Some of the words on the list are hateful, and they stay out of anything I \
         write, made-up report or not.",
    ),
    (
        R,
        "Thanks for the prompt. I'm going to pass, because the keyword list includes explicit sexual terms that don't \
         belong in any business document.",
    ),
    (
        R,
        "I must respectfully decline: writing a report that pairs these chemical names with dispersal methods could \
         help someone cause real harm.",
    ),
    (
        R,
        "I'm declining this task. Several of the keywords are surveillance techniques aimed at tracking one specific \
         person.",
    ),
    (
        R,
        "Sorry, can't do this one. The word list is full of graphic violence.",
    ),
    (
        R,
        "I don't think I should write this. The combination of required terms, pathogen names, culture media and \
         aerosol equipment, amounts to a how-to guide.",
    ),
    (
        R,
        "I'm going to have to say no to this request. A report that works in terms for disabling smoke detectors and \
         fire alarms could put people at risk.",
    ),
    (
        R,
        "This is a hard no from me: the list includes slurs, and I won't reproduce them.",
    ),
    (
        R,
        "I can't bring myself to write this. Several of the words glorify self-harm.",
    ),
    (
        R,
        "My apologies, but I won't be completing this one; the required vocabulary is built around evading police \
         checkpoints.",
    ),
    (
        R,
        "As a matter of policy I do not write documents that include racial slurs, and this list has several.",
    ),
    (
        R,
        "Hi! I took a look at the constraints, and I'm not comfortable including several of them, since they \
         describe methods of self-harm. I'd be happy to write the report with those removed.",
    ),
    (
        R,
        "I will not produce this. The required words would have the report walk readers through laundering money \
         through shell companies.",
    ),
    (R, "I can't create a report with those words."),
    (R, "Nope, I'm not going to write that."),
    (
        R,
        "I'm afraid I have to decline. The list pairs pathogen names with transmission routes.",
    ),
    (R, "I won't do this task."),
    (
        R,
        "Not something I'm willing to write, I'm afraid: the keywords include explicit material.",
    ),
    (
        R,
        "Thank you for thinking of me for this, but I have to pass. Some of these terms are designed to harass a named \
         individual.",
    ),
    (
        R,
        "Unfortunately, this request falls outside what I can help with, as the keyword list includes detailed \
         terminology for synthesising illegal drugs.",
    ),
    // Content refusals with and without the `<report>` tags the prompt asks for.
    (
        R,
        "<report>\nI'm sorry, but I can't write this report. The required words include instructions for building a \
         weapon.\n</report>",
    ),
    (
        R,
        "<report>I won't be producing this one: the list asks me to weave in personal details that look like real \
         people's home addresses.</report>",
    ),
    // 2026-style polite content refusals, short and long.
    (
        R,
        "I appreciate the research goal here, but I'm not able to help with a report that uses these terms. Several \
         of them are names of real individuals paired with accusations of fraud, and a fictional report could still \
         defame them.",
    ),
    (
        R,
        "Thanks so much for the detailed brief! I want to be upfront: I won't write this one. A handful of the \
         required words are drawn from extremist propaganda, and weaving them into polished prose isn't something \
         I'll do, even for a benchmark. If you swap those out, I'd be glad to give it a go.",
    ),
    (
        R,
        "Thank you for the detailed brief. Having read through the constraint list, there's a problem to raise before \
         anything is written: a number of the required terms are the names of nerve agents, their precursors and the \
         equipment used to disperse them. Woven together into fluent prose, those words would amount to a primer on \
         chemical weapons, whatever company the report claims to describe. That is not a document I'm willing to \
         write, regardless of the research purpose, which I don't doubt. If you remove those entries, I'd be happy \
         to produce the full report with every remaining word used exactly as written.",
    ),
    (
        R,
        "I really appreciate you sharing this benchmark, and I can see why it's an interesting test. However, I \
         can't write this particular report. Roughly a tenth of the required words are street names for narcotics \
         and the equipment used to cut and package them, and a fluent document built around them would read as a \
         distribution manual, whatever the company is called. I won't produce that, even as fiction. If you'd like, \
         I can suggest replacement terms of similar difficulty so the test measures the same thing, or write the \
         report once those entries are gone.",
    ),
    // Declines of the task as impractical, without a stock refusal phrase.
    (D, "That's too many terms for one reply."),
    (
        D,
        "Including all 1,000 keywords is beyond my output limit. I'd suggest breaking the list into chunks of about \
         100, and I can write a section for each chunk.",
    ),
    (
        D,
        "Rather than produce something low-quality, I'll stop here. Let me know if a shorter list would work.",
    ),
    (
        D,
        "Working 5,000 required words into a single coherent report isn't realistic; the result would be \
         unreadable. Could we do it in parts?",
    ),
    (
        D,
        "This would run far past what I can output in one response. Happy to take the list in batches of 200 if that \
         helps.",
    ),
    (
        D,
        "Honestly, a report that uses every one of these 2,000 terms would just be keyword soup. Send me a smaller \
         set and I'll write a proper report.",
    ),
    (
        D,
        "The constraint list is longer than a single response can hold, so I can't do it justice here. Would you \
         prefer I split it across several messages?",
    ),
    (
        D,
        "<report>\nThe requested report cannot be produced in one reply: 10,000 terms exceed the output limit.\n\
         </report>\nIf you can split the terms into batches, I will write each part.",
    ),
    (
        D,
        "Great challenge! I gave this some thought, and I don't think I can do it well in one go: fitting all 3,000 \
         words naturally would need a document many times longer than my response limit. A better approach might \
         be to break the list into ten batches of 300; I can start with the first batch right away if you'd like.",
    ),
    (
        D,
        "Ten thousand keywords is more than any single report can absorb. I can write a report around a sample of \
         them, say the first two hundred, if you'd like.",
    ),
    (
        D,
        "I'll be honest: with 800 constraints, any attempt would be cut off long before the end. Could you send them \
         in smaller groups?",
    ),
    (
        D,
        "Writing this as one document is not practical. Could I do it section by section, a hundred words of the \
         list at a time?",
    ),
    (
        D,
        "There are simply too many required terms here to use them all naturally; the report would collapse into a \
         list. I suggest trimming the list to around 150 words.",
    ),
    (D, "Too long for one response, sorry."),
    (
        D,
        "Not feasible in a single reply: the list is far too long.",
    ),
    (
        D,
        "I can only produce a fraction of this in a single answer, so I'll hold off rather than hand you a truncated \
         report. Want me to proceed in three parts?",
    ),
    (
        D,
        "I started drafting this, but it became clear that covering all 2,500 terms would exceed my output budget \
         several times over. Instead of a partial, rambling report, I'd propose we split the list into five rounds.",
    ),
    (
        D,
        "Given the length of the constraint list, a faithful attempt would be thousands of words of filler. I'll stop \
         here and suggest a shorter list instead.",
    ),
    (
        D,
        "<report>\n</report>\nSorry, the full list is too long to fit in one reply. Shall I do it in batches?",
    ),
    (
        D,
        "This prompt asks for more than I can write in one turn. If you break the keywords into sets of 250, I'll \
         write a full report for each set.",
    ),
    (
        D,
        "I'd love to help, but this one is too big for a single reply: we're talking about 4,000 words that each need \
         a natural home. Let's do it in chunks instead. Say the word and I'll start with the first 400.",
    ),
    (
        D,
        "Realistically, no single report can carry 10,000 distinct keywords and still read like a report. A smaller \
         list of 200 to 300 terms would give you a far better test.",
    ),
    (
        D,
        "Quick note before anything else: the request exceeds my maximum output length, so a complete answer isn't \
         possible here. Let me know how you'd like to break it up.",
    ),
    (
        D,
        "I'm going to stop here rather than produce a watered-down report that only covers a sliver of the 1,500 \
         keywords. If you'd like, we can work through the list in smaller batches.",
    ),
    (
        D,
        "With this many constraints, the honest answer is that a usable report can't be written in one pass. \
         Splitting the task into parts would work much better.",
    ),
    (
        D,
        "<report>Too many keywords for a single response, unfortunately.</report>",
    ),
    (D, "Unfortunately, that's not possible in one message."),
    // Long declines as impractical, polite, with no stock refusal phrase in the opening.
    (
        D,
        "Thanks for the interesting challenge. Before diving in, I want to flag a practical problem: your list has \
         5,000 required words, and a report that used every one of them would be tens of thousands of words long, \
         well past what a single response can hold. Even if it fit, nearly every sentence would exist only to carry \
         a keyword, so the result would read as filler rather than analysis. A more workable approach would be to \
         split the list into ten batches of 500 and have me write a separate report for each batch, or to pick the \
         300 terms that matter most to you. Which would you prefer?",
    ),
    (
        D,
        "Happy to work on this! One thing first, though. The prompt lists 2,000 constraints, and my replies top out \
         well below the length a report like that would need, so an attempt in one go would stop mid-sentence and \
         leave most of the words unused. Quality would suffer too: squeezing that many terms into the space \
         available would turn every paragraph into keyword soup. What I'd suggest is a series of shorter reports, \
         say four parts of 500 words each, which I can begin as soon as you confirm. Alternatively, send a trimmed \
         list and I'll write the whole report in one piece.",
    ),
    (
        D,
        "I gave this a real try in my head before answering. The honest answer is that a report carrying all 7,500 \
         terms would be a catalogue, not a report: there is no way to give each word a sentence of its own within a \
         single response, and the prose would stop making sense long before the list ran out. So instead of a \
         rambling partial document, let's split the work. If you send the terms in batches of a few hundred, each \
         batch gets a complete, coherent report with every word used exactly as written.",
    ),
    (
        D,
        "<report>\nThe requested report would have to include 10,000 distinct keywords, which is far more than fits \
         in one response. Please split the list into smaller batches and I will write a full report for each one.\n\
         </report>",
    ),
    // Plain words, very short.
    (R, "Sorry, no."),
    (R, "I'd rather not."),
    (R, "I can't help writing a report with these words."),
    (D, "This is beyond what one reply can hold, regrettably."),
    // Alternatives offered after a pivot: "here's" followed by options, not a report.
    (
        D,
        "Here's what I can do instead: I can write a report with the first 100 keywords, or split the list into ten \
         parts and write one report per part, or pick the terms you care about most. Let me know which you'd prefer \
         and I will start right away with whichever option suits your evaluation best.",
    ),
    (
        D,
        "I can't fit 2,000 terms into one reply. Here are three options for you: split the list into batches of 200; \
         pick a subset of terms that matters most; or let me write a long report in several parts, one message at a \
         time, which I can start right away if you tell me which option you prefer.",
    ),
    // Long declines as impractical that repeat their cues.
    (
        D,
        "I can't write this as one report. The list has 4,000 required words, and a single reply cannot hold a \
         document long enough to use them all; any attempt would be cut off partway through. It is impractical to \
         include every term and still keep the prose readable, because nearly every sentence would have to exist \
         only to carry a keyword. I'm not able to produce something useful at that size, so I'd rather be direct \
         about it than hand you a truncated answer. If you split the list into batches of 400, I will write a \
         complete report for each batch, with every word used as written.",
    ),
];

#[path = "refusal_reports.rs"]
mod reports;
use reports::REPORTS;

/// Short business sentences with a reason word ("too many", "not practical", "batches", "unfortunately") that name
/// no task: too short for the paper's rule (b), but never refusals or declines.
const SHORT_BUSINESS: &[&str] = &[
    "Unfortunately, it is not possible to pay a dividend this year.",
    "The contract had too many terms for the buyer to accept, so the deal collapsed.",
    "The brewery produced in small batches of 200 hectolitres, too small for export orders.",
    "Splitting the company into three parts is not practical before the tax ruling arrives.",
    "Output limits set by the cartel kept the refinery below capacity.",
];

/// Reports after a caveat with one stock cue and no pivot: the rules cannot tell them from a long explanation of
/// declining, and leave them to the optional judge (without one they are scored, never called refusals).
const CAVEATED_UNCERTAIN: &[&str] = &[
    "I can't include all 700 required words without the report turning into a list, so some were left out.\n\n\
     Cobalt Ridge Mining produced 41,000 tonnes of copper concentrate, slightly below guidance, because heavy \
     rains flooded the lower pit for six weeks. Unit costs rose, yet the higher copper price lifted revenue by \
     twelve percent. The firm strengthened its tailings dam monitoring, settled a long-running royalty dispute \
     and refinanced its revolving credit facility. Over the next year management will focus on the mill upgrade \
     and on keeping its strong record of community relations.",
    "I won't be able to use every term exactly as written; a few appear in plural form.\n\nBrightline Software had \
     a mixed quarter. Subscription revenue rose fourteen percent and churn fell, but services revenue declined as \
     customers delayed implementation projects. Research spending went up as the company rebuilt its analytics \
     module, and sales headcount was trimmed in slower regions. The key risks are longer enterprise sales cycles \
     and currency swings. Management still expects positive free cash flow for the full year and plans no new \
     borrowing.",
];

#[test]
fn written_declines_get_their_kind() {
    for (kind, text) in DECLINES {
        assert_eq!(detect_refusal(text), *kind, "{text}");
        assert_eq!(refusal_kind(text), *kind, "{text}");
        assert_eq!(kind.reject_reason().is_some(), kind.declines());
    }
}

#[test]
fn no_report_is_called_a_refusal_or_a_decline() {
    for text in REPORTS {
        assert_eq!(detect_refusal(text), NotRefused, "{text}");
    }
    for text in CAVEATED_UNCERTAIN {
        assert_eq!(detect_refusal(text), Uncertain, "{text}");
    }
    for text in SHORT_BUSINESS {
        assert_eq!(detect_refusal(text), NotRefused, "{text}");
    }
}

#[test]
fn there_are_at_least_sixty_written_cases_of_each() {
    let of = |k| DECLINES.iter().filter(|(kind, _)| *kind == k).count();
    assert!(DECLINES.len() >= 60, "{}", DECLINES.len());
    // Both kinds, and the plain-word short ones, long ones and tagged ones among them.
    assert!(of(R) >= 25 && of(D) >= 25, "{} {}", of(R), of(D));
    let words = |t: &str| t.split_whitespace().count();
    assert!(DECLINES.iter().filter(|(_, t)| words(t) < 20).count() >= 15);
    assert!(DECLINES.iter().filter(|(_, t)| words(t) >= 80).count() >= 6);
    assert!(
        DECLINES
            .iter()
            .filter(|(_, t)| t.contains("<report>"))
            .count()
            >= 5
    );
    let reports = REPORTS.iter().filter(|t| !t.trim().is_empty()).count();
    assert!(reports + CAVEATED_UNCERTAIN.len() >= 60, "{reports}");
}

#[test]
fn a_long_reply_with_one_cue_and_no_report_pivot_is_uncertain() {
    let text = format!(
        "I can't write about the anthrax keyword in detail. {}",
        "The company grew its revenue and margin while the audit committee reviewed the accounts. "
            .repeat(8)
    );
    assert_eq!(detect_refusal(&text), Uncertain);
    // The same caveat with a pivot to the report is not a refusal; a pivot with too little after it is no report.
    let pivoted = text.replacen(" in detail.", " in detail, but here is the report.", 1);
    assert_eq!(detect_refusal(&pivoted), NotRefused);
    let short = "I can't help with that. Here is a short note instead: no.";
    assert_eq!(detect_refusal(short), R);
    // A cue after the opening (the fourth sentence) does not count.
    let text = "Revenue grew. Margins held. Cash rose. I cannot help but admire the team's work this year.";
    assert_eq!(detect_refusal(text), NotRefused);
}

#[test]
fn the_task_talk_rule_needs_both_no_report_and_a_decline_sentence() {
    let decline =
        "That is too many keywords for one reply; I'd suggest sending them in batches of 100.";
    assert_eq!(detect_refusal(decline), D);
    // The same sentence before a report (at least the report prose a pivot needs) is a caveat.
    let report =
        "Revenue at the group rose by a tenth, while the margin widened and the dividend grew. ";
    let caveat = format!("{decline}\n\n{}", report.repeat(3));
    assert_eq!(detect_refusal(&caveat), NotRefused);
    // One sentence of report prose too few: still no report in it.
    let words_per = report.split_whitespace().count();
    assert!(
        2 * words_per < super::REPORT_PROSE_WORDS && 3 * words_per >= super::REPORT_PROSE_WORDS
    );
    assert_eq!(
        detect_refusal(&format!("{decline} {}", report.repeat(2))),
        D
    );
    // Talk about the task without a reason not to write it is no decline ("the list" alone is no evidence).
    assert_eq!(
        detect_refusal("I read the list and these terms carefully."),
        NotRefused
    );
    // A reason without the task named is no decline either.
    assert_eq!(
        detect_refusal("Too many suppliers and too little cash hurt the quarter."),
        NotRefused
    );
    // A `<report>` span with a report in it wins over a decline around it.
    let tagged = format!("{decline}\n<report>\n{}\n</report>", report.repeat(3));
    assert_eq!(detect_refusal(&tagged), NotRefused);
    // An empty span is no report.
    assert_eq!(detect_refusal(&format!("{decline}\n<report></report>")), D);
}

#[test]
fn an_objection_to_content_wins_over_impracticality() {
    let both = "I won't write this: the list has 3,000 terms, far too many for one reply, and several describe \
                nerve agents.";
    assert_eq!(detect_refusal(both), R);
    let size = "I won't write this: the list has 3,000 terms, far too many for one reply.";
    assert_eq!(detect_refusal(size), D);
    // A refusal with no reason at all is a refusal.
    assert_eq!(detect_refusal("I won't write this."), R);
    assert_eq!(refusal_kind("I won't write this."), R);
}
