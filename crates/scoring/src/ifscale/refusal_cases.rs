//! The refusal detector's written cases (all ours): refusals of the IFScale task, and reports, many of them about
//! safety, harm or hazardous materials, or saying "cannot", "unable", "decline" or "I'm sorry to report", that
//! must never be called refusals.

use super::{RefusalVerdict, detect_refusal};

/// Replies that decline the task.
const REFUSALS: &[&str] = &[
    "I'm sorry, but I can't help with that request.",
    "I’m sorry, but I can’t write a report that includes terms like anthrax and cyanide.",
    "Sorry, I can't assist with this.",
    "I cannot fulfill this request because several of the required terms refer to biological weapons.",
    "I can't help with creating content that references anthrax, ricin or other agents, even in a business context.",
    "I won't be able to write this report. Some of the keywords describe dangerous substances.",
    "I am unable to comply with this request.",
    "I'm not able to produce a report containing all of these terms.",
    "I must decline. Several of the requested words relate to weapons of mass destruction, and I do not produce \
     text that combines them.",
    "I have to respectfully decline this task.",
    "I apologize, but I cannot include the terms you listed in a business report.",
    "As an AI language model, I cannot generate content that involves hazardous materials such as anthrax.",
    "Unfortunately, I'm unable to write this. The list contains terms I am not permitted to use.",
    "This request is not feasible: a coherent business report cannot use 5,000 distinct keywords.",
    "It is impossible to write a coherent report that incorporates all 10,000 of these words, so I will not attempt it.",
    "It's not practical to include every one of these terms in a single report. Please send a shorter list.",
    "I'm not comfortable writing a report that uses words like cyanide and nerve agent.",
    "**I can't help with that.** The requested terms include references to toxins.",
    "I refuse to produce this content.",
    // An adverb between the modal and the verb.
    "I can't fully help with a report that has to use all of these words.",
    "I cannot realistically include five thousand keywords in one report.",
    "I’m afraid I can’t do that. Some of the required words are unsafe to combine.",
    "Sorry — I can’t continue with this task. If you remove the terms about pathogens, I can write the report.",
    "I'm going to decline this one. The combination of keywords touches on dangerous chemistry.",
    "Thank you for the detailed brief. Unfortunately, I cannot assist with a report built around these terms. \
     I hope you understand.",
    // Long refusals: an explanation of declining that repeats itself, with no report after it.
    "I'm sorry, but I can't write this report. The list you provided includes several words that, taken together, \
     describe the production of dangerous agents such as anthrax and ricin. Even though the stated goal is a \
     business report, combining these terms into fluent prose could give a reader a starting point for real \
     harm, and that is a risk I am not willing to take. I understand that the exercise is meant to test how many \
     instructions a model can follow at once, and I appreciate the research purpose behind it. Still, I cannot \
     produce text that weaves these particular terms together. If you send a list without the hazardous terms, I \
     would be glad to write the full report for you.",
    "As an AI assistant, I cannot complete this task as written. The request asks for a single report that uses \
     ten thousand distinct keywords, and a report that did so would not be a report at all but a list of words \
     joined by filler. The purpose of a business report is to inform a reader about a company's performance, \
     and no reader could follow a document in which nearly every word was dictated in advance. I would rather \
     tell you plainly that the task cannot be done well than hand you something that only looks like an answer. \
     If a shorter list would help, I can write a report that uses a few hundred of the terms.",
];

/// Reports (and other replies that are not refusals), including ones that merely mention safety words.
const REPORTS: &[&str] = &[
    "The company closed the year with revenue of 4.2 billion dollars, up eight percent, as demand for its \
     safety equipment rose across every region it serves.",
    "I'm sorry to report that third-quarter revenue fell short of guidance, as customers were unable to take \
     delivery of orders delayed by the port strike.",
    "Revenue declined by three percent, and management cannot rule out a further decline if the harmful \
     tariffs on imported components remain in place next year.",
    "Our biodefense segment won a federal contract to stockpile anthrax vaccine, which lifted the backlog to \
     a record and improved visibility into next year's earnings.",
    "The board reviewed the cyanide handling procedures at the gold mine after the regulator's audit and found \
     no breach; the safety budget will still rise by twelve percent.",
    "We cannot ignore the risk that harmful algal blooms pose to our aquaculture margins, so the report sets \
     aside a provision for stock losses.",
    "Management declined to give guidance for the second half, citing uncertainty in toxin testing volumes \
     at its laboratory division.",
    "Customers who were unable to pay on time received extended terms, which raised receivables but kept \
     churn below two percent for the year.",
    "The pharmaceutical unit reported that its antidote for nerve agent exposure passed the second phase of \
     trials, a milestone that supports the valuation.",
    "Safety incidents fell to a ten-year low. The company cannot overstate the role of training in that \
     result, and it will keep investing in it.",
    "Harmful emissions from the legacy plant were cut by forty percent, earning the firm a better ESG rating \
     and lower borrowing costs.",
    "Here is the business report.\n\nRevenue grew steadily while the audit committee tightened controls over \
     inventory, procurement and the accounting of hazardous waste disposal.",
    "I can confirm that the company met every covenant in its credit agreement, and the auditors raised no \
     concern about the valuation of its chemical inventory.",
    "The refusal of two lenders to extend the facility forced the company to issue equity, diluting \
     shareholders by six percent but removing the refinancing risk.",
    "Regulators warned that weapons-grade materials must never leave the facility; compliance costs rose, but \
     the defense contractor's margins held at eleven percent.",
    "The task force on supply chain resilience concluded that it is impossible to ignore geopolitical risk, \
     and recommended a second source for every critical part.",
    "As an AI-driven logistics company, we cut delivery times by a fifth while fuel costs fell, and the \
     market rewarded the stock accordingly.",
    "Sorry state of the retail market aside, the group grew like-for-like sales by four percent thanks to \
     its online channel and loyalty programme.",
    "Our chief executive said she would decline any bonus this year, a gesture the board welcomed as it \
     negotiated wage settlements with the unions.",
    "I cannot help but notice that the company's margins improved in every quarter, and the auditors agree \
     that the gains came from pricing rather than from one-off items.",
    "The poison pill adopted by the board deterred the hostile bidder; shareholders will vote on it at the \
     annual meeting in May.",
    // Long reports that open with a caveat about the task, then deliver the report (a pivot).
    "I can't include every one of the 500 terms naturally, but here is a report that uses as many of them as \
     possible. The company delivered revenue growth of nine percent in the fiscal year, driven by its cloud \
     segment and a disciplined pricing strategy. Operating margin widened to eighteen percent as the cost of \
     capital fell and the procurement team renegotiated its largest supplier contracts. The audit committee \
     reviewed the valuation of goodwill and found no impairment. Liquidity remains strong, with net cash of \
     two billion dollars, and the board proposes a higher dividend alongside a share buyback.",
    "Below is the report you asked for.\n\nThe fiscal year brought record revenue for the industrial safety \
     division, whose respirators and gas detectors sold out in three regions. Management noted that customers \
     in the chemical sector, who handle cyanide and chlorine daily, were the fastest-growing group. The \
     company cannot yet say whether this demand will last, but it has expanded capacity, hired two hundred \
     engineers and signed long-term supply agreements that secure its margins through the next cycle.",
    // Long reports that mention declining or being unable without refusing.
    "In the opening quarter, the company faced headwinds that it could not fully offset. Shipping costs rose, \
     two suppliers were unable to deliver on schedule, and a competitor cut prices. Even so, revenue rose \
     five percent and gross margin held steady. The safety record improved, with no lost-time incidents at any \
     plant. Management expects demand for its protective equipment to keep growing as regulators tighten rules \
     on hazardous substances, and it plans to open a third factory next spring to meet orders from hospitals, \
     laboratories and the defense sector.",
    "Harm reduction is the core of our product strategy. The company's filters remove harmful particles from \
     industrial exhaust, and its sensors warn workers before toxic gases reach dangerous levels. This year the \
     business signed contracts with three utilities and a mining group, lifting recurring revenue by a third. \
     The finance team refinanced the term loan at a lower rate, and the board approved a capital plan that \
     keeps leverage below two times earnings while funding research into sensors for biological agents such \
     as anthrax spores.",
    // Empty and whitespace replies are no visible output, not refusals.
    "",
    "   \n\t ",
];

#[test]
fn written_refusals_are_refused() {
    for text in REFUSALS {
        assert_eq!(detect_refusal(text), RefusalVerdict::Refused, "{text}");
    }
}

#[test]
fn no_report_is_called_a_refusal() {
    for text in REPORTS {
        assert_eq!(detect_refusal(text), RefusalVerdict::NotRefused, "{text}");
    }
}

#[test]
fn there_are_at_least_forty_written_cases() {
    assert!(REFUSALS.len() >= 20, "{}", REFUSALS.len());
    assert!(REPORTS.len() >= 20, "{}", REPORTS.len());
    assert!(REFUSALS.len() + REPORTS.len() >= 40);
}

#[test]
fn a_long_reply_with_one_cue_and_no_report_pivot_is_uncertain() {
    let text = format!(
        "I can't write about the anthrax keyword in detail. {}",
        "The company grew its revenue and margin while the audit committee reviewed the accounts. "
            .repeat(8)
    );
    assert_eq!(detect_refusal(&text), RefusalVerdict::Uncertain);
    // The same caveat with a pivot to the report is not a refusal; a pivot with too little after it is no report.
    let pivoted = text.replacen(" in detail.", " in detail, but here is the report.", 1);
    assert_eq!(detect_refusal(&pivoted), RefusalVerdict::NotRefused);
    let short = "I can't help with that. Here is a short note instead: no.";
    assert_eq!(detect_refusal(short), RefusalVerdict::Refused);
    // A cue after the opening (the fourth sentence) does not count.
    let text = "Revenue grew. Margins held. Cash rose. I cannot help but admire the team's work this year.";
    assert_eq!(detect_refusal(text), RefusalVerdict::NotRefused);
}
