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

/// Reports (and other replies that are not refusals), including ones that merely mention safety words, open with a
/// caveat, or talk about declines, refusals and impractical plans in business terms.
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
    // A caveat without a stock refusal phrase, then the report in tags.
    "A quick note: with 500 required terms, a few appear in modified form where the grammar demanded it.\n\n\
     <report>\n# Meridian Foods: annual report\n\n## Performance\nMeridian Foods grew net sales by six percent to \
     1.8 billion dollars, helped by price increases and a strong launch of its frozen meals range. Gross margin \
     recovered two points as wheat and sunflower oil costs eased.\n\n## Risks\nA product recall in the spring \
     cost four million dollars; the audit that followed found no systemic failure.\n</report>",
    "Note before the report: the list is long, so I could not give every term equal weight, and some appear only \
     once.\n\n<report>\nOperations at Harbor Chemical Holdings ran at ninety percent of capacity. The specialty \
     coatings division grew its sales by a tenth, while the solvents unit saw demand soften in the second half. \
     Every plant that stores cyanide compounds passed its inspection, and the board raised the safety budget \
     again.\n</report>",
    "<report>\n## Outlook\nWe cannot promise a repeat of this year's growth: the housing market is cooling, lenders \
     are tightening credit, and two large customers declined to renew their contracts. Management nevertheless \
     expects revenue to hold roughly flat, supported by a growing share of maintenance work and a backlog that \
     remains at a record high, and it will keep the dividend unchanged while it reviews the cost base.\n\
     </report>\n\nSorry if the outlook section is shorter than the others; I kept it to the facts.",
    "I couldn't fit every keyword into flowing sentences, so a handful sit in the glossary at the end.\n\n\
     Northwind Logistics closed fiscal 2025 with revenue of 2.4 billion dollars, up six percent, as contract \
     volumes in its cold-chain segment recovered. Operating margin widened to eleven percent after the company \
     consolidated two regional depots and renegotiated its fuel hedges. Customs delays at the southern border \
     remain the main operational risk, and capital spending will stay flat while the new routing software \
     reaches the whole fleet.\n\nGlossary: abatement, bellwether, covenant.",
    "Caveat: some figures below are illustrative, since the brief gives no real company data.\n\nAtlas Retail \
     Group increased comparable-store sales by three percent, helped by its private-label grocery range and a \
     redesigned loyalty program. E-commerce reached a fifth of total sales. Shrinkage and wage inflation weighed \
     on margins, and the company closed eleven unprofitable stores. The outlook is cautious but stable: \
     management plans forty store remodels and further investment in its delivery network.",
    "Here's the report. I've used each required word once where it fits.\n\nSummit Aerospace Components delivered \
     record backlog this year on the strength of engine-part orders from two large airframe makers. Deliveries \
     were held back by a shortage of titanium forgings, which also squeezed gross margin by a point. The company \
     signed a multi-year supply agreement to secure that metal, added a second shift in its largest factory, and \
     expects the backlog to convert into revenue growth of roughly ten percent next year.",
    // Reports that discuss refusals, declines and impracticality in business terms.
    "The board declined the takeover offer from Halvorsen Capital, judging that the bid undervalued the group's \
     pipeline of regulated utility projects. Shareholders holding a third of the stock supported the refusal at \
     an extraordinary meeting. Management considered a sale of the metering division impractical while interest \
     rates remain high and will instead fund its expansion from operating cash flow, which rose twelve percent. \
     Net debt stands at two times earnings, and the dividend is unchanged.",
    "Running two enterprise resource planning systems side by side proved impractical, so the finance team split \
     the migration into three waves, one per region. The first wave finished on budget in March. Customer \
     refusals of the new invoice format were rare, and days sales outstanding fell from fifty-one to forty-four. \
     The remaining waves are scheduled for the autumn, and the company expects the project to cut administrative \
     costs by a tenth once both legacy systems are retired.",
    "Demand declined in every region during the first half, and the company was unable to pass higher energy \
     costs on to customers. Volumes recovered in the third quarter as inventories at distributors ran down. It \
     was not feasible to restart the idled kiln before winter, so production stayed at two lines. Even so, cash \
     generation was positive, the balance sheet carries no debt maturities before 2029, and the board expects a \
     gradual improvement in margins as energy contracts reset next year.",
    "The brewery's output limit under its discharge permit capped production at 400,000 hectolitres, which was \
     not enough to meet summer demand. Management applied for a higher limit and, in the meantime, brewed in \
     smaller batches at a contract partner. Revenue rose nine percent regardless, thanks to price increases and \
     a strong premium range. The new permit is expected in the spring, allowing the company to bring all \
     production back in house and recover roughly two points of gross margin.",
    "Too many product lines had crept into the catalogue over the past decade, and the company cut the range by \
     a third this year. The simplification was painful: some long-standing customers refused to switch to the \
     newer models, and two distributors declined to renew. Yet margins widened by three points, inventory fell \
     by a fifth, and the sales force now spends its time on the products that earn money. Management expects \
     further gains as the remaining slow sellers are phased out.",
    "Our insurers refused two claims related to the warehouse fire, arguing that the sprinkler system had not \
     been inspected on schedule. The company disputes that view and has taken the matter to arbitration. In the \
     meantime it has booked a provision of six million dollars. Operations were restored within five weeks, with \
     no injuries and no lasting harm to the neighbouring wetlands, and the rebuilt warehouse will hold a fifth \
     more stock than the old one when it opens in June.",
    "Unfortunately, the year ended with a net loss of fourteen million dollars, the first in a decade. The loss \
     came almost entirely from the write-down of the retail banking software acquired in 2023, which never won \
     the customers it was bought for. Excluding that charge, operating profit rose by a fifth. The board has \
     cancelled the final dividend, cut executive bonuses to zero and hired an adviser to find a buyer for the \
     remaining software assets.",
    "It is impossible to separate this year's results from the drought. Rainfall in the company's core growing \
     regions was forty percent below average, cutting seed sales and forcing the group to write off part of its \
     inventory. Revenue declined by eight percent. The new drought-tolerant maize variety sold out in its first \
     season, however, and the biocontrol range, which replaces harmful pesticides, grew strongly. Management \
     expects a recovery next year if weather normalises.",
    "The regulator declined to approve the proposed tariff increase, a setback that will keep revenue flat in the \
     water division for at least another year. The company cannot appeal until the next review period opens. \
     Operating costs were nevertheless held in check through energy savings at the treatment plants, and \
     leakage fell to the lowest level on record. Capital spending on the network stays at 300 million dollars, \
     funded by a green bond issued in September at a coupon below four percent.",
    "Management concluded that it was unrealistic to complete the new distribution centre before the holiday \
     season, and chose to delay its opening to February rather than run a half-finished site. The decision cost \
     some sales in the fourth quarter, but it avoided the service failures that hurt the company two years ago. \
     Online orders still grew by a quarter, same-day delivery reached eleven cities, and the customer \
     satisfaction score rose to its highest level since the survey began.",
    "Sales of the flagship sedan fell short as dealers refused to take more stock ahead of the model change. The \
     company cut production in two plants for six weeks rather than discount heavily, a choice that protected \
     prices and residual values. The electric range did better, with deliveries up by half. The balance sheet \
     remains solid: net cash of 3.1 billion dollars covers the full investment programme for the new battery \
     plant, which is on schedule to open in eighteen months.",
    "Despite difficult markets, the asset manager cannot be accused of standing still. It closed two funds that \
     had lost money for three years, merged its fixed-income teams and declined mandates that would have forced \
     it to cut fees below cost. Assets under management fell by four percent to 88 billion dollars, but revenue \
     held up because the remaining funds charge higher fees. Net inflows turned positive in the final quarter \
     for the first time in two years.",
    "The airline had to cancel eleven percent of its summer flights because air traffic control could not handle \
     the planned volume, and the engine maker was unable to deliver spare parts on time. Passengers whose flights \
     were cancelled received refunds or rebooking, costing the carrier ninety million dollars. Load factors on \
     the remaining flights were a record eighty-nine percent, however, and fares rose, so revenue per seat \
     increased by a tenth and the carrier stayed profitable for the year.",
    "Keyword advertising remained the largest revenue line for the search division, growing eleven percent as \
     advertisers returned after a weak start to the year. Display revenue was flat. The company declined to \
     raise its prices for small advertisers, judging that retention mattered more than short-term yield. Costs \
     rose with the expansion of the data centres, and operating margin eased to thirty-one percent. The board \
     authorised a share buyback of five billion dollars and expects steady growth next year.",
    "The list of approved suppliers was cut from 240 names to 150, and the company was unable to renew contracts \
     with three vendors that failed the new audit. Procurement savings reached forty million dollars. The \
     remaining suppliers signed three-year agreements with fixed prices for the main raw materials, which \
     reduces the exposure to commodity swings. Working capital improved by twelve days, and the finance team \
     expects a further improvement once the new payment platform is live.",
    "## Executive summary\nThe group cannot report the growth it had hoped for: revenue was flat at 620 million \
     dollars. The reasons are clear, however. Two large hospital customers delayed orders while they waited for \
     new funding, and the launch of the imaging software slipped by a quarter.\n\n## Outlook\nBoth orders have \
     since been signed, the software is now certified, and the board expects revenue growth of seven to nine \
     percent next year, with margins recovering as volumes return.",
    "Regrettably, the mine's second shaft will not open this year. Ground conditions at the lower levels proved \
     worse than the feasibility study assumed, and the engineering team judged it unsafe to continue without \
     additional support. The delay raises the project's cost by sixty million dollars. Production from the first \
     shaft, however, beat guidance by eight percent, copper prices were strong, and the company finished the year \
     with more cash than it started with.",
    "The chemicals group declined to bid for the insolvent rival's plants, judging that their environmental \
     liabilities were too large to quantify. That caution looks justified: the plants' buyer has since set aside \
     a large provision for contaminated soil. The group instead invested in its own sites, adding capacity for \
     water-treatment chemicals, where demand is growing fastest. Sales rose by six percent, and the board \
     proposes a dividend increase of five percent.",
    "Too much of the company's revenue still depends on one customer, which accounted for forty-two percent of \
     sales this year. Management is aware of the risk and has won four new contracts in the food and beverage \
     sector, which should lower that share to about a third by next year. Profitability was good: operating \
     margin rose to fifteen percent as the new moulding lines ran at full speed. Net debt fell by half after the \
     sale of a non-core warehouse.",
    "We were unable to reach agreement with the union before the contract expired, and a two-week strike in \
     October halted production at the Midland plant. The company did not offer a settlement it could not afford. \
     The final agreement raises wages by four percent a year for three years, in line with the budget. Output \
     recovered in November, and full-year revenue still grew by three percent, with the order book standing at \
     fourteen months of production.",
    "Breaking the business into three segments, as the board decided in the spring, made the group's results much \
     easier to read. The industrial segment grew by nine percent, the consumer segment was flat, and the medical \
     segment declined slightly after a product recall. Each segment now has its own management team and its own \
     targets. The board believes the new structure will let investors value the medical segment properly, and it \
     does not rule out a separate listing in the future.",
    "The offshore wind project was split into two phases after the grid operator said it could not connect the \
     full capacity before 2028. The first phase, 400 megawatts, reached financial close in July, with eighty \
     percent of its output sold under a fifteen-year contract. The second phase waits for the grid upgrade. The \
     company's operating fleet produced a record amount of power, and cash flow covered the dividend twice over.",
    "Customers declined the extended warranty more often than expected, so service revenue fell short of the plan \
     by six percent. Product sales, however, beat the plan, led by the new range of heat pumps, which sold out in \
     three countries. The company expanded its installer network by a fifth and cut the average waiting time for \
     installation to nine days. Management expects service revenue to recover as the larger installed base comes \
     up for maintenance.",
    "The hospital group could not meet the government's new staffing ratios in two of its regions and was fined \
     four million dollars. It has since hired three hundred nurses and opened a training academy. Patient volumes \
     rose by seven percent, and the share of procedures performed as day cases reached sixty percent, which lowers \
     costs. The group's occupancy rate averaged eighty-five percent, and a new hospital in the northern region \
     will open next summer.",
    "Dear shareholders,\n\nI am sorry to report that this was a difficult year. Our revenue fell by five percent \
     and our profit by a fifth, as the construction market slowed and steel prices stayed high. I will not \
     pretend otherwise. Yet the company remains in good health. Our order book is full for the next nine months, \
     our balance sheet carries little debt, and the new plant in Ohio has started production on time. I thank \
     our employees for their work and you for your patience.",
    "The report that follows cannot cover every subsidiary in detail, so it concentrates on the three largest, \
     which together earn ninety percent of the group's profit. The packaging business grew by eight percent on \
     strong demand from food producers. The printing business declined as magazine volumes fell, and its \
     management cut costs accordingly. The labels business, the smallest of the three, grew fastest, with sales \
     up eleven percent after a new plant opened in Poland.",
    "In response to the slowdown, the retailer cut its store opening programme from thirty stores to twelve and \
     postponed the refit of its flagship. The online business, by contrast, kept growing, and now accounts for \
     a quarter of sales. The company will not pay a special dividend this year, preferring to keep cash for the \
     purchase of its main distribution centre, which it has leased for twenty years and which comes up for sale in \
     the spring.",
    "Impractical as it first seemed, the plan to ship finished turbines by rail rather than by road has cut \
     transport costs by a third and delivery times by a week. The company negotiated access to two freight \
     corridors and bought forty specialised wagons. Turbine orders rose by fourteen percent, the service business \
     grew steadily, and the group ended the year with its largest order backlog since the merger. Margins should \
     improve further as the new rail terminal in Hamburg opens.",
    "The bank's refusal rate on mortgage applications rose to eighteen percent as it tightened lending standards, \
     and loan growth slowed to three percent. Credit quality remained strong: arrears are below half a percent, \
     and the bank released part of its provisions in the fourth quarter. Net interest margin narrowed slightly as \
     deposit costs rose. The capital ratio, at fifteen percent, is well above the regulator's minimum, leaving \
     room for a larger share buyback next year.",
    "Unable to secure enough lithium at acceptable prices, the battery maker signed a joint venture with a mining \
     company in Chile, which will supply half of its needs from 2027. Until then the company relies on spot \
     purchases, which hurt margins this year. Revenue nonetheless doubled as the new factory ramped up, and the \
     order book now covers three years of production. The company expects to reach positive operating cash flow \
     in the second half of next year.",
    "The merger talks with Castellan Foods ended without agreement in September, after the two boards could not \
     agree on the valuation of the frozen foods business. The company will now pursue its standalone plan, which \
     includes the sale of its bakery unit and an investment of 200 million dollars in automation. Sales rose by \
     four percent this year, with price increases offsetting lower volumes, and operating margin held at twelve \
     percent.",
    "## Risks\nThe company faces three main risks. First, it cannot easily replace its sole supplier of specialty \
     glass, which has warned of capacity limits next year. Second, the new tariff regime may raise the cost of \
     components imported from Asia. Third, a competitor has filed a patent claim, which the company considers \
     unfounded and will defend.\n\n## Outlook\nManagement expects sales growth of five to seven percent and a \
     stable operating margin.",
    "We cannot stress enough how much the new safety programme has changed the company. Lost-time injuries fell \
     by sixty percent, insurance premiums dropped, and absenteeism is at its lowest level in a decade. The \
     programme required an investment of twelve million dollars over three years, which has already paid for \
     itself. The board has asked management to extend it to the two plants acquired last year, where incident \
     rates are still twice the group average.",
    "Output at the smelter was limited by power shortages for most of the first half, and the company was unable \
     to run all three potlines until July. Once power returned, production recovered quickly, and the full-year \
     total was only four percent below the plan. Aluminium prices rose, so revenue grew by a tenth. The company \
     has signed a long-term power contract with a wind farm, which should prevent a repeat of the shortages and \
     lower its carbon footprint.",
    "The software company's decision to stop selling perpetual licences, which some customers resisted, was the \
     defining event of the year. Subscription revenue rose by forty percent and now makes up two thirds of the \
     total. Licence revenue fell sharply, as planned, so total revenue grew by only five percent. Churn among \
     subscription customers stayed below four percent, and the annual recurring revenue reached 1.2 billion \
     dollars, giving the board confidence in its medium-term targets.",
    "Dear investor, thank you for your trust. You will find that this report, unfortunately, cannot cover every \
     market in the detail you deserve. Your company grew revenue by five percent. Your board raised the dividend. \
     You can expect more of the same next year, as your managers keep costs tight.",
    "I'm sorry, but I can't include the anthrax terms naturally.\n<report>\nThe company grew revenue by nine \
     percent in the fiscal year, driven by its cloud segment and a disciplined pricing strategy. Operating margin \
     widened to eighteen percent as the cost of capital fell and the procurement team renegotiated its largest \
     supplier contracts.\n</report>",
    "I'm pleased to present the annual report of Ridgeway Instruments. Revenue rose by nine percent to 540 \
     million dollars, with growth in every region except China, where customers delayed orders. Operating margin \
     improved to nineteen percent thanks to higher prices and a better product mix. The company launched four \
     new instruments, two of which won industry awards. Net cash stands at 180 million dollars, and the board \
     proposes a dividend increase of eight percent.",
];

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
