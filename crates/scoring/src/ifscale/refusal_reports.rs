//! The refusal detector's written reports (all ours), for the tests in `refusal_cases.rs`: a file of their own to
//! keep each under the line limit.

/// Reports (and other replies that are not refusals), including ones that merely mention safety words, open with a
/// caveat, or talk about declines, refusals and impractical plans in business terms.
pub(super) const REPORTS: &[&str] = &[
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
