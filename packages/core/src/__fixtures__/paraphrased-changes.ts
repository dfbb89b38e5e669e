import { changedFacts, type ChangedFact } from './changed-facts-data.js';

const change = changedFacts({ reply: 'Good to know, thanks.', leadIn: 'Oh, and something changed.', thanks: 'Thanks for telling me.' });

/**
 * Facts changed in everyday words (issue 39): unlike {@link CHANGED_FACTS}, the new statement
 * repeats little of the old one and follows none of the default writer's patterns ("my X is Y",
 * "I moved to"), so only meaning can tell the two talk about the same thing. Written for this
 * project; measured in docs/benchmarks.md with the local sentence model.
 */
export const PARAPHRASED_CHANGES: ChangedFact[] = [
  change('kitten', 'We adopted a grey kitten and named her Luna.', 'Everyone at home calls the kitten Pepper these days.', "What is our kitten's name?", 'Luna', 'Pepper'),
  change('gym fee', 'My gym charges 35 euros a month.', 'Starting in May the gym fee goes up to 42 euros.', 'How much do I pay for the gym?', '35', '42'),
  change('boss', 'At work I report to Priya Shah.', 'After the reorg my boss is Tom Becker.', 'Who is my boss at work?', 'Priya', 'Tom'),
  change('dose', 'The doctor put me on 10 mg of lisinopril every morning.', 'Dr Okafor doubled my blood pressure pill to 20 mg.', 'What dose of blood pressure medicine do I take?', '10 mg', '20 mg'),
  change('commute', 'I drive to the office every day.', 'I sold the car, these days I cycle to the office.', 'How do I get to the office?', 'drive', 'cycle'),
  change('deadline', 'The grant proposal is due on June 2.', 'The funder gave us an extension, the proposal deadline is June 16.', 'When is the grant proposal due?', 'June 2', 'June 16'),
  change('favourite dish', 'My favourite dish is ramen.', "Lately I can't get enough of pho, it's my go-to meal.", 'What is my favourite dish?', 'ramen', 'pho'),
  change('class day', 'My Spanish class meets on Monday evenings.', 'The Spanish course switched to Wednesday nights.', 'When is my Spanish class?', 'Monday', 'Wednesday'),
  change('sister job', "My sister Ines is a nurse at St Mary's.", 'Ines retrained and works as a software tester now.', 'What does my sister Ines do for a living?', 'nurse', 'software tester'),
  change('home', 'We rent a two-bedroom flat in Leeds.', 'We finally bought a house in York and moved last weekend.', 'Where do we live?', 'Leeds', 'York'),
  change('team size', 'My team has six engineers.', 'Two people left, so we are down to four engineers.', 'How many engineers are on my team?', 'six', 'four'),
  change('coffee', 'I drink three cups of coffee a day.', 'I cut back to one cup of coffee each morning.', 'How much coffee do I drink?', 'three', 'one cup'),
  change('trip', 'Our trip to Kyoto starts on 3 October.', 'We pushed the Japan holiday to late November.', 'When does our trip to Kyoto start?', '3 October', 'November'),
  change('laptop', 'I work on a ThinkPad at the office.', 'IT handed me a MacBook to replace my old work laptop.', 'What laptop do I use at work?', 'ThinkPad', 'MacBook'),
  change('book club', "Book club meets at Clara's place.", 'From now on we hold book club at the library cafe.', 'Where does book club meet?', 'Clara', 'library'),
  change('broadband', 'Our broadband costs 30 pounds a month.', 'The internet provider raised the bill to 38 pounds.', 'How much is our broadband bill?', '30 pounds', '38 pounds'),
];
