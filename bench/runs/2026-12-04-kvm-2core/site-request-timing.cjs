const { chromium } = require("playwright-core");
(async () => {
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
  for (let i = 0; i < 3; i++) {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto("http://127.0.0.1:18997/?rows=2&cols=2");
    await page.waitForFunction(() => window.chompSite !== undefined);
    const r = await page.evaluate(async () => {
      await window.chompSite.open("losses-110");
      const before = performance.getEntriesByType("resource").length;
      const t0 = performance.now();
      const t = window.chompSite.config.tables.find((t) => t.name === "losses-110");
      await window.chompSite.query([19, 18, 17, 13, 12, 11, 5, 4, 3, 2, 2, 2, 1, 1], t);
      const ms = performance.now() - t0;
      const es = performance.getEntriesByType("resource").slice(before);
      const d = es.map((e) => e.duration).sort((a, b) => a - b);
      const waits = es.map((e) => e.requestStart - e.startTime).sort((a, b) => a - b);
      const ttfb = es.map((e) => e.responseStart - e.requestStart).sort((a, b) => a - b);
      const q = (xs, f) => xs[Math.floor(xs.length * f)]?.toFixed(1);
      return { ms, n: es.length, dur: [q(d, 0.1), q(d, 0.5), q(d, 0.9)], queued: [q(waits, 0.5), q(waits, 0.9)], ttfb: [q(ttfb, 0.5), q(ttfb, 0.9)], span: (Math.max(...es.map(e=>e.responseEnd)) - Math.min(...es.map(e=>e.startTime))).toFixed(1) };
    });
    console.log(JSON.stringify(r));
    await ctx.close();
  }
  await browser.close();
})();
