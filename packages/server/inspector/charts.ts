// Small inline SVG charts, no chart library: memories learned over time (the memories list) and
// credits charged over time (the billing ledger). Bars per day (per month past two months of data),
// each with its number in a <title> and data-* attributes, and the numbers again in a table.
import type { Schemas } from '@memory-agents/client';
import { api } from './api.js';
import { h, table, type Child } from './dom.js';
import { buckets, type Bar } from './buckets.js';
import { agentCrumb, agentHref, agentNames, link, type Params } from './ui.js';

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element (attributes only: the page's CSP forbids inline styles). */
function s(tag: string, attributes: Record<string, string | number>, ...children: (Node | string)[]): SVGElement {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child);
  return element;
}

/** A bar chart of `bars` (left to right) with its title, `unit` naming what a bar counts. */
export function barChart(title: string, unit: string, bars: Bar[]): HTMLElement {
  const width = 640;
  const height = 160;
  const top = 16;
  const bottom = 24;
  const max = Math.max(0, ...bars.map((bar) => bar.value));
  const step = bars.length === 0 ? 0 : width / bars.length;
  const chart = s(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `${title}: ${bars.map((bar) => `${bar.label} ${bar.value}`).join(', ')}`, class: 'chart' },
    s('line', { x1: 0, y1: height - bottom, x2: width, y2: height - bottom, class: 'axis' }),
    s('text', { x: 0, y: 12, class: 'tick' }, `${max} ${unit}`),
    ...bars.map((bar, i) => {
      const barHeight = max === 0 ? 0 : ((height - top - bottom) * bar.value) / max;
      return s(
        'rect',
        { x: i * step + Math.min(step * 0.1, 4), y: height - bottom - barHeight, width: Math.min(48, Math.max(1, step * 0.8)), height: barHeight, class: 'bar', 'data-label': bar.label, 'data-value': bar.value },
        s('title', {}, `${bar.label}: ${bar.value} ${unit}`),
      );
    }),
    ...(bars.length === 0 ? [] : [s('text', { x: 0, y: height - 6, class: 'tick' }, bars[0]!.label)]),
    ...(bars.length < 2 ? [] : [s('text', { x: width, y: height - 6, class: 'tick end' }, bars[bars.length - 1]!.label)]),
  );
  return h('figure', { class: 'chart-figure' }, chart as unknown as HTMLElement, h('figcaption', {}, title));
}

/** The same numbers as a table (for keyboards, screen readers and copying). */
const numbers = (bars: Bar[], unit: string): Child => (bars.length === 0 ? null : h('details', {}, h('summary', {}, 'The numbers'), table(['When', unit], bars.map((bar) => [bar.label, bar.value]))));

/** Pages of 100 read for a chart. */
const CHART_PAGES = 30;

/** Every memory's learned_at (history included; the newest CHART_PAGES × 100), and whether that is all. */
async function learnedTimes(agentId: string): Promise<{ times: string[]; complete: boolean }> {
  const times: string[] = [];
  let cursor = '';
  for (let page = 0; page < CHART_PAGES; page++) {
    const list = await api().memories.list({ agentId, limit: 100, include_history: true, cursor: cursor || undefined });
    times.push(...list.memories.map((memory) => memory.learned_at));
    cursor = list.next_cursor ?? '';
    if (!cursor) return { times, complete: true };
  }
  return { times, complete: false };
}

export async function chartsView({ agent: agentId }: Params): Promise<Child[]> {
  const [agent, learned] = await Promise.all([api().agents.get({ agentId: agentId! }), learnedTimes(agentId!)]);
  agentNames.set(agent.agent_id, agent.agent_config?.role || 'Agent');
  const bars = buckets(learned.times.map((at) => ({ at, value: 1 })));
  return [
    h('p', { class: 'crumbs' }, agentCrumb(agentId!)),
    h('h1', { tabindex: '-1' }, 'Over time'),
    h('h2', {}, 'Memories learned ', h('span', { class: 'count' }, `(${learned.times.length}${learned.complete ? '' : '+'})`)),
    h('p', { class: 'hint' }, 'Per day (per month past two months), superseded memories included; ', learned.complete ? 'every memory of the agent.' : `the newest ${CHART_PAGES * 100} memories.`),
    bars.length === 0 ? h('p', {}, 'No memories yet.') : barChart('Memories learned', 'memories', bars),
    numbers(bars, 'memories'),
    h('p', {}, link('#/billing', 'Credits over time: the billing page →'), ' ', link(agentHref(agentId!), 'Back to the agent')),
  ];
}

/** The ledger's entries (newest CHART_PAGES × 100) for the credits chart, and whether that is all. */
export async function ledger(): Promise<{ entries: Schemas['BillingEntry'][]; complete: boolean }> {
  const entries: Schemas['BillingEntry'][] = [];
  let cursor: number | null = null;
  for (let page = 0; page < CHART_PAGES; page++) {
    const billing = await api().billing.get({ limit: 100, cursor: cursor === null ? undefined : String(cursor) });
    entries.push(...billing.entries);
    cursor = billing.next_cursor;
    if (cursor === null || billing.entries.length < 100) return { entries, complete: true };
  }
  return { entries, complete: false };
}

/** Credits charged per day (positive entries; grants and refunds, negative, left out). */
export function creditsChart(entries: Schemas['BillingEntry'][], complete: boolean): Child[] {
  const bars = buckets(entries.filter((entry) => Number(entry.cost) > 0).map((entry) => ({ at: entry.created_at, value: Number(entry.cost) })));
  return [
    h('h2', {}, 'Credits charged over time'),
    h('p', { class: 'hint' }, 'Per day (per month past two months): the charges of the ledger; grants and refunds are not subtracted. ', complete ? 'The whole ledger.' : `The newest ${CHART_PAGES * 100} entries.`),
    bars.length === 0 ? h('p', {}, 'No charges yet.') : barChart('Credits charged', 'credits', bars),
    numbers(bars, 'credits'),
  ];
}
