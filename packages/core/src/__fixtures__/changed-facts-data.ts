/**
 * Short conversations where a person changes a fact weeks later (issue 32): moves, a new job, a
 * new number, a price raised, a meeting moved. Written for this project (no data set's wording).
 * Each has the old statement, filler turns, the new statement weeks later, a question sharing a
 * word with both, the old and new value, and an `asOf` instant between the two statements.
 */
export type ChangedFact = {
  name: string;
  /** [speaker, text] turns before the change, observed at `before`. */
  early: [string, string][];
  before: string;
  /** [speaker, text] turns with the change, observed at `after`. */
  late: [string, string][];
  after: string;
  question: string;
  oldValue: string;
  newValue: string;
  /** An instant when the old value was true and the new one not yet. */
  asOf: string;
};

const JAN = '2024-01-10T09:00:00.000Z';
const APR = '2024-04-02T18:30:00.000Z';
const FEB = '2024-02-15T12:00:00.000Z';

/** The filler turns around a fact's two statements (the assistant's replies, the speaker's lead-in). */
export type ChangedFactFillers = { reply: string; leadIn: string; thanks: string };

/**
 * A builder of changed facts with these fillers: the old statement in January with `reply`, then
 * `leadIn`, the new statement and `thanks` in April; `asOf` mid-February.
 */
export const changedFacts =
  (fillers: ChangedFactFillers) =>
  (name: string, old: string, next: string, question: string, oldValue: string, newValue: string, speaker = 'user'): ChangedFact => ({
    name,
    early: [
      [speaker, old],
      ['assistant', fillers.reply],
    ],
    before: JAN,
    late: [
      [speaker, fillers.leadIn],
      [speaker, next],
      ['assistant', fillers.thanks],
    ],
    after: APR,
    question,
    oldValue,
    newValue,
    asOf: FEB,
  });

const fact = changedFacts({ reply: 'Thanks, I will keep that in mind.', leadIn: 'Quick update for you.', thanks: 'Noted, thanks for letting me know.' });

export const CHANGED_FACTS: ChangedFact[] = [
  fact('move', 'I live in Paris, my flat is near the canal.', 'I moved to Berlin in March, my new flat is in Kreuzberg.', 'Where is my flat?', 'Paris', 'Berlin'),
  fact('new job', 'I work at Acme Corp as a designer on the web team.', 'I started a new job at Globex, still as a designer on a web team.', 'Where is my job as a designer?', 'Acme', 'Globex'),
  fact('phone number', 'My phone number is 555-0100.', 'My new phone number is 555-0199.', 'What is my phone number?', '555-0100', '555-0199'),
  fact('meeting moved', 'The team meeting is on Tuesday at 3pm.', 'The team meeting was moved to Thursday at 10am.', 'When is the team meeting?', 'Tuesday', 'Thursday'),
  fact('price raised', 'The price of the basic plan is $10 per month.', 'The price of the basic plan was raised to $12 per month.', 'What is the price of the basic plan?', '$10', '$12'),
  fact('browser', 'I use Chrome as my browser at work.', 'I switched to Firefox as my browser at work.', 'Which browser do I use at work?', 'Chrome', 'Firefox'),
  fact('no longer', 'I work at the bakery on Main Street on weekends.', 'I no longer work at the bakery on weekends.', 'Do I work at the bakery on weekends?', 'I work at the bakery on Main Street', 'no longer'),
  fact('address', 'My address is 12 Oak Lane, Springfield.', 'My new address is 48 Elm Street, Springfield.', 'What is my address in Springfield?', 'Oak Lane', 'Elm Street'),
  fact('car', 'My car is a blue Honda Civic.', 'My new car is a red Tesla Model 3.', 'What car do I have, my car?', 'Honda', 'Tesla'),
  fact('appointment', 'My dentist appointment is on May 3.', 'My dentist appointment was rescheduled to May 10.', 'When is my dentist appointment?', 'May 3', 'May 10'),
  fact('rent', 'Our rent is $1,200 a month for the apartment.', 'Our rent went up to $1,350 a month for the apartment.', 'How much is our rent for the apartment?', '$1,200', '$1,350'),
  fact('email', 'My email is ana@oldmail.example.', 'My new email is ana@newmail.example.', 'What is my email?', 'oldmail', 'newmail'),
  fact('flight', 'My flight to Lisbon is at 7:40am on Friday.', 'My flight to Lisbon was moved to 11:15am on Friday.', 'When is my flight to Lisbon?', '7:40am', '11:15am'),
  fact('manager', 'My manager is Sarah Chen.', 'My new manager is David Park.', 'Who is my manager?', 'Sarah', 'David'),
  fact('relocation', 'I am based in Lyon for work and the office is lovely.', 'I relocated to Madrid for work, the office is near Retiro.', 'Which city is my work office in?', 'Lyon', 'Madrid'),
  fact('membership tier', 'My membership is the Basic tier of the gym.', 'I switched my membership to the Pro tier of the gym.', 'What is my membership at the gym?', 'Basic', 'Pro'),
];
