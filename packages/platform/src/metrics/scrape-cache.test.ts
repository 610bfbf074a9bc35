import { createScrapeCache } from './scrape-cache';

function counted() {
  const renders = { count: 0 };
  const render = async () => {
    renders.count += 1;
    await new Promise((r) => setImmediate(r));
    return `render ${renders.count}`;
  };
  return { renders, render };
}

it('200 concurrent scrapes share one render, and later ones reuse it until it is maxAgeMs old', async () => {
  let nowMs = 1_000_000;
  const { renders, render } = counted();
  const scrape = createScrapeCache(render, { maxAgeMs: 2000, now: () => nowMs });
  const texts = await Promise.all(Array.from({ length: 200 }, () => scrape()));
  expect(renders.count).toBe(1);
  expect(new Set(texts)).toEqual(new Set(['render 1']));

  nowMs += 1999;
  await Promise.all(Array.from({ length: 50 }, () => scrape()));
  expect(renders.count).toBe(1);
  nowMs += 1;
  expect(await Promise.all(Array.from({ length: 50 }, () => scrape()))).toContain('render 2');
  expect(renders.count).toBe(2);
});

it('with maxAgeMs 0, every scrape after a render renders again, but concurrent ones still share one', async () => {
  const { renders, render } = counted();
  const scrape = createScrapeCache(render, { maxAgeMs: 0, now: () => 0 });
  await Promise.all(Array.from({ length: 20 }, () => scrape()));
  expect(renders.count).toBe(1);
  await scrape();
  expect(renders.count).toBe(2);
});

it('a failed render is not kept: the next scrape renders again', async () => {
  let fail = true;
  let renders = 0;
  const scrape = createScrapeCache(
    async () => {
      renders += 1;
      if (fail) throw new Error('redis down');
      return 'ok';
    },
    { maxAgeMs: 5000, now: () => 0 },
  );
  await expect(Promise.all([scrape(), scrape()])).rejects.toThrow('redis down');
  expect(renders).toBe(1);
  fail = false;
  expect(await scrape()).toBe('ok');
  expect(renders).toBe(2);
});
