import { describe, expect, it } from 'vitest';
import { fixture, SHARED_DOCS } from './__fixtures__/fixture-path.js';
import { htmlToBlocks } from './html-to-blocks.js';

const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
const words = (value: string): string[] => value.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

describe('htmlToBlocks', () => {
  it.skipIf(!SHARED_DOCS)('recovers the main content of a real Wikipedia page and drops its navigation', () => {
    const blocks = htmlToBlocks(decode(fixture('wikipedia-source.html')));
    const expected = htmlToBlocks(decode(fixture('wikipedia-expected.html')), { mainContentOnly: false });
    const ours = new Map<string, number>();
    const ourWords = words(blocks.map((block) => block.text).join('\n'));
    for (const word of ourWords) ours.set(word, (ours.get(word) ?? 0) + 1);
    let recovered = 0;
    const wanted = words(expected.map((block) => block.text).join('\n'));
    for (const word of wanted) {
      const left = ours.get(word) ?? 0;
      if (left > 0) {
        recovered++;
        ours.set(word, left - 1);
      }
    }
    // Share of the expected words we recovered, and share of ours that the expected text has.
    expect(recovered / wanted.length).toBeGreaterThan(0.9);
    expect(recovered / ourWords.length).toBeGreaterThan(0.9);
    const all = blocks.map((block) => block.text).join('\n');
    for (const chrome of ['Navigation menu', 'Jump to', 'Personal tools', 'Retrieved from', 'Privacy policy', 'Main page', 'Log in']) {
      expect(all).not.toContain(chrome);
    }
    expect(blocks[0]).toEqual({ kind: 'heading', text: 'Mozilla', page: null, level: 1 });
    expect(blocks.some((block) => block.kind === 'heading' && block.text.startsWith('History'))).toBe(true);
    expect(blocks.some((block) => block.kind === 'table' && block.text.includes('Founded | February 28, 1998'))).toBe(true);
    expect(blocks.some((block) => block.kind === 'list' && block.text.includes('1. ^'))).toBe(true);
  });

  it('keeps headings, paragraphs, lists, tables and code and drops chrome', () => {
    const html = `<!doctype html><html><head><title>T</title><style>p{}</style><script>var x = "<p>no</p>";</script></head>
      <body><nav><a href="/">Home</a> <a href="/a">About</a></nav><header><h1>Site name</h1></header>
      <div class="sidebar"><p>Sidebar text that is long enough to be a paragraph, really it is.</p></div>
      <article><h1>Real title</h1><p>First paragraph, with commas, and enough text to score as content in the extractor.</p>
      <h2>Part &amp; parcel</h2><p>Second<br>line &mdash; ok.</p>
      <ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul><ol start="3"><li>three<li>four</ol>
      <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>
      <pre><code class="language-js">const x = 1;
const y = 2;</code></pre></article>
      <form><input value="q"><button>Search</button></form><footer>Copyright</footer></body></html>`;
    const blocks = htmlToBlocks(html);
    expect(blocks).toEqual([
      { kind: 'heading', text: 'Real title', page: null, level: 1 },
      { kind: 'paragraph', text: 'First paragraph, with commas, and enough text to score as content in the extractor.', page: null },
      { kind: 'heading', text: 'Part & parcel', page: null, level: 2 },
      { kind: 'paragraph', text: 'Second\nline \u2014 ok.', page: null },
      { kind: 'list', text: '- one\n- two\n  - nested', page: null },
      { kind: 'list', text: '3. three\n4. four', page: null },
      { kind: 'table', text: 'a | b\n1 | 2', page: null },
      { kind: 'code', text: 'const x = 1;\nconst y = 2;', page: null, language: 'js' },
    ]);
  });

  it('decodes every HTML character reference, in text and attributes', () => {
    // The hand-written parser knew about 90 names and left `&hearts;`, `&Alpha;`, `&check;` as written.
    const blocks = htmlToBlocks('<p>Caf&eacute; &hearts; &Alpha;&beta; &check; &NotEqual; &amp &copy 2024 &bogus; &#x1F600;</p>', { mainContentOnly: false });
    expect(blocks).toEqual([{ kind: 'paragraph', text: 'Caf\u00e9 \u2665 \u0391\u03b2 \u2713 \u2260 & \u00a9 2024 &bogus; \u{1F600}', page: null }]);
    const table = htmlToBlocks('<table><caption>Q&uuml;ery &lt;1&gt;</caption><tr><td title="a&amp;b">x &times; y</td></tr></table>', { mainContentOnly: false });
    expect(table).toEqual([{ kind: 'table', text: 'Q\u00fcery <1>\nx \u00d7 y', page: null }]);
  });

  it('never hangs or recurses too deep on pathological markup', () => {
    const deep = `${'<div>'.repeat(3000)}<p>Deep text, with a comma, inside many divs.</p>${'</div>'.repeat(3000)}`;
    expect(htmlToBlocks(deep).some((block) => block.text.includes('Deep text'))).toBe(true);
    expect(htmlToBlocks('<p>unclosed <b>bold <i>both').map((block) => block.text)).toEqual(['unclosed bold both']);
    expect(htmlToBlocks('<<<>>> <a <b <!-- never closed')).toEqual(expect.any(Array));
  });
});
