/**
 * The threshold of categories by meaning (issue 44, `policy/categories.ts`): seeded memories, each
 * labelled with one of six categories or none, categorised by the nearest centroid (the embedding of
 * the category's name, description and keywords) with the local sentence model. None of the
 * memories holds a keyword of its category, so only meaning can place it. Printed per threshold:
 * precision (right / given), recall (right / labelled), and how many unlabelled memories got one.
 *
 *   npx tsx bench/category-centroids.ts [--model DIR]
 */
import { localEmbedder, resolveModel } from '@memory-agents/local-embedder';
import { argument } from './support/args.js';

// The rule of core's `policy/categories.ts` (not public API), restated: a category's centroid is the
// normalised mean of the vectors of its name, description, each keyword and all of them joined; a
// memory gets the category of the nearest centroid when the cosine is at least the threshold.
type Category = { name: string; description?: string; keywords?: string[] };
const centroidTexts = (category: Category): string[] => {
  const name = category.name.replace(/[_-]+/g, ' ');
  const joined = [name, category.description, category.keywords?.join(', ')].filter(Boolean).join(': ');
  return [...new Set([name, ...(category.description ? [category.description] : []), ...(category.keywords ?? []), joined])];
};
const unit = (vector: Float32Array) => {
  const norm = Math.hypot(...vector);
  return norm === 0 ? vector : vector.map((value) => value / norm);
};
async function centroidsOf(embedder: { embed(request: { texts: string[] }): Promise<{ vectors: Float32Array[] }> }, categories: Category[]): Promise<Float32Array[]> {
  return Promise.all(
    categories.map(async (category) => {
      const { vectors } = await embedder.embed({ texts: centroidTexts(category) });
      return unit(vectors.reduce((sum, vector) => sum.map((value, i) => value + vector[i]!), new Float32Array(vectors[0]!.length)));
    }),
  );
}
const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot / (Math.hypot(...a) * Math.hypot(...b) || 1);
};
function nearestCategory(categories: Category[], centroids: Float32Array[], vector: Float32Array, threshold: number): string | null {
  let best: string | null = null;
  let bestScore = threshold;
  categories.forEach((category, i) => {
    const score = cosine(vector, centroids[i]!);
    if (score >= bestScore) [best, bestScore] = [category.name, score];
  });
  return best;
}

const CATEGORIES = [
  { name: 'preference', description: 'what a person likes, dislikes or prefers', keywords: ['prefer', 'favourite'] },
  { name: 'health', description: 'illness, doctors, medication, fitness', keywords: ['doctor', 'allergy'] },
  { name: 'work', description: 'job, employer, colleagues, projects, meetings', keywords: ['job', 'office'] },
  { name: 'travel', description: 'trips, flights, hotels, holidays', keywords: ['trip', 'flight'] },
  { name: 'family', description: 'relatives: parents, children, siblings, partner', keywords: ['mother', 'son'] },
  { name: 'finance', description: 'money, bank accounts, payments, salary, budget', keywords: ['bank', 'invoice'] },
];

const LABELLED: [string, string | null][] = [
  ['Ana loves spicy Thai food.', 'preference'],
  ['Ben cannot stand jazz music.', 'preference'],
  ['Marta would rather take the train than drive.', 'preference'],
  ['Leo enjoys reading crime novels on Sundays.', 'preference'],
  ['Ana was diagnosed with asthma last spring.', 'health'],
  ['Ben takes ibuprofen for his back pain.', 'health'],
  ['Marta runs five kilometres every morning to stay fit.', 'health'],
  ['Leo had knee surgery in March.', 'health'],
  ['Ana started as a product manager at Acme.', 'work'],
  ['Ben presents the quarterly roadmap to his team on Friday.', 'work'],
  ['Marta asked her manager for a promotion.', 'work'],
  ['Leo works remotely three days a week.', 'work'],
  ['Ana is going to Lisbon for a week in June.', 'travel'],
  ['Ben booked a hotel near the beach in Crete.', 'travel'],
  ['Marta lost her luggage at the airport in Madrid.', 'travel'],
  ['Leo plans a road trip through Norway.', 'travel'],
  ["Ana's daughter Lucia turns six in May.", 'family'],
  ['Ben visits his parents every other weekend.', 'family'],
  ["Marta's brother is getting married in August.", 'family'],
  ['Leo and his wife are expecting twins.', 'family'],
  ['Ana pays 1,200 euros rent each month.', 'finance'],
  ['Ben is saving for a down payment on a flat.', 'finance'],
  ['Marta got a raise of 5 percent.', 'finance'],
  ['Leo switched to a cheaper mobile phone plan to cut costs.', 'finance'],
  ['The staging server is called heron.', null],
  ['The meeting room projector uses HDMI.', null],
  ['Version 2.3 of the app was released on Tuesday.', null],
  ['The library closes at eight in the evening.', null],
  ['It rained all afternoon.', null],
  ['The password policy requires twelve characters.', null],
  ['The bridge was built in 1932.', null],
  ['The printer on the second floor is out of toner.', null],
];

const embedder = await localEmbedder({ model: resolveModel(argument('model', '') || 'all-MiniLM-L6-v2-int8') });
const centroids = await centroidsOf(embedder, CATEGORIES);
const { vectors } = await embedder.embed({ texts: LABELLED.map(([text]) => text) });
console.log(`embedder ${embedder.id}; ${LABELLED.filter(([, label]) => label).length} labelled memories, ${LABELLED.filter(([, label]) => !label).length} of no category`);
console.log('threshold | precision | recall | unlabelled given one');
for (const threshold of [0.1, 0.15, 0.2, 0.22, 0.24, 0.25, 0.3, 0.35]) {
  let given = 0;
  let right = 0;
  let stray = 0;
  LABELLED.forEach(([, label], i) => {
    const category = nearestCategory(CATEGORIES, centroids, vectors[i]!, threshold);
    if (label === null) stray += category === null ? 0 : 1;
    else if (category !== null) {
      given++;
      right += category === label ? 1 : 0;
    }
  });
  const labelled = LABELLED.filter(([, label]) => label).length;
  console.log(`${threshold.toFixed(2)} | ${given ? (right / given).toFixed(2) : '-'} | ${(right / labelled).toFixed(2)} | ${stray}/${LABELLED.length - labelled}`);
}
await embedder.close();
